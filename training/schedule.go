package training

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule runs job at the times of spec until ctx is done, then stops the scheduler and
// waits for a running job to return before it returns nil. spec is a standard five-field
// cron line ("0 3 * * 1": Mondays at 03:00) or a descriptor ("@weekly", "@every 1h"),
// read in UTC. A job that panics is recovered and logged, and a run that would start
// while the previous one is still running is skipped (robfig/cron's Recover and
// SkipIfStillRunning); job gets ctx, so it can stop early when ctx is cancelled. The
// next run time is logged at the start and after every run. A spec that does not parse
// returns an error wrapping ErrConfig.
func Schedule(ctx context.Context, spec string, log *slog.Logger, job func(ctx context.Context)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := cronLogger{log}
	// SkipIfStillRunning goes outside Recover: robfig/cron v3.0.1's SkipIfStillRunning
	// hands its token back only when the job returns normally, so with the wrappers the
	// other way round one panicking run would skip every later run (TestSchedule).
	c := cron.New(cron.WithLocation(time.UTC), cron.WithLogger(l),
		cron.WithChain(cron.SkipIfStillRunning(l), cron.Recover(l)))
	var id cron.EntryID
	id, err := c.AddFunc(spec, func() {
		t0 := time.Now()
		log.Info("scheduled run starting")
		defer func() {
			log.Info("scheduled run done", "took", time.Since(t0).Round(time.Millisecond), "next", c.Entry(id).Next)
		}()
		job(ctx)
	})
	if err != nil {
		return fmt.Errorf("%w: cron spec %q: %w", ErrConfig, spec, err)
	}
	c.Start()
	log.Info("schedule started", "spec", spec, "location", "UTC", "next", c.Entry(id).Next)
	<-ctx.Done()
	log.Info("schedule stopping; waiting for a running job")
	<-c.Stop().Done()
	log.Info("schedule stopped")
	return nil
}

// cronLogger adapts slog to cron.Logger.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append([]any{"err", err}, kv...)...)
}
