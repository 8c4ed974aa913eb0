package main

import (
	"context"
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
	in := fs.String("in", "", "history folder to read (its format is detected)")
	out := fs.String("out", "", "history folder to write")
	format := fs.String("format", "parquet", "output format: parquet, arrow or csv")
	lenient := fs.Bool("lenient", false, "skip rows with problems (counted in the summary) instead of failing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *in == "":
		return fmt.Errorf("%w: --in is required", errUsage)
	case *out == "":
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	f, err := datasets.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("%w: --format: %w", errUsage, err)
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
	e.log.Info("converted history", "in", *in, "out", *out, "format", f.String(),
		"changes", len(h.Changes), "builds", len(h.Builds), "pairs", len(h.Pairs),
		"problems", rep.NProblems, "took", time.Since(t0).Round(time.Millisecond))
	return nil
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
