package scoring

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Change is one pending change of the queue, as the speculation math sees it. Changes
// are identified by their index in Queue.Changes, which is the arrival (queue) order.
type Change struct {
	// Arrival is the time the change entered the queue, in seconds from any fixed
	// origin shared by the whole queue.
	Arrival float64
	// PSucc is the probability that the change's build succeeds on its own, on HEAD
	// (P-succ of paper 001 §4.2).
	PSucc float64
	// BuildMu and BuildSigma are the combined build time of the change, in seconds (see
	// CombineBuildTimes). They only matter for the policies that use P(FT_y < FT_x).
	BuildMu, BuildSigma float64
	// BuildFamily is the shape of the build-time distribution with mean BuildMu and
	// standard deviation BuildSigma; the zero value is BuildNormal (Phi(Z)). A
	// BuildLogNormal change needs BuildMu > 0 when BuildSigma > 0.
	BuildFamily BuildFamily
}

// Conflict is an edge of the conflict graph between two pending changes. The change
// earlier in the queue is the one ahead, whichever of the two fields holds it.
type Conflict struct {
	// A and B are indices into Queue.Changes; they must differ.
	A, B int
	// PConf is the probability that the change behind fails on a path that contains the
	// change ahead, given that both succeed alone (the conflict label of ARCHITECTURE.md).
	// The joint probability of paper 001 Equation 4 is PSucc(behind) × PConf.
	PConf float64
}

// BuildStatus is the state of a build the engine has already started.
type BuildStatus uint8

// The states of a started build.
const (
	// BuildRunning is a build still executing.
	BuildRunning BuildStatus = iota
	// BuildSucceeded is a finished build whose steps all passed.
	BuildSucceeded
	// BuildFailed is a finished build with a failed step. Infrastructure failures and
	// aborted builds are not outcomes of the change; do not report them.
	BuildFailed
)

// String returns "running", "succeeded" or "failed".
func (s BuildStatus) String() string {
	switch s {
	case BuildRunning:
		return "running"
	case BuildSucceeded:
		return "succeeded"
	case BuildFailed:
		return "failed"
	}
	return fmt.Sprintf("BuildStatus(%d)", uint8(s))
}

// Build is a build of a pending change that is running or has finished.
type Build struct {
	// Change is the index of the change the build decides.
	Change int
	// Path holds the indices of the changes ahead assumed landed, in any order. Changes
	// ahead that are absent are assumed rejected; entries that do not conflict with
	// Change do not matter. Changes that already landed are part of HEAD and are not
	// named at all.
	Path []int
	// Status is the build's state.
	Status BuildStatus
	// StaleBase reports that the build ran on a base that lacks a change which has
	// landed since and conflicts with Change: its result says nothing about the
	// current mainline. A stale build decides nothing (Decide ignores it), does not
	// make its node a finished one (Speculate may select the node again, so that the
	// engine rebuilds it) and is aborted when running.
	StaleBase bool
}

// Queue is the input of the speculation math: the pending changes in arrival order, the
// conflict edges between them and the builds already started.
type Queue struct {
	Changes   []Change
	Conflicts []Conflict
	Builds    []Build
}

// edge is one conflicting change ahead: its index and P-conf.
type edge struct {
	k int32
	c float64
}

// graph is the conflict graph in compressed rows: ahead[start[i]:start[i+1]] are the
// changes ahead of i that conflict with it, in queue order.
type graph struct {
	start []int32
	ahead []edge
}

func (g *graph) row(i int) []edge { return g.ahead[g.start[i]:g.start[i+1]] }

// checkProb reports whether p is a probability.
func checkProb(p float64) bool { return p >= 0 && p <= 1 }

// validate checks q and builds its conflict graph.
func (q *Queue) validate() (*graph, error) {
	n := len(q.Changes)
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d changes, at most %d", ErrInvalidQueue, n, math.MaxInt32)
	}
	for i, c := range q.Changes {
		switch {
		case !checkProb(c.PSucc):
			return nil, fmt.Errorf("%w: change %d: p_succ %v outside [0, 1]", ErrInvalidQueue, i, c.PSucc)
		case math.IsNaN(c.Arrival) || math.IsInf(c.Arrival, 0):
			return nil, fmt.Errorf("%w: change %d: arrival %v is not finite", ErrInvalidQueue, i, c.Arrival)
		case math.IsNaN(c.BuildMu) || math.IsInf(c.BuildMu, 0):
			return nil, fmt.Errorf("%w: change %d: build mu %v is not finite", ErrInvalidQueue, i, c.BuildMu)
		case !(c.BuildSigma >= 0) || math.IsInf(c.BuildSigma, 0):
			return nil, fmt.Errorf("%w: change %d: build sigma %v is not finite and non-negative", ErrInvalidQueue, i, c.BuildSigma)
		case !c.BuildFamily.valid():
			return nil, fmt.Errorf("%w: change %d: unknown build family %v", ErrInvalidQueue, i, c.BuildFamily)
		case c.BuildFamily == BuildLogNormal && c.BuildSigma > 0 && !(c.BuildMu > 0):
			return nil, fmt.Errorf("%w: change %d: log-normal build mu %v is not positive", ErrInvalidQueue, i, c.BuildMu)
		}
	}
	g := &graph{start: make([]int32, n+1), ahead: getEdges(len(q.Conflicts))}
	// sorted reports that the conflicts come ordered by the change behind, then the
	// change ahead, as compressed rows store them: then they are copied in one pass.
	sorted, prevHi, prevLo := true, -1, -1
	for e, c := range q.Conflicts {
		if c.A < 0 || c.A >= n || c.B < 0 || c.B >= n {
			return nil, fmt.Errorf("%w: conflict %d: change index (%d, %d) outside [0, %d)", ErrInvalidQueue, e, c.A, c.B, n)
		}
		if c.A == c.B {
			return nil, fmt.Errorf("%w: conflict %d: change %d conflicts with itself", ErrInvalidQueue, e, c.A)
		}
		if !checkProb(c.PConf) {
			return nil, fmt.Errorf("%w: conflict %d: p_conf %v outside [0, 1]", ErrInvalidQueue, e, c.PConf)
		}
		lo, hi := min(c.A, c.B), max(c.A, c.B)
		g.start[hi+1]++
		if sorted {
			switch {
			case hi == prevHi && lo == prevLo:
				return nil, fmt.Errorf("%w: duplicate conflict between changes %d and %d", ErrInvalidQueue, lo, hi)
			case hi > prevHi || hi == prevHi && lo > prevLo:
				g.ahead[e] = edge{k: int32(lo), c: c.PConf}
				prevHi, prevLo = hi, lo
			default:
				sorted = false
			}
		}
	}
	for i := range n {
		g.start[i+1] += g.start[i]
	}
	if sorted {
		if err := q.validateBuilds(); err != nil {
			return nil, err
		}
		return g, nil
	}
	fill := make([]int32, n)
	// unsorted marks the rows that did not arrive in queue order; only they are sorted
	// and checked for duplicates after the fill.
	var unsorted []int
	for _, c := range q.Conflicts {
		lo, hi := min(c.A, c.B), max(c.A, c.B)
		at := g.start[hi] + fill[hi]
		if fill[hi] > 0 && g.ahead[at-1].k >= int32(lo) {
			if g.ahead[at-1].k == int32(lo) {
				return nil, fmt.Errorf("%w: duplicate conflict between changes %d and %d", ErrInvalidQueue, lo, hi)
			}
			if len(unsorted) == 0 || unsorted[len(unsorted)-1] != hi {
				unsorted = append(unsorted, hi)
			}
		}
		g.ahead[at] = edge{k: int32(lo), c: c.PConf}
		fill[hi]++
	}
	for _, i := range unsorted {
		row := g.row(i)
		slices.SortFunc(row, cmpEdge)
		for t := 1; t < len(row); t++ {
			if row[t].k == row[t-1].k {
				return nil, fmt.Errorf("%w: duplicate conflict between changes %d and %d", ErrInvalidQueue, row[t].k, i)
			}
		}
	}
	if err := q.validateBuilds(); err != nil {
		return nil, err
	}
	return g, nil
}

// validateBuilds checks the builds of q.
func (q *Queue) validateBuilds() error {
	n := len(q.Changes)
	for b, bd := range q.Builds {
		if bd.Change < 0 || bd.Change >= n {
			return fmt.Errorf("%w: build %d: change %d outside [0, %d)", ErrInvalidQueue, b, bd.Change, n)
		}
		if bd.Status > BuildFailed {
			return fmt.Errorf("%w: build %d: unknown status %d", ErrInvalidQueue, b, bd.Status)
		}
		for _, k := range bd.Path {
			if k < 0 || k >= bd.Change {
				return fmt.Errorf("%w: build %d: path change %d is not ahead of change %d", ErrInvalidQueue, b, k, bd.Change)
			}
		}
	}
	return nil
}

func cmpEdge(a, b edge) int { return int(a.k) - int(b.k) }

// edgePool recycles the compressed rows of conflict graphs between calls: at tens of
// thousands of conflicts they are the largest allocation of a call. Every element is
// overwritten by validate, so recycled buffers need no clearing.
var edgePool sync.Pool

func getEdges(n int) []edge {
	if p, ok := edgePool.Get().(*[]edge); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]edge, n)
}

// release returns g's rows to the pool; g must not be used afterwards.
func (g *graph) release() {
	e := g.ahead[:0]
	g.ahead = nil
	edgePool.Put(&e)
}

// zobrist returns a fixed pseudo-random 64-bit key for change i (splitmix64), so that a
// set of changes hashes to the XOR of its members' keys.
func zobrist(i int) uint64 {
	z := uint64(i)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
