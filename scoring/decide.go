package scoring

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// Verdict is what may happen to a pending change now.
type Verdict uint8

// The verdicts of Decide.
const (
	// Wait means the change cannot be decided yet.
	Wait Verdict = iota
	// Land means the change may land now.
	Land
	// Reject means the change may be rejected now.
	Reject
)

// String returns "wait", "land" or "reject".
func (v Verdict) String() string {
	switch v {
	case Wait:
		return "wait"
	case Land:
		return "land"
	case Reject:
		return "reject"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// WaitReason says why a change waits.
type WaitReason uint8

// The reasons a change waits.
const (
	// NotWaiting is the reason of a decided change.
	NotWaiting WaitReason = iota
	// WaitDecidingBuild: no conflicting change is pending ahead and the one build that
	// decides the change has not finished.
	WaitDecidingBuild
	// WaitPaths: conflicting changes are pending ahead and not every speculation path
	// over them has a finished build, but those that finished agree.
	WaitPaths
	// WaitPathsDisagree: finished paths gave different results, so the change must wait
	// until the conflicting changes ahead are decided (BLRD cannot apply).
	WaitPathsDisagree
)

// String returns the reason's name as it appears in the proto enum, lower case.
func (r WaitReason) String() string {
	switch r {
	case NotWaiting:
		return "not_waiting"
	case WaitDecidingBuild:
		return "deciding_build"
	case WaitPaths:
		return "paths_pending"
	case WaitPathsDisagree:
		return "paths_disagree"
	}
	return fmt.Sprintf("WaitReason(%d)", uint8(r))
}

// Decision is the verdict on one pending change.
type Decision struct {
	// Change is the index of the change in Queue.Changes.
	Change int
	// Verdict is land, reject or wait.
	Verdict Verdict
	// Bypassed holds, for a land or reject verdict, the conflicting changes still
	// pending ahead that the change bypasses (BLRD, paper 003); empty when the change was
	// decided by its one deciding build.
	Bypassed []int
	// Reason says why a waiting change waits; NotWaiting for land and reject.
	Reason WaitReason
	// WaitingFor holds, for a waiting change, the conflicting changes pending ahead of it.
	WaitingFor []int
	// PathsFinished is the number of distinct speculation paths over WaitingFor (or
	// Bypassed) that have a finished build; PathsTotal is 2^len of that set.
	PathsFinished int
	PathsTotal    float64
}

// Decide returns a decision for every change of q, in queue order. A change is decided
// when the build on the path of the outcomes of all conflicting changes ahead has
// finished, or, by BLRD (paper 003), when every speculation path over the conflicting
// changes still pending ahead has a finished build and all of them have the same result:
// it then lands (all succeeded) or is rejected (all failed) now, bypassing them.
//
// Decisions cascade in queue order: a change decided here counts as landed or rejected
// for the changes behind it, whose builds must then assume that outcome (paper 003:
// after a change lands it is part of the new main branch). Builds whose path contradicts
// such an outcome are ignored, and so are builds on a stale base (Build.StaleBase).
// Two finished builds on the same path with different results count as disagreeing
// paths.
//
// Decide returns an error wrapping ErrInvalidQueue for a malformed queue.
func Decide(q Queue) ([]Decision, error) {
	return DecideContext(context.Background(), q)
}

// DecideContext is Decide that stops with an error wrapping ctx.Err() when ctx is done.
func DecideContext(ctx context.Context, q Queue) ([]Decision, error) {
	g, err := q.validate()
	if err != nil {
		return nil, err
	}
	defer g.release()
	d, _, err := decideContext(ctx, &q, g)
	if err != nil {
		return nil, fmt.Errorf("scoring: deciding: %w", err)
	}
	return d, nil
}

// Outcome states of a change while deciding.
const (
	pending  int8 = 0
	landed   int8 = 1
	rejected int8 = -1
)

// pathResult is the result of one finished build keyed by its path.
type pathResult struct {
	key uint64
	ok  bool
}

// decideContext implements Decide on a validated queue; it also returns the state of
// every change (pending, landed or rejected) for the speculation that follows. It
// checks ctx every ctxCheckEvery changes and builds.
func decideContext(ctx context.Context, q *Queue, g *graph) ([]Decision, []int8, error) {
	n := len(q.Changes)
	state := make([]int8, n)
	finished := make([][]int, n)
	for b, bd := range q.Builds {
		if bd.Status != BuildRunning && !bd.StaleBase {
			finished[bd.Change] = append(finished[bd.Change], b)
		}
	}
	inPath := make([]bool, n)
	out := make([]Decision, n)
	var results []pathResult
	// arena backs the Bypassed and WaitingFor lists: at most one entry per conflict.
	arena := make([]int, 0, len(g.ahead))
	// work counts the path entries and conflicts visited, for the context checks.
	work := 0
	for j := range n {
		row := g.row(j)
		work += len(row) + 1
		if work >= ctxCheckEvery {
			work = 0
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		start := len(arena)
		for _, e := range row {
			if state[e.k] == pending {
				arena = append(arena, int(e.k))
			}
		}
		pend := arena[start:len(arena):len(arena)]
		if len(pend) == 0 {
			pend = nil
		}
		results = results[:0]
		for _, b := range finished[j] {
			bd := q.Builds[b]
			work += len(bd.Path) + len(row)
			for _, k := range bd.Path {
				inPath[k] = true
			}
			key, ok := pathKey(row, state, inPath)
			for _, k := range bd.Path {
				inPath[k] = false
			}
			if ok {
				results = append(results, pathResult{key: key, ok: bd.Status == BuildSucceeded})
			}
		}
		slices.SortFunc(results, func(a, b pathResult) int { return cmp.Compare(a.key, b.key) })
		distinct, agree := 0, true
		for t, r := range results {
			if t == 0 || r.key != results[t-1].key {
				distinct++
			}
			if r.ok != results[0].ok {
				agree = false
			}
		}
		d := Decision{Change: j, PathsFinished: distinct, PathsTotal: math.Ldexp(1, len(pend))}
		r := len(pend)
		switch {
		case agree && distinct > 0 && r < 63 && distinct == 1<<r:
			d.Verdict, state[j] = Reject, rejected
			if results[0].ok {
				d.Verdict, state[j] = Land, landed
			}
			d.Bypassed = pend
		case r == 0:
			d.Reason = WaitDecidingBuild
			if !agree {
				d.Reason = WaitPathsDisagree
			}
		case !agree:
			d.Reason, d.WaitingFor = WaitPathsDisagree, pend
		default:
			d.Reason, d.WaitingFor = WaitPaths, pend
		}
		out[j] = d
	}
	return out, state, nil
}

// pathKey returns the key of a build path (marked in inPath) over the pending changes of
// row, and whether the path agrees with the changes of row already decided.
func pathKey(row []edge, state []int8, inPath []bool) (uint64, bool) {
	var key uint64
	for _, e := range row {
		switch state[e.k] {
		case landed:
			if !inPath[e.k] {
				return 0, false
			}
		case rejected:
			if inPath[e.k] {
				return 0, false
			}
		default:
			if inPath[e.k] {
				key ^= zobrist(int(e.k))
			}
		}
	}
	return key, true
}
