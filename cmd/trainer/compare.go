package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "compare", summary: "compare two bundles on the same rows with paired-bootstrap intervals", run: runCompare})
}

const compareUsage = "--a DIR --b DIR --history DIR --out DIR [--repo NAME] [--from T] [--to T] [--in-sample] [--allow-few-rows] [--resamples 1000] [--seed S] [--author-key-file F] [--lenient]\n\n" +
	"Scores the rows submitted after the later of the two bundles' window ends (their manifests'\n" +
	"window.to), which neither bundle was fitted on. --in-sample also scores earlier rows, and the\n" +
	"report says so. Fewer than 30 success rows, or no conflict row, are refused unless --allow-few-rows."

func runCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "compare", compareUsage)
	aDir := fs.String("a", "", "bundle folder A (the baseline) (required)")
	bDir := fs.String("b", "", "bundle folder B (the candidate); differences are B - A (required)")
	out := fs.String("out", "", "folder to write report.html, its figures and metrics.json into (required)")
	resamples := fs.Int("resamples", 0, "bootstrap resamples (default 1000)")
	seed := fs.Uint64("seed", 0, "bootstrap seed")
	ef := addEvalFlags(fs, "the later of the two bundles' window ends")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *resamples < 0:
		return fmt.Errorf("%w: --resamples %d is negative", errUsage, *resamples)
	}
	ba, ma, err := ef.loadBundle(*aDir)
	if err != nil {
		return fmt.Errorf("--a: %w", err)
	}
	bb, mb, err := ef.loadBundle(*bDir)
	if err != nil {
		return fmt.Errorf("--b: %w", err)
	}
	end := ba.Manifest.Window.To
	if bb.Manifest.Window.To.After(end) {
		end = bb.Manifest.Window.To
	}
	h, opt, rows, err := ef.options(ctx, bundleRepo(ba), end)
	if err != nil {
		return err
	}
	opt.Log = e.log
	opt.Bootstrap.Resamples = *resamples
	opt.Bootstrap.Seed = *seed
	c, err := training.Compare(ctx, ma, mb, h, opt)
	if err != nil {
		return ef.fewRows(err, end)
	}
	c.Report.Subtitle = fmt.Sprintf("A = %s %s, B = %s %s; %s %s", ba.Manifest.Repo, ba.Manifest.Version, bb.Manifest.Repo, bb.Manifest.Version,
		strings.Replace(rows, "the bundle's", "the later bundle's", 1), c.Report.Subtitle)
	if *ef.inSample {
		c.Report.Notice = rows
	}
	c.Report.Title = fmt.Sprintf("sqpredict comparison: B − A (A = %s, B = %s)", ba.Manifest.Version, bb.Manifest.Version)
	fmt.Fprintf(e.summaryText(), "compare: %s\n", rows)
	e.summaryLog("comparing", "a", ba.Manifest.Version, "b", bb.Manifest.Version, "history", *ef.history, "rows", rows, "out", *out)
	if err := report.Write(*out, c.Report); err != nil {
		return err
	}
	metrics, err := c.Metrics()
	if err != nil {
		return err
	}
	if err := report.WriteMetricsJSON(filepath.Join(*out, "metrics.json"), metrics); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%-12s %-24s %12s %12s %12s %12s %12s  %s\n", "section", "metric", "A", "B", "B-A", "lo", "hi", "verdict")
	for _, s := range c.Report.Sections {
		for _, d := range s.Diffs {
			verdict := "no clear difference" // the phrase of the report (eval/report)
			if d.Significant() {
				verdict = "A better"
				if (d.Diff > 0) == (d.Better.String() == "higher") {
					verdict = "B better"
				}
			}
			fmt.Fprintf(e.stdout, "%-12s %-24s %12.6g %12.6g %12.6g %12.6g %12.6g  %s\n", s.Name, d.Metric, d.A, d.B, d.Diff, d.Lo, d.Hi, verdict)
		}
	}
	return nil
}
