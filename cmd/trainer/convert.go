package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

func init() {
	register(command{name: "convert", summary: "convert a history folder to parquet, arrow or csv", run: runConvert})
}

const convertUsage = "--in DIR --out DIR2 --format parquet|arrow|csv [--lenient]"

func runConvert(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "convert", convertUsage)
	in := fs.String("in", "", "history folder to read (its format is detected) (required)")
	dst := addHistoryOutFlags(fs)
	lenient := fs.Bool("lenient", false, "skip rows with problems (counted in the summary) instead of failing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	out := dst.dir
	f, err := dst.parse()
	if err != nil {
		return err
	}
	t0 := time.Now()
	h, rep, err := readHistoryWithProgress(ctx, e, "convert", *in, *lenient)
	if err != nil {
		return err
	}
	if e.isTerminal {
		fmt.Fprintf(e.stderr, "convert: writing %s\n", *out)
	}
	if err := datasets.WriteHistory(ctx, *out, h, f); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "converted %s (%v) to %s (%v): %d changes, %d builds, %d pairs\n",
		*in, rep.Format, *out, f, len(h.Changes), len(h.Builds), len(h.Pairs))
	if *lenient {
		fmt.Fprint(e.stdout, rep.String())
	}
	e.summaryLog("converted history", "in", *in, "out", *out, "format", f.String(),
		"changes", len(h.Changes), "builds", len(h.Builds), "pairs", len(h.Pairs),
		"problems", rep.NProblems, "took", time.Since(t0).Round(time.Millisecond))
	return nil
}

// historyOutFlags are the --out and --format flags of a command that writes a history
// folder.
type historyOutFlags struct {
	dir    *string
	format *string
}

// addHistoryOutFlags adds --out and --format (default parquet) to fs.
func addHistoryOutFlags(fs *flag.FlagSet) historyOutFlags {
	return historyOutFlags{
		dir:    fs.String("out", "", "history folder to write (required)"),
		format: fs.String("format", "parquet", "output format: parquet, arrow or csv"),
	}
}

// parse checks that --out was given and parses --format; its errors are usage errors.
func (o historyOutFlags) parse() (datasets.Format, error) {
	f, err := datasets.ParseFormat(*o.format)
	if err != nil {
		return 0, fmt.Errorf("%w: --format: %w", errUsage, err)
	}
	return f, nil
}

// readHistoryWithProgress reads a history, drawing the rows read on a terminal.
func readHistoryWithProgress(ctx context.Context, e *env, cmd, dir string, lenient bool) (*datasets.History, *datasets.Report, error) {
	opt := datasets.ReadOptions{Lenient: lenient}
	if e.isTerminal {
		opt.Progress = func(table string, rows int) {
			fmt.Fprintf(e.stderr, "\r%s: reading %s, %d rows   ", cmd, table, rows)
		}
	}
	h, rep, err := datasets.ReadHistory(ctx, dir, opt)
	if e.isTerminal {
		fmt.Fprintln(e.stderr)
	}
	return h, rep, err
}
