package synth

import (
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// Summary counts what a history holds.
type Summary struct {
	// Changes counts all changes, Landed and Rejected those with each outcome.
	Changes, Landed, Rejected int
	// Resubmissions counts changes with revision_submissions > 1.
	Resubmissions int
	// Builds counts builds by status, indexed by datasets.Status.
	Builds [datasets.StatusAborted + 1]int
	// Culprit counts, by status, the builds among Builds that started at or after their
	// change's decided_at: the queue's culprit finding (see Simulate).
	Culprit [datasets.StatusAborted + 1]int
	// Pairs counts the pairs table and Conflicted its rows with conflicted = true.
	Pairs, Conflicted int
}

// Summarize counts the rows of h.
func Summarize(h *datasets.History) Summary {
	var s Summary
	s.Changes = len(h.Changes)
	decided := make(map[string]time.Time, len(h.Changes))
	for i := range h.Changes {
		c := &h.Changes[i]
		if !c.DecidedAt.IsZero() {
			decided[c.ChangeID] = c.DecidedAt
		}
		switch c.Outcome {
		case datasets.OutcomeLanded:
			s.Landed++
		case datasets.OutcomeRejected:
			s.Rejected++
		}
		if c.RevisionSubmissions > 1 {
			s.Resubmissions++
		}
	}
	for i := range h.Builds {
		b := &h.Builds[i]
		if st := b.Status; int(st) < len(s.Builds) {
			s.Builds[st]++
			if d, ok := decided[b.ChangeID]; ok && !b.StartedAt.Before(d) {
				s.Culprit[st]++
			}
		}
	}
	s.Pairs = len(h.Pairs)
	for i := range h.Pairs {
		if h.Pairs[i].Conflicted {
			s.Conflicted++
		}
	}
	return s
}

// CurvePoint is one point of the conflict curve of paper 001, Figure 1.
type CurvePoint struct {
	// N is the number of concurrent, potentially conflicting changes: a change and the
	// changes ahead of it that were pending when it was submitted and overlap it.
	N int
	// Changes is the number of changes with that N, and Conflicted how many of them
	// conflict with at least one of the changes ahead.
	Changes, Conflicted int
}

// Share returns Conflicted/Changes.
func (p CurvePoint) Share() float64 { return float64(p.Conflicted) / float64(p.Changes) }

// ConflictCurve returns, for every N >= 2 seen in h, the share of changes with a real
// conflict among changes with N-1 overlapping changes ahead of them (from the pairs
// table), in increasing N.
func ConflictCurve(h *datasets.History) []CurvePoint {
	type acc struct {
		n    int
		conf bool
	}
	by := make(map[string]*acc, len(h.Changes))
	var order []string
	for i := range h.Pairs {
		p := &h.Pairs[i]
		a := by[p.BehindChangeID]
		if a == nil {
			a = &acc{n: 1}
			by[p.BehindChangeID] = a
			order = append(order, p.BehindChangeID)
		}
		a.n++
		a.conf = a.conf || p.Conflicted
	}
	var pts []CurvePoint
	for _, id := range order {
		a := by[id]
		for len(pts) < a.n-1 {
			pts = append(pts, CurvePoint{N: len(pts) + 2})
		}
		pts[a.n-2].Changes++
		if a.conf {
			pts[a.n-2].Conflicted++
		}
	}
	out := pts[:0]
	for _, p := range pts {
		if p.Changes > 0 {
			out = append(out, p)
		}
	}
	return out
}
