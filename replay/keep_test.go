package replay

import (
	"context"
	"testing"

	"github.com/sqpredict/sqpredict/queue"
)

// TestKeepMarginAbortsLess replays half a day under sq2019 and sq2024 with and without
// a keep margin of 4: the invariant holds either way (a run without error), every change
// gets its true outcome, and keeping running builds aborts a smaller share of them.
func TestKeepMarginAbortsLess(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 3)
	for _, s := range []string{"sq2019", "sq2024"} {
		var aborted [2]float64
		for k, margin := range []float64{0, 4} {
			st := Setting{Strategy: s, Probs: "truth", Workers: 30, Threshold: 0.05, KeepMargin: margin, Seed: 7}
			aborted[k] = runTrue(t, w, st).AbortedShare
		}
		if !(aborted[1] < aborted[0]) {
			t.Errorf("%s: aborted share %.3f with a keep margin of 4, %.3f without", s, aborted[1], aborted[0])
		}
		t.Logf("%s: aborted share %.3f without a keep margin, %.3f with 4", s, aborted[0], aborted[1])
	}
}

// runTrue replays w under st and fails the test unless every change is decided with its
// true outcome (the engine checks the invariant on every decision); it returns the
// run's metrics.
func runTrue(t *testing.T, w *World, st Setting) queue.Metrics {
	t.Helper()
	res, err := Run(context.Background(), w, st, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Records {
		if !r.Decided || r.Landed != w.Lands[i] {
			t.Fatalf("%v, keep margin %v, learning %v: change %d decided=%v landed=%v, truth %v", st, st.KeepMargin, !st.NoLearning, i, r.Decided, r.Landed, w.Lands[i])
		}
	}
	return queue.Summarize(res)
}
