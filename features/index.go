package features

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// Label values of changes and pairs. The negative values are no label; for pairs, the
// ones below labelUnknown (undetermined) say why.
const (
	labelUnknown       int8 = -1
	labelFalse         int8 = 0
	labelTrue          int8 = 1
	labelNotBoth       int8 = -2 // pair: ahead or behind fails alone
	labelContradictory int8 = -3 // pair: the builds say both conflict and no conflict
)

// Skip reasons, as they appear in Table.Skipped and the trainer's summary.
const (
	SkipUndecided           = "undecided"                // the change is not decided (see decisionTime)
	SkipNoDecisiveBuild     = "no_decisive_build"        // the change has no succeeded or failed build
	SkipUndeterminedAlone   = "undetermined_alone"       // no build of it succeeded, and none failed on the empty path
	SkipUnknownTargets      = "unknown_affected_targets" // a pending pair where either change's affected targets are unknown
	SkipUndetermined        = "undetermined"             // the builds cannot tell whether the pair conflicted
	SkipNotBothSucceedAlone = "not_both_succeed_alone"   // the ahead change's build failed, or the behind change fails without it
	SkipContradictory       = "contradictory_builds"     // the behind change's builds say both conflicted and not (flaky builds)
	SkipAborted             = "aborted"                  // an aborted build
	SkipInfraFailed         = "infra_failed"             // an infra_failed build
	SkipMissingDuration     = "missing_duration"         // a decisive build without duration_s
	SkipUnknownStatus       = "unknown_status"           // a build without a status
)

// Index is a history prepared for feature extraction: decision times, queue order, labels,
// candidate pairs and the point-in-time developer statistics and speculation state of every
// change and build. Build one with NewIndex, then ask it for the rows of each kind with
// Table and for a frozen developer table with DevTable. An Index is read-only after
// NewIndex and safe for concurrent use; it keeps a reference to the history, which must
// not change while the Index is in use.
type Index struct {
	h       *datasets.History
	changes []changeInfo // parallel to h.Changes
	builds  []buildInfo  // parallel to h.Builds
	queue   []int32      // change indices in queue order: (submitted_at, table order)
	pairs   []pairInfo   // candidate pairs, in queue order of (behind, ahead)
	events  []devEvent   // developer-statistics events, sorted by time
	// Pairs skipped before labelling, by reason.
	pairSkips map[string]int
	nNames    int // distinct affected target names
	truth     map[[2]string]*datasets.Pair
	extra     []string // the history's extra attributes (datasets.History.Extra)
}

type changeInfo struct {
	decided     time.Time // D: decided_at, else latest build time; zero when unknown
	isDecided   bool      // see decisionTime
	queuePos    int32
	label       int8        // the intrinsic success label (see labelChange)
	hasDecisive bool        // the change has a succeeded or failed build
	labelBuild  int32       // the build that settles its label (see labelChange); -1 without one
	builds      []int32     // all builds of the change, in table order
	targets     []int32     // affected targets as sorted distinct ids; nil when unknown
	nTargets    float64     // len(targets), NaN when unknown: the affected_targets feature
	area        string      // mainArea of the affected targets: the same_area feature
	bits        []uint64    // targets as a bitset when there are at least bitsetMin of them
	conflicts   float64     // conflicts_count: pending changes at submission with overlapping targets
	ahead       float64     // queue_ahead: pending changes at submission
	spec        Speculation // the success row's speculation group, as of submission
	dev         DevStats
	rec         Recent // recency features as of submission
}

type buildInfo struct {
	path    []int32
	pathSum uint64 // sum of pathHash of the path's changes: equal sets have equal sums
	spec    Speculation
}

type pairInfo struct {
	ahead, behind int32
	label         int8
	devAhead      DevStats // the ahead author's statistics as of the behind change's submission
}

type devEvent struct {
	at     time.Time
	kind   uint8 // eventChange, eventPair or eventBuild
	label  int8
	a, b   int32 // change indices (b: other change of a pair)
	seq    int32 // order of creation, which breaks ties of at
	ok     bool  // eventBuild: the build succeeded
	logDur float64
	dur    float64 // eventBuild: duration_s
}

// The kinds of developer-statistics events.
const (
	eventChange uint8 = iota // a change was decided (label: its success label)
	eventPair                // a labelled candidate pair's later change was decided
	eventBuild               // a decisive build with a duration belongs to a change decided now
)

func decisive(s datasets.Status) bool {
	return s == datasets.StatusSucceeded || s == datasets.StatusFailed
}

// NewIndex prepares h for feature extraction. It returns an error wrapping
// ErrInvalidHistory for duplicate change or build ids, for builds or paths naming a
// change the history does not have, and for extra attributes that
// datasets.History.CheckExtra refuses (a name that leaks the label, changes whose
// attributes are not the history's). ctx is checked between stages.
func NewIndex(ctx context.Context, h *datasets.History) (*Index, error) {
	ix := &Index{
		h:         h,
		changes:   make([]changeInfo, len(h.Changes)),
		builds:    make([]buildInfo, len(h.Builds)),
		pairSkips: make(map[string]int),
	}
	if err := h.CheckExtra(); err != nil {
		return nil, fmt.Errorf("features: %w: %w", ErrInvalidHistory, err)
	}
	ix.extra = h.Extra
	byID := make(map[string]int32, len(h.Changes))
	for i := range h.Changes {
		id := h.Changes[i].ChangeID
		if j, dup := byID[id]; dup {
			return nil, fmt.Errorf("features: %w: changes rows %d and %d have the same change_id %q", ErrInvalidHistory, j+1, i+1, id)
		}
		byID[id] = int32(i)
		ix.changes[i].label = labelUnknown
		ix.changes[i].labelBuild = -1
	}
	ix.internTargets()
	// One backing array for every path, and the builds of every change as windows of one
	// array (counted first), keep NewIndex at a few allocations per table.
	nPath := 0
	for i := range h.Builds {
		nPath += len(h.Builds[i].Path)
	}
	paths := make([]int32, 0, nPath)
	perChange := make([]int32, len(h.Changes))
	buildOf := make([]int32, len(h.Builds))
	buildIDs := make(map[string]int, len(h.Builds))
	for i := range h.Builds {
		b := &h.Builds[i]
		if j, dup := buildIDs[b.BuildID]; dup {
			return nil, fmt.Errorf("features: %w: builds rows %d and %d have the same build_id %q", ErrInvalidHistory, j+1, i+1, b.BuildID)
		}
		buildIDs[b.BuildID] = i
		ci, ok := byID[b.ChangeID]
		if !ok {
			return nil, fmt.Errorf("features: %w: build %q (row %d): change_id %q is not a change", ErrInvalidHistory, b.BuildID, i+1, b.ChangeID)
		}
		buildOf[i] = ci
		perChange[ci]++
		start := len(paths)
		for _, id := range b.Path {
			pi, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("features: %w: build %q (row %d): path entry %q is not a change", ErrInvalidHistory, b.BuildID, i+1, id)
			}
			paths = append(paths, pi)
			ix.builds[i].pathSum += pathHash(pi)
		}
		ix.builds[i].path = paths[start:len(paths):len(paths)]
	}
	all := make([]int32, 0, len(h.Builds))
	for ci, n := range perChange {
		ix.changes[ci].builds = all[len(all) : len(all) : len(all)+int(n)]
		all = all[:len(all)+int(n)]
	}
	for i, ci := range buildOf {
		ix.changes[ci].builds = append(ix.changes[ci].builds, int32(i))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("features: indexing history: %w", err)
	}
	for i := range h.Changes {
		c, info := &h.Changes[i], &ix.changes[i]
		info.decided = ix.decisionTime(i)
		info.isDecided = !info.decided.IsZero() || c.Outcome != datasets.OutcomeUnknown || c.SubmittedAt.IsZero()
	}
	ix.queue = make([]int32, len(h.Changes))
	for i := range ix.queue {
		ix.queue[i] = int32(i)
	}
	slices.SortFunc(ix.queue, func(a, b int32) int {
		if c := h.Changes[a].SubmittedAt.Compare(h.Changes[b].SubmittedAt); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for p, ci := range ix.queue {
		ix.changes[ci].queuePos = int32(p)
	}
	ix.sweepQueue()
	ix.countAttempts()
	for i := range h.Changes {
		ix.labelChange(i)
	}
	for p := range ix.pairs {
		ix.labelPair(&ix.pairs[p])
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("features: indexing history: %w", err)
	}
	ix.collectEvents()
	ix.sweepDevStats()
	for i := range h.Changes {
		ix.speculate(i)
	}
	if h.Pairs != nil {
		ix.truth = make(map[[2]string]*datasets.Pair, len(h.Pairs))
		for i := range h.Pairs {
			p := &h.Pairs[i]
			ix.truth[[2]string{p.AheadChangeID, p.BehindChangeID}] = p
		}
	}
	return ix, nil
}

// decisionTime returns D(c): decided_at, else the latest finished_at of its builds, else
// their latest started_at, else zero (unknown). A change is decided when D is known, when
// its outcome is known, or when the history has no time for it at all (a record such as
// BuildFast's, complete but without timestamps); a decided change with an unknown D gets
// a label but takes no part in anything that needs a time (pending sets, developer
// statistics).
func (ix *Index) decisionTime(i int) time.Time {
	c := &ix.h.Changes[i]
	if !c.DecidedAt.IsZero() {
		return c.DecidedAt
	}
	var fin, start time.Time
	for _, bi := range ix.changes[i].builds {
		b := &ix.h.Builds[bi]
		if b.FinishedAt.After(fin) {
			fin = b.FinishedAt
		}
		if b.StartedAt.After(start) {
			start = b.StartedAt
		}
	}
	if !fin.IsZero() {
		return fin
	}
	return start
}

// sweepQueue walks each repository's queue in order, keeping the changes pending at the
// current submission, and records queue_ahead, conflicts_count, the submission-time path
// (see SubmissionSpeculation) and the candidate pairs of every change.
func (ix *Index) sweepQueue() {
	h := ix.h
	pending := make(map[string][]int32) // repo -> changes pending at the current time, in queue order
	for _, bi := range ix.queue {
		b := int(bi)
		cb := &h.Changes[b]
		info := &ix.changes[b]
		if cb.SubmittedAt.IsZero() {
			info.conflicts, info.ahead = nan, nan
			info.spec = Speculation{Succeeded: nan, Failed: nan, Height: nan, ConflictsCount: nan,
				QueueAhead: nan, PathChanges: nan, PathLinesChanged: nan}
			continue
		}
		// Filter in place: changes decided by now leave the pending list for good.
		act := pending[cb.Repo][:0]
		for _, a := range pending[cb.Repo] {
			if ix.pendingAt(a, cb.SubmittedAt) {
				act = append(act, a)
			}
		}
		info.ahead = float64(len(act))
		if info.targets == nil {
			info.conflicts = nan
		}
		var path, lines float64
		for _, a := range act {
			ia := &ix.changes[a]
			if ia.targets == nil || info.targets == nil {
				// May conflict: on the most likely path.
				path++
				lines += h.Changes[a].LinesAdded + h.Changes[a].LinesRemoved
				ix.pairSkips[SkipUnknownTargets]++
				continue
			}
			if overlapInfo(ia, info) == 0 {
				continue
			}
			path++
			lines += h.Changes[a].LinesAdded + h.Changes[a].LinesRemoved
			info.conflicts++
			if info.decided.IsZero() || !ia.isDecided {
				ix.pairSkips[SkipUndecided]++
				continue
			}
			ix.pairs = append(ix.pairs, pairInfo{ahead: a, behind: int32(b), label: labelUnknown})
		}
		info.spec = Speculation{Height: info.ahead, ConflictsCount: info.conflicts, QueueAhead: info.ahead,
			PathChanges: path, PathLinesChanged: lines}
		if !info.decided.IsZero() || !info.isDecided {
			act = append(act, int32(b))
		}
		pending[cb.Repo] = act
	}
}

// countAttempts sets the Succeeded and Failed counts of every change's submission-time
// speculation: the earlier submissions of its revision (same non-empty revision_id)
// decided strictly before its submission that landed, and that were rejected.
func (ix *Index) countAttempts() {
	h := ix.h
	var byRev []int32 // changes with a revision id and a known submission time, grouped by revision
	for i := range h.Changes {
		if h.Changes[i].RevisionID != "" && !h.Changes[i].SubmittedAt.IsZero() {
			byRev = append(byRev, int32(i))
		}
	}
	slices.SortFunc(byRev, func(a, b int32) int {
		if c := cmp.Compare(h.Changes[a].RevisionID, h.Changes[b].RevisionID); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for i := range h.Changes {
		if !h.Changes[i].SubmittedAt.IsZero() {
			ix.changes[i].spec.Succeeded, ix.changes[i].spec.Failed = 0, 0
		}
	}
	for lo := 0; lo < len(byRev); {
		hi := lo + 1
		for hi < len(byRev) && h.Changes[byRev[hi]].RevisionID == h.Changes[byRev[lo]].RevisionID {
			hi++
		}
		for _, x := range byRev[lo:hi] {
			spec := &ix.changes[x].spec
			for _, y := range byRev[lo:hi] {
				d := ix.changes[y].decided
				if y == x || d.IsZero() || !d.Before(h.Changes[x].SubmittedAt) {
					continue
				}
				switch h.Changes[y].Outcome {
				case datasets.OutcomeLanded:
					spec.Succeeded++
				case datasets.OutcomeRejected:
					spec.Failed++
				}
			}
		}
		lo = hi
	}
}

// pendingAt reports whether change a, submitted before t, is still pending at t: it is
// never decided (still queued when the history was exported), or decided at or after t.
// A change decided at an unknown time is pending at no time.
func (ix *Index) pendingAt(a int32, t time.Time) bool {
	ia := &ix.changes[a]
	if !ia.isDecided {
		return true
	}
	return !ia.decided.IsZero() && !ia.decided.Before(t)
}

// earlier reports whether build x finished before build y (table order breaks ties), the
// order in which the first build that settles a label wins; y < 0 is no build.
func (ix *Index) earlier(x, y int32) bool {
	if y < 0 {
		return true
	}
	if c := ix.h.Builds[x].FinishedAt.Compare(ix.h.Builds[y].FinishedAt); c != 0 {
		return c < 0
	}
	return x < y
}

// labelChange derives the intrinsic success label of change i (see the package comment)
// and the build that settles it: its first succeeded decisive build (label 1), else its
// first decisive build failed on the empty path (label 0), in order of finish.
func (ix *Index) labelChange(i int) {
	info := &ix.changes[i]
	okB, failB := int32(-1), int32(-1)
	for _, bi := range info.builds {
		b := &ix.h.Builds[bi]
		if !decisive(b.Status) {
			continue
		}
		info.hasDecisive = true
		switch {
		case b.Status == datasets.StatusSucceeded:
			if ix.earlier(bi, okB) {
				okB = bi
			}
		case len(ix.builds[bi].path) == 0:
			if ix.earlier(bi, failB) {
				failB = bi
			}
		}
	}
	switch {
	case okB >= 0:
		info.labelBuild = okB
		if info.isDecided {
			info.label = labelTrue
		}
	case failB >= 0:
		info.labelBuild = failB
		if info.isDecided {
			info.label = labelFalse
		}
	}
}

// labelPair derives the conflict label of a candidate pair (see the package comment).
func (ix *Index) labelPair(p *pairInfo) {
	// The behind change B's evidence: okAny, some build succeeded (so B succeeds alone:
	// adding changes to a path cannot make it succeed); failWithout, some build without
	// A failed; okWith, some build with A succeeded (no conflict); conflictEv, some build
	// on a path P holding A failed while one on P without A succeeded (a conflict).
	var okAny, failWithout, okWith, conflictEv bool
	behind := ix.changes[p.behind].builds
	for _, bi := range behind {
		b := &ix.h.Builds[bi]
		if !decisive(b.Status) {
			continue
		}
		ok := b.Status == datasets.StatusSucceeded
		has := slices.Contains(ix.builds[bi].path, p.ahead)
		switch {
		case ok:
			okAny = true
			okWith = okWith || has
		case !has:
			failWithout = true
		case !conflictEv:
			conflictEv = ix.succeededWithout(behind, bi, p.ahead)
		}
	}
	// A succeeds when its build on its path succeeds: when it landed. Intrinsically bad
	// (whatever the outcome says) or rejected, it does not; a good change whose outcome
	// is unknown may have been rejected for a conflict of its own, so the term is unknown.
	aLabel := labelUnknown
	switch {
	case ix.changes[p.ahead].label == labelFalse || ix.h.Changes[p.ahead].Outcome == datasets.OutcomeRejected:
		aLabel = labelFalse
	case ix.h.Changes[p.ahead].Outcome == datasets.OutcomeLanded:
		aLabel = labelTrue
	}
	switch {
	case aLabel == labelFalse || (!okAny && failWithout):
		p.label = labelNotBoth
	case aLabel == labelUnknown || !okAny:
		p.label = labelUnknown
	case okWith && conflictEv:
		p.label = labelContradictory
	case conflictEv:
		p.label = labelTrue
	case okWith:
		p.label = labelFalse
	default:
		p.label = labelUnknown
	}
}

// succeededWithout reports whether one of the builds (a change's) succeeded on the path
// of build failed without change a: on the same set of changes less a.
func (ix *Index) succeededWithout(builds []int32, failed, a int32) bool {
	fp := ix.builds[failed].path
	want := ix.builds[failed].pathSum - pathHash(a)
	for _, bi := range builds {
		bb := &ix.builds[bi]
		if bb.pathSum != want || len(bb.path) != len(fp)-1 || ix.h.Builds[bi].Status != datasets.StatusSucceeded {
			continue
		}
		same := true
		for _, x := range fp {
			if x != a && !slices.Contains(bb.path, x) {
				same = false
				break
			}
		}
		if same && !slices.Contains(bb.path, a) {
			return true
		}
	}
	return false
}

// pathHash maps a change index to a pseudo-random 64-bit number (SplitMix64), whose sums
// over a path identify the path's set of changes up to rare collisions, which callers
// rule out by comparing the sets.
func pathHash(ci int32) uint64 {
	z := uint64(ci) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// collectEvents lists the developer-statistics events, each at the time its result was
// known: every decided change at its decision time, or later when its label needs
// builds that finished later (label 1: when its first succeeded build finished; label 0
// or none: when its last decisive build finished, since a later success would make it
// 1), every decisive build with a duration when its change was
// decided and it had finished, and every labelled pair when both changes were decided
// and every decisive build of the behind change (which its label reads) had finished.
// Builds may finish after their change's decision: a queue's culprit finding runs after
// the rejection, and its builds decide conflict labels.
func (ix *Index) collectEvents() {
	h := ix.h
	ix.events = make([]devEvent, 0, len(h.Changes)+len(h.Builds)+len(ix.pairs))
	for i := range h.Changes {
		info := &ix.changes[i]
		if info.decided.IsZero() {
			continue
		}
		at := info.decided
		if info.label == labelTrue {
			at = latest(at, h.Builds[info.labelBuild].FinishedAt)
		} else {
			for _, bi := range info.builds {
				if b := &h.Builds[bi]; decisive(b.Status) {
					at = latest(at, b.FinishedAt)
				}
			}
		}
		ix.events = append(ix.events, devEvent{at: at, kind: eventChange, label: info.label, a: int32(i)})
		for _, bi := range info.builds {
			b := &h.Builds[bi]
			if decisive(b.Status) && b.DurationS >= 0 && !math.IsInf(b.DurationS, 1) {
				ix.events = append(ix.events, devEvent{at: latest(info.decided, b.FinishedAt), kind: eventBuild, a: int32(i),
					logDur: math.Log1p(b.DurationS), dur: b.DurationS, ok: b.Status == datasets.StatusSucceeded})
			}
		}
	}
	for _, p := range ix.pairs {
		if p.label < 0 {
			continue
		}
		at := latest(ix.changes[p.ahead].decided, ix.changes[p.behind].decided)
		for _, bi := range ix.changes[p.behind].builds {
			if b := &h.Builds[bi]; decisive(b.Status) {
				at = latest(at, b.FinishedAt)
			}
		}
		ix.events = append(ix.events, devEvent{at: at, kind: eventPair, label: p.label, a: p.ahead, b: p.behind})
	}
	for k := range ix.events {
		ix.events[k].seq = int32(k)
	}
	slices.SortFunc(ix.events, func(x, y devEvent) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return cmp.Compare(x.seq, y.seq)
	})
}

// latest returns the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (ix *Index) apply(t *DevTable, e *devEvent) {
	h := ix.h
	switch e.kind {
	case eventChange:
		t.addChange(h.Changes[e.a].Author, e.label)
		if e.label >= 0 {
			t.rec.addLabel(&h.Changes[e.a], e.label, e.at)
		}
	case eventPair:
		t.addPair(h.Changes[e.a].Author, h.Changes[e.b].Author, e.label)
	case eventBuild:
		t.addBuild(h.Changes[e.a].Author, e.logDur)
		t.rec.addBuild(h.Changes[e.a].Repo, e.dur, e.ok)
	}
}

// sweepDevStats computes every change's developer statistics as of its submission, and
// those of the ahead author of every candidate pair as of the behind change's submission,
// by applying the events in time order to one running table.
func (ix *Index) sweepDevStats() {
	h := ix.h
	t := newDevTable()
	next, p := 0, 0
	for _, ci := range ix.queue {
		c := &h.Changes[ci]
		if c.SubmittedAt.IsZero() {
			ix.changes[ci].dev = DevStats{PriorChanges: nan, SuccessRate: nan, ConflictRate: nan, MeanLogDuration: nan}
			ix.changes[ci].rec = unknownRecent
			continue
		}
		for next < len(ix.events) && ix.events[next].at.Before(c.SubmittedAt) {
			ix.apply(t, &ix.events[next])
			next++
		}
		ix.changes[ci].dev = t.Lookup(c.Author)
		ix.changes[ci].rec = t.Recent(c.Repo, c)
		// Pairs are in queue order of their behind change, and a change with an unknown
		// submission time is in none.
		for ; p < len(ix.pairs) && ix.pairs[p].behind == ci; p++ {
			ix.pairs[p].devAhead = t.Lookup(h.Changes[ix.pairs[p].ahead].Author)
		}
	}
}

// DevTable returns the developer table frozen at asOf: the statistics of everything
// known strictly before asOf, the same numbers a row submitted at asOf sees.
func (ix *Index) DevTable(asOf time.Time) *DevTable {
	t := newDevTable()
	t.asOf = asOf
	for k := range ix.events {
		if !ix.events[k].at.Before(asOf) {
			break
		}
		ix.apply(t, &ix.events[k])
	}
	return t
}

// speculate computes the speculation state of every build of change i, the input of its
// build-time row: the change's own decisive builds that finished strictly before the
// build started, and the build's height and path.
func (ix *Index) speculate(i int) {
	h := ix.h
	info := &ix.changes[i]
	for _, bi := range info.builds {
		b := &h.Builds[bi]
		s := Speculation{
			Succeeded:      nan,
			Failed:         nan,
			Height:         b.SpeculationHeight,
			ConflictsCount: info.conflicts,
			QueueAhead:     info.ahead,
			PathChanges:    float64(len(b.Path)),
		}
		if !b.StartedAt.IsZero() {
			s.Succeeded, s.Failed = 0, 0
			for _, oi := range info.builds {
				o := &h.Builds[oi]
				if !decisive(o.Status) || o.FinishedAt.IsZero() || !o.FinishedAt.Before(b.StartedAt) {
					continue
				}
				if o.Status == datasets.StatusSucceeded {
					s.Succeeded++
				} else {
					s.Failed++
				}
			}
		}
		for _, a := range ix.builds[bi].path {
			s.PathLinesChanged += h.Changes[a].LinesAdded + h.Changes[a].LinesRemoved
		}
		ix.builds[bi].spec = s
	}
}

// Speculation returns the speculation state the index derived for the build with index
// bi in the history's builds table: the Speculation a build-time row of that build was
// computed from.
func (ix *Index) Speculation(bi int) Speculation { return ix.builds[bi].spec }

// SuccessSpeculation returns the speculation state of the success row of change ci (its
// index in the changes table): what was known at its submission, as
// SubmissionSpeculation computes it from the changes pending ahead and the revision's
// earlier attempts. All fields are NaN when the submission time is unknown.
func (ix *Index) SuccessSpeculation(ci int) Speculation { return ix.changes[ci].spec }

// DevStats returns the developer statistics of change ci (its index in the changes
// table) as of its submission.
func (ix *Index) DevStats(ci int) DevStats { return ix.changes[ci].dev }

// Recent returns the recency features of change ci (its index in the changes table) as
// of its submission.
func (ix *Index) Recent(ci int) Recent { return ix.changes[ci].rec }

// SuccessLabel returns the success label of change ci (its index in the changes table)
// and whether it has one.
func (ix *Index) SuccessLabel(ci int) (label float64, ok bool) {
	l := ix.changes[ci].label
	return float64(l), l != labelUnknown
}

// internTargets numbers the affected target names of the history and stores every
// change's targets as a sorted set of numbers (and, for large sets, a bitset), so that the
// many overlaps the index computes compare integers. The sets have the same sizes and
// intersections as the per-row functions' string sets.
func (ix *Index) internTargets() {
	h := ix.h
	n := 0
	for i := range h.Changes {
		n += len(h.Changes[i].AffectedTargets)
	}
	// Number names in order of first sight (one map access per name), then renumber in
	// the names' sort order, so that a sorted list of names (the usual form) gives a
	// sorted set of numbers without sorting.
	ids := make(map[string]int32)
	var names []string
	all := make([]int32, 0, n)
	for i := range h.Changes {
		for _, name := range h.Changes[i].AffectedTargets {
			id, ok := ids[name]
			if !ok {
				id = int32(len(names))
				ids[name] = id
				names = append(names, name)
			}
			all = append(all, id)
		}
	}
	order := make([]int32, len(names))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(names[a], names[b]) })
	rank := make([]int32, len(names))
	for r, id := range order {
		rank[id] = int32(r)
	}
	ix.nNames = len(names)
	read, write := 0, 0
	for i := range h.Changes {
		info := &ix.changes[i]
		t := h.Changes[i].AffectedTargets
		if t == nil {
			info.nTargets = nan
			continue
		}
		set := all[write : write+len(t)]
		for k := range set {
			set[k] = rank[all[read+k]]
		}
		read += len(t)
		if !strictlySorted(set) {
			slices.Sort(set)
			set = slices.Compact(set)
		}
		write += len(set)
		info.targets = set[:len(set):len(set)]
		info.nTargets = float64(len(set))
		info.area = mainArea(t)
		if len(set) >= bitsetMin {
			info.bits = make([]uint64, (ix.nNames+63)/64)
			for _, x := range set {
				info.bits[x/64] |= 1 << (x % 64)
			}
		}
	}
}

// bitsetMin is the size from which a change's target set also gets a bitset: large diffs
// that affect most targets meet every pending change, and a bit test beats a search.
const bitsetMin = 256

// overlapInfo returns the size of the intersection of two changes' target sets.
func overlapInfo(a, b *changeInfo) int {
	if len(a.targets) > len(b.targets) {
		a, b = b, a
	}
	if b.bits == nil {
		return intersectSorted(a.targets, b.targets)
	}
	n := 0
	for _, x := range a.targets {
		n += int(b.bits[x/64] >> (x % 64) & 1)
	}
	return n
}
