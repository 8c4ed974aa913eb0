package features

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

var randomTargets = []string{"t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11"}

// randomHistory returns a history of n changes in two repositories with random attributes,
// decisions and speculative builds on random subsets of the changes pending ahead, the
// tables shuffled. A few changes are undecided or have unknown attributes; a third are
// another submission of an earlier change's revision.
func randomHistory(rng *rand.Rand, n int) *datasets.History {
	authors := []string{"ann", "ben", "cat", "dan", "eve", "fay", ""}
	statuses := []datasets.Status{ok, ok, ok, ok, ok, ok, fail, fail, fail, infra, abort}
	h := &datasets.History{}
	s := 0.0
	for i := range n {
		s += rng.ExpFloat64() * 3
		d := s + 1 + rng.ExpFloat64()*15
		out := landed
		if rng.IntN(10) < 3 {
			out = reject
		}
		var tg []string
		for _, x := range randomTargets {
			if rng.IntN(5) == 0 {
				tg = append(tg, x)
			}
		}
		rng.Shuffle(len(tg), func(a, b int) { tg[a], tg[b] = tg[b], tg[a] })
		c := change("c"+strconv.Itoa(i), authors[rng.IntN(len(authors))], s, d, out, tg...)
		c.Repo = "r" + strconv.Itoa(rng.IntN(2))
		c.AffectedTargets = append([]string{}, tg...)
		c.LinesAdded = math.Floor(math.Exp(rng.NormFloat64()*1.5 + 3))
		c.LinesRemoved = math.Floor(math.Exp(rng.NormFloat64()*1.5 + 2))
		c.TargetsChanged = float64(rng.IntN(20))
		c.AuthorTenureDays = rng.Float64() * 1000
		c.TrueProbSuccess = rng.Float64()
		if i > 0 && rng.IntN(3) == 0 {
			// Another submission of an earlier change's revision.
			c.RevisionID = h.Changes[rng.IntN(i)].RevisionID
		}
		switch rng.IntN(20) {
		case 0:
			c.AffectedTargets = nil
		case 1:
			c.LinesAdded = math.NaN()
		case 2:
			c.DecidedAt, c.Outcome = time.Time{}, pending
		}
		h.Changes = append(h.Changes, c)
	}
	for j := range h.Changes {
		cj := &h.Changes[j]
		if cj.DecidedAt.IsZero() {
			continue
		}
		var ahead []string
		// Changes more than 200 places ahead were decided long before (mean gap 3 minutes,
		// mean pending time 16): looking further back only costs time.
		for i := max(0, j-200); i < j; i++ {
			ci := &h.Changes[i]
			if ci.Repo == cj.Repo && ci.DecidedAt.After(cj.SubmittedAt) {
				ahead = append(ahead, ci.ChangeID)
			}
		}
		sj := cj.SubmittedAt
		span := cj.DecidedAt.Sub(sj)
		for k := range rng.IntN(6) {
			// Random subsets of the changes ahead, and, as a queue's culprit finding
			// builds them, the empty path and single changes.
			var path []string
			switch rng.IntN(3) {
			case 0:
				for _, a := range ahead {
					if rng.IntN(2) == 0 {
						path = append(path, a)
					}
				}
			case 1:
				if len(ahead) > 0 {
					path = []string{ahead[rng.IntN(len(ahead))]}
				}
			}
			start := sj.Add(time.Duration(rng.Float64() * 0.8 * float64(span)))
			finish := start.Add(time.Duration(rng.Float64() * float64(cj.DecidedAt.Sub(start))))
			b := build(cj.ChangeID+"-b"+strconv.Itoa(k), cj.ChangeID, statuses[rng.IntN(len(statuses))], 0, 0, finish.Sub(start).Seconds(), path...)
			b.Repo = cj.Repo
			b.StartedAt, b.FinishedAt = start, finish
			b.TrueMuS, b.TrueSigmaS = rng.Float64()*600, rng.Float64()*60
			if rng.IntN(20) == 0 {
				b.DurationS = math.NaN()
			}
			h.Builds = append(h.Builds, b)
		}
	}
	for p := range h.Changes {
		for q := max(0, p-200); q < p; q++ {
			a, b := &h.Changes[q], &h.Changes[p]
			if a.Repo == b.Repo && a.DecidedAt.After(b.SubmittedAt) && a.AffectedTargets != nil && b.AffectedTargets != nil {
				if n, _, _ := overlap(a.AffectedTargets, b.AffectedTargets); n > 0 {
					h.Pairs = append(h.Pairs, datasets.Pair{AheadChangeID: a.ChangeID, BehindChangeID: b.ChangeID,
						TrueProbConflict: rng.Float64(), Conflicted: rng.IntN(3) == 0})
				}
			}
		}
	}
	rng.Shuffle(len(h.Changes), func(a, b int) { h.Changes[a], h.Changes[b] = h.Changes[b], h.Changes[a] })
	rng.Shuffle(len(h.Builds), func(a, b int) { h.Builds[a], h.Builds[b] = h.Builds[b], h.Builds[a] })
	return h
}

// cloneHistory returns a deep copy of h.
func cloneHistory(h *datasets.History) *datasets.History {
	c := &datasets.History{Changes: slices.Clone(h.Changes), Builds: slices.Clone(h.Builds), Pairs: slices.Clone(h.Pairs)}
	for i := range c.Changes {
		c.Changes[i].AffectedTargets = slices.Clone(c.Changes[i].AffectedTargets)
	}
	for i := range c.Builds {
		c.Builds[i].Path = slices.Clone(c.Builds[i].Path)
	}
	return c
}

func allTables(t *testing.T, h *datasets.History) (*Index, [3]*Table) {
	t.Helper()
	var tabs [3]*Table
	var ix *Index
	for k := range tabs {
		ix, tabs[k] = tableOf(t, h, Kind(k))
	}
	return ix, tabs
}

// rowKey identifies a row across two tables of the same kind: a success row by its
// change (one row per change), a conflict row by its pair, a build-time row by its build.
func rowKey(tb *Table, r int) string {
	switch tb.Schema.Kind {
	case KindConflict:
		return tb.AheadID[r] + ">" + tb.ChangeID[r]
	case KindBuildTime:
		return tb.ChangeID[r] + "/" + tb.BuildID[r]
	}
	return tb.ChangeID[r]
}

// perturb changes everything about every change decided after t (pending at t, or
// submitted after it): outcome, decision time (still after t), every build (status,
// duration, times, path) plus a new one, and, for changes submitted after t, every
// attribute, the submission time (still after t) included. Changes submitted at or
// before t keep their attributes: they were known at t.
func perturb(rng *rand.Rand, h *datasets.History, t time.Time) (*datasets.History, map[string]bool) {
	p := cloneHistory(h)
	moved := make(map[string]bool)
	after := func() time.Time { return t.Add(time.Duration((0.01 + rng.Float64()*60) * float64(time.Minute))) }
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.DecidedAt.IsZero() || !c.DecidedAt.After(t) {
			continue
		}
		moved[c.ChangeID] = true
		c.Outcome = landed + reject - c.Outcome
		c.DecidedAt = after()
		if c.SubmittedAt.After(t) {
			c.SubmittedAt = after()
			c.Author = []string{"ann", "zed", ""}[rng.IntN(3)]
			c.LinesAdded, c.Hunks, c.AuthorLevel = rng.Float64()*1e4, math.NaN(), 9
			c.AffectedTargets = []string{randomTargets[rng.IntN(len(randomTargets))]}
			c.RevisionHasTestPlan = datasets.FlagUnknown
			c.TrueProbSuccess = rng.Float64()
		}
		p.Builds = append(p.Builds, build(c.ChangeID+"-new", c.ChangeID, fail, 0, 0, 99, h.Changes[rng.IntN(len(h.Changes))].ChangeID))
		p.Builds[len(p.Builds)-1].StartedAt = after()
	}
	for i := range p.Builds {
		b := &p.Builds[i]
		if !moved[b.ChangeID] {
			continue
		}
		b.Status = []datasets.Status{ok, fail, infra, abort}[rng.IntN(4)]
		b.DurationS = rng.Float64() * 1e4
		b.StartedAt = t.Add(-time.Duration(rng.Float64() * float64(time.Hour)))
		b.FinishedAt = after()
		if len(b.Path) > 0 && rng.IntN(2) == 0 {
			b.Path = b.Path[1:]
		}
		b.SpeculationHeight = float64(len(b.Path))
	}
	return p, moved
}

// TestLeakage checks that no feature of a row whose change was submitted at or before t
// depends on anything decided after t: changing everything about the changes decided
// after t (those still pending at t included) leaves those rows' features bit-identical.
// Labels are outcomes and may change, and with them whether a row exists: a success or
// conflict row may appear or disappear only when one of its changes was changed (its
// label became (un)determinable). A build-time row describes its build at its start, so
// only builds of changes that were not changed are compared.
func TestLeakage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	h := randomHistory(rng, 160)
	bix, base := allTables(t, h)
	compared := [3]int{}
	comparedPending, comparedAll := 0, 0
	for trial := range 12 {
		c0 := rng.IntN(len(h.Changes))
		if h.Changes[c0].DecidedAt.IsZero() {
			continue
		}
		tt := h.Changes[c0].SubmittedAt
		p, moved := perturb(rng, h, tt)
		pix, pert := allTables(t, p)
		// The developer table frozen at t, what a bundle trained at t would carry.
		var a, b bytes.Buffer
		if err := WriteDevTable(&a, bix.DevTable(tt)); err != nil {
			t.Fatal(err)
		}
		if err := WriteDevTable(&b, pix.DevTable(tt)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("trial %d: DevTable(%v) changed:\n%s\n%s", trial, tt, a.Bytes(), b.Bytes())
		}
		// Every change submitted by t, labelled or not, has the same success features.
		x, y := make([]float64, NSuccess), make([]float64, NSuccess)
		for i := range h.Changes {
			c := &h.Changes[i]
			if c.SubmittedAt.IsZero() || c.SubmittedAt.After(tt) {
				continue
			}
			success(x, c, bix.changes[i].nTargets, bix.SuccessSpeculation(i), bix.DevStats(i), bix.Recent(i))
			success(y, &p.Changes[i], pix.changes[i].nTargets, pix.SuccessSpeculation(i), pix.DevStats(i), pix.Recent(i))
			comparedAll++
			if !sameBits(x, y) {
				t.Errorf("trial %d (t = %v): success features of %s changed:\n%v\n%v", trial, tt, c.ChangeID, x, y)
			}
		}
		for k := range base {
			rows := make(map[string]int)
			for r := range pert[k].Y {
				rows[rowKey(pert[k], r)] = r
			}
			seen := make(map[string]bool)
			for r := range base[k].Y {
				if base[k].SubmittedAt[r].After(tt) {
					continue
				}
				key := rowKey(base[k], r)
				seen[key] = true
				changed := moved[base[k].ChangeID[r]] || (base[k].AheadID != nil && moved[base[k].AheadID[r]])
				if Kind(k) == KindBuildTime && changed {
					continue
				}
				pr, ok := rows[key]
				if !ok {
					if !changed {
						t.Errorf("trial %d (t = %v): %v row %s disappeared although none of its changes changed", trial, tt, Kind(k), key)
					}
					continue
				}
				compared[k]++
				if Kind(k) == KindSuccess && moved[base[k].ChangeID[r]] {
					comparedPending++
				}
				if !sameBits(base[k].Row(r), pert[k].Row(pr)) {
					t.Errorf("trial %d (t = %v): %v row %s changed:\n%v\n%v", trial, tt, Kind(k), key, base[k].Row(r), pert[k].Row(pr))
				}
			}
			for r := range pert[k].Y {
				key := rowKey(pert[k], r)
				changed := moved[pert[k].ChangeID[r]] || (pert[k].AheadID != nil && moved[pert[k].AheadID[r]])
				if !pert[k].SubmittedAt[r].After(tt) && !seen[key] && !changed {
					t.Errorf("trial %d (t = %v): %v row %s appeared although none of its changes changed", trial, tt, Kind(k), key)
				}
			}
		}
	}
	for k, n := range compared {
		if n < 50 {
			t.Errorf("%v: only %d rows compared, the test is too weak", Kind(k), n)
		}
	}
	t.Logf("rows compared: %v; success rows of changes pending at t %d; success features of all changes %d", compared, comparedPending, comparedAll)
	if comparedPending < 20 {
		t.Errorf("only %d success rows of changes pending at t compared, the test is too weak", comparedPending)
	}
}

// TestLeakageAheadFlips is the targeted case: A, ahead of C and overlapping it, is
// pending when C is submitted at minute 2 and decided after; whether A lands or is
// rejected must not change C's success row, whose speculation group is what was known at
// C's submission, nor whether C has one.
func TestLeakageAheadFlips(t *testing.T) {
	hist := func(aLands bool) *datasets.History {
		h := &datasets.History{
			Changes: []datasets.Change{
				change("A", "ann", 0, 10, landed, "x"),
				change("C", "cat", 2, 12, landed, "x", "y"),
			},
			Builds: []datasets.Build{
				build("a1", "A", ok, 1, 9, 240),
				build("c1", "C", ok, 3, 11, 240, "A"), // the queue speculates that A lands
			},
		}
		if !aLands {
			h.Changes[0].Outcome = reject
			h.Builds[0].Status = fail
			h.Builds[1].Status = abort // A's rejection aborts C's build on [A]
			h.Builds = append(h.Builds, build("c2", "C", ok, 10, 11.5, 240))
		}
		return h
	}
	_, landedTab := tableOf(t, hist(true), KindSuccess)
	_, rejectedTab := tableOf(t, hist(false), KindSuccess)
	row := func(tb *Table) []float64 {
		for r, id := range tb.ChangeID {
			if id == "C" {
				return tb.Row(r)
			}
		}
		t.Fatalf("no success row of C: rows %v, skipped %v", tb.ChangeID, tb.Skipped)
		return nil
	}
	a, b := row(landedTab), row(rejectedTab)
	if !sameBits(a, b) {
		t.Errorf("C's success row depends on whether A, decided after C's submission, landed:\nA landed   %v\nA rejected %v", a, b)
	}
	checkRow(t, landedTab, 1, map[string]float64{"speculation_height": 1, "path_changes": 1, "queue_ahead": 1,
		"conflicts_count": 1, "log1p_path_lines_changed": math.Log1p(15), "spec_succeeded": 0, "spec_failed": 0})
}

// TestServingMatchesTraining checks, for every row of every kind of a random history, that
// the scorer's path (the per-row function with the developer table frozen at the row's
// submission time, serialised and read back) gives exactly the builder's row.
func TestServingMatchesTraining(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	h := randomHistory(rng, 300)
	checkServing(t, h)
	// Large diffs: target sets past bitsetMin, unsorted, with duplicates.
	h = randomHistory(rng, 300)
	for i := range h.Changes {
		if rng.IntN(4) == 0 {
			n := bitsetMin + rng.IntN(200)
			tg := make([]string, n)
			for k := range tg {
				tg[k] = "L" + strconv.Itoa(rng.IntN(600))
			}
			h.Changes[i].AffectedTargets = append(tg, randomTargets[rng.IntN(len(randomTargets))])
		}
	}
	checkServing(t, h)
}

// submissionSpec computes the submission-time speculation of c's success row the way a
// scorer would, from the history by brute force: the changes of its repository ahead of
// it in the queue (earlier submission, then table order) not decided before its
// submission (never-decided ones included), and its revision's earlier attempts decided
// before it. It relies on the random histories recording decided_at for every decided
// change.
func submissionSpec(h *datasets.History, c *datasets.Change) Speculation {
	var ahead []*datasets.Change
	var landedN, rejectedN int
	self := slices.IndexFunc(h.Changes, func(x datasets.Change) bool { return x.ChangeID == c.ChangeID })
	for i := range h.Changes {
		a := &h.Changes[i]
		if i == self {
			continue
		}
		if a.RevisionID == c.RevisionID && !a.DecidedAt.IsZero() && a.DecidedAt.Before(c.SubmittedAt) {
			switch a.Outcome {
			case landed:
				landedN++
			case reject:
				rejectedN++
			}
		}
		first := a.SubmittedAt.Before(c.SubmittedAt) || (a.SubmittedAt.Equal(c.SubmittedAt) && i < self)
		never := a.DecidedAt.IsZero() && a.Outcome == pending
		if a.Repo == c.Repo && !a.SubmittedAt.IsZero() && first && (never || !a.DecidedAt.Before(c.SubmittedAt)) {
			ahead = append(ahead, a)
		}
	}
	slices.SortStableFunc(ahead, func(x, y *datasets.Change) int { return x.SubmittedAt.Compare(y.SubmittedAt) })
	return SubmissionSpeculation(c, ahead, landedN, rejectedN)
}

func checkServing(t *testing.T, h *datasets.History) {
	t.Helper()
	ix, tabs := allTables(t, h)
	changes := make(map[string]*datasets.Change)
	for i := range h.Changes {
		changes[h.Changes[i].ChangeID] = &h.Changes[i]
	}
	builds := make(map[string]int)
	for i := range h.Builds {
		builds[h.Builds[i].BuildID] = i
	}
	frozen := make(map[time.Time]*DevTable)
	devAt := func(tt time.Time) *DevTable {
		if d := frozen[tt]; d != nil {
			return d
		}
		var buf bytes.Buffer
		if err := WriteDevTable(&buf, ix.DevTable(tt)); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDevTable(&buf)
		if err != nil {
			t.Fatal(err)
		}
		frozen[tt] = d
		return d
	}
	for k, tb := range tabs {
		if tb.NRows() < 20 {
			t.Errorf("%v: %d rows, want a bigger test", Kind(k), tb.NRows())
		}
		dst := make([]float64, tb.Schema.NFeatures())
		for r := range tb.Y {
			c := changes[tb.ChangeID[r]]
			d := devAt(c.SubmittedAt)
			switch Kind(k) {
			case KindSuccess:
				Success(dst, c, submissionSpec(h, c), d.Lookup(c.Author), d.Recent(c.Repo, c))
			case KindBuildTime:
				BuildTime(dst, c, ix.Speculation(builds[tb.BuildID[r]]), d.Lookup(c.Author), d.Recent(c.Repo, c))
			case KindConflict:
				a := changes[tb.AheadID[r]]
				Conflict(dst, a, c, d.Lookup(a.Author), d.Lookup(c.Author))
			}
			if !sameBits(dst, tb.Row(r)) {
				t.Errorf("%v row %s: serving\n%v\nbuilder\n%v", Kind(k), rowKey(tb, r), dst, tb.Row(r))
			}
		}
	}
	// Truth columns follow the rows.
	for k, want := range [][]string{{"true_p_success"}, {"true_p_conflict", "true_conflicted"}, {"true_mu_s", "true_sigma_s"}} {
		tb := tabs[k]
		if len(tb.Truth) != len(want) {
			t.Fatalf("%v truth = %d columns, want %v", Kind(k), len(tb.Truth), want)
		}
		for i, tr := range tb.Truth {
			if tr.Name != want[i] || len(tr.Values) != tb.NRows() {
				t.Errorf("%v truth %d = %s with %d values, want %s with %d", Kind(k), i, tr.Name, len(tr.Values), want[i], tb.NRows())
			}
		}
	}
	for r := range tabs[KindSuccess].Y {
		c := changes[tabs[KindSuccess].ChangeID[r]]
		if tabs[KindSuccess].Truth[0].Values[r] != c.TrueProbSuccess {
			t.Fatalf("true_p_success of %s = %v, want %v", c.ChangeID, tabs[KindSuccess].Truth[0].Values[r], c.TrueProbSuccess)
		}
	}
	// Rows are in time order.
	for k, tb := range tabs {
		if !slices.IsSortedFunc(tb.SubmittedAt, time.Time.Compare) {
			t.Errorf("%v rows are not in submission order", Kind(k))
		}
	}
}

func TestDevTableJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	h := randomHistory(rng, 80)
	ix, err := NewIndex(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	d := ix.DevTable(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	var a, b bytes.Buffer
	if err := WriteDevTable(&a, d); err != nil {
		t.Fatal(err)
	}
	d2, err := ReadDevTable(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteDevTable(&b, d2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("write, read, write is not stable:\n%s\n%s", a.Bytes(), b.Bytes())
	}
	for _, au := range []string{"ann", "ben", "cat", "dan", "eve", "fay", "", "nobody"} {
		x, y := d.Lookup(au), d2.Lookup(au)
		if !sameBits([]float64{x.PriorChanges, x.SuccessRate, x.ConflictRate, x.MeanLogDuration},
			[]float64{y.PriorChanges, y.SuccessRate, y.ConflictRate, y.MeanLogDuration}) {
			t.Errorf("Lookup(%q) after JSON = %+v, want %+v", au, y, x)
		}
	}
	if d.NAuthors() != 6 {
		t.Errorf("NAuthors = %d, want 6", d.NAuthors())
	}
}
