package gbm

import (
	"sync"
	"sync/atomic"
)

// workPool runs parallel loops on goroutines that live as long as the pool, so that
// the many short loops of growing a tree (a histogram and a split search per leaf, tens
// of thousands in a fit) do not start goroutines each time. The goroutine that calls
// forEach works on the loop too, as worker 0. Fit owns one for the whole fit and
// closes it at the end.
type workPool struct {
	workers int
	start   chan *poolLoop
	loop    poolLoop // reused by every forEach: calls never overlap
}

// poolLoop is one forEach call: items [0, n) handed out one at a time.
type poolLoop struct {
	n    int
	next atomic.Int64
	fn   func(worker, i int)
	wg   sync.WaitGroup
}

// newWorkPool starts workers-1 goroutines (none for workers <= 1).
func newWorkPool(workers int) *workPool {
	p := &workPool{workers: max(workers, 1), start: make(chan *poolLoop)}
	for w := 1; w < p.workers; w++ {
		go func() {
			for l := range p.start {
				l.work(w)
				l.wg.Done()
			}
		}()
	}
	return p
}

// work runs items of l as worker w until none is left.
func (l *poolLoop) work(w int) {
	for {
		i := int(l.next.Add(1) - 1)
		if i >= l.n {
			return
		}
		l.fn(w, i)
	}
}

// forEach calls fn(worker, i) for i in [0, n) on at most workers goroutines of the
// pool (the caller's included) and returns when all calls have; worker numbers are
// below the pool's size, and calls with the same number never overlap. Calls of
// forEach on one pool must not overlap (Fit's grower makes them one at a time).
func (p *workPool) forEach(n, workers int, fn func(worker, i int)) {
	workers = min(workers, p.workers, n)
	if workers <= 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	l := &p.loop
	l.n, l.fn = n, fn
	l.next.Store(0)
	defer func() { l.fn = nil }()
	l.wg.Add(workers - 1)
	for range workers - 1 {
		p.start <- l
	}
	l.work(0)
	l.wg.Wait()
}

// close stops the pool's goroutines; the pool must not be used afterwards.
func (p *workPool) close() { close(p.start) }

// parallel runs fn over [0, n) on at most workers goroutines: on g's pool when it has
// one (Fit's grower), else on goroutines started for the call (parallelFor).
func (g *grower) parallel(n, workers int, fn func(worker, i int)) {
	if g.pool != nil {
		g.pool.forEach(n, workers, fn)
		return
	}
	parallelFor(n, workers, fn)
}
