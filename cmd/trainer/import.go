package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

func init() {
	register(command{name: "import", summary: "import a real CI history (travistorrent, buildfast) into a history folder", run: runImport})
}

const importUsage = "--source travistorrent|buildfast --in PATH --out DIR [--format parquet|arrow|csv] [--derive-times] [--errored failed|infra] [--imputed-duration 1h]"

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "import", importUsage)
	source := fs.String("source", "", "source data set: travistorrent or buildfast (required)")
	in := fs.String("in", "", "source file (travistorrent builds.csv) or, for buildfast, a file or the folder of CSVs (required)")
	dst := addHistoryOutFlags(fs)
	derive := fs.Bool("derive-times", false, "buildfast: derive submitted/started/finished times from time_interval (see datasets/IMPORT.md); off, they stay missing")
	errored := fs.String("errored", "failed", "travistorrent: status of Travis \"errored\" builds, failed (they count as failures of the change) or infra (no success label); see datasets/IMPORT.md")
	imputed := fs.Duration("imputed-duration", datasets.DefaultImputedDuration, "a build with a start but no finish time finishes this long after its start (its outcome counts as known then)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	out := dst.dir
	f, err := dst.parse()
	if err != nil {
		return err
	}
	var imp func(context.Context, string, datasets.ImportOptions) (*datasets.History, *datasets.ImportReport, error)
	switch *source {
	case "travistorrent":
		imp = datasets.ImportTravisTorrent
	case "buildfast":
		imp = datasets.ImportBuildFast
	default:
		return fmt.Errorf("%w: --source %q (want travistorrent or buildfast)", errUsage, *source)
	}
	if *derive && *source != "buildfast" {
		return fmt.Errorf("%w: --derive-times applies to --source buildfast only", errUsage)
	}
	opt := datasets.ImportOptions{DeriveTimes: *derive, ImputedDuration: *imputed}
	switch *errored {
	case "failed":
		opt.Errored = datasets.StatusFailed
	case "infra":
		opt.Errored = datasets.StatusInfraFailed
	default:
		return fmt.Errorf("%w: --errored %q (want failed or infra)", errUsage, *errored)
	}
	if *errored != "failed" && *source != "travistorrent" {
		return fmt.Errorf("%w: --errored applies to --source travistorrent only (buildfast's now_label counts errored builds as failed)", errUsage)
	}
	if *imputed <= 0 {
		return fmt.Errorf("%w: --imputed-duration %v (want a positive duration)", errUsage, *imputed)
	}
	if e.isTerminal {
		opt.Progress = func(rows int) { fmt.Fprintf(e.stderr, "\rimport: %d rows read   ", rows) }
	}
	t0 := time.Now()
	h, rep, err := imp(ctx, *in, opt)
	if e.isTerminal {
		fmt.Fprintln(e.stderr)
	}
	if err != nil {
		return err
	}
	if err := datasets.WriteHistory(ctx, *out, h, f); err != nil {
		return err
	}
	fmt.Fprint(e.stdout, rep.String())
	fmt.Fprintf(e.stdout, "wrote %s (%v)\n", *out, f)
	e.summaryLog("imported history", "source", *source, "in", *in, "out", *out, "rows", rep.RowsRead,
		"merged", rep.Merged, "changes", rep.Changes, "builds", rep.Builds, "skipped", rep.NSkipped(),
		"took", time.Since(t0).Round(time.Millisecond))
	return nil
}
