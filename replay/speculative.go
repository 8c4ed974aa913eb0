package replay

import (
	"fmt"
	"slices"

	"github.com/sqpredict/sqpredict/queue"
	"github.com/sqpredict/sqpredict/scoring"
)

// Speculative is a strategy that plans with scoring.Speculate, as predictd's
// ScoreSpeculation does: the pending changes in queue order with their P-succ and build
// times, the conflict edges between pending changes with their P-conf, the live builds
// with their paths over the pending changes, and a capacity of the whole worker pool.
// It lands and rejects what the plan decides, starts the nodes it selects and aborts
// the running builds it does not.
type Speculative struct {
	name  string
	w     *World
	probs Probs
	cfg   scoring.Config
	// Planner, when set, replaces the library call (the --via path): it must return
	// what scoring.Speculate returns for the queue and config.
	Planner func(q scoring.Queue, cfg scoring.Config) (*scoring.Plan, error)

	loc []int32
	// buf holds the slices of the last call's scoring queue, reused by the next: a
	// replay plans hundreds of thousands of times, and allocating them anew each time
	// made the garbage collector a third of a 90-day replay's CPU time.
	buf queueBuf
	// cache keeps the finish-order probabilities of pairs of pending changes from one
	// plan to the next (they do not change while both are pending).
	cache scoring.FinishCache
	// ev, when not nil, updates the probabilities with the results of finished builds
	// (see evidence).
	ev *evidence
}

// NewSpeculative returns the strategy name with the given probabilities and config
// (Capacity is set from the pool on every call).
func NewSpeculative(name string, w *World, probs Probs, cfg scoring.Config) *Speculative {
	loc := make([]int32, len(w.Traffic.Changes))
	for i := range loc {
		loc[i] = -1
	}
	return &Speculative{name: name, w: w, probs: probs, cfg: cfg, loc: loc}
}

// Name implements queue.Strategy.
func (s *Speculative) Name() string { return s.name }

// Plan implements queue.Strategy.
func (s *Speculative) Plan(v *queue.View) (queue.Actions, error) {
	probs := s.probs
	if s.ev != nil {
		s.ev.observe(v)
		probs = learned{Probs: s.probs, w: s.w, ev: s.ev}
	}
	q, pend, ids := s.buf.build(v, s.w, probs, s.loc)
	defer resetLoc(s.loc, pend)
	cfg := s.cfg
	cfg.Capacity = v.Workers()
	cfg.FinishCache = &s.cache
	plan := s.Planner
	if plan == nil {
		plan = scoring.Speculate
	}
	p, err := plan(q, cfg)
	if err != nil {
		return queue.Actions{}, fmt.Errorf("replay: speculate over %d pending changes: %w", len(pend), err)
	}
	var a queue.Actions
	for _, d := range p.Decisions {
		if d.Verdict != scoring.Wait {
			a.Decisions = append(a.Decisions, queue.Decision{Change: pend[d.Change], Land: d.Verdict == scoring.Land})
		}
	}
	for _, n := range p.Nodes {
		switch n.Action {
		case scoring.Start:
			path := make([]int, len(n.Landed))
			for t, k := range n.Landed {
				path[t] = pend[k]
			}
			a.Start = append(a.Start, queue.Start{Change: pend[n.Change], Path: path})
		case scoring.Abort:
			a.Abort = append(a.Abort, ids[n.Build])
		}
	}
	return a, nil
}

// queueBuf holds the slices of a scoring queue and of its build paths between calls.
// scoring.Speculate does not keep them: the plan it returns holds its own slices.
type queueBuf struct {
	changes   []scoring.Change
	conflicts []scoring.Conflict
	builds    []scoring.Build
	// paths backs the Path of every build, one after the other.
	paths []int
	ids   []int
	path  []int
}

// build returns the scoring queue of the pending changes of v, in the buffer's slices
// (valid until the next call): pend maps its indices to traffic indices and ids its
// builds to engine build ids. loc must be -1 everywhere; it maps traffic indices of
// pending changes to queue indices until resetLoc.
func (b *queueBuf) build(v *queue.View, w *World, probs Probs, loc []int32) (q scoring.Queue, pend []int, ids []int) {
	pend = v.Pending()
	b.changes = slices.Grow(b.changes[:0], len(pend))[:len(pend)]
	q.Changes = b.changes
	family := probs.BuildFamily()
	for l, i := range pend {
		loc[i] = int32(l)
		mu, sg := probs.BuildTime(i)
		q.Changes[l] = scoring.Change{Arrival: v.Change(i).Arrival, PSucc: pSuccOnHead(probs, v.Change(i).Ahead, v.Landed, i), BuildMu: mu, BuildSigma: sg, BuildFamily: family}
	}
	b.conflicts, b.builds, b.paths, b.ids = b.conflicts[:0], b.builds[:0], b.paths[:0], b.ids[:0]
	for l, i := range pend {
		for t, k := range v.Change(i).Ahead {
			if lk := loc[k]; lk >= 0 {
				b.conflicts = append(b.conflicts, scoring.Conflict{A: int(lk), B: l, PConf: probs.PConf(i, t)})
			}
		}
		for _, id := range v.Builds(i) {
			bd := v.Build(id)
			st := scoring.BuildRunning
			switch bd.Status {
			case queue.Succeeded:
				st = scoring.BuildSucceeded
			case queue.Failed:
				st = scoring.BuildFailed
			}
			b.path = v.Path(id, b.path[:0])
			at := len(b.paths)
			for _, k := range b.path {
				b.paths = append(b.paths, int(loc[k]))
			}
			// A later append may move paths; the builds made before keep the old array.
			b.builds = append(b.builds, scoring.Build{Change: l, Path: b.paths[at:len(b.paths):len(b.paths)], Status: st})
			b.ids = append(b.ids, id)
		}
	}
	q.Conflicts, q.Builds = b.conflicts, b.builds
	return q, pend, b.ids
}

// pSuccOnHead returns P-succ of change i on the current HEAD: the source's P-succ (on
// the HEAD the change was submitted against) times 1 − P-conf for every conflicting
// change ahead of it (ahead, the change's Ahead) that has landed since. scoring.Queue
// names only pending changes, so a landed change's conflict risk must be folded into
// P-succ here or it is lost (paper 001 §4.2: a change that conflicts with HEAD fails).
func pSuccOnHead(probs Probs, ahead []int, landed func(int) bool, i int) float64 {
	p := probs.PSucc(i)
	for t, k := range ahead {
		if landed(k) {
			p *= 1 - probs.PConf(i, t)
		}
	}
	return p
}

func resetLoc(loc []int32, pend []int) {
	for _, i := range pend {
		loc[i] = -1
	}
}

// Learn makes the strategy update its probabilities with the results of the builds that
// finish (see evidence) and returns it.
func (s *Speculative) Learn() *Speculative {
	s.ev = newEvidence(len(s.w.Traffic.Changes))
	return s
}
