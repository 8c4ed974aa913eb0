package replay

import (
	"fmt"

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
	// cache keeps the finish-order probabilities of pairs of pending changes from one
	// plan to the next (they do not change while both are pending).
	cache scoring.FinishCache
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
	q, pend, ids := buildQueue(v, s.w, s.probs, s.loc)
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

// buildQueue returns the scoring queue of the pending changes of v: pend maps its
// indices to traffic indices and ids its builds to engine build ids. loc must be -1
// everywhere; it maps traffic indices of pending changes to queue indices until
// resetLoc.
func buildQueue(v *queue.View, w *World, probs Probs, loc []int32) (q scoring.Queue, pend []int, ids []int) {
	pend = v.Pending()
	q.Changes = make([]scoring.Change, len(pend))
	family := probs.BuildFamily()
	for l, i := range pend {
		loc[i] = int32(l)
		mu, sg := probs.BuildTime(i)
		q.Changes[l] = scoring.Change{Arrival: v.Change(i).Arrival, PSucc: pSuccOnHead(probs, v.Change(i).Ahead, v.Landed, i), BuildMu: mu, BuildSigma: sg, BuildFamily: family}
	}
	var path []int
	for l, i := range pend {
		for t, k := range v.Change(i).Ahead {
			if lk := loc[k]; lk >= 0 {
				q.Conflicts = append(q.Conflicts, scoring.Conflict{A: int(lk), B: l, PConf: probs.PConf(i, t)})
			}
		}
		for _, id := range v.Builds(i) {
			b := v.Build(id)
			st := scoring.BuildRunning
			switch b.Status {
			case queue.Succeeded:
				st = scoring.BuildSucceeded
			case queue.Failed:
				st = scoring.BuildFailed
			}
			path = v.Path(id, path[:0])
			lp := make([]int, len(path))
			for t, k := range path {
				lp[t] = int(loc[k])
			}
			q.Builds = append(q.Builds, scoring.Build{Change: l, Path: lp, Status: st})
			ids = append(ids, id)
		}
	}
	return q, pend, ids
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
