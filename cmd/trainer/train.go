package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "train", summary: "train, evaluate and publish a model bundle from a history", run: runTrain})
}

const trainUsage = "--history DIR --registry REG [--repo NAME] [--as-of latest|now|T] [--window 90d] [--challengers gbm-success,gbm-conflict,ngboost-normal] [--baseline-gate refuse|serve|off] [--allow-missing-features] [--allow-partial] [--config trainer.json] [--author-key-file F] [--lenient]"

// trainFlags are the flags train and schedule share: they fill a training.Config on top
// of the --config file.
type trainFlags struct {
	history, registry, repo, asOf, window, challengers, config, baselineGate, authorKeyFile *string
	lenient, allowMissing, allowPartial                                                     *bool
}

// authorKeyUsage is the help of every --author-key-file flag.
const authorKeyUsage = "file holding the operator's author key (at least 16 bytes; one trailing newline is ignored): " +
	"bundle authors are pseudonymised by HMAC-SHA256 under it (default $" + features.AuthorKeyEnv + "; none: authors in clear)"

func addTrainFlags(fs interface {
	String(name, value, usage string) *string
	Bool(name string, value bool, usage string) *bool
}) *trainFlags {
	return &trainFlags{
		history:  fs.String("history", "", "history folder to train on (required)"),
		registry: fs.String("registry", "", "registry folder to publish into (created if missing) (required)"),
		repo:     fs.String("repo", "", "repository to train (default: the only one of the history)"),
		asOf: fs.String("as-of", "", "end of the training window: latest (the last submission in the history; the default unless --config sets as_of), "+
			"now, or an RFC 3339 time"),
		window:      fs.String("window", "", "length of the window before --as-of: 90d, 2160h (default 90d)"),
		challengers: fs.String("challengers", "", "comma-separated challengers to train too: gbm-success, gbm-conflict, ngboost-normal (the build-time champion is the NGBoost LogNormal)"),
		config:      fs.String("config", "", "JSON training config (training.Config); flags override its fields"),
		baselineGate: fs.String("baseline-gate", "", "when a champion does not beat the best baseline on the holdout: refuse the bundle (default), "+
			"serve the baseline in its place, or off (publish anyway)"),
		authorKeyFile: fs.String("author-key-file", "", authorKeyUsage),
		lenient:       fs.Bool("lenient", false, "skip history rows with problems instead of failing"),
		allowMissing: fs.Bool("allow-missing-features", false, "train even when a feature is missing in every training row although "+
			"the history has its column elsewhere (check the column names with trainer validate first); a column no change has "+
			"(imports without affected targets) needs no flag"),
		allowPartial: fs.Bool("allow-partial", false, "leave out a model whose table has no rows or one class (real histories without durations "+
			"or pairs) instead of failing; such a bundle is evaluated but a scorer cannot serve it"),
	}
}

// trainingConfig returns the config of the --config file with the flags applied, and
// whether the window ends at the history's last submission (--as-of latest, the default
// when neither the flag nor the file sets the end), which each run resolves with
// training.LatestSubmission on the history it reads.
func (f *trainFlags) trainingConfig(e *env) (cfg training.Config, latest bool, err error) {
	if *f.config != "" {
		if cfg, err = training.LoadConfig(*f.config); err != nil {
			return cfg, false, err
		}
	}
	if *f.repo != "" {
		cfg.Repo = *f.repo
	}
	switch *f.asOf {
	case "":
		latest = cfg.AsOf.IsZero()
	case "latest":
		latest = true
	case "now":
		cfg.AsOf = time.Time{} // training.Train's zero: the time each run starts
	default:
		if cfg.AsOf, err = time.Parse(time.RFC3339, *f.asOf); err != nil {
			return cfg, false, fmt.Errorf("%w: --as-of is latest, now or an RFC 3339 time: %w", errUsage, err)
		}
	}
	if *f.window != "" {
		if cfg.Window, err = training.ParseDuration(*f.window); err != nil {
			return cfg, false, fmt.Errorf("%w: --window: %w", errUsage, err)
		}
	}
	if *f.challengers != "" {
		if cfg.Challengers, err = training.ParseChallengers(*f.challengers); err != nil {
			return cfg, false, fmt.Errorf("%w: --challengers: %w", errUsage, err)
		}
	}
	if *f.baselineGate != "" {
		cfg.BaselineGate = *f.baselineGate
	}
	if *f.allowMissing {
		cfg.AllowMissingFeatures = true
	}
	if *f.allowPartial {
		cfg.AllowPartial = true
	}
	if cfg.AuthorKey, err = features.AuthorKeyFromFlag(*f.authorKeyFile); err != nil {
		return cfg, false, fmt.Errorf("--author-key-file: %w", err)
	}
	cfg.Log = e.log
	return cfg, latest, nil
}

func runTrain(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "train", trainUsage)
	f := addTrainFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, latest, err := f.trainingConfig(e)
	if err != nil {
		return err
	}
	h, _, err := datasets.ReadHistory(ctx, *f.history, datasets.ReadOptions{Lenient: *f.lenient})
	if err != nil {
		return err
	}
	if latest {
		if cfg.AsOf, err = training.LatestSubmission(h, cfg.Repo); err != nil {
			return repoHint(fmt.Errorf("--as-of latest: %w", err))
		}
	}
	reg, err := registry.Open(*f.registry)
	if err != nil {
		return err
	}
	data, err := datasets.Fingerprint(*f.history)
	if err != nil {
		return err
	}
	version, err := trainAndPublish(ctx, e, h, data, reg, cfg)
	if err != nil {
		return repoHint(err)
	}
	fmt.Fprintln(e.stdout, version)
	return nil
}

// repoHint adds the flag that fixes a training.ErrRepo error (a history of several
// repositories and no --repo, or a --repo the history lacks; the error lists the
// history's repositories) to err.
func repoHint(err error) error {
	if errors.Is(err, training.ErrRepo) {
		return fmt.Errorf("%w: pass --repo NAME", err)
	}
	return err
}

// trainAndPublish is the job of train and of every scheduled run: train one repository
// and publish the bundle, with the table of stages on stderr. data is the history's
// datasets.Fingerprint, recorded with the config in the manifest.
func trainAndPublish(ctx context.Context, e *env, h *datasets.History, data string, reg *registry.Registry, cfg training.Config) (string, error) {
	fp, err := training.InputFingerprint(data, cfg)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	res, err := training.Train(ctx, h, cfg)
	if err != nil {
		return "", err
	}
	res.InputFingerprint = fp
	t1 := time.Now()
	version, err := training.Publish(ctx, reg, res)
	publish := time.Since(t1)
	printStages(e, res, publish, time.Since(t0))
	if err != nil {
		return "", err
	}
	return version, nil
}

// printStages writes the stage table of a run and the headline metrics to e.stderr, or
// with --log-format json logs them as one record.
func printStages(e *env, res *training.Result, publish, total time.Duration) {
	if e.jsonLog {
		stages := make([]any, 0, len(res.Stages)+2)
		for _, s := range res.Stages {
			stages = append(stages, slog.Float64(s.Name, s.Duration.Seconds()))
		}
		stages = append(stages, slog.Float64("publish", publish.Seconds()), slog.Float64("total", total.Seconds()))
		metrics := make([]any, 0, 8)
		all := res.Metrics()
		for _, k := range []string{"success.auc", "success.log_loss", "conflict.auc", "conflict.log_loss", "buildtime.mape", "buildtime.nll", "buildtime.crps"} {
			if v, ok := all[k]; ok && !math.IsNaN(v) {
				metrics = append(metrics, slog.Float64(k, v))
			}
		}
		e.log.Info("trained", "repo", res.Repo, "from", res.Window.From, "to", res.Window.To, "holdout_from", res.Cut,
			"rows", res.Rows, "train_rows", res.TrainRows, "warnings", res.Warnings, "notes", res.Notes,
			slog.Group("seconds", stages...), slog.Group("holdout", metrics...))
		for _, c := range res.Holdout.Challengers() {
			level := slog.LevelInfo
			if c.WorseThanBaseline() {
				level = slog.LevelWarn
			}
			e.log.Log(context.Background(), level, "challenger", "section", c.Section, "model", c.Model,
				c.Metric, c.Loss, "skill", c.Skill, "best_baseline", c.Baseline, "worse_than_baseline", c.WorseThanBaseline())
		}
		return
	}
	var b strings.Builder
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "train: %s, window %s to %s, holdout from %s\n", res.Repo,
		res.Window.From.Format(time.RFC3339), res.Window.To.Format(time.RFC3339), res.Cut.Format(time.RFC3339))
	fmt.Fprintf(&b, "  %-40s %10s\n", "stage", "seconds")
	for _, s := range res.Stages {
		fmt.Fprintf(&b, "  %-40s %10.3f\n", s.Name, s.Duration.Seconds())
	}
	fmt.Fprintf(&b, "  %-40s %10.3f\n  %-40s %10.3f\n", "publish", publish.Seconds(), "total", total.Seconds())
	all := res.Metrics()
	m := func(k string) float64 {
		if v, ok := all[k]; ok {
			return v
		}
		return math.NaN()
	}
	fmt.Fprintf(&b, "  rows: success %d, conflict %d, buildtime %d (training before the cut: %d, %d, %d)\n",
		res.Rows["success"], res.Rows["conflict"], res.Rows["buildtime"],
		res.TrainRows["success"], res.TrainRows["conflict"], res.TrainRows["buildtime"])
	for _, name := range slices.Sorted(maps.Keys(res.Models.LeftOut)) {
		fmt.Fprintf(&b, "  left out: %s (%s)\n", name, res.Models.LeftOut[name])
	}
	for _, sec := range []string{"success", "conflict", "buildtime"} {
		if name, loss := res.Holdout.BestBaseline(sec); name != "" {
			skill := "skill_log_loss"
			if sec == "buildtime" {
				skill = "skill_nll"
			}
			fmt.Fprintf(&b, "  best baseline of %s: %s (holdout loss %.4f; champion %s %.4f)\n", sec, name, loss, skill, m(sec+"."+skill))
		}
	}
	fmt.Fprintf(&b, "  holdout: success auc %.4f log loss %.4f; conflict auc %.4f log loss %.4f; buildtime mape %.2f%% nll %.4f crps %.2f\n",
		m("success.auc"), m("success.log_loss"), m("conflict.auc"), m("conflict.log_loss"),
		m("buildtime.mape"), m("buildtime.nll"), m("buildtime.crps"))
	writeChallengers(&b, res.Holdout.Challengers())
	fmt.Fprint(e.stderr, b.String())
}

// writeChallengers writes each challenger's holdout loss and skill over the section's
// best baseline, and a WARNING for every challenger worse than that baseline: it is
// published all the same (a challenger serves only the traffic routed to it), so the
// summary is where its author learns not to route to it.
func writeChallengers(b *strings.Builder, cs []training.ChallengerScore) {
	for _, c := range cs {
		fmt.Fprintf(b, "  challenger %s of %s: holdout %s %.4f, skill %.4f over %s\n", c.Model, c.Section, c.Metric, c.Loss, c.Skill, c.Baseline)
	}
	for _, c := range cs {
		if c.WorseThanBaseline() {
			fmt.Fprintf(b, "WARNING: challenger %s of %s is worse than the best baseline %s (holdout %s %.4f against %.4f, skill %.4f); it is published, but do not route traffic to it (registry set-challenger)\n",
				c.Model, c.Section, c.Baseline, c.Metric, c.Loss, c.BaselineLoss, c.Skill)
		}
	}
}
