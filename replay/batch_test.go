package replay

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/queue"
	"github.com/sqpredict/sqpredict/scoring"
)

// exactRatio is the tolerance of ratios of small integer counts, which only rounding
// of one division separates from the exact value.
const exactRatio = 1e-12

// handWorld returns a synthetic world of n changes that all arrive at time 0: the
// changes of bad are intrinsically bad, and conf[i] lists the changes ahead of change i
// that it truly conflicts with (the conflict edges, ascending, P-conf 0.5). P-succ is
// 0.9, builds last about ten minutes and none fails for an infrastructure reason.
func handWorld(n int, bad []int, conf map[int][]int) *World {
	h := &datasets.History{Changes: make([]datasets.Change, n)}
	w := &World{
		Name: "hand", Synthetic: true, History: h, Index: make([]int, n),
		Traffic: queue.Traffic{Changes: make([]queue.Change, n)},
		PConf:   make([][]float64, n), Conflicted: make([][]int, n),
		Good: make([]bool, n), Lands: make([]bool, n), PSucc: make([]float64, n),
		Mu: make([]float64, n), Sigma: make([]float64, n), Family: scoring.BuildLogNormal,
		Params: synth.Params{Duration: synth.DurationModel{Intercept: math.Log(600), Sigma: 0.2}},
	}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		h.Changes[i].ChangeID = id
		w.Index[i] = i
		w.Traffic.Changes[i] = queue.Change{ID: id, Ahead: conf[i]}
		w.Conflicted[i] = conf[i]
		for range conf[i] {
			w.PConf[i] = append(w.PConf[i], 0.5)
		}
		w.Good[i] = !slices.Contains(bad, i)
		w.PSucc[i], w.Mu[i], w.Sigma[i] = 0.9, 600, 120
	}
	for i := range n {
		w.Lands[i] = w.Good[i] && !slices.ContainsFunc(conf[i], func(k int) bool { return w.Lands[k] })
	}
	return w
}

// runBatch replays w under batch with batch size b (BatchAuto: from probs) and checks
// that every change got its true outcome (the engine checked every decision).
func runBatch(t *testing.T, w *World, b int, probs string, workers int) (*queue.Result, queue.Metrics) {
	t.Helper()
	res, err := Run(context.Background(), w, Setting{Strategy: "batch", Probs: probs, Workers: workers, BatchSize: b, Seed: 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Records {
		if !r.Decided || r.Landed != w.Lands[i] {
			t.Fatalf("change %d decided=%v landed=%v, truth %v", i, r.Decided, r.Landed, w.Lands[i])
		}
	}
	return res, queue.Summarize(res)
}

// TestBatchAllGood: with every change good, 16 changes waiting take ceil(16/b) builds,
// one per batch, whatever the pool.
func TestBatchAllGood(t *testing.T) {
	for _, c := range []struct{ b, workers, want int }{
		{1, 1, 16}, {3, 1, 6}, {4, 1, 4}, {4, 4, 4}, {8, 1, 2}, {16, 2, 1}, {32, 1, 1},
	} {
		t.Run(fmt.Sprintf("b=%d,workers=%d", c.b, c.workers), func(t *testing.T) {
			w := handWorld(16, nil, nil)
			_, m := runBatch(t, w, c.b, "truth", c.workers)
			if m.Builds != c.want || m.AbortedShare != 0 {
				t.Errorf("builds %d (aborted share %v), want %d", m.Builds, m.AbortedShare, c.want)
			}
			if got, want := m.BuildsPerChange, float64(c.want)/16; math.Abs(got-want) > exactRatio {
				t.Errorf("builds per change %v, want %v", got, want)
			}
		})
	}
}

// TestBatchBisection puts one bad change at every place of a batch of 8. By hand: the
// batch fails; a half containing the bad change is built and fails, a good first half
// is built and lands, and the second half after a good first half is the failed build
// again, split without a build. With F(n, k, known) the builds to settle a group of n
// whose bad change is k-th (halves of ceil(n/2) and the rest):
//
//	F(1, 0, no) = 1, F(1, 0, yes) = 0
//	F(n, k, known) = [not known] + (k < h ? F(h, k, no) + 1 : 1 + F(n−h, k−h, yes))
//
// which gives 7, 6, 6, 5, 6, 5, 5, 4 for k = 0..7.
func TestBatchBisection(t *testing.T) {
	want := []int{7, 6, 6, 5, 6, 5, 5, 4}
	for k, builds := range want {
		t.Run(fmt.Sprintf("bad=%d", k), func(t *testing.T) {
			w := handWorld(8, []int{k}, nil)
			res, m := runBatch(t, w, 8, "truth", 3)
			if m.Builds != builds || m.Rejected != 1 || m.Landed != 7 {
				t.Errorf("builds %d, landed %d, rejected %d; want %d, 7, 1", m.Builds, m.Landed, m.Rejected, builds)
			}
			if first := res.Builds[0]; first.BatchSize != 8 || first.Status != queue.Failed {
				t.Errorf("first build %+v, want the failed batch of 8", first)
			}
		})
	}
}

// TestBatchConflictingPair: a batch of 4 holding two changes that conflict fails, and
// bisection lands the one ahead and rejects the one behind, as the truth has it.
func TestBatchConflictingPair(t *testing.T) {
	cases := []struct {
		name   string
		conf   map[int][]int
		builds int
	}{
		// The batch fails; {0, 1} lands; {2, 3} (the failed batch again) is split: 2
		// alone fails; 3 alone lands (the failed batch no longer speaks for it).
		{"across halves", map[int][]int{2: {1}}, 4},
		// The batch fails; {0, 1} fails; 0 alone lands; 1 is rejected on {0, 1}'s
		// build; {2, 3} is built (its first half did not all land) and lands.
		{"in one half", map[int][]int{1: {0}}, 4},
		// Every change conflicts with 0: 0 lands, the others are rejected.
		{"with everything", map[int][]int{1: {0}, 2: {0}, 3: {0}}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := handWorld(4, nil, c.conf)
			_, m := runBatch(t, w, 4, "truth", 2)
			if m.Builds != c.builds {
				t.Errorf("builds %d, want %d", m.Builds, c.builds)
			}
		})
	}
}

// TestBatchKeepsMainlineGreen replays half a synthetic day under fixed and automatic
// batch sizes: the engine checks every decision, and runBatch every outcome. A batch
// of one is single: the same builds for every change.
func TestBatchKeepsMainlineGreen(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 3)
	single, err := Run(context.Background(), w, Setting{Strategy: "single", Probs: "truth", Workers: 30, Seed: 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b     int
		probs string
	}{{1, "truth"}, {4, "truth"}, {16, "truth"}, {BatchAuto, "truth"}, {BatchAuto, "constant:0.9,0.1"}} {
		res, m := runBatch(t, w, c.b, c.probs, 30)
		t.Logf("b=%d %s: %.3f builds per change, p50 %.1f min", c.b, c.probs, m.BuildsPerChange, m.TurnaroundP50/60)
		if c.b != 1 {
			continue
		}
		for i, r := range res.Records {
			if s := single.Records[i]; r.Builds != s.Builds {
				t.Fatalf("change %d: %d builds with batches of one, %d under single", i, r.Builds, s.Builds)
			}
		}
	}
	if _, err := Run(context.Background(), w, Setting{Strategy: "batch", Probs: "truth", Workers: 30, BatchSize: -2}, nil, nil); err == nil {
		t.Error("batch size -2 accepted")
	}
}

// TestBatchAutoSize: the automatic size is scoring's best two-phase size for the P-succ
// of the changes waiting, large when they are likely to succeed and 1 when they are not.
func TestBatchAutoSize(t *testing.T) {
	const n = 32
	var sizes []int
	for _, q := range []float64{0.99, 0.9, 0.5} {
		w := handWorld(n, nil, nil)
		res, m := runBatch(t, w, BatchAuto, fmt.Sprintf("constant:%v,0", q), 1)
		best, err := scoring.BestBatchSizeList(scoring.TwoPhase, slices.Repeat([]float64{q}, n))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Builds[0].BatchSize; got != best.Best {
			t.Errorf("P-succ %v: first batch of %d, want scoring's best size %d", q, got, best.Best)
		}
		sizes = append(sizes, res.Builds[0].BatchSize)
		t.Logf("P-succ %v: first batch of %d, %d builds", q, res.Builds[0].BatchSize, m.Builds)
	}
	if !(sizes[0] > sizes[1] && sizes[1] > sizes[2] && sizes[2] == 1) {
		t.Errorf("sizes %v for P-succ 0.99, 0.9, 0.5: want decreasing to 1", sizes)
	}
	// P-conf of a pending conflicting change ahead lowers P-succ in the batch: with
	// every change behind change 0 and P-conf 0.5, P-succ 0.99 gives batches of one.
	conf := map[int][]int{}
	for i := 1; i < n; i++ {
		conf[i] = []int{0}
	}
	w := handWorld(n, nil, conf)
	res, _ := runBatch(t, w, BatchAuto, "constant:0.99,0.5", 1)
	if got := res.Builds[0].BatchSize; got != 1 {
		t.Errorf("with P-conf 0.5: first batch of %d, want 1", got)
	}
}

// TestBatchInfraFailures: a batch that fails for an infrastructure reason is built again,
// so with every change good the builds with a result are still one per batch.
func TestBatchInfraFailures(t *testing.T) {
	w := handWorld(16, nil, nil)
	w.Flaky = 0.3
	_, m := runBatch(t, w, 4, "truth", 2)
	if m.InfraShare == 0 {
		t.Fatal("no infrastructure failure: the test proves nothing")
	}
	if got := float64(m.Builds) * (1 - m.InfraShare); math.Abs(got-4) > exactRatio*float64(m.Builds) {
		t.Errorf("%v builds with a result (%d builds, infra share %v), want 4", got, m.Builds, m.InfraShare)
	}
}
