package gbm

import (
	"runtime"
	"sync/atomic"
	"time"
)

// workPool runs parallel loops on goroutines that live as long as the pool, so that
// the many short loops of growing a tree (a histogram and a split search per leaf, tens
// of thousands in a fit) do not start goroutines each time. The goroutine that calls
// forEach works on the loop too, as worker 0. Fit owns one for the whole fit and
// closes it at the end.
//
// Between loops the workers poll for the next one for up to spinWait before they
// sleep, and the caller polls for the workers to finish before it sleeps: a loop
// takes a few hundred microseconds, and waking a sleeping thread takes tens of them on
// a virtual machine (a futex wake and an interrupt to a halted virtual CPU), twice per
// loop. LightGBM's OpenMP threads spin between parallel regions for the same reason,
// but for far longer, which is ruinous when the machine is busy.
type workPool struct {
	workers int
	// spin is whether waits poll first: not when the pool has more goroutines than
	// GOMAXPROCS, where a polling goroutine could keep one with work off its P.
	spin bool
	// gen counts the loops started (and the close); workers wait for it to change.
	gen atomic.Uint64
	// pending counts the workers that have not finished the current loop.
	pending atomic.Int64
	closed  atomic.Bool
	loop    poolLoop  // reused by every forEach: calls never overlap
	sleep   []sleeper // sleep[w] is where worker w sleeps; 0 is forEach's caller
	t0      time.Time // the origin of sleeper.wokenAt
}

// poolLoop is one forEach call: items [0, n) handed out one at a time to the first
// workers workers.
type poolLoop struct {
	n, workers int
	next       atomic.Int64
	fn         func(worker, i int)
}

// sleeper is how a waiting goroutine that stopped polling is woken, and how its
// waits went.
type sleeper struct {
	asleep atomic.Bool
	wake   chan struct{} // capacity 1
	// wokenAt is when wakeUp last sent a token, since the pool's t0.
	wokenAt atomic.Int64
	// score rises by one for each wait that polling would cover (at most spinWait)
	// and falls by two for each longer one, within [0, scoreMax]; the goroutine
	// polls only while it is at least scoreMax/2, that is while more than two in
	// three of its waits are short. Only the goroutine itself reads and writes it.
	score int
	_     [32]byte // one cache line per sleeper: each is written by its own goroutine
}

// scoreMax bounds sleeper.score: a change of machine load turns polling off or on
// within a few loops.
const scoreMax = 16

// spinWait is how long a goroutine of the pool polls before it sleeps: about a
// wake-up, and longer than nine in ten of the gaps between two loops of a fit (median
// 2 µs, 90th percentile 24 µs, 113 loops per tree at 100k rows × 50 features). Not
// longer: on a loaded machine the goroutine waited for may lose its CPU for
// milliseconds, and every poll then takes CPU time from it (polling 100 µs made a
// two-thread fit at load 8 a third slower than sleeping at once). There most waits
// are long, and sleeper.score turns polling off.
const spinWait = 30 * time.Microsecond

// newWorkPool starts workers-1 goroutines (none for workers <= 1).
func newWorkPool(workers int) *workPool {
	p := &workPool{workers: max(workers, 1), t0: time.Now()}
	p.spin = p.workers <= runtime.GOMAXPROCS(0)
	p.sleep = make([]sleeper, p.workers)
	for w := range p.sleep {
		p.sleep[w].wake = make(chan struct{}, 1)
		p.sleep[w].score = scoreMax
	}
	for w := 1; w < p.workers; w++ {
		go p.worker(w)
	}
	return p
}

// worker runs the loops of the pool as worker w until the pool is closed.
func (p *workPool) worker(w int) {
	var seen uint64
	for {
		p.await(w, func() bool { return p.gen.Load() != seen })
		seen = p.gen.Load()
		if p.closed.Load() {
			return
		}
		if l := &p.loop; w < l.workers {
			l.work(w)
		}
		if p.pending.Add(-1) == 0 {
			p.wakeUp(0)
		}
	}
}

// await returns once ready reports true, for goroutine w of the pool: it polls for up
// to spinWait (while most of its waits are that short), then sleeps until wakeUp(w).
// Whoever makes ready true calls wakeUp(w) afterwards. A wake-up may be spurious (a
// token left from an earlier one), so ready is checked again after each.
func (p *workPool) await(w int, ready func() bool) {
	s := &p.sleep[w]
	if ready() {
		s.note(0)
		return
	}
	start := time.Now()
	spin := p.spin && s.score >= scoreMax/2
	for i := 1; !ready(); i++ {
		if i%64 != 0 {
			continue
		}
		if spin && time.Since(start) < spinWait {
			if i%1024 == 0 {
				// A goroutine this one woke may wait on this P (its next to run),
				// and so may others when every P is busy: let them run every few
				// microseconds, not at every poll (Gosched takes the scheduler's
				// lock).
				runtime.Gosched()
			}
			continue
		}
		for {
			// asleep is set before ready is read, and wakeUp reads asleep after ready
			// turned true, so one of the two sees the other.
			s.asleep.Store(true)
			if ready() {
				s.asleep.Store(false)
				s.note(time.Since(start))
				return
			}
			<-s.wake
			s.asleep.Store(false)
			if ready() {
				// The wait lasted until the token was sent, not until now: the
				// wake-up's own delay is what polling saves.
				s.note(time.Duration(s.wokenAt.Load()) - start.Sub(p.t0))
				return
			}
		}
	}
	s.note(time.Since(start))
}

// note updates s.score with a wait of d.
func (s *sleeper) note(d time.Duration) {
	if d <= spinWait {
		s.score = min(s.score+1, scoreMax)
	} else {
		s.score = max(s.score-2, 0)
	}
}

// wakeUp wakes goroutine w of the pool if it sleeps in await.
func (p *workPool) wakeUp(w int) {
	s := &p.sleep[w]
	if s.asleep.Load() {
		s.wokenAt.Store(int64(time.Since(p.t0)))
		select {
		case s.wake <- struct{}{}:
		default: // a token is there already
		}
	}
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
	l.n, l.workers, l.fn = n, workers, fn
	l.next.Store(0)
	// Every worker acknowledges every loop, so that none reads l after it returns.
	p.pending.Store(int64(p.workers - 1))
	p.gen.Add(1)
	for w := 1; w < p.workers; w++ {
		p.wakeUp(w)
	}
	l.work(0)
	p.await(0, func() bool { return p.pending.Load() == 0 })
	l.fn = nil
}

// close stops the pool's goroutines; the pool must not be used afterwards.
func (p *workPool) close() {
	p.closed.Store(true)
	p.gen.Add(1)
	for w := 1; w < p.workers; w++ {
		p.wakeUp(w)
	}
}

// parallel runs fn over [0, n) on at most workers goroutines: on g's pool when it has
// one (Fit's grower), else on goroutines started for the call (parallelFor).
func (g *grower) parallel(n, workers int, fn func(worker, i int)) {
	if g.pool != nil {
		g.pool.forEach(n, workers, fn)
		return
	}
	parallelFor(n, workers, fn)
}
