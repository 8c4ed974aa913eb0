package features

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/sqpredict/sqpredict/datasets"
)

var nan = math.NaN()

// Speculation is what the queue knows about a change's speculative builds at the moment
// of a prediction. The trainer derives it from the history (see the package comment); the
// scorer receives it with the request or builds it with [SubmissionSpeculation]. NaN
// means unknown.
//
// The two row kinds that carry it describe different moments:
//
//   - A build-time prediction is about one build (one node of the speculation tree), as
//     it starts: Succeeded and Failed count the change's own decisive builds finished
//     before it started, Height and PathChanges are the build's, and
//     [Index.Speculation] gives the trainer's value.
//   - A success prediction (P-succ, the change's intrinsic outcome on HEAD alone) is
//     made at the change's submission, from what is known then, so that no outcome
//     decided after it can reach the row: [SubmissionSpeculation] defines every field
//     and [Index.SuccessSpeculation] gives the trainer's value. Succeeded and Failed then
//     count the change's revision's earlier attempts, not its builds.
type Speculation struct {
	// Succeeded and Failed count, for a build-time row, the change's own builds that
	// finished with that status before the build started (infra_failed and aborted
	// builds are not counted); for a success row, the earlier submissions of the same
	// revision_id decided before the change's submission that landed, and that were
	// rejected.
	Succeeded float64
	Failed    float64
	// Height is the speculation height: for a build-time row that of the build (the
	// number of undecided changes on its path when it was scheduled); for a success
	// row the number of changes pending ahead at submission (QueueAhead), the height at
	// which a queue that speculates on every change ahead first builds it.
	Height float64
	// ConflictsCount is the number of changes pending when this change was submitted
	// (ahead of it in the queue) whose affected targets overlap its own; changes whose
	// affected targets are unknown are not counted. NaN when the change's own affected
	// targets are unknown.
	ConflictsCount float64
	// QueueAhead is the number of changes pending ahead of this change when it was
	// submitted.
	QueueAhead float64
	// PathChanges is the number of changes on the path, and PathLinesChanged their
	// combined lines_added + lines_removed (NaN when any is unknown; 0 for an empty
	// path). For a build-time row the path is the build's; for a success row it is the
	// most likely path at submission: the changes pending ahead that may conflict with
	// it (their affected targets overlap its own, or either's are unknown), all assumed
	// to land.
	PathChanges      float64
	PathLinesChanged float64
}

// SubmissionSpeculation returns the speculation state of change c's success row at its
// submission, the same value [Index.SuccessSpeculation] gives the trainer. ahead are the
// changes of c's repository pending ahead of c at that moment (submitted before it, not
// decided before it, never-decided ones included), in queue order; revLanded and
// revRejected count the earlier submissions of c's revision_id decided before that
// moment that landed, and that were rejected. It fills every field:
//
//	Succeeded, Failed  revLanded, revRejected
//	QueueAhead, Height len(ahead)
//	ConflictsCount     changes of ahead whose affected targets overlap c's (NaN if c's are unknown)
//	PathChanges        changes of ahead that may conflict with c (overlap, or either's targets unknown)
//	PathLinesChanged   their lines_added + lines_removed, summed in the order of ahead
//
// The sum is exact for whole line counts, so the order of ahead matters only for
// fractional ones.
func SubmissionSpeculation(c *datasets.Change, ahead []*datasets.Change, revLanded, revRejected int) Speculation {
	s := Speculation{
		Succeeded:  float64(revLanded),
		Failed:     float64(revRejected),
		Height:     float64(len(ahead)),
		QueueAhead: float64(len(ahead)),
	}
	if c.AffectedTargets == nil {
		s.ConflictsCount = nan
	}
	for _, a := range ahead {
		if a.AffectedTargets != nil && c.AffectedTargets != nil {
			if n, _, _ := overlap(a.AffectedTargets, c.AffectedTargets); n == 0 {
				continue
			}
			s.ConflictsCount++
		}
		s.PathChanges++
		s.PathLinesChanged += a.LinesAdded + a.LinesRemoved
	}
	return s
}

// DevStats are an author's point-in-time developer statistics, as a [DevTable] returns
// them. See the package comment for the smoothing.
type DevStats struct {
	PriorChanges    float64 // changes by the author decided before now; NaN for an unknown author
	SuccessRate     float64 // smoothed share of the author's labelled changes that are intrinsically good (success label 1)
	ConflictRate    float64 // smoothed share of the author's labelled candidate pairs that conflicted
	MeanLogDuration float64 // smoothed mean log1p(duration_s) of the author's decisive builds
}

// NSuccess, NConflict and NBuildTime are the lengths of the rows of each kind: the
// numbers of names of their schemas (TestSchemaGolden checks).
const (
	NSuccess   = 47
	NConflict  = 72
	NBuildTime = 41
)

// Success writes the success-row features of change c into dst and returns dst. spec is
// the speculation state at c's submission (see [SubmissionSpeculation]), dev the
// author's statistics and rec the recency features as of c's submission (see
// [DevTable.Recent]). It panics if len(dst) != NSuccess.
func Success(dst []float64, c *datasets.Change, spec Speculation, dev DevStats, rec Recent) []float64 {
	if len(dst) != NSuccess {
		panic("features: dst length mismatch")
	}
	return success(dst, c, affectedCount(c), spec, dev, rec)
}

// success is Success with the number of c's distinct affected targets given, the form the
// Index calls with the count it already has.
func success(dst []float64, c *datasets.Change, nTargets float64, spec Speculation, dev DevStats, rec Recent) []float64 {
	o := writeChange(dst, 0, c, nTargets)
	o = writeRevision(dst, o, c)
	o = writeDeveloper(dst, o, c, dev)
	o = writeSpeculation(dst, o, spec)
	writeRecent(dst, o, rec)
	return dst
}

// BuildTime writes the build-time-row features of a build of change c into dst and
// returns dst. spec is the speculation state when the build started, dev the author's
// statistics and rec the recency features as of c's submission. It panics if len(dst) !=
// NBuildTime.
func BuildTime(dst []float64, c *datasets.Change, spec Speculation, dev DevStats, rec Recent) []float64 {
	if len(dst) != NBuildTime {
		panic("features: dst length mismatch")
	}
	return buildTime(dst, c, affectedCount(c), spec, dev, rec)
}

// buildTime is BuildTime with the number of c's distinct affected targets given.
func buildTime(dst []float64, c *datasets.Change, nTargets float64, spec Speculation, dev DevStats, rec Recent) []float64 {
	o := writeChange(dst, 0, c, nTargets)
	o = writeRevision(dst, o, c)
	o = writeDeveloper(dst, o, c, dev)
	dst[o] = dev.MeanLogDuration
	o = writeSpeculation(dst, o+1, spec)
	writeRecentDuration(dst, o, rec)
	return dst
}

// Conflict writes the conflict-row features of the pair (ahead, behind) into dst and
// returns dst: each change's change, revision and developer groups, then the pair group.
// devAhead and devBehind are the authors' statistics as of behind's submission. It panics
// if len(dst) != NConflict.
func Conflict(dst []float64, ahead, behind *datasets.Change, devAhead, devBehind DevStats) []float64 {
	if len(dst) != NConflict {
		panic("features: dst length mismatch")
	}
	inter := nan
	if ahead.AffectedTargets != nil && behind.AffectedTargets != nil {
		n, _, _ := overlap(ahead.AffectedTargets, behind.AffectedTargets)
		inter = float64(n)
	}
	return conflict(dst, ahead, behind, affectedCount(ahead), affectedCount(behind), inter,
		mainArea(ahead.AffectedTargets), mainArea(behind.AffectedTargets), devAhead, devBehind)
}

// conflict is Conflict with the numbers of distinct affected targets of each change and
// of their intersection (NaN when unknown) and the changes' main areas given.
func conflict(dst []float64, ahead, behind *datasets.Change, nAhead, nBehind, inter float64, areaAhead, areaBehind string, devAhead, devBehind DevStats) []float64 {
	o := 0
	for _, s := range [2]struct {
		c   *datasets.Change
		n   float64
		dev DevStats
	}{{ahead, nAhead, devAhead}, {behind, nBehind, devBehind}} {
		o = writeChange(dst, o, s.c, s.n)
		o = writeRevision(dst, o, s.c)
		o = writeDeveloper(dst, o, s.c, s.dev)
	}
	writePair(dst, o, ahead, behind, pairSizes{inter: inter, nAhead: nAhead, nBehind: nBehind, areaAhead: areaAhead, areaBehind: areaBehind})
	return dst
}

// affectedCount returns the number of distinct affected targets of c, NaN when unknown.
func affectedCount(c *datasets.Change) float64 {
	if c.AffectedTargets == nil {
		return nan
	}
	return float64(distinct(c.AffectedTargets))
}

func writeChange(d []float64, o int, c *datasets.Change, at float64) int {
	d = d[o : o+nChange]
	d[0] = c.TargetsChanged
	d[1] = c.TargetsAdded
	d[2] = c.TargetsRemoved
	d[3] = c.LinesAdded
	d[4] = c.LinesRemoved
	d[5] = c.Hunks
	d[6] = c.FilesChanged
	d[7] = c.Commits
	d[8] = c.BinariesAdded
	d[9] = c.BinariesRemoved
	d[10] = c.InitialChecksPassed
	d[11] = c.InitialChecksFailed
	d[12] = at
	d[13] = math.Log1p(c.TargetsChanged)
	d[14] = math.Log1p(c.LinesAdded)
	d[15] = math.Log1p(c.LinesRemoved)
	d[16] = math.Log1p(c.LinesAdded + c.LinesRemoved)
	d[17] = math.Log1p(c.Hunks)
	d[18] = math.Log1p(c.FilesChanged)
	d[19] = math.Log1p(at)
	share := nan
	if ran := c.InitialChecksPassed + c.InitialChecksFailed; ran > 0 {
		share = c.InitialChecksFailed / ran
	}
	d[20] = share
	return o + nChange
}

func writeRevision(d []float64, o int, c *datasets.Change) int {
	d = d[o : o+nRevision]
	d[0] = c.RevisionSubmissions
	d[1] = c.RevisionHasRevertPlan.Float()
	d[2] = c.RevisionHasTestPlan.Float()
	return o + nRevision
}

func writeDeveloper(d []float64, o int, c *datasets.Change, dev DevStats) int {
	d = d[o : o+nDeveloper]
	d[0] = c.AuthorTenureDays
	d[1] = math.Log1p(c.AuthorTenureDays)
	d[2] = c.AuthorLevel
	d[3] = dev.PriorChanges
	d[4] = math.Log1p(dev.PriorChanges)
	d[5] = dev.SuccessRate
	d[6] = dev.ConflictRate
	return o + nDeveloper
}

func writeSpeculation(d []float64, o int, s Speculation) int {
	d = d[o : o+nSpeculation]
	d[0] = s.Succeeded
	d[1] = s.Failed
	d[2] = s.Height
	d[3] = s.ConflictsCount
	d[4] = s.QueueAhead
	d[5] = s.PathChanges
	d[6] = math.Log1p(s.PathLinesChanged)
	return o + nSpeculation
}

func writeRecent(d []float64, o int, r Recent) int {
	d = d[o : o+nRecent]
	d[0] = r.RepoFailRate5
	d[1] = r.RepoFailRate20
	d[2] = r.RepoFailRate100
	d[3] = r.RepoLastFailed
	d[4] = math.Log1p(r.HoursSinceRepoFailure)
	d[5] = r.AuthorLastFailed
	d[6] = r.AuthorFailRate
	d[7] = r.RevisionLastFailed
	d[8] = r.TargetsFailRate
	return o + nRecent
}

func writeRecentDuration(d []float64, o int, r Recent) int {
	d = d[o : o+nRecentDur]
	d[0] = math.Log1p(r.LastDuration)
	d[1] = math.Log1p(r.MeanSuccessDuration)
	return o + nRecentDur
}

// pairSizes are the set sizes of a pair: the numbers of distinct affected targets of
// the intersection and of each change (NaN when unknown), and each change's main area
// ("" when it has none).
type pairSizes struct {
	inter, nAhead, nBehind float64
	areaAhead, areaBehind  string
}

// writePair writes the pair group (see pairNames). A share whose denominator is 0 (a
// change without affected targets) is NaN, as is every share when the targets are
// unknown.
func writePair(d []float64, o int, a, b *datasets.Change, z pairSizes) int {
	d = d[o : o+nPair]
	inter := z.inter
	d[0] = inter
	d[1] = ratio(inter, z.nAhead+z.nBehind-inter)
	d[2] = sameKnown(a.Author, b.Author)
	gap := nan
	if !a.SubmittedAt.IsZero() && !b.SubmittedAt.IsZero() {
		gap = b.SubmittedAt.Sub(a.SubmittedAt).Seconds()
	}
	d[3] = gap
	d[4] = math.Log1p(math.Abs(gap))
	d[5] = math.Log1p(inter)
	d[6] = ratio(inter, math.Min(z.nAhead, z.nBehind))
	d[7] = ratio(inter, z.nAhead)
	d[8] = ratio(inter, z.nBehind)
	d[9] = sameKnown(z.areaAhead, z.areaBehind)
	return o + nPair
}

// sameKnown returns 1 when a and b are equal, 0 when they differ, and NaN when either
// is unknown (empty).
func sameKnown(a, b string) float64 {
	switch {
	case a == "" || b == "":
		return nan
	case a == b:
		return 1
	}
	return 0
}

// ratio returns num/den, NaN unless den > 0 (NaN operands give NaN).
func ratio(num, den float64) float64 {
	if !(den > 0) {
		return nan
	}
	return num / den
}

// areaOf returns the area of a build target: the first component of its package path,
// "team03" for "//team03/t0123" or "//team03/lib:t", "app" for "app/x". A name without
// one (empty, or "//" alone) has the area "".
func areaOf(name string) string {
	s := strings.TrimPrefix(name, "//")
	if i := strings.IndexAny(s, "/:"); i >= 0 {
		s = s[:i]
	}
	return s
}

// mainArea returns the area (see areaOf) that most of targets fall in, counting distinct
// names; ties go to the area that sorts first. It returns "" for an empty or unknown
// list. A sorted list (the usual form) is read in one pass without allocating: the
// names of an area are contiguous in sort order.
func mainArea(targets []string) string {
	s := sortedSet(targets)
	best, bestN := "", 0
	for i := 0; i < len(s); {
		a := areaOf(s[i])
		j := i + 1
		for j < len(s) && areaOf(s[j]) == a {
			j++
		}
		if a != "" && j-i > bestN {
			best, bestN = a, j-i
		}
		i = j
	}
	return best
}

// smallSet is the size up to which set operations on unsorted target lists use nested
// loops rather than a map: below it the quadratic scan is faster and does not allocate.
const smallSet = 32

// strictlySorted reports whether s is in strictly increasing order, i.e. a sorted set.
func strictlySorted[T cmp.Ordered](s []T) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

// intersectSorted returns the size of the intersection of two sorted sets (strictly
// increasing). When one is much smaller than the other (a small change against a large
// diff that affects most targets) it looks each of its elements up by binary search
// instead of merging.
func intersectSorted[T cmp.Ordered](a, b []T) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	if len(a)*16 < len(b) {
		for _, x := range a {
			if _, found := slices.BinarySearch(b, x); found {
				n++
			}
		}
		return n
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// distinct returns the number of distinct strings in s.
func distinct(s []string) int {
	if strictlySorted(s) {
		return len(s)
	}
	if len(s) <= smallSet {
		n := 0
		for i, x := range s {
			if !slices.Contains(s[:i], x) {
				n++
			}
		}
		return n
	}
	m := make(map[string]struct{}, len(s))
	for _, x := range s {
		m[x] = struct{}{}
	}
	return len(m)
}

// overlap returns the number of distinct strings common to a and b and the numbers of
// distinct strings in each.
func overlap(a, b []string) (inter, na, nb int) {
	if strictlySorted(a) && strictlySorted(b) {
		return intersectSorted(a, b), len(a), len(b)
	}
	return overlap(sortedSet(a), sortedSet(b))
}

// sortedSet returns s sorted with duplicates removed, s itself when it already is.
func sortedSet(s []string) []string {
	if strictlySorted(s) {
		return s
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}
