package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
)

func init() {
	register(command{name: "features", summary: "extract the success, conflict or build-time feature table of a history", run: runFeatures})
}

const featuresUsage = "--history DIR --task success|conflict|buildtime --out FILE.csv|.parquet|.arrow [--lenient]\n\n" +
	"Columns: the features in schema order, the label (label, or target in seconds for buildtime),\n" +
	"the true_* columns of synthetic histories, then the row's ids, which are not features:\n" +
	"change_id, ahead_change_id (conflict), build_id (buildtime; for success the build that settles\n" +
	"the label) and submitted_at (RFC 3339 UTC)."

func runFeatures(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "features", featuresUsage)
	history := fs.String("history", "", "history folder to read (changes, builds and optional pairs tables) (required)")
	task := fs.String("task", "", "row kind: success, conflict or buildtime (required)")
	out := fs.String("out", "", "feature table to write; the extension picks the format: .csv, .parquet or .arrow (required)")
	lenient := fs.Bool("lenient", false, "skip history rows with problems (counted in the summary) instead of failing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := features.ParseKind(*task)
	if err != nil {
		return fmt.Errorf("%w: --task: %w", errUsage, err)
	}
	switch ext := strings.ToLower(filepath.Ext(*out)); ext {
	case ".csv", ".parquet", ".arrow":
	default:
		return fmt.Errorf("%w: --out %q: extension %q is not .csv, .parquet or .arrow", errUsage, *out, ext)
	}

	t0 := time.Now()
	opt := datasets.ReadOptions{Lenient: *lenient}
	if e.isTerminal {
		opt.Progress = func(table string, rows int) {
			fmt.Fprintf(e.stderr, "\rfeatures: reading %s, %d rows   ", table, rows)
		}
	}
	h, rep, err := datasets.ReadHistory(ctx, *history, opt)
	if e.isTerminal {
		fmt.Fprintln(e.stderr)
	}
	if err != nil {
		return err
	}
	progress(e, "features: indexing %d changes, %d builds", len(h.Changes), len(h.Builds))
	ix, err := features.NewIndex(ctx, h)
	if err != nil {
		return err
	}
	progress(e, "features: building %s rows", kind)
	tb, err := ix.Table(ctx, kind)
	if err != nil {
		return err
	}
	progress(e, "features: writing %d rows to %s", tb.NRows(), *out)
	f := tb.Frame()
	f.Columns = append(f.Columns, idColumns(tb)...)
	if err := datasets.WriteFrame(ctx, *out, f); err != nil {
		return err
	}
	printFeaturesSummary(e, h, rep, tb, len(f.Columns), *out, time.Since(t0))
	return nil
}

// The identifying columns of a feature table, after the features, the label and the
// truth columns: not features (fit leaves them out unless --features names them), but
// what a row is, so that predictions and results can be joined to the history and
// split by time.
const (
	colChangeID      = "change_id"       // the change of the row (the behind change of a conflict pair)
	colAheadChangeID = "ahead_change_id" // conflict rows: the change ahead
	colBuildID       = "build_id"        // build-time rows: the build; success rows: the build that settles the label
	colSubmittedAt   = "submitted_at"    // the row's change's submission time, RFC 3339 UTC
)

// idColumnNames are the identifying columns a feature table may have.
var idColumnNames = []string{colChangeID, colAheadChangeID, colBuildID, colSubmittedAt}

// idColumns returns the identifying columns of tb's rows, as text.
func idColumns(tb *features.Table) []datasets.Column {
	n := tb.NRows()
	text := func(name string, v func(r int) string) datasets.Column {
		c := datasets.Column{Name: name, Strings: make([]string, n)}
		for r := range n {
			c.Strings[r] = v(r)
		}
		return c
	}
	cols := []datasets.Column{text(colChangeID, func(r int) string { return tb.ChangeID[r] })}
	if tb.AheadID != nil {
		cols = append(cols, text(colAheadChangeID, func(r int) string { return tb.AheadID[r] }))
	}
	if tb.BuildID != nil {
		cols = append(cols, text(colBuildID, func(r int) string { return tb.BuildID[r] }))
	}
	return append(cols, text(colSubmittedAt, func(r int) string {
		if tb.SubmittedAt[r].IsZero() {
			return ""
		}
		return tb.SubmittedAt[r].UTC().Format(time.RFC3339Nano)
	}))
}

// progress writes one stage line to e.stderr when it is a terminal.
func progress(e *env, format string, args ...any) {
	if e.isTerminal {
		fmt.Fprintf(e.stderr, format+"\n", args...)
	}
}

// printFeaturesSummary writes what was read, written and skipped to e.stderr, or logs it
// as one record with --log-format json.
func printFeaturesSummary(e *env, h *datasets.History, rep *datasets.Report, tb *features.Table, cols int, out string, took time.Duration) {
	kind := tb.Schema.Kind
	w := e.summaryText()
	fmt.Fprintf(w, "features: read %d changes, %d builds, %d pairs", len(h.Changes), len(h.Builds), len(h.Pairs))
	if rep != nil {
		skipped := 0
		for i := range rep.Tables {
			skipped += rep.Tables[i].NSkipped()
		}
		if skipped > 0 {
			fmt.Fprintf(w, " (%d invalid rows skipped)", skipped)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "features: %s: %d candidates, wrote %d rows x %d columns (%d features, %s, %d truth) to %s (%s)\n",
		kind, tb.Considered, tb.NRows(), cols, tb.Schema.NFeatures(), kind.LabelName(), len(tb.Truth), out, took.Round(time.Millisecond))
	fmt.Fprintf(w, "features: schema version %d, hash %s\n", tb.Schema.Version, tb.Schema.Hash())
	reasons := make([]string, 0, len(tb.Skipped))
	for r := range tb.Skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "features: skipped %d: %s\n", tb.Skipped[r], r)
	}
	if tb.NRows() == 0 {
		fmt.Fprintf(w, "features: the %s table is empty (no candidate has a label; the skip counts above say why)\n", kind)
	}
	if rep != nil {
		for i := range rep.Tables {
			t := &rep.Tables[i]
			reasons := make([]string, 0, len(t.Skipped))
			for r := range t.Skipped {
				reasons = append(reasons, r)
			}
			sort.Strings(reasons)
			for _, r := range reasons {
				fmt.Fprintf(w, "features: %s: skipped %d invalid rows: %s\n", t.Table, t.Skipped[r], r)
			}
		}
	}
	e.summaryLog("features written", "task", kind.String(), "out", out, "considered", tb.Considered,
		"rows", tb.NRows(), "skipped", tb.Considered-tb.NRows(), "schema_hash", tb.Schema.Hash())
}
