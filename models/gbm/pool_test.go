package gbm

import (
	"bytes"
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
// (partitions and gradient gathers of more than 4·rowChunk rows) gives the same model
// on 1, 2 and 3 threads, with constant hessians (regression) and without (binary).
func TestFitThreadsLarge(t *testing.T) {
	t.Parallel()
	const n = 5 * rowChunk
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
