package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "eval", summary: "evaluate a bundle's models on the rows of a history", run: runEval})
}

const evalUsage = "--bundle DIR --history DIR --out metrics.json [--repo NAME] [--from T] [--to T] [--in-sample] [--allow-few-rows] [--report DIR] [--author-key-file F] [--lenient]\n\n" +
	"Scores the rows submitted after the bundle's window end (its manifest's window.to): published\n" +
	"models are refitted on the whole window, so earlier rows, the holdout included, are in-sample.\n" +
	"--from narrows that; --in-sample also scores rows inside the window, and the report says so.\n" +
	"Fewer than 30 success rows, or no conflict row, are refused unless --allow-few-rows."

// evalFlags are the row-selection flags eval and compare share.
type evalFlags struct {
	history, repo, from, to, authorKeyFile *string
	lenient, inSample, allowFewRows        *bool
}

// minEvalRows is the fewest success rows eval and compare score without
// --allow-few-rows (training.EvalOptions.MinRows): below it, a log loss or an AUC is
// noise, and the walkthrough's eval of the README history scored a single row.
const minEvalRows = 30

// addEvalFlags defines the flags on fs; end names the default of --from in its help.
func addEvalFlags(fs interface {
	String(name, value, usage string) *string
	Bool(name string, value bool, usage string) *bool
}, end string) *evalFlags {
	return &evalFlags{
		history: fs.String("history", "", "history folder whose rows are scored (with its own point-in-time features) (required)"),
		repo:    fs.String("repo", "", "repository of the rows (default: the bundle's, else the only one of the history)"),
		from: fs.String("from", "", "score only rows submitted at or after this time, RFC 3339 (default: "+end+"; "+
			"an earlier time needs --in-sample)"),
		to: fs.String("to", "", "score only rows submitted before this time, RFC 3339"),
		authorKeyFile: fs.String("author-key-file", "", "the author key of bundles whose authors are pseudonymised "+
			"(the key they were trained with; default $"+features.AuthorKeyEnv+")"),
		lenient:  fs.Bool("lenient", false, "skip history rows with problems instead of failing"),
		inSample: fs.Bool("in-sample", false, "also score rows inside the bundle's training window (the report says the scores are in-sample)"),
		allowFewRows: fs.Bool("allow-few-rows", false, fmt.Sprintf("score even fewer than %d success rows or no conflict row "+
			"(refused by default: such metrics are noise)", minEvalRows)),
	}
}

// options reads the history and returns it with the options of the flags, and a
// sentence saying which rows are scored for the report; bundleRepo is the default
// repository when the history has it. Without --from the rows start at windowEnd, the
// latest window end of the bundles scored: their models were refitted on every row
// before it. A --from before windowEnd needs --in-sample.
func (f *evalFlags) options(ctx context.Context, bundleRepo string, windowEnd time.Time) (*datasets.History, training.EvalOptions, string, error) {
	var opt training.EvalOptions
	var err error
	for _, t := range []struct {
		name, v string
		dst     *time.Time
	}{{"from", *f.from, &opt.From}, {"to", *f.to, &opt.To}} {
		if t.v != "" {
			if *t.dst, err = time.Parse(time.RFC3339, t.v); err != nil {
				return nil, opt, "", fmt.Errorf("%w: --%s: %w", errUsage, t.name, err)
			}
		}
	}
	end := windowEnd.UTC().Format(time.RFC3339)
	var rows string
	switch {
	case *f.inSample:
		rows = "IN-SAMPLE: rows inside the bundle's training window (which ends " + end + ") are scored too, " +
			"so these scores are optimistic."
	case opt.From.IsZero():
		opt.From = windowEnd
		rows = "Out-of-sample: rows submitted from the bundle's window end " + end + " on."
	case opt.From.Before(windowEnd):
		return nil, opt, "", fmt.Errorf("%w: --from %s is inside the bundle's training window, which ends %s: "+
			"those rows are in-sample; pass --in-sample to score them anyway", errUsage, *f.from, end)
	default:
		rows = "Out-of-sample: rows submitted from " + opt.From.UTC().Format(time.RFC3339) + " on (the bundle's window ends " + end + ")."
	}
	h, _, err := datasets.ReadHistory(ctx, *f.history, datasets.ReadOptions{Lenient: *f.lenient})
	if err != nil {
		return nil, opt, "", err
	}
	opt.Repo = *f.repo
	if !*f.allowFewRows {
		opt.MinRows = minEvalRows
	}
	if opt.Repo == "" && slices.Contains(training.Repos(h), bundleRepo) {
		opt.Repo = bundleRepo
	}
	return h, opt, rows, nil
}

// fewRows adds the fixes to a training.ErrFewRows error of rows after windowEnd (and
// repoHint's to a training.ErrRepo one).
func (f *evalFlags) fewRows(err error, windowEnd time.Time) error {
	if !errors.Is(err, training.ErrFewRows) {
		return repoHint(err)
	}
	fix := "pass --in-sample to score rows inside the window too (optimistic scores), "
	if *f.inSample || *f.from != "" {
		fix = ""
	}
	return fmt.Errorf("%w; the out-of-sample rows start at the window end %s: %sscore a history that runs past it, "+
		"or pass --allow-few-rows to score these anyway", err, windowEnd.UTC().Format(time.RFC3339), fix)
}

// bundleRepo is the history's name of the bundle's repository.
func bundleRepo(b *registry.Bundle) string {
	if r := b.Manifest.Extra[training.ExtraHistoryRepo]; r != "" {
		return r
	}
	return b.Manifest.Repo
}

// loadBundle loads the bundle folder dir, verified against this build's feature schema,
// and its models; a partial bundle is accepted, since eval and compare score what it has.
// A bundle with pseudonymised authors needs the key of --author-key-file (or its
// environment default).
func (f *evalFlags) loadBundle(dir string) (*registry.Bundle, *training.Models, error) {
	key, err := features.AuthorKeyFromFlag(*f.authorKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--author-key-file: %w", err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if err != nil {
		return nil, nil, err
	}
	m, err := training.Load(b, training.LoadOptions{Partial: true, AuthorKey: key})
	if err != nil {
		return nil, nil, err
	}
	return b, m, nil
}

func runEval(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "eval", evalUsage)
	bundle := fs.String("bundle", "", "bundle folder (a registry version folder) (required)")
	out := fs.String("out", "", "metrics JSON file to write (flat keys, NaN as null) (required)")
	reportDir := fs.String("report", "", "also write report.html and its figures into this folder")
	ef := addEvalFlags(fs, "the bundle's window end")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, m, err := ef.loadBundle(*bundle)
	if err != nil {
		return err
	}
	h, opt, rows, err := ef.options(ctx, bundleRepo(b), b.Manifest.Window.To)
	if err != nil {
		return err
	}
	opt.Log = e.log
	ev, err := training.Evaluate(ctx, m, h, opt)
	if err != nil {
		return ef.fewRows(err, b.Manifest.Window.To)
	}
	ev.Report.Subtitle = rows + " " + ev.Report.Subtitle
	if *ef.inSample {
		ev.Report.Notice = rows
	}
	metrics := ev.Metrics()
	get := func(k string) float64 {
		if v, ok := metrics[k]; ok {
			return v
		}
		return math.NaN()
	}
	if err := report.WriteMetricsJSON(*out, metrics); err != nil {
		return err
	}
	if *reportDir != "" {
		ev.Report.Title = "sqpredict evaluation of " + b.Manifest.Repo + " " + b.Manifest.Version
		if err := report.Write(*reportDir, ev.Report); err != nil {
			return err
		}
	}
	e.summaryLog("evaluated", "repo", b.Manifest.Repo, "version", b.Manifest.Version, "history", *ef.history, "rows", rows, "out", *out,
		finiteGroup("metrics", metrics, "success.n", "success.auc", "success.log_loss", "conflict.n", "conflict.auc", "conflict.log_loss",
			"buildtime.n", "buildtime.mape", "buildtime.nll", "buildtime.crps"))
	w := e.summaryText()
	fmt.Fprintf(w, "eval: %s\n", rows)
	fmt.Fprintf(w, "eval: %s %s on %s: success auc %.4f log loss %.4f (%g rows); conflict auc %.4f log loss %.4f (%g rows); buildtime mape %.2f%% nll %.4f crps %.2f (%g rows) -> %s\n",
		b.Manifest.Repo, b.Manifest.Version, *ef.history,
		get("success.auc"), get("success.log_loss"), get("success.n"), get("conflict.auc"), get("conflict.log_loss"), get("conflict.n"),
		get("buildtime.mape"), get("buildtime.nll"), get("buildtime.crps"), get("buildtime.n"), *out)
	return nil
}

// finiteGroup returns a log group of the values of keys in m that are finite: JSON has
// no NaN, and a metric that could not be computed is left out of the record.
func finiteGroup(name string, m map[string]float64, keys ...string) slog.Attr {
	attrs := make([]any, 0, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			attrs = append(attrs, slog.Float64(k, v))
		}
	}
	return slog.Group(name, attrs...)
}
