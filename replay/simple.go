package replay

import (
	"slices"

	"github.com/sqpredict/sqpredict/queue"
)

// decideReady returns the decisions possible now without speculation: walking the
// pending changes in queue order, a change none of whose conflicting changes ahead is
// pending (counting those this walk decides) is decided by a finished live build whose
// content agrees with the walk's decisions. Strategies return these alone, before
// planning builds, so that their paths never name a change decided at this instant.
func decideReady(v *queue.View, now map[int]bool) []queue.Decision {
	clear(now)
	var out []queue.Decision
	for _, i := range v.Pending() {
		ready := true
		for _, k := range v.Change(i).Ahead {
			if _, dec := now[k]; v.IsPending(k) && !dec {
				ready = false
				break
			}
		}
		if !ready {
			continue
		}
		for _, id := range v.Builds(i) {
			b := v.Build(id)
			if b.Status == queue.Running || !agrees(b.Content, v.Change(i).Ahead, now) {
				continue
			}
			land := b.Status == queue.Succeeded
			now[i] = land
			out = append(out, queue.Decision{Change: i, Land: land})
			break
		}
	}
	return out
}

// agrees reports whether content holds exactly the members of ahead decided landed in
// now (members not in now were decided before, which live builds already agree with).
func agrees(content, ahead []int, now map[int]bool) bool {
	for _, k := range ahead {
		land, ok := now[k]
		if !ok {
			continue
		}
		if _, in := slices.BinarySearch(content, k); in != land {
			return false
		}
	}
	return true
}

// pathBuild returns the live build of change i whose current path equals path (both
// ascending), or -1.
func pathBuild(v *queue.View, i int, path []int, scratch []int) int {
	for _, id := range v.Builds(i) {
		if slices.Equal(v.Path(id, scratch[:0]), path) {
			return id
		}
	}
	return -1
}

// Oracle knows every outcome: it builds each pending change once, as soon as a worker
// is free, on its true path (the pending conflicting changes ahead that truly land).
//
// NewOracle is paper 001 §8's Oracle: it decides a change when that build has finished
// and no conflicting change ahead of it is pending, so conflicting changes are decided
// in queue order and only the serialisation of conflicting changes separates its
// turnaround from the build times (paper 001 §8.1, Figures 9 and 10). Strategies that
// bypass (BLRD) can beat it.
//
// NewOracleBypass decides a change as soon as its build finishes, before conflicting
// changes ahead are decided (its result on the true path is the one that counts, as BLRD
// would prove by building every path). It is a lower bound on every strategy: the green
// mainline invariant requires that finished build before any decision.
type Oracle struct {
	w      *World
	bypass bool
}

// NewOracle returns the queue-order oracle of w ("oracle").
func NewOracle(w *World) *Oracle { return &Oracle{w: w} }

// NewOracleBypass returns the bypassing oracle of w ("oracle-bypass").
func NewOracleBypass(w *World) *Oracle { return &Oracle{w: w, bypass: true} }

// Name implements queue.Strategy.
func (o *Oracle) Name() string {
	if o.bypass {
		return "oracle-bypass"
	}
	return "oracle"
}

// Plan implements queue.Strategy.
func (o *Oracle) Plan(v *queue.View) (queue.Actions, error) {
	var a queue.Actions
	for _, i := range v.Pending() {
		if !o.bypass && slices.ContainsFunc(v.Change(i).Ahead, v.IsPending) {
			continue // decided once the conflicting changes ahead are
		}
		for _, id := range v.Builds(i) {
			if b := v.Build(id); b.Status != queue.Running {
				a.Decisions = append(a.Decisions, queue.Decision{Change: i, Land: b.Status == queue.Succeeded})
				break
			}
		}
	}
	if len(a.Decisions) > 0 {
		return a, nil
	}
	free := v.Free()
	var path []int
	for _, i := range v.Pending() {
		if free == 0 {
			break
		}
		if len(v.Builds(i)) > 0 {
			continue // its one build runs
		}
		path = path[:0]
		for _, k := range v.Change(i).Ahead {
			if v.IsPending(k) && o.w.Lands[k] {
				path = append(path, k)
			}
		}
		a.Start = append(a.Start, queue.Start{Change: i, Path: slices.Clone(path)})
		free--
	}
	return a, nil
}

// Single is bors as paper 001 describes it: a change is built, on HEAD, only once no
// conflicting change ahead of it is pending; independent changes build in parallel.
type Single struct{ now map[int]bool }

// NewSingle returns the single-queue strategy.
func NewSingle() *Single { return &Single{now: map[int]bool{}} }

// Name implements queue.Strategy.
func (s *Single) Name() string { return "single" }

// Plan implements queue.Strategy.
func (s *Single) Plan(v *queue.View) (queue.Actions, error) {
	if d := decideReady(v, s.now); len(d) > 0 {
		return queue.Actions{Decisions: d}, nil
	}
	var a queue.Actions
	free := v.Free()
	var ahead []int
	for _, i := range v.Pending() {
		if free == 0 {
			break
		}
		if len(v.Builds(i)) > 0 || len(v.PendingAhead(i, ahead[:0])) > 0 {
			continue
		}
		a.Start = append(a.Start, queue.Start{Change: i})
		free--
	}
	return a, nil
}

// Optimistic is Zuul's speculation: every pending change builds on the path where all
// pending conflicting changes ahead land, except those known to fail: a change whose
// build on its own current assumed path failed. When that set changes, builds on the
// old path are aborted and the change is rebuilt.
type Optimistic struct {
	now   map[int]bool
	fails map[int]bool
}

// NewOptimistic returns the optimistic strategy.
func NewOptimistic() *Optimistic {
	return &Optimistic{now: map[int]bool{}, fails: map[int]bool{}}
}

// Name implements queue.Strategy.
func (o *Optimistic) Name() string { return "optimistic" }

// Plan implements queue.Strategy.
func (o *Optimistic) Plan(v *queue.View) (queue.Actions, error) {
	if d := decideReady(v, o.now); len(d) > 0 {
		return queue.Actions{Decisions: d}, nil
	}
	var a queue.Actions
	clear(o.fails)
	free := v.Free()
	var path, scratch []int
	var starts []queue.Start
	for _, i := range v.Pending() {
		path = path[:0]
		for _, k := range v.Change(i).Ahead {
			if v.IsPending(k) && !o.fails[k] {
				path = append(path, k)
			}
		}
		on := -1
		for _, id := range v.Builds(i) {
			if slices.Equal(v.Path(id, scratch[:0]), path) {
				on = id
				if v.Build(id).Status == queue.Failed {
					o.fails[i] = true
				}
			} else if v.Build(id).Status == queue.Running {
				a.Abort = append(a.Abort, id)
				free++
			}
		}
		if on < 0 {
			starts = append(starts, queue.Start{Change: i, Path: slices.Clone(path)})
		}
	}
	a.Start = starts[:min(len(starts), free)]
	return a, nil
}
