package server

import (
	"math"
	"slices"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
)

// queueSpeculation returns, for each change i of want, the speculation state of its
// success row computed from the queue: features.SubmissionSpeculation(changes[i],
// changes[:i], 0, 0), the changes ahead of it in the request taken as the changes
// pending at its submission. Succeeded and Failed (the revision's earlier attempts,
// which no queue holds) are 0 when the change is its revision's first submission
// (revision_submissions 1) and NaN otherwise. The result is indexed like changes; the
// entries of changes not in want are zero.
//
// It gives SubmissionSpeculation's values (tested against it) without its quadratic
// loop over every pair: an inverted index maps each target to the changes ahead that
// affect it, so the cost is the number of (target, change ahead) matches.
func queueSpeculation(changes []datasets.Change, want []int) []features.Speculation {
	out := make([]features.Speculation, len(changes))
	if len(want) == 0 {
		return out
	}
	wanted := make([]bool, len(changes))
	for _, i := range want {
		wanted[i] = true
	}
	last := slices.Max(want)
	// posting maps a target to the changes ahead (in index order) that affect it;
	// unknown lists the changes ahead whose affected targets are unknown.
	posting := map[string][]int{}
	var unknown []int
	// lines[k] is the lines added plus removed of changes[k]; linesAll[k] is their sum
	// over changes[:k], in order (NaN once any is unknown).
	lines := make([]float64, last+1)
	linesAll := make([]float64, last+2)
	// stamp[k] == i+1 marks change k as overlapping change i.
	stamp := make([]int, last+1)
	var hit []int
	for i := 0; i <= last; i++ {
		c := &changes[i]
		lines[i] = c.LinesAdded + c.LinesRemoved
		linesAll[i+1] = linesAll[i] + lines[i]
		if wanted[i] {
			s := features.Speculation{
				Height: float64(i), QueueAhead: float64(i),
				Succeeded: math.NaN(), Failed: math.NaN(),
			}
			if c.RevisionSubmissions == 1 {
				s.Succeeded, s.Failed = 0, 0
			}
			if c.AffectedTargets == nil {
				s.ConflictsCount = math.NaN()
				s.PathChanges = float64(i)
				s.PathLinesChanged = linesAll[i]
			} else {
				hit = hit[:0]
				for _, t := range c.AffectedTargets {
					for _, k := range posting[t] {
						if stamp[k] != i+1 {
							stamp[k] = i + 1
							hit = append(hit, k)
						}
					}
				}
				s.ConflictsCount = float64(len(hit))
				// The changes that may conflict, summed in queue order as
				// SubmissionSpeculation sums them.
				hit = append(hit, unknown...)
				slices.Sort(hit)
				s.PathChanges = float64(len(hit))
				for _, k := range hit {
					s.PathLinesChanged += lines[k]
				}
			}
			out[i] = s
		}
		if c.AffectedTargets == nil {
			unknown = append(unknown, i)
			continue
		}
		for _, t := range c.AffectedTargets {
			// Postings grow in index order, so a name listed twice adds i once.
			if p := posting[t]; len(p) == 0 || p[len(p)-1] != i {
				posting[t] = append(p, i)
			}
		}
	}
	return out
}

// fillSpeculation sets every NaN (unknown) field of s to the field of computed: the
// fields a caller sets win.
func fillSpeculation(s *features.Speculation, computed features.Speculation) {
	for _, f := range [...]struct{ dst, src *float64 }{
		{&s.Succeeded, &computed.Succeeded},
		{&s.Failed, &computed.Failed},
		{&s.Height, &computed.Height},
		{&s.ConflictsCount, &computed.ConflictsCount},
		{&s.QueueAhead, &computed.QueueAhead},
		{&s.PathChanges, &computed.PathChanges},
		{&s.PathLinesChanged, &computed.PathLinesChanged},
	} {
		if math.IsNaN(*f.dst) {
			*f.dst = *f.src
		}
	}
}
