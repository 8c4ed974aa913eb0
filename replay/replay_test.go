package replay

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/queue"
)

// smallWorld simulates a synthetic ios world of the given length.
func smallWorld(t testing.TB, days float64, seed uint64) (*World, *synth.World) {
	t.Helper()
	sw, err := synth.Simulate(context.Background(), synth.Config{Profile: "ios", Days: days, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	w, err := FromSynth(sw)
	if err != nil {
		t.Fatal(err)
	}
	return w, sw
}

// TestEveryStrategyKeepsMainlineGreen replays half a day under every strategy: the
// engine checks every decision against the truth, so a run without error is the test;
// on top of it every change is decided with its true outcome.
func TestEveryStrategyKeepsMainlineGreen(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 3)
	byName := map[string]queue.Metrics{}
	for _, s := range Strategies {
		for _, probs := range []string{"truth", "constant:0.9,0.1"} {
			if probs != "truth" && s != "sq2024" {
				continue
			}
			res, err := Run(context.Background(), w, Setting{Strategy: s, Probs: probs, Workers: 30, Threshold: 0.05, Seed: 7}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res.Records {
				if !r.Decided || r.Landed != w.Lands[i] {
					t.Fatalf("%s: change %d decided=%v landed=%v, truth %v", s, i, r.Decided, r.Landed, w.Lands[i])
				}
			}
			if probs == "truth" {
				byName[s] = queue.Summarize(res)
			}
		}
	}
	for _, name := range []string{"oracle", "oracle-bypass", "single"} {
		if byName[name].AbortedShare != 0 {
			t.Errorf("%s aborted builds: %v", name, byName[name].AbortedShare)
		}
	}
	// The oracles run one build per change plus the reruns of infrastructure failures.
	for _, name := range []string{"oracle", "oracle-bypass"} {
		o := byName[name]
		if got, want := float64(o.Builds)*(1-o.InfraShare), float64(o.Changes); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %v builds with a result, want %v", name, got, want)
		}
	}
	// The bypassing oracle is a lower bound on every strategy, and on the builds of every
	// strategy but batch, which builds several changes in one build.
	o := byName["oracle-bypass"]
	for name, m := range byName {
		if m.TurnaroundP50 < o.TurnaroundP50 || name != "batch" && m.BuildsPerChange < o.BuildsPerChange-1e-9 {
			t.Errorf("%s beats oracle-bypass: p50 %v < %v or builds %v < %v", name, m.TurnaroundP50, o.TurnaroundP50, m.BuildsPerChange, o.BuildsPerChange)
		}
	}
	if s := byName["single"]; s.TurnaroundP50 <= byName["sq2019"].TurnaroundP50 {
		t.Errorf("single's p50 %v not behind sq2019's %v", s.TurnaroundP50, byName["sq2019"].TurnaroundP50)
	}
}

// TestFromHistoryRecoversTruth writes a world to a folder and reads it back: the truth
// recovered from the builds must be the one the simulation drew.
func TestFromHistoryRecoversTruth(t *testing.T) {
	w, sw := smallWorld(t, 0.5, 5)
	dir := filepath.Join(t.TempDir(), "h")
	ctx := context.Background()
	if err := datasets.WriteHistory(ctx, dir, sw.History, datasets.FormatCSV); err != nil {
		t.Fatal(err)
	}
	h, _, err := datasets.ReadHistory(ctx, dir, datasets.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := FromHistory(h, sw.Params, sw.Config.FlakyRate)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Synthetic || !slices.Equal(r.Lands, w.Lands) {
		t.Fatal("outcomes differ")
	}
	// Goodness matters only for changes whose builds can show it; all of these have
	// culprit finding, so every change's goodness is known.
	if !slices.Equal(r.Good, w.Good) {
		n := 0
		for i := range r.Good {
			if r.Good[i] != w.Good[i] {
				n++
			}
		}
		t.Errorf("%d of %d goodness values differ", n, len(r.Good))
	}
	for i := range w.Traffic.Changes {
		if !slices.Equal(w.Traffic.Changes[i].Ahead, r.Traffic.Changes[i].Ahead) {
			t.Fatalf("change %d: edges differ", i)
		}
	}
}

func TestTruthDraws(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 2)
	tr1, tr2 := w.Truth(1), w.Truth(2)
	// A change with a conflicting change ahead: its build fails with it and succeeds
	// without it when the change is good.
	found := false
	for i, conf := range w.Conflicted {
		if len(conf) == 0 || !w.Good[i] {
			continue
		}
		found = true
		if d := tr1.Build(i, conf[:1], 1, 0); d.Succeeds {
			t.Errorf("change %d succeeded with its conflict %d", i, conf[0])
		}
		if d := tr1.Build(i, nil, 0, 0); !d.Succeeds {
			t.Errorf("good change %d failed alone", i)
		}
		a, b := tr1.Build(i, conf[:1], 1, 0), tr1.Build(i, conf[:1], 1, 0)
		if a != b {
			t.Errorf("the same build drew %+v and %+v", a, b)
		}
		break
	}
	if !found {
		t.Fatal("no good change with a conflict in the world")
	}
	// Durations are log-normal with the world's parameters: check the mean of ln(d)
	// over many seeds for one change, tolerance 4 standard errors (plus rounding).
	const n = 4000
	i := 0
	m, s := w.Params.Duration.LogParams(&w.History.Changes[w.Index[i]], 0)
	sum, diff := 0.0, 0
	for seed := range uint64(n) {
		d := w.Truth(seed).Build(i, nil, 0, 0)
		if !d.Infra {
			sum += math.Log(d.Duration)
		}
		if d != tr2.Build(i, nil, 0, 0) {
			diff++
		}
	}
	infra := 0
	for seed := range uint64(n) {
		if w.Truth(seed).Build(i, nil, 0, 0).Infra {
			infra++
		}
	}
	if got := sum / float64(n-infra); math.Abs(got-m) > 4*s/math.Sqrt(n)+1e-3 {
		t.Errorf("mean log duration %v, want %v", got, m)
	}
	if rate, se := float64(infra)/n, math.Sqrt(w.Flaky*(1-w.Flaky)/n); math.Abs(rate-w.Flaky) > 4*se {
		t.Errorf("infra rate %v, want %v", rate, w.Flaky)
	}
	if diff < n/2 {
		t.Errorf("seeds do not change the draws: %d of %d differ", diff, n)
	}
}

func TestRetime(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 2)
	tr := w.Retime(300, 9)
	n := len(tr.Changes)
	mean := tr.Changes[n-1].Arrival / float64(n-1)
	// Exponential gaps of mean 12 s (floored per arrival, not per gap): the mean gap has
	// a standard error of 12/sqrt(n).
	if want := 3600.0 / 300; math.Abs(mean-want) > 4*want/math.Sqrt(float64(n-1))+1 {
		t.Errorf("mean gap %v, want %v", mean, want)
	}
	for i := range tr.Changes {
		if tr.Changes[i].ID != w.Traffic.Changes[i].ID || !slices.Equal(tr.Changes[i].Ahead, w.Traffic.Changes[i].Ahead) {
			t.Fatal("retiming changed the changes")
		}
	}
}

func TestParseProbs(t *testing.T) {
	w, _ := smallWorld(t, 0.2, 2)
	for _, bad := range []string{"", "bundle", "constant:0.5", "constant:2,0", "constant:a,b"} {
		if _, err := ParseProbs(w, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p, err := ParseProbs(w, "constant:0.8,0.2")
	if err != nil || p.PSucc(0) != 0.8 || p.PConf(0, 0) != 0.2 {
		t.Errorf("constant: %v %v", p, err)
	}
}
