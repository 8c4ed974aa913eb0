package features

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"gonum.org/v1/gonum/floats/scalar"
)

// exactTol is for values computed by the same few float operations as the hand
// calculation, which may differ from it in the last bit only.
const exactTol = 1e-12

// tinyHistory is the hand-checked history of TestTinyHistory. Times are minutes.
//
//	c1 alice  sub 0  dec 10 landed   targets x,y   b1 [] ok 1-5 240s
//	c2 bob    sub 2  dec 20 landed   targets y,z   b2 [c1] ok 3-9 360s; b3 [] infra 3-4; b4 [] fail 4-8 240s
//	c3 alice  sub 12 dec 30 rejected targets z     b5 [c2] fail 13-18 300s; b6 [] ok 19-25 360s; b7 [c2] aborted 19-20
//	c4 carol  sub 25 dec 40 landed   targets ?     b8 [] ok 26-35 duration unknown
//	c5 dave   sub 26 pending         targets x     no builds
func tinyHistory() *datasets.History {
	c4 := change("c4", "carol", 25, 40, landed)
	c4.AffectedTargets = nil
	c4.LinesAdded = math.NaN()
	return &datasets.History{
		Changes: []datasets.Change{
			change("c1", "alice", 0, 10, landed, "x", "y"),
			change("c2", "bob", 2, 20, landed, "y", "z"),
			change("c3", "alice", 12, 30, reject, "z"),
			c4,
			change("c5", "dave", 26, -1, pending, "x"),
		},
		Builds: []datasets.Build{
			build("b1", "c1", ok, 1, 5, 240),
			build("b2", "c2", ok, 3, 9, 360, "c1"),
			build("b3", "c2", infra, 3, 4, 60),
			build("b4", "c2", fail, 4, 8, 240),
			build("b5", "c3", fail, 13, 18, 300, "c2"),
			build("b6", "c3", ok, 19, 25, 360),
			build("b7", "c3", abort, 19, 20, 60, "c2"),
			build("b8", "c4", ok, 26, 35, math.NaN()),
		},
	}
}

func tableOf(t *testing.T, h *datasets.History, k Kind) (*Index, *Table) {
	t.Helper()
	ix, err := NewIndex(context.Background(), h)
	if err != nil {
		t.Fatalf("NewIndex: %v", err)
	}
	tb, err := ix.Table(context.Background(), k)
	if err != nil {
		t.Fatalf("Table(%v): %v", k, err)
	}
	if got := tb.NRows() * tb.Schema.NFeatures(); len(tb.X) != got {
		t.Fatalf("Table(%v): len(X) = %d, want %d", k, len(tb.X), got)
	}
	sum := tb.NRows()
	for _, n := range tb.Skipped {
		sum += n
	}
	if sum != tb.Considered {
		t.Errorf("Table(%v): rows + skipped = %d, considered %d", k, sum, tb.Considered)
	}
	return ix, tb
}

// checkRow compares named features of one row with hand-computed values.
func checkRow(t *testing.T, tb *Table, r int, want map[string]float64) {
	t.Helper()
	row := tb.Row(r)
	for name, w := range want {
		got := row[colOf(tb.Schema, name)]
		if math.IsNaN(w) {
			if !math.IsNaN(got) {
				t.Errorf("%v row %d (%s) %s = %v, want NaN", tb.Schema.Kind, r, tb.ChangeID[r], name, got)
			}
			continue
		}
		if !scalar.EqualWithinAbsOrRel(got, w, exactTol, exactTol) {
			t.Errorf("%v row %d (%s) %s = %v, want %v", tb.Schema.Kind, r, tb.ChangeID[r], name, got, w)
		}
	}
}

func TestTinyHistorySuccess(t *testing.T) {
	_, tb := tableOf(t, tinyHistory(), KindSuccess)
	if want := []string{"c1", "c2", "c3", "c4"}; !equalStrings(tb.ChangeID, want) {
		t.Fatalf("success rows = %v, want %v", tb.ChangeID, want)
	}
	// The intrinsic label: c2's b2 succeeded (with c1; b4 failed on the empty path
	// first, a flaky build: a success wins); c3 failed with c2 (b5) but succeeded alone
	// (b6), so it is good.
	if want := []string{"b1", "b2", "b6", "b8"}; !equalStrings(tb.BuildID, want) {
		t.Errorf("settling builds = %v, want %v", tb.BuildID, want)
	}
	if want := []float64{1, 1, 1, 1}; !sameBits(tb.Y, want) {
		t.Errorf("success labels = %v, want %v", tb.Y, want)
	}
	if tb.Skipped[SkipUndecided] != 1 || len(tb.Skipped) != 1 {
		t.Errorf("skipped = %v, want one undecided", tb.Skipped)
	}
	if tb.Truth != nil {
		t.Errorf("truth = %v, want none in a real-looking history", tb.Truth)
	}
	// c1: the first change, nothing before it.
	checkRow(t, tb, 0, map[string]float64{
		"lines_added": 10, "log1p_lines_changed": math.Log1p(15), "affected_targets": 2,
		"log1p_affected_targets": math.Log1p(2), "initial_checks_failed_share": 0.2,
		"revision_has_revert_plan": 0, "revision_has_test_plan": 1,
		"log1p_author_tenure_days": math.Log1p(100),
		"dev_prior_changes":        0, "dev_prior_success_rate": 0.5, "dev_prior_conflict_rate": 0.5,
		"spec_succeeded": 0, "spec_failed": 0, "queue_ahead": 0, "conflicts_count": 0,
		"speculation_height": 0, "path_changes": 0, "log1p_path_lines_changed": 0,
	})
	// c2 at minute 2: c1 pending (targets share y), so the most likely path is [c1] (15
	// lines) at height 1; no earlier attempt of its revision.
	checkRow(t, tb, 1, map[string]float64{
		"dev_prior_changes": 0, "queue_ahead": 1, "conflicts_count": 1,
		"spec_succeeded": 0, "spec_failed": 0, "speculation_height": 1, "path_changes": 1,
		"log1p_path_lines_changed": math.Log1p(15),
	})
	// c3 at minute 12 sees c1 (alice, succeeded, decided at 10): population 1 of 1, so
	// m = 2/3 and alice's rate is (1 + 5*2/3) / (1 + 5) = 13/18; no pair decided yet.
	// c1 was decided before, c2 is pending and overlaps (z). None of c3's builds counts.
	checkRow(t, tb, 2, map[string]float64{
		"dev_prior_changes": 1, "log1p_dev_prior_changes": math.Log1p(1),
		"dev_prior_success_rate": 13.0 / 18, "dev_prior_conflict_rate": 0.5,
		"queue_ahead": 1, "conflicts_count": 1, "spec_succeeded": 0, "spec_failed": 0,
		"speculation_height": 1, "path_changes": 1, "affected_targets": 1,
		"log1p_path_lines_changed": math.Log1p(15),
	})
	// c4 at minute 25 sees c1, c2 (succeeded) and the pair (c1, c2), not conflicted,
	// decided at 20: carol is new, so she gets the population: m = 3/4, conflict 1/3.
	// c3 is pending; c4's targets are unknown, so c3 may conflict: on the path, not
	// counted in conflicts_count.
	checkRow(t, tb, 3, map[string]float64{
		"dev_prior_changes": 0, "dev_prior_success_rate": 0.75, "dev_prior_conflict_rate": 1.0 / 3,
		"affected_targets": math.NaN(), "log1p_affected_targets": math.NaN(),
		"lines_added": math.NaN(), "log1p_lines_changed": math.NaN(),
		"queue_ahead": 1, "conflicts_count": math.NaN(), "speculation_height": 1, "path_changes": 1,
		"log1p_path_lines_changed": math.Log1p(15),
	})
}

// TestTinyHistoryNeverDecided checks that a change never decided (still queued when the
// history was exported: no decided_at, no outcome, no builds) stays pending for good: a
// change submitted after it sees it ahead.
func TestTinyHistoryNeverDecided(t *testing.T) {
	h := &datasets.History{
		Changes: []datasets.Change{
			change("u", "ann", 0, -1, pending, "x"),
			change("v", "ben", 10, 20, landed, "x", "y"),
		},
		Builds: []datasets.Build{build("b1", "v", ok, 11, 15, 240)},
	}
	_, tb := tableOf(t, h, KindSuccess)
	if !equalStrings(tb.ChangeID, []string{"v"}) {
		t.Fatalf("success rows = %v, want v", tb.ChangeID)
	}
	checkRow(t, tb, 0, map[string]float64{"queue_ahead": 1, "conflicts_count": 1})
	_, bt := tableOf(t, h, KindBuildTime)
	checkRow(t, bt, 0, map[string]float64{"queue_ahead": 1, "conflicts_count": 1})
	// The pair (u, v) is a candidate whose ahead change is undecided.
	_, cf := tableOf(t, h, KindConflict)
	if cf.NRows() != 0 || cf.Skipped[SkipUndecided] != 1 {
		t.Errorf("conflict rows %d, skipped %v, want none and one undecided", cf.NRows(), cf.Skipped)
	}
}

func TestTinyHistoryConflict(t *testing.T) {
	_, tb := tableOf(t, tinyHistory(), KindConflict)
	if !equalStrings(tb.AheadID, []string{"c1", "c2"}) || !equalStrings(tb.ChangeID, []string{"c2", "c3"}) {
		t.Fatalf("pairs = %v behind %v, want (c1,c2) (c2,c3)", tb.AheadID, tb.ChangeID)
	}
	// (c1, c2): c2 succeeded with c1 (b2), so no conflict, although b4 on the empty path
	// failed. (c2, c3): c2 succeeded (its label), c3 succeeded on the empty path (b6) and
	// failed on [c2] (b5).
	if want := []float64{0, 1}; !sameBits(tb.Y, want) {
		t.Errorf("conflict labels = %v, want %v", tb.Y, want)
	}
	// (c3, c4) and (c4, c5): c4's affected targets are unknown.
	if tb.Skipped[SkipUnknownTargets] != 2 || len(tb.Skipped) != 1 || tb.Considered != 4 {
		t.Errorf("skipped = %v of %d, want 2 unknown_affected_targets of 4", tb.Skipped, tb.Considered)
	}
	checkRow(t, tb, 0, map[string]float64{
		"overlap_targets": 1, "jaccard_targets": 1.0 / 3, "same_author": 0,
		"seconds_between_submissions": 120, "log1p_seconds_between_submissions": math.Log1p(120),
		"ahead_affected_targets": 2, "behind_affected_targets": 2,
	})
	// At minute 12 only c1 (alice) is decided: bob is new (population rates), alice has
	// 13/18.
	checkRow(t, tb, 1, map[string]float64{
		"overlap_targets": 1, "jaccard_targets": 0.5, "same_author": 0,
		"seconds_between_submissions": 600,
		"ahead_dev_prior_changes":     0, "ahead_dev_prior_success_rate": 2.0 / 3,
		"behind_dev_prior_changes": 1, "behind_dev_prior_success_rate": 13.0 / 18,
	})
}

func TestTinyHistoryBuildTime(t *testing.T) {
	_, tb := tableOf(t, tinyHistory(), KindBuildTime)
	if want := []string{"b1", "b2", "b4", "b5", "b6"}; !equalStrings(tb.BuildID, want) {
		t.Fatalf("build rows = %v, want %v", tb.BuildID, want)
	}
	if want := []float64{240, 360, 240, 300, 360}; !sameBits(tb.Y, want) {
		t.Errorf("targets = %v, want %v", tb.Y, want)
	}
	wantSkip := map[string]int{SkipInfraFailed: 1, SkipAborted: 1, SkipMissingDuration: 1}
	if len(tb.Skipped) != len(wantSkip) {
		t.Errorf("skipped = %v, want %v", tb.Skipped, wantSkip)
	}
	for r, n := range wantSkip {
		if tb.Skipped[r] != n {
			t.Errorf("skipped[%s] = %d, want %d", r, tb.Skipped[r], n)
		}
	}
	// b2: path [c1] (15 lines), nothing of c2 finished before minute 3.
	checkRow(t, tb, 1, map[string]float64{
		"speculation_height": 1, "path_changes": 1, "log1p_path_lines_changed": math.Log1p(15),
		"spec_succeeded": 0, "spec_failed": 0, "dev_prior_log1p_duration": math.NaN(),
	})
	// b6 (c3, minute 12 for developer features): b5 failed at 18 < 19. alice's builds: b1
	// (240 s) only, the population's too, so the smoothed mean is log1p(240).
	checkRow(t, tb, 4, map[string]float64{
		"spec_failed": 1, "spec_succeeded": 0, "path_changes": 0,
		"dev_prior_log1p_duration": math.Log1p(240),
	})
}

// TestTinyHistoryServing checks that the scorer's path (per-row function on raw inputs,
// speculation counted by hand, developer statistics from a frozen table that went through
// JSON) gives exactly the builder's rows.
func TestTinyHistoryServing(t *testing.T) {
	h := tinyHistory()
	ix, succ := tableOf(t, h, KindSuccess)
	frozen := func(asOf float64) *DevTable {
		var buf bytes.Buffer
		if err := WriteDevTable(&buf, ix.DevTable(at(asOf))); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDevTable(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// c3's success row: c2 pending and overlapping (15 lines), no earlier attempt; by
	// hand and through SubmissionSpeculation.
	c3 := &h.Changes[2]
	spec := Speculation{Succeeded: 0, Failed: 0, Height: 1, ConflictsCount: 1, QueueAhead: 1, PathChanges: 1, PathLinesChanged: 15}
	got := Success(make([]float64, NSuccess), c3, spec, frozen(12).Lookup("alice"), frozen(12).Recent(c3.Repo, c3))
	if !sameBits(got, succ.Row(2)) {
		t.Errorf("Success(c3) = %v\nbuilder row   %v", got, succ.Row(2))
	}
	if s := SubmissionSpeculation(c3, []*datasets.Change{&h.Changes[1]}, 0, 0); s != spec || ix.SuccessSpeculation(2) != spec {
		t.Errorf("SubmissionSpeculation(c3) = %+v, index %+v, want %+v", s, ix.SuccessSpeculation(2), spec)
	}
	// b2's build-time row.
	_, bt := tableOf(t, h, KindBuildTime)
	spec = Speculation{Succeeded: 0, Failed: 0, Height: 1, ConflictsCount: 1, QueueAhead: 1, PathChanges: 1, PathLinesChanged: 15}
	got = BuildTime(make([]float64, NBuildTime), &h.Changes[1], spec, frozen(2).Lookup("bob"), frozen(2).Recent(h.Changes[1].Repo, &h.Changes[1]))
	if !sameBits(got, bt.Row(1)) {
		t.Errorf("BuildTime(b2) = %v\nbuilder row     %v", got, bt.Row(1))
	}
	// The (c2, c3) pair, both authors as of c3's submission.
	_, cf := tableOf(t, h, KindConflict)
	d := frozen(12)
	got = Conflict(make([]float64, NConflict), &h.Changes[1], c3, d.Lookup("bob"), d.Lookup("alice"))
	if !sameBits(got, cf.Row(1)) {
		t.Errorf("Conflict(c2, c3) = %v\nbuilder row       %v", got, cf.Row(1))
	}
}

func TestDevTableHandValues(t *testing.T) {
	ix, err := NewIndex(context.Background(), tinyHistory())
	if err != nil {
		t.Fatal(err)
	}
	// Before minute 31: c1 (alice, 1), c2 (bob, 1), c3 (alice, 1: b6 succeeded alone); pairs (c1,c2) = 0 and
	// (c2,c3) = 1; builds b1 240, b2 360, b4 240, b5 300, b6 360.
	d := ix.DevTable(at(31))
	if d2, err := NewDevTable(context.Background(), tinyHistory(), at(31)); err != nil || d2.NAuthors() != d.NAuthors() || d2.Lookup("alice") != d.Lookup("alice") {
		t.Errorf("NewDevTable(31) = %v, %v, want the index's table", d2, err)
	}
	mS := 4.0 / 5 // (3+1)/(3+2)
	mC := 2.0 / 4 // (1+1)/(2+2)
	mD := (math.Log1p(240)*2 + math.Log1p(360)*2 + math.Log1p(300)) / 5
	tests := []struct {
		author string
		want   DevStats
	}{
		{"alice", DevStats{PriorChanges: 2, SuccessRate: (2 + 5*mS) / 7, ConflictRate: (1 + 5*mC) / 7,
			MeanLogDuration: (math.Log1p(240) + math.Log1p(300) + math.Log1p(360) + 5*mD) / 8}},
		{"bob", DevStats{PriorChanges: 1, SuccessRate: (1 + 5*mS) / 6, ConflictRate: (1 + 5*mC) / 7,
			MeanLogDuration: (math.Log1p(360) + math.Log1p(240) + 5*mD) / 7}},
		{"zed", DevStats{PriorChanges: 0, SuccessRate: mS, ConflictRate: mC, MeanLogDuration: mD}},
		{"", DevStats{PriorChanges: math.NaN(), SuccessRate: mS, ConflictRate: mC, MeanLogDuration: mD}},
	}
	for _, tc := range tests {
		got := d.Lookup(tc.author)
		g := []float64{got.PriorChanges, got.SuccessRate, got.ConflictRate, got.MeanLogDuration}
		w := []float64{tc.want.PriorChanges, tc.want.SuccessRate, tc.want.ConflictRate, tc.want.MeanLogDuration}
		for i := range g {
			if !(math.IsNaN(g[i]) && math.IsNaN(w[i])) && !scalar.EqualWithinAbsOrRel(g[i], w[i], exactTol, exactTol) {
				t.Errorf("Lookup(%q) = %+v, want %+v", tc.author, got, tc.want)
				break
			}
		}
	}
	if d.NAuthors() != 2 || !d.AsOf().Equal(at(31)) {
		t.Errorf("DevTable(31): %d authors as of %v, want 2 as of %v", d.NAuthors(), d.AsOf(), at(31))
	}
}

func TestNewIndexErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(h *datasets.History)
		want string
	}{
		{"duplicate change", func(h *datasets.History) { h.Changes[1].ChangeID = "c1" }, `change_id "c1"`},
		{"duplicate build", func(h *datasets.History) { h.Builds[1].BuildID = "b1" }, `build_id "b1"`},
		{"unknown change", func(h *datasets.History) { h.Builds[2].ChangeID = "nope" }, `build "b3" (row 3): change_id "nope"`},
		{"unknown path entry", func(h *datasets.History) { h.Builds[1].Path = []string{"nope"} }, `build "b2" (row 2): path entry "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tinyHistory()
			tc.mod(h)
			_, err := NewIndex(context.Background(), h)
			if !errors.Is(err, ErrInvalidHistory) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Errorf("NewIndex = %v, want ErrInvalidHistory naming %s", err, tc.want)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewIndex(ctx, tinyHistory()); !errors.Is(err, context.Canceled) {
		t.Errorf("NewIndex(canceled) = %v, want context.Canceled", err)
	}
	ix, err := NewIndex(context.Background(), tinyHistory())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Kind{KindSuccess, KindConflict, KindBuildTime} {
		if _, err := ix.Table(ctx, k); !errors.Is(err, context.Canceled) {
			t.Errorf("Table(canceled, %v) = %v, want context.Canceled", k, err)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	_, tabs := allTables(t, randomHistory(rng, 60))
	for _, tb := range tabs {
		f := tb.Frame()
		if f.NRows() != tb.NRows() || len(f.Columns) != tb.Schema.NFeatures()+1+len(tb.Truth) {
			t.Fatalf("%v: Frame has %d rows, %d columns", tb.Schema.Kind, f.NRows(), len(f.Columns))
		}
		for j, name := range tb.Schema.Names {
			if f.Index(name) != j {
				t.Errorf("%v: column %s at %d, want %d", tb.Schema.Kind, name, f.Index(name), j)
			}
			for r := range tb.Y {
				if !sameBits([]float64{f.Columns[j].Floats[r]}, []float64{tb.Row(r)[j]}) {
					t.Fatalf("%v: frame[%d][%s] = %v, want %v", tb.Schema.Kind, r, name, f.Columns[j].Floats[r], tb.Row(r)[j])
				}
			}
		}
		if l := f.Columns[tb.Schema.NFeatures()]; l.Name != tb.Schema.Kind.LabelName() || !sameBits(l.Floats, tb.Y) {
			t.Errorf("%v: label column %s differs", tb.Schema.Kind, l.Name)
		}
		for i, tr := range tb.Truth {
			if c := f.Columns[tb.Schema.NFeatures()+1+i]; c.Name != tr.Name || !sameBits(c.Floats, tr.Values) {
				t.Errorf("%v: truth column %s differs", tb.Schema.Kind, c.Name)
			}
		}
	}
}

func TestCutSlice(t *testing.T) {
	_, tb := tableOf(t, tinyHistory(), KindBuildTime)
	// Build rows by change submission: c1 (0), c2 (2), c2, c3 (12), c3.
	for _, tc := range []struct {
		at   float64
		want int
	}{{-0.5, 0}, {0, 0}, {1, 1}, {2, 1}, {12, 3}, {13, 5}} {
		at := t0.Add(time.Duration(tc.at * float64(time.Minute)))
		if got := tb.Cut(at); got != tc.want {
			t.Errorf("Cut(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
	k := tb.Cut(at(12))
	a, b := tb.Slice(0, k), tb.Slice(k, tb.NRows())
	if a.NRows() != 3 || b.NRows() != 2 || !sameBits(b.Row(0), tb.Row(3)) || b.BuildID[1] != "b6" || a.AheadID != nil {
		t.Errorf("Slice: %d and %d rows, b.Row(0) = %v", a.NRows(), b.NRows(), b.Row(0))
	}
	if d := b.Dense(); d == nil || d.At(1, 0) != tb.Row(4)[0] {
		t.Errorf("Slice(%d, %d).Dense() does not hold the rows", k, tb.NRows())
	}
	if tb.Slice(2, 2).Dense() != nil {
		t.Error("empty Slice has a matrix")
	}
	defer func() {
		if recover() == nil {
			t.Error("Slice(3, 2) did not panic")
		}
	}()
	tb.Slice(3, 2)
}
