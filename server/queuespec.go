package server

import (
	"context"
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
// It gives SubmissionSpeculation's values (tested against it) without its loop over
// every pair and overlap test: an inverted index maps each target to the changes ahead
// that affect it, so the cost is the number of (target, change ahead) matches. A queue
// where every change shares a target costs O(n²) cheap steps
// (BenchmarkQueueSpeculation).
//
// It checks ctx every queueCheckEvery changes and returns its error once it is done.
func queueSpeculation(ctx context.Context, changes []datasets.Change, want []int) ([]features.Speculation, error) {
	out := make([]features.Speculation, len(changes))
	if len(want) == 0 {
		return out, nil
	}
	wanted := make([]bool, len(changes))
	for _, i := range want {
		wanted[i] = true
	}
	last := slices.Max(want)
	// lines[k] is the lines added plus removed of changes[k]. When every one is a whole
	// number (or NaN) well below 2^53, sums are exact in any order; otherwise the lines
	// of a path are added in queue order, as SubmissionSpeculation adds them.
	lines := make([]float64, last+1)
	exact := true
	for k := range lines {
		x := changes[k].LinesAdded + changes[k].LinesRemoved
		lines[k] = x
		if !math.IsNaN(x) && !(x == math.Trunc(x) && math.Abs(x) < 1<<40) {
			exact = false
		}
	}
	// posting maps a target to the changes ahead (in index order) that affect it;
	// unknown counts the changes ahead whose affected targets are unknown and
	// unknownLines sums their lines (in queue order); linesAll sums every change
	// ahead's lines in queue order.
	posting := map[string][]int32{}
	var unknown []int32
	var unknownLines, linesAll float64
	// stamp[k] == i+1 marks change k as overlapping change i.
	stamp := make([]int32, last+1)
	var hit []int32
	for i := 0; i <= last; i++ {
		if i%queueCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		c := &changes[i]
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
				s.PathLinesChanged = linesAll
			} else {
				mark := int32(i + 1)
				hit = hit[:0]
				var sum float64
				for _, t := range c.AffectedTargets {
					for _, k := range posting[t] {
						if stamp[k] != mark {
							stamp[k] = mark
							hit = append(hit, k)
							sum += lines[k]
						}
					}
				}
				s.ConflictsCount = float64(len(hit))
				s.PathChanges = float64(len(hit) + len(unknown))
				if exact {
					s.PathLinesChanged = sum + unknownLines
				} else {
					hit = append(hit, unknown...)
					slices.Sort(hit)
					for _, k := range hit {
						s.PathLinesChanged += lines[k]
					}
				}
			}
			out[i] = s
		}
		linesAll += lines[i]
		if c.AffectedTargets == nil {
			unknown = append(unknown, int32(i))
			unknownLines += lines[i]
			continue
		}
		for _, t := range c.AffectedTargets {
			// Postings grow in index order, so a name listed twice adds i once.
			if p := posting[t]; len(p) == 0 || p[len(p)-1] != int32(i) {
				posting[t] = append(p, int32(i))
			}
		}
	}
	return out, nil
}

// queueCheckEvery is how many changes queueSpeculation handles between checks of its
// context: a change costs at most one step per change ahead, so 256 of 10,000 (the
// default --max-batch) take well under a millisecond.
const queueCheckEvery = 256

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
