package replay

import (
	"slices"

	"github.com/sqpredict/sqpredict/queue"
)

// evidence is what the finished builds of a run say about each change, the speculation
// outcomes that paper 001 §7.2's models take as features ("the number of speculations
// that succeeded or failed", its strongest predictors): a change's probabilities are
// updated by Bayes' rule from the source's, which know only the change at its
// submission.
//
// The update follows the world's model of a build (see the package documentation): a
// build of change C on content S succeeds iff C is good and conflicts with no change of
// S, and an infrastructure failure says nothing. So a success proves C good and
// compatible with every change of S; a failure on S says that C is bad or conflicts
// with a change of S. In a real history a change's outcome is the same on every path,
// which the same update handles (its P-conf is 0).
type evidence struct {
	// good[i] reports a succeeded build of change i.
	good []bool
	// ok[i] holds the changes proven compatible with i (the contents of its succeeded
	// builds), ascending.
	ok [][]int
	// failed[i] holds the contents of i's failed builds.
	failed [][][]int
}

func newEvidence(n int) *evidence {
	return &evidence{good: make([]bool, n), ok: make([][]int, n), failed: make([][][]int, n)}
}

// observe records the builds that finished since the previous plan.
func (e *evidence) observe(v *queue.View) {
	for _, id := range v.Finished() {
		b := v.Build(id)
		i := b.Change
		switch b.Status {
		case queue.Succeeded:
			e.good[i] = true
			for _, k := range b.Content {
				if at, in := slices.BinarySearch(e.ok[i], k); !in {
					e.ok[i] = slices.Insert(e.ok[i], at, k)
				}
			}
		case queue.Failed:
			if b.BatchSize == 1 && !b.Probe {
				e.failed[i] = append(e.failed[i], b.Content)
			}
		}
	}
}

// known reports whether change i has a result that moves its probabilities.
func (e *evidence) known(i int) bool { return e.good[i] || len(e.failed[i]) > 0 }

// pConf returns the P-conf of change i with change k (c, the source's) given the
// evidence: 0 once a build of i that holds k succeeded; given that i is good, a failed
// build of i on content F means some change of F conflicts with i, which raises the
// P-conf of each change of F left unproven to c / P(a conflict in F) (an approximation
// when several failures overlap: each is applied alone and the largest kept).
func (e *evidence) pConf(probs Probs, w *World, i, k int, c float64) float64 {
	if _, in := slices.BinarySearch(e.ok[i], k); in {
		return 0
	}
	best := c
	for _, f := range e.failed[i] {
		if _, in := slices.BinarySearch(f, k); !in {
			continue
		}
		if none := e.noConflict(probs, w, i, f); none < 1 {
			best = max(best, min(1, c/(1-none)))
		}
	}
	return best
}

// noConflict returns the probability that change i conflicts with no change of content
// f, counting the changes proven compatible as certain.
func (e *evidence) noConflict(probs Probs, w *World, i int, f []int) float64 {
	p := 1.0
	for _, k := range f {
		if _, in := slices.BinarySearch(e.ok[i], k); in {
			continue
		}
		if t := edgeIndex(w, i, k); t >= 0 {
			p *= 1 - probs.PConf(i, t)
		}
	}
	return p
}

// pGood returns the probability that change i is good (its intrinsic P-succ, p from the
// source) given the evidence: 1 after a success; after failures only, Bayes' rule with
// the likelihood of each failure given a good change, P(a conflict in F), multiplied
// over the failures as if they were independent.
func (e *evidence) pGood(probs Probs, w *World, i int, p float64) float64 {
	if e.good[i] {
		return 1
	}
	like := 1.0
	for _, f := range e.failed[i] {
		like *= 1 - e.noConflict(probs, w, i, f)
	}
	if len(e.failed[i]) == 0 {
		return p
	}
	den := p*like + (1 - p)
	if den <= 0 {
		return 0
	}
	return p * like / den
}

// learned is a probability source updated by the evidence of a run.
type learned struct {
	Probs
	w  *World
	ev *evidence
}

func (p learned) PSucc(i int) float64 {
	return p.ev.pGood(p.Probs, p.w, i, p.Probs.PSucc(i))
}

func (p learned) PConf(i, t int) float64 {
	c := p.Probs.PConf(i, t)
	if !p.ev.known(i) {
		return c
	}
	return p.ev.pConf(p.Probs, p.w, i, p.w.Traffic.Changes[i].Ahead[t], c)
}
