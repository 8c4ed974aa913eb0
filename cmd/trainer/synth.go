package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
)

func init() {
	register(command{name: "synth", summary: "generate a synthetic history with its ground truth", run: runSynth})
}

const synthUsage = "--profile go|ios|android --days N --seed S [--rate R] [--flaky F] [--workers W] [--start RFC3339] [--repo NAME] [--no-culprit-finding] [--no-dynamics] [--format parquet|arrow|csv] --out DIR"

func runSynth(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "synth", synthUsage)
	profile := fs.String("profile", "ios", "monorepo profile: "+strings.Join(synth.Profiles, ", "))
	days := fs.Float64("days", 14, "length of the arrival window in days")
	seed := fs.Uint64("seed", 1, "random seed; the same flags and seed give byte-identical files")
	rate := fs.Float64("rate", 0, "mean first submissions per hour over a week (0 = the profile's default)")
	flaky := fs.Float64("flaky", 0, "probability that a build fails for infrastructure reasons (0 = the profile's default)")
	workers := fs.Int("workers", 0, "builds that can run at once (0 = the profile's default)")
	start := fs.String("start", "", "start of the window, RFC 3339 (default "+synth.DefaultStart.Format(time.RFC3339)+")")
	repo := fs.String("repo", "", "repo column value (default: the profile name)")
	noCulprit := fs.Bool("no-culprit-finding", false, "leave out the builds that find the culprits of a rejection (see go doc synth.Simulate)")
	noDynamics := fs.Bool("no-dynamics", false, "a world that does not change while it runs: no episodes, drift or skill changes (see go doc synth.Dynamics)")
	format := fs.String("format", "parquet", "output format: parquet, arrow or csv")
	out := fs.String("out", "", "history folder to write (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := datasets.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("%w: --format: %w", errUsage, err)
	}
	cfg := synth.Config{
		Profile: *profile, Days: *days, Seed: *seed, ChangesPerHour: *rate,
		FlakyRate: *flaky, Workers: *workers, Repo: *repo, NoCulpritFinding: *noCulprit, NoDynamics: *noDynamics,
	}
	if *start != "" {
		if cfg.Start, err = time.Parse(time.RFC3339, *start); err != nil {
			return fmt.Errorf("%w: --start: %w", errUsage, err)
		}
	}
	if e.isTerminal {
		last := -1
		cfg.Progress = func(done float64) {
			if pct := int(100 * done); pct != last {
				last = pct
				fmt.Fprintf(e.stderr, "\rsynth: simulating %s, %3d%%", cfg.Profile, pct)
			}
		}
	}
	t0 := time.Now()
	w, err := synth.Simulate(ctx, cfg)
	if e.isTerminal {
		fmt.Fprintln(e.stderr)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := datasets.WriteHistory(ctx, *out, w.History, f); err != nil {
		return err
	}
	printSynthSummary(e, w, *out, time.Since(t0))
	return nil
}

// printSynthSummary writes what the history holds to e.stderr, or logs it as one
// record with --log-format json.
func printSynthSummary(e *env, world *synth.World, out string, took time.Duration) {
	h := world.History
	s := synth.Summarize(h)
	c := world.Config
	w := e.summaryText()
	e.summaryLog("synthesized history", "profile", c.Profile, "days", c.Days, "start", c.Start, "seed", c.Seed, "out", out,
		"changes", s.Changes, "landed", s.Landed, "rejected", s.Rejected, "builds", len(h.Builds), "pairs", s.Pairs,
		"conflicted", s.Conflicted, "took", took.Round(time.Millisecond))
	fmt.Fprintf(w, "synth: %s, %g days from %s, %.1f changes/hour, flaky %.3g, %d workers, seed %d -> %s (%s)\n",
		c.Profile, c.Days, c.Start.Format(time.RFC3339), c.ChangesPerHour, c.FlakyRate, c.Workers, c.Seed, out, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  changes  %d (landed %d, rejected %d; resubmissions %d)\n", s.Changes, s.Landed, s.Rejected, s.Resubmissions)
	fmt.Fprintf(w, "  builds   %d (succeeded %d, failed %d, infra_failed %d, aborted %d)\n", len(h.Builds),
		s.Builds[datasets.StatusSucceeded], s.Builds[datasets.StatusFailed], s.Builds[datasets.StatusInfraFailed], s.Builds[datasets.StatusAborted])
	fmt.Fprintf(w, "    of which culprit finding after a rejection %d (succeeded %d, failed %d, infra_failed %d)\n",
		s.Culprit[datasets.StatusSucceeded]+s.Culprit[datasets.StatusFailed]+s.Culprit[datasets.StatusInfraFailed],
		s.Culprit[datasets.StatusSucceeded], s.Culprit[datasets.StatusFailed], s.Culprit[datasets.StatusInfraFailed])
	share := 0.0
	if s.Pairs > 0 {
		share = float64(s.Conflicted) / float64(s.Pairs)
	}
	fmt.Fprintf(w, "  pairs    %d (conflicted %d, share %.3f)\n", s.Pairs, s.Conflicted, share)
	var b strings.Builder
	for _, p := range synth.ConflictCurve(h) {
		if p.N == 2 || p.N == 4 || p.N == 8 || p.N == 16 || p.N == 32 {
			fmt.Fprintf(&b, " N=%d: %.3f (%d)", p.N, p.Share(), p.Changes)
		}
	}
	fmt.Fprintf(w, "  changes with a real conflict by concurrent overlapping changes:%s\n", b.String())
}
