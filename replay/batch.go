package replay

import (
	"fmt"
	"slices"

	"github.com/sqpredict/sqpredict/queue"
	"github.com/sqpredict/sqpredict/scoring"
)

// DefaultBatchSize is the batch size of the batch strategy when none is given. It is
// the size with the fewest expected builds per change under scoring's batching cost
// for changes that succeed nine times out of ten (one-phase 1 + 1/b − 0.9^b is least at
// b = 4: 0.604, 0.594 and 0.610 builds per change for b = 3, 4 and 5).
const DefaultBatchSize = 4

// BatchAuto, as Setting.BatchSize, makes the batch strategy choose each batch's size
// from the P-succ of the changes waiting (NewBatchAuto).
const BatchAuto = -1

// Batch is the strategy of merge queues that batch and bisect (bors, for one) on
// the conflict graph: a batch of up to b waiting changes is built as one build on the
// current mainline, each change on the path of the changes of the batch ahead of it.
// If the build succeeds, every change of the batch lands. If it fails, the batch is
// bisected: its first half is built on the mainline, then its second half on top of
// whatever of the first half landed, each half that fails being split again, until
// every failing change is isolated and rejected. A second half whose first half
// all landed is the failed build over again (the same changes on the same mainline),
// so it is split without being built, and a single change in that position is
// rejected on the failed build. Conflicting changes of one batch are no different: the
// batch fails, and bisection lands the one ahead and rejects the one behind, as the
// truth has it. A build that fails for an infrastructure reason is run again.
//
// A change joins a batch only when every pending conflicting change ahead of it is in
// the same batch, ahead of it: a change behind a batch under way waits for it, as
// single (bors without batches) waits for a conflicting change ahead, and batches of
// unrelated changes run side by side, one worker each. A batch starts as soon as a
// worker is free, with the changes waiting then (fewer than b if fewer wait), so
// batches fill up when the queue is busy. With b = 1 it runs the builds single runs.
type Batch struct {
	// size is the fixed batch size, or 0 when probs chooses it.
	size int
	// probs and maxSize choose the size of each batch when size is 0.
	probs   Probs
	maxSize int

	// runs holds the batches under way, oldest first; owner[i] reports that change i
	// is in one of them.
	runs  []*batchRun
	owner []bool
	// stamp[i] == gen marks change i as a member of the batch being formed.
	stamp []uint64
	gen   uint64
	p     []float64
}

// batchRun is one batch being decided: the groups of its changes still undecided, in
// queue order. The first group is built (or known to fail) and decided before the next
// one is built.
type batchRun struct {
	groups []batchGroup
}

// batchGroup is a part of a batch that is built as one build.
type batchGroup struct {
	members []int
	// started reports that its build was asked for.
	started bool
	// failed, when not nil, holds the changes of a failed build this group ends: once
	// every change of failed before the group has landed, that build is the group's
	// build on the current mainline, so the group is known to fail without a build.
	failed []int
}

// NewBatch returns the batch strategy for the n changes of a traffic with the fixed
// batch size b ≥ 1.
func NewBatch(n, b int) *Batch {
	if b < 1 {
		panic("replay: batch size below 1")
	}
	return &Batch{size: b, owner: make([]bool, n), stamp: make([]uint64, n)}
}

// NewBatchAuto returns the batch strategy for the n changes of a traffic that chooses
// the size of each batch from the probabilities probs: among the first maxSize changes
// that may join it, the size with the fewest expected builds per change under
// scoring.BestBatchSizeList with scoring.TwoPhase (a batch, then its halves, then
// single changes: the first step of bisection, whose cost it bounds from above). A
// change's P-succ there is its P-succ on the current mainline times 1 − P-conf for
// every pending conflicting change ahead of it (all of them are in the batch).
func NewBatchAuto(n int, probs Probs, maxSize int) *Batch {
	if maxSize < 1 {
		panic("replay: largest batch size below 1")
	}
	return &Batch{probs: probs, maxSize: maxSize, owner: make([]bool, n), stamp: make([]uint64, n)}
}

// Name implements queue.Strategy.
func (s *Batch) Name() string { return "batch" }

// Plan implements queue.Strategy.
func (s *Batch) Plan(v *queue.View) (queue.Actions, error) {
	var a queue.Actions
	for _, r := range s.runs {
		a.Decisions = s.resolve(v, r, a.Decisions)
	}
	s.runs = slices.DeleteFunc(s.runs, func(r *batchRun) bool { return len(r.groups) == 0 })
	if len(a.Decisions) > 0 {
		return a, nil // decided alone, so that no path names a change decided now
	}
	free := v.Free()
	for _, r := range s.runs {
		if free == 0 {
			return a, nil
		}
		if g := &r.groups[0]; !g.started {
			if err := startGroup(v, &a, g.members); err != nil {
				return a, err
			}
			g.started = true
			free--
		}
	}
	return a, s.form(v, &a, free)
}

// resolve decides what the finished build of batch r's first group allows and moves to
// the next group, appending the decisions to dec. It stops at a group that needs a
// build or whose build runs, and after a group's decisions (the next group's path
// depends on them).
func (s *Batch) resolve(v *queue.View, r *batchRun, dec []queue.Decision) []queue.Decision {
	for len(r.groups) > 0 {
		g := &r.groups[0]
		var failed []int
		switch {
		case !g.started && s.knownToFail(v, g):
			failed = g.failed
		case !g.started:
			return dec
		default:
			id := groupBuild(v, g.members)
			if id < 0 {
				g.started = false // an infrastructure failure: build it again
				return dec
			}
			switch v.Build(id).Status {
			case queue.Running:
				return dec
			case queue.Succeeded:
				for _, i := range g.members {
					dec = append(dec, queue.Decision{Change: i, Land: true})
					s.owner[i] = false
				}
				r.groups = r.groups[1:]
				return dec
			}
			failed = g.members
		}
		if len(g.members) == 1 {
			s.owner[g.members[0]] = false
			r.groups = r.groups[1:]
			return append(dec, queue.Decision{Change: g.members[0]})
		}
		h := (len(g.members) + 1) / 2
		halves := []batchGroup{{members: g.members[:h]}, {members: g.members[h:], failed: failed}}
		r.groups = append(halves, r.groups[1:]...)
	}
	return dec
}

// knownToFail reports whether group g, not built, is the end of a failed build every
// other change of which has landed.
func (s *Batch) knownToFail(v *queue.View, g *batchGroup) bool {
	if g.failed == nil {
		return false
	}
	for _, i := range g.failed[:len(g.failed)-len(g.members)] {
		if !v.Landed(i) {
			g.failed = nil
			return false
		}
	}
	return true
}

// groupBuild returns the live build of exactly the changes members (in that order),
// or -1.
func groupBuild(v *queue.View, members []int) int {
	ids := v.Builds(members[0])
	for x := len(ids) - 1; x >= 0; x-- {
		id := ids[x]
		if b := v.Build(id); b.Batch != id || b.BatchSize != len(members) {
			continue
		}
		same := true
		for t, i := range members {
			if v.Build(id+t).Change != i {
				same = false
				break
			}
		}
		if same {
			return id
		}
	}
	return -1
}

// startGroup asks for one build of members on the current mainline, each on the path
// of its pending conflicting changes ahead, which must all be members ahead of it.
func startGroup(v *queue.View, a *queue.Actions, members []int) error {
	bt := make([]queue.Start, len(members))
	for t, i := range members {
		path := v.PendingAhead(i, nil)
		for _, k := range path {
			if !slices.Contains(members[:t], k) {
				return fmt.Errorf("replay: batch: change %s waits for change %s, which is not ahead of it in its batch", v.Change(i).ID, v.Change(k).ID)
			}
		}
		bt[t] = queue.Start{Change: i, Path: path}
	}
	a.Batches = append(a.Batches, bt)
	return nil
}

// form starts new batches on up to free workers from the pending changes in queue order
// that are in no batch and none of whose pending conflicting changes ahead is in a
// batch under way or waits outside the batch being formed.
func (s *Batch) form(v *queue.View, a *queue.Actions, free int) error {
	pend := v.Pending()
	limit := s.size
	if limit == 0 {
		limit = s.maxSize
	}
	var cand, at []int
	for pos := 0; free > 0; free-- {
		s.gen++
		cand, at = cand[:0], at[:0]
		for ; pos < len(pend) && len(cand) < limit; pos++ {
			if i := pend[pos]; !s.owner[i] && s.joins(v, i) {
				s.stamp[i] = s.gen
				cand, at = append(cand, i), append(at, pos)
			}
		}
		if len(cand) == 0 {
			return nil
		}
		b := len(cand)
		if s.size == 0 {
			var err error
			if b, err = s.autoSize(v, cand); err != nil {
				return err
			}
		}
		pos = at[b-1] + 1 // the candidates after the batch are looked at again
		members := slices.Clone(cand[:b])
		for _, i := range members {
			s.owner[i] = true
		}
		s.runs = append(s.runs, &batchRun{groups: []batchGroup{{members: members, started: true}}})
		if err := startGroup(v, a, members); err != nil {
			return err
		}
	}
	return nil
}

// joins reports whether every pending conflicting change ahead of change i is in the
// batch being formed.
func (s *Batch) joins(v *queue.View, i int) bool {
	for _, k := range v.Change(i).Ahead {
		if v.IsPending(k) && s.stamp[k] != s.gen {
			return false
		}
	}
	return true
}

// autoSize returns the size of the batch made of the first changes of cand (see
// NewBatchAuto).
func (s *Batch) autoSize(v *queue.View, cand []int) (int, error) {
	s.p = s.p[:0]
	for _, i := range cand {
		ahead := v.Change(i).Ahead
		p := pSuccOnHead(s.probs, ahead, v.Landed, i)
		for t, k := range ahead {
			if v.IsPending(k) {
				p *= 1 - s.probs.PConf(i, t)
			}
		}
		if !(p >= 0 && p <= 1) {
			return 0, fmt.Errorf("replay: batch: P-succ %v of change %s from %s is not a probability", p, v.Change(i).ID, s.probs.Name())
		}
		s.p = append(s.p, p)
	}
	best, err := scoring.BestBatchSizeList(scoring.TwoPhase, s.p)
	if err != nil {
		return 0, fmt.Errorf("replay: batch: size of %d changes from %s: %w", len(cand), s.probs.Name(), err)
	}
	return best.Best, nil
}
