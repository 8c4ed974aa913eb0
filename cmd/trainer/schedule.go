package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "schedule", summary: "retrain and publish every repository on a cron schedule (UTC) until SIGINT/SIGTERM", run: runSchedule})
}

const scheduleUsage = `--cron "0 3 * * 1" --history DIR --registry REG [--run-now] [--repo NAME] [--as-of latest|now|T] [--window 90d] [--challengers ...] [--baseline-gate refuse|serve|off] [--allow-missing-features] [--allow-partial] [--config trainer.json] [--author-key-file F] [--lenient]`

func runSchedule(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "schedule", scheduleUsage)
	spec := fs.String("cron", "0 3 * * 1", `cron spec in UTC: five fields, or "@weekly", "@every 1h"`)
	runNow := fs.Bool("run-now", false, "also run once at start, before the first scheduled time")
	f := addTrainFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, latest, err := f.trainingConfig(e)
	if err != nil {
		return err
	}
	if _, err := cron.ParseStandard(*spec); err != nil {
		return fmt.Errorf("%w: --cron %q: %w", errUsage, *spec, err)
	}
	reg, err := registry.Open(*f.registry)
	if err != nil {
		return err
	}
	// Check the inputs now rather than at the first run, which may be a week away: the
	// history reads (strictly unless --lenient) and has the repository, with a
	// submission time for --as-of latest.
	h, _, err := datasets.ReadHistory(ctx, *f.history, datasets.ReadOptions{Lenient: *f.lenient})
	if err != nil {
		return fmt.Errorf("checking --history at start: %w", err)
	}
	repos := []string{cfg.Repo}
	if cfg.Repo == "" {
		repos = training.Repos(h)
	}
	for _, repo := range repos {
		if _, err = training.LatestSubmission(h, repo); err != nil {
			return fmt.Errorf("checking --history at start: %w", err)
		}
	}
	e.log.Info("schedule inputs checked", "history", *f.history, "repos", len(repos), "changes", len(h.Changes))
	h = nil // each run reads the history again
	job := func(ctx context.Context) { scheduledRun(ctx, e, *f.history, *f.lenient, reg, cfg, latest) }
	if *runNow {
		job(ctx)
	}
	err = training.Schedule(ctx, *spec, e.log, job)
	if errors.Is(err, training.ErrConfig) {
		return fmt.Errorf("%w: --cron: %w", errUsage, err)
	}
	return err
}

// scheduledRun is one run of the schedule: read the history again (it grows between
// runs) and train and publish every repository of it, or cfg.Repo only. With latest,
// each repository's window ends at its last submission in the history as read now.
// A repository whose inputs (the history's files and the config, as
// training.InputFingerprint combines them) are those of its newest version is skipped:
// publishing would only add an identical version. Failures are logged, never fatal: the
// next run tries again.
func scheduledRun(ctx context.Context, e *env, history string, lenient bool, reg *registry.Registry, cfg training.Config, latest bool) {
	h, _, err := datasets.ReadHistory(ctx, history, datasets.ReadOptions{Lenient: lenient})
	if err != nil {
		e.log.Error("reading the history failed", "history", history, "err", err)
		return
	}
	data, err := datasets.Fingerprint(history)
	if err != nil {
		e.log.Error("reading the history failed", "history", history, "err", err)
		return
	}
	repos := []string{cfg.Repo}
	if cfg.Repo == "" {
		repos = training.Repos(h)
	}
	for _, repo := range repos {
		if ctx.Err() != nil {
			return
		}
		c := cfg
		c.Repo = repo
		switch {
		case latest:
			if c.AsOf, err = training.LatestSubmission(h, repo); err != nil {
				e.log.Error("training failed", "repo", repo, "err", err)
				continue
			}
		case c.AsOf.IsZero(): // --as-of now: this run's time, also in the fingerprint
			c.AsOf = time.Now().UTC()
		}
		fp, err := training.InputFingerprint(data, c)
		if err != nil {
			e.log.Error("training failed", "repo", repo, "err", err)
			continue
		}
		if last, lastFP, err := training.LastFingerprint(reg, repo); err != nil {
			e.log.Warn("reading the newest version failed; training anyway", "repo", repo, "err", err)
		} else if lastFP == fp {
			e.log.Info("inputs unchanged since the newest version; not publishing", "repo", repo, "version", last)
			fmt.Fprintf(e.summaryText(), "schedule: %s: history and config unchanged since version %s; skipped\n", repo, last)
			continue
		}
		version, err := trainAndPublish(ctx, e, h, data, reg, c)
		if err != nil && ctx.Err() != nil {
			e.log.Info("training cancelled by shutdown", "repo", repo, "err", err)
			return
		}
		if err != nil {
			e.log.Error("training failed", "repo", repo, "err", err)
			continue
		}
		e.log.Info("trained", "repo", repo, "version", version)
		fmt.Fprintln(e.stdout, training.RegistryName(repo), version)
	}
}
