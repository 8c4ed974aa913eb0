package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "schedule", summary: "retrain and publish every repository on a cron schedule (UTC) until SIGINT/SIGTERM", run: runSchedule})
}

const scheduleUsage = `--cron "0 3 * * 1" --history DIR --registry REG [--repo NAME] [--as-of latest|now|T] [--window 90d] [--challengers ...] [--allow-missing-features] [--allow-partial] [--config trainer.json] [--lenient]`

func runSchedule(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "schedule", scheduleUsage)
	spec := fs.String("cron", "0 3 * * 1", `cron spec in UTC: five fields, or "@weekly", "@every 1h"`)
	f := addTrainFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	cfg, latest, err := f.trainingConfig(e)
	if err != nil {
		return err
	}
	reg, err := registry.Open(*f.registry)
	if err != nil {
		return err
	}
	err = training.Schedule(ctx, *spec, e.log, func(ctx context.Context) {
		scheduledRun(ctx, e, *f.history, *f.lenient, reg, cfg, latest)
	})
	if errors.Is(err, training.ErrConfig) {
		return fmt.Errorf("%w: --cron: %w", errUsage, err)
	}
	return err
}

// scheduledRun is one run of the schedule: read the history again (it grows between
// runs) and train and publish every repository of it, or cfg.Repo only. With latest,
// each repository's window ends at its last submission in the history as read now.
// Failures are logged, never fatal: the next run tries again.
func scheduledRun(ctx context.Context, e *env, history string, lenient bool, reg *registry.Registry, cfg training.Config, latest bool) {
	h, _, err := datasets.ReadHistory(ctx, history, datasets.ReadOptions{Lenient: lenient})
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
		if latest {
			if c.AsOf, err = training.LatestSubmission(h, repo); err != nil {
				e.log.Error("training failed", "repo", repo, "err", err)
				continue
			}
		}
		version, err := trainAndPublish(ctx, e, h, reg, c)
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
