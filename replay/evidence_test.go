package replay

import (
	"math"
	"testing"

	"github.com/sqpredict/sqpredict/queue"
)

// evidenceWorld is change 2 with changes 0 and 1 ahead of it, P-conf 0.2 and 0.5, and
// P-succ 0.8.
func evidenceWorld() *World {
	return &World{
		Traffic: queue.Traffic{Changes: []queue.Change{{ID: "a"}, {ID: "b"}, {ID: "c", Ahead: []int{0, 1}}}},
		PConf:   [][]float64{nil, nil, {0.2, 0.5}},
		PSucc:   []float64{0.9, 0.9, 0.8},
	}
}

// TestEvidenceBayes checks the updated P-succ and P-conf against Bayes' rule worked out
// by hand for the world of evidenceWorld (good G with prior 0.8; conflicts with 0 and 1
// independent, 0.2 and 0.5).
func TestEvidenceBayes(t *testing.T) {
	w := evidenceWorld()
	src := trueProbs{w}
	const tol = 1e-12
	check := func(name string, ev *evidence, good, c0, c1 float64) {
		t.Helper()
		p := learned{Probs: src, w: w, ev: ev}
		if got := p.PSucc(2); math.Abs(got-good) > tol {
			t.Errorf("%s: P-good %v, want %v", name, got, good)
		}
		if got := p.PConf(2, 0); math.Abs(got-c0) > tol {
			t.Errorf("%s: P-conf with 0 %v, want %v", name, got, c0)
		}
		if got := p.PConf(2, 1); math.Abs(got-c1) > tol {
			t.Errorf("%s: P-conf with 1 %v, want %v", name, got, c1)
		}
	}
	ev := newEvidence(3)
	check("no build", ev, 0.8, 0.2, 0.5)

	// Failed alone on HEAD: only a bad change fails there.
	ev = newEvidence(3)
	ev.failed[2] = [][]int{nil}
	check("failed on HEAD", ev, 0, 0.2, 0.5)

	// Failed with 0: P(fail | G) = 0.2, so P(G | fail) = 0.8·0.2 / (0.8·0.2 + 0.2) = 4/9;
	// given G, the conflict with 0 is certain.
	ev = newEvidence(3)
	ev.failed[2] = [][]int{{0}}
	check("failed with 0", ev, 0.16/0.36, 1, 0.5)

	// Failed with 0 and 1: P(fail | G) = 1 − 0.8·0.5 = 0.6, P(G | fail) = 0.48 / 0.68;
	// given G, P(conflict with 0) = 0.2 / 0.6 and with 1 0.5 / 0.6.
	ev = newEvidence(3)
	ev.failed[2] = [][]int{{0, 1}}
	check("failed with 0 and 1", ev, 0.48/0.68, 0.2/0.6, 0.5/0.6)

	// Succeeded with 0: good, compatible with 0; a failure with both then blames 1.
	ev = newEvidence(3)
	ev.good[2], ev.ok[2] = true, []int{0}
	check("succeeded with 0", ev, 1, 0, 0.5)
	ev.failed[2] = [][]int{{0, 1}}
	check("succeeded with 0, failed with 0 and 1", ev, 1, 0, 1)
}

// TestLearningKeepsMainlineGreen replays half a day under the SubmitQueue strategies
// with and without learning from finished builds: every change gets its true outcome
// (the engine checks every decision). What learning is worth is measured by replays at
// scale (BENCHMARKS.md): on half a day at 30 workers it moves builds per change by less
// than a percent either way.
func TestLearningKeepsMainlineGreen(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 3)
	for _, s := range []string{"sq2019", "sq2024"} {
		var builds [2]float64
		for k, learn := range []bool{false, true} {
			st := Setting{Strategy: s, Probs: "truth", Workers: 30, Threshold: 0.05, KeepMargin: 4, NoLearning: !learn, Seed: 7}
			builds[k] = runTrue(t, w, st).BuildsPerChange
		}
		t.Logf("%s: %.3f builds per change without learning, %.3f with", s, builds[0], builds[1])
	}
}
