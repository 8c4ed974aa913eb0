package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/replay"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "replay", summary: "replay a history through the merge queue under strategies and probability sources", run: runReplay})
}

const replayUsage = "(--history DIR [--profile P] | --synth PROFILE --days N [--synth-rate R] [--synth-workers W]) " +
	"[--strategies a,b] [--probs SRC ...] [--workers N,M] [--rate R,S] [--threshold T] [--keep-margin M] [--no-learning] [--batch-size N|auto] [--seeds K] [--author-key-file F] --out DIR (required)"

func runReplay(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "replay", replayUsage)
	history := fs.String("history", "", "history folder to replay (synthetic with its truth, or real)")
	profile := fs.String("profile", "", "synthetic profile of --history (default: its repo column)")
	synthProfile := fs.String("synth", "", "replay a fresh synthetic world of this profile per seed instead of --history")
	days := fs.Float64("days", 2, "with --synth: days of arrivals")
	synthRate := fs.Float64("synth-rate", 0, "with --synth: first submissions per hour (0 = the profile's)")
	synthWorkers := fs.Int("synth-workers", 0, "with --synth: workers of the generating queue, which sets which changes are pending together (0 = the profile's)")
	strategies := &listFlag{split: true}
	fs.Var(strategies, "strategies", "strategies, comma separated (default all): "+strings.Join(replay.Strategies, ", "))
	probs := &listFlag{}
	fs.Var(probs, "probs", "probability source, repeatable: truth, constant:PSUCC,PCONF, bundle:DIR (a registry bundle folder, scored as predictd does) or pconf:SRC (the truth with SRC's P-conf, to measure what a conflict model is worth); default truth; with two or more, each is paired with the first")
	workers := &listFlag{split: true}
	fs.Var(workers, "workers", "worker counts, comma separated (default: the profile's)")
	rates := &listFlag{split: true}
	fs.Var(rates, "rate", "re-time arrivals to these changes per hour, comma separated (default: the history's times)")
	threshold := fs.Float64("threshold", 0.05, "speculation threshold of sq2024 and expected")
	noLearning := fs.Bool("no-learning", false, "sq2019, sq2024 and expected plan with the source's probabilities at submission, without learning from their finished builds")
	keepMargin := fs.Float64("keep-margin", 4, "sq2019, sq2024 and expected keep a running build unless a new node is more than this many times as likely to be needed (0: abort whatever the plan does not select)")
	batchSize := fs.String("batch-size", strconv.Itoa(replay.DefaultBatchSize), "batch: the changes built together, bisected on a failure; "+
		"auto chooses each batch's size from the waiting changes' P-succ (of --probs) with the batching cost of trainer batch")
	authorKeyFile := fs.String("author-key-file", "", "the author key of bundle:DIR sources whose authors are pseudonymised "+
		"(the key they were trained with; default $"+features.AuthorKeyEnv+")")
	seeds := fs.Int("seeds", 3, "seeds 1..K: each keys the build draws (and the world, with --synth)")
	out := fs.String("out", "", "output folder for summary.json, decisions.csv and report.html (required)")
	noDecisions := fs.Bool("no-decisions", false, "do not write decisions.csv (one row per change and run)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *out == "":
		return fmt.Errorf("%w: --out is required", errUsage)
	case (*history == "") == (*synthProfile == ""):
		return fmt.Errorf("%w: give exactly one of --history and --synth", errUsage)
	case *keepMargin != 0 && !(*keepMargin >= 1):
		return fmt.Errorf("%w: --keep-margin %v, want 0 or at least 1", errUsage, *keepMargin)
	case *seeds < 1:
		return fmt.Errorf("%w: --seeds %d, want at least 1", errUsage, *seeds)
	}
	b := replay.BatchAuto
	if *batchSize != "auto" {
		n, err := strconv.Atoi(*batchSize)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: --batch-size %q, want a positive integer or auto", errUsage, *batchSize)
		}
		b = n
	}
	key, err := features.AuthorKeyFromFlag(*authorKeyFile)
	if err != nil {
		return fmt.Errorf("--author-key-file: %w", err)
	}
	plan := replay.Plan{Strategies: strategies.values, Probs: probs.values, Threshold: *threshold, KeepMargin: *keepMargin, NoLearning: *noLearning, BatchSize: b}
	if len(plan.Strategies) == 0 {
		plan.Strategies = replay.Strategies
	}
	if len(plan.Probs) == 0 {
		plan.Probs = []string{"truth"}
	}
	for k := range *seeds {
		plan.Seeds = append(plan.Seeds, uint64(k+1))
	}
	for _, s := range workers.values {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: --workers: %q is not a positive integer", errUsage, s)
		}
		plan.Workers = append(plan.Workers, n)
	}
	for _, s := range rates.values {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || !(r > 0) {
			return fmt.Errorf("%w: --rate: %q is not a positive rate", errUsage, s)
		}
		plan.Rates = append(plan.Rates, r)
	}
	if len(plan.Rates) == 0 {
		plan.Rates = []float64{0}
	}

	var world func(seed uint64) (*replay.World, error)
	var defWorkers int
	meta := replay.Meta{Threshold: *threshold, KeepMargin: *keepMargin, NoLearning: *noLearning, Seeds: *seeds}
	if *synthProfile != "" {
		p, err := synth.LookupProfile(*synthProfile)
		if err != nil {
			return fmt.Errorf("%w: --synth: %w", errUsage, err)
		}
		defWorkers = p.Workers
		meta.Source = fmt.Sprintf("synth %s, %g days, rate %g, generating workers %d, a world per seed", *synthProfile, *days, *synthRate, *synthWorkers)
		world = func(seed uint64) (*replay.World, error) {
			sw, err := synth.Simulate(ctx, synth.Config{Profile: *synthProfile, Days: *days, Seed: seed, ChangesPerHour: *synthRate, Workers: *synthWorkers})
			if err != nil {
				return nil, err
			}
			return replay.FromSynth(sw)
		}
	} else {
		h, _, err := datasets.ReadHistory(ctx, *history, datasets.ReadOptions{})
		if err != nil {
			return err
		}
		name := *profile
		if name == "" && len(h.Changes) > 0 {
			name = h.Changes[0].Repo
		}
		var params synth.Params
		var flaky float64
		if p, err := synth.LookupProfile(name); err == nil {
			params, flaky, defWorkers = p, p.FlakyRate, p.Workers
		} else if *profile != "" {
			return fmt.Errorf("%w: --profile: %w", errUsage, err)
		}
		w, err := replay.FromHistory(h, params, flaky)
		if err != nil {
			return err
		}
		if !w.Synthetic {
			meta.Limits = replay.RealLimits
			if defWorkers == 0 {
				defWorkers = 100
			}
		}
		meta.Source = *history
		world = func(uint64) (*replay.World, error) { return w, nil }
	}
	if len(plan.Workers) == 0 {
		plan.Workers = []int{defWorkers}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var onRun func(*replay.RunOutput) error
	if !*noDecisions {
		f, err := os.Create(filepath.Join(*out, "decisions.csv"))
		if err != nil {
			return err
		}
		defer f.Close()
		dw, err := replay.NewDecisionsWriter(f)
		if err != nil {
			return err
		}
		onRun = dw.Write
	}
	t0 := time.Now()
	lastPct, lastRun := -1, -1
	progress := func(run, runs int, st replay.Setting, done float64) {
		pct := int(100 * done)
		if run == lastRun && (pct == lastPct || !e.isTerminal) {
			return
		}
		if run != lastRun && !e.isTerminal {
			fmt.Fprintf(e.stderr, "replay: run %d/%d: %s (%s)\n", run, runs, st, time.Since(t0).Round(time.Second))
		} else if e.isTerminal {
			fmt.Fprintf(e.stderr, "\rreplay: run %d/%d: %s %3d%% (%s)   ", run, runs, st, pct, time.Since(t0).Round(time.Second))
		}
		lastRun, lastPct = run, pct
	}
	cells, err := replay.Sweep(ctx, plan, func(seed uint64) (*replay.World, error) {
		w, err := world(seed)
		if err == nil && meta.World == "" {
			meta.World, meta.Synthetic, meta.Changes = w.Name, w.Synthetic, len(w.Traffic.Changes)
		}
		return w, err
	}, bundleProbs(ctx, bundleload.Options{AuthorKey: key}), progress, onRun)
	if e.isTerminal {
		fmt.Fprintln(e.stderr)
	}
	if err != nil {
		return err
	}
	sum := &replay.Summary{Meta: meta, Cells: cells}
	sum.Pairs, err = replay.PairAll(cells, plan.Probs)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(*out, "summary.json"))
	if err != nil {
		return err
	}
	if err := replay.WriteSummary(f, sum); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := replay.WriteReport(*out, sum); err != nil {
		return err
	}
	printReplayTable(e, cells)
	fmt.Fprintf(e.summaryText(), "replay: %d runs in %s -> %s\n", len(cells)*len(plan.Seeds), time.Since(t0).Round(time.Millisecond), *out)
	e.summaryLog("replayed", "runs", len(cells)*len(plan.Seeds), "out", *out, "took", time.Since(t0).Round(time.Millisecond))
	return nil
}

// bundleProbs returns the probability sources of trainer replay: bundle:DIR loads the
// registry bundle folder DIR (checksums, feature schema and author key checked, as
// predictd loads it, with the options o) once and scores each world with its scorer,
// planning with the build-time family predictd serves for it (Normal: Phi(Z); LogNormal:
// the log-normal finish order); pconf:SRC is the truth with SRC's P-conf
// (replay.PConfFrom); anything else is replay.ParseProbs.
func bundleProbs(ctx context.Context, o bundleload.Options) func(w *replay.World, spec string) (replay.Probs, error) {
	models := map[string]*server.Model{}
	var resolve func(w *replay.World, spec string) (replay.Probs, error)
	resolve = func(w *replay.World, spec string) (replay.Probs, error) {
		if inner, ok := strings.CutPrefix(spec, "pconf:"); ok {
			src, err := resolve(w, inner)
			if err != nil {
				return nil, err
			}
			return replay.PConfFrom(w, spec, src), nil
		}
		dir, ok := strings.CutPrefix(spec, "bundle:")
		if !ok {
			return replay.ParseProbs(w, spec)
		}
		m := models[dir]
		if m == nil {
			b, err := registry.LoadDir(dir, training.SchemaHash())
			if err != nil {
				return nil, fmt.Errorf("--probs %s: %w", spec, err)
			}
			if m, err = o.FromBundle(b, registry.RoleChampion); err != nil {
				return nil, fmt.Errorf("--probs %s: %w", spec, err)
			}
			models[dir] = m
		}
		return replay.NewScorerProbs(ctx, w, spec, m.Scorer, m.BuildFamily)
	}
	return resolve
}

// printReplayTable writes the main metrics of every cell to stdout; the rate of a cell
// that keeps the history's own submission times is "history".
func printReplayTable(e *env, cells []*replay.Cell) {
	fmt.Fprintf(e.stdout, "%-14s %-18s %7s %8s %9s %10s %8s %9s %9s %9s %8s\n",
		"strategy", "probs", "workers", "rate", "builds/ch", "cpu_hours", "aborted", "p50_min", "p95_min", "thru/h", "blrd")
	for _, c := range cells {
		m := c.Metrics
		fmt.Fprintf(e.stdout, "%-14s %-18s %7d %8s %9.3f %10.1f %8.3f %9.1f %9.1f %9.2f %8.3f\n",
			c.Strategy, c.Probs, c.Workers, replay.RateText(c.Rate), m["builds_per_change"].Mean, m["cpu_hours"].Mean, m["aborted_share"].Mean,
			m["turnaround_p50_s"].Mean/60, m["turnaround_p95_s"].Mean/60, m["throughput_per_hour"].Mean, m["blrd_trigger_rate"].Mean)
	}
}
