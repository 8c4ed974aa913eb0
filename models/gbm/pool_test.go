package gbm

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWorkPool checks that forEach calls fn once per item, with worker numbers below
// the pool's size that never run two calls at once, for several loops on one pool.
func TestWorkPool(t *testing.T) {
	t.Parallel()
	const size = 3
	p := newWorkPool(size)
	defer p.close()
	for _, tc := range []struct{ n, workers int }{{0, 3}, {1, 3}, {5, 1}, {100, 2}, {1000, 3}, {1000, 8}} {
		calls := make([]atomic.Int32, tc.n)
		var busy [size]atomic.Int32
		var bad atomic.Bool
		p.forEach(tc.n, tc.workers, func(w, i int) {
			if w < 0 || w >= size || busy[w].Add(1) != 1 {
				bad.Store(true)
				return
			}
			calls[i].Add(1)
			busy[w].Add(-1)
		})
		if bad.Load() {
			t.Errorf("forEach(%d, %d): a worker number out of range or used twice at once", tc.n, tc.workers)
		}
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("forEach(%d, %d) called item %d %d times, want 1", tc.n, tc.workers, i, c)
			}
		}
	}
}

// TestFitThreadsLarge checks that a fit large enough for the parallel row loops
// (gradients, scores, gathers and partitions of 2·rowChunk rows or more) gives the
// same model on 1, 2 and 3 threads, with constant hessians (regression) and without
// (binary).
func TestFitThreadsLarge(t *testing.T) {
	t.Parallel()
	const n = 20 * rowChunk
	x, y := friedman(n, 1, 9)
	yb := make([]float64, n)
	for i, v := range y {
		if v > 14 {
			yb[i] = 1
		}
	}
	for _, tc := range []struct {
		obj string
		y   []float64
	}{{ObjectiveRegression, y}, {ObjectiveBinary, yb}} {
		var want []byte
		for _, threads := range []int{1, 2, 3} {
			m, err := Fit(x, tc.y, nil, Config{Objective: tc.obj, NumIterations: 4, NumLeaves: 15, NumThreads: threads})
			if err != nil {
				t.Fatal(err)
			}
			// The parameters section names the thread count; the trees must not differ.
			got, _, _ := bytes.Cut(modelText(t, m), []byte("parameters:"))
			if want == nil {
				want = got
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s: the model on %d threads differs from the one on 1 thread", tc.obj, threads)
			}
		}
	}
}

// BenchmarkPoolForEach measures one forEach of two 20-microsecond-sized items on a pool
// of two: the hand-off and the wait that every histogram and split search of a fit
// pays. Ideal is the time of one item; a sleeping worker adds its wake-up, twice.
func BenchmarkPoolForEach(b *testing.B) {
	p := newWorkPool(2)
	defer p.close()
	var sink [2]float64
	work := func(w, i int) {
		s := 1.0
		for k := range 20000 {
			s = s*1.0000001 + float64(k&7)
		}
		sink[w] += s
	}
	for b.Loop() {
		p.forEach(2, 2, work)
	}
	benchFloat = sink[0] + sink[1]
}

// benchFloat keeps benchmark results alive.
var benchFloat float64

// TestFitBadGradientRowThreads checks that a custom objective's bad gradients and
// hessians are reported at the first bad row on 1, 2 and 3 threads: Fit checks them in
// chunks of rows on its pool, and two chunks hold a bad row here.
func TestFitBadGradientRowThreads(t *testing.T) {
	t.Parallel()
	const n = 3 * rowChunk
	x, y := friedman(n, 1, 5)
	for _, tc := range []struct {
		name      string
		bad       func(g, h []float64)
		wantInErr string
	}{
		{"NaN gradient", func(g, h []float64) { g[rowChunk+7] = math.NaN(); g[2*rowChunk+1] = math.Inf(1) },
			fmt.Sprintf("gradient of row %d is NaN", rowChunk+7)},
		{"negative hessian", func(g, h []float64) { h[2*rowChunk+3] = -1; h[2*rowChunk+9] = math.NaN() },
			fmt.Sprintf("hessian of row %d is -1", 2*rowChunk+3)},
	} {
		for _, threads := range []int{1, 2, 3} {
			grad := func(g, h, score, y, w []float64) {
				for i := range g {
					g[i], h[i] = score[i]-y[i], 1
				}
				tc.bad(g, h)
			}
			_, err := Fit(x, y, nil, Config{Gradient: grad, NumIterations: 2, NumThreads: threads})
			if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("%s on %d threads: Fit error = %v, want ErrBadData with %q", tc.name, threads, err, tc.wantInErr)
			}
		}
	}
}

// TestSleeperScore checks when a pool goroutine polls: while more than two in three of
// its waits are at most spinWait, and not once most of them are longer.
func TestSleeperScore(t *testing.T) {
	t.Parallel()
	polls := func(s *sleeper) bool { return s.score >= scoreMax/2 }
	s := &sleeper{score: scoreMax}
	long, short := 10*spinWait, spinWait/2
	for i := range 100 { // nine short waits in ten: polls throughout
		d := short
		if i%10 == 9 {
			d = long
		}
		s.note(d)
		if !polls(s) {
			t.Fatalf("wait %d: polling off with nine in ten waits short (score %d)", i, s.score)
		}
	}
	for i := range 8 { // one short wait in two: polling turns off within a few waits
		d := short
		if i%2 == 1 {
			d = long
		}
		s.note(d)
	}
	for range 20 {
		s.note(long)
		s.note(short)
	}
	if polls(s) {
		t.Errorf("polling still on after one short wait in two (score %d)", s.score)
	}
	for range scoreMax / 2 {
		s.note(short)
	}
	if !polls(s) {
		t.Errorf("polling still off after %d short waits (score %d)", scoreMax/2, s.score)
	}
}
