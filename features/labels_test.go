package features

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/datasets"
)

// TestSuccessLabels checks the intrinsic success label: 1 when any decisive build of the
// change succeeded (whatever its path), 0 when one failed on the empty path and none
// succeeded, otherwise no row; and the build that settles it.
func TestSuccessLabels(t *testing.T) {
	// c0 (rejected) and c1 (landed) are ahead of c2, pending when it is submitted at
	// minute 2, and overlap it; the cases vary c2's builds.
	base := func() []datasets.Change {
		return []datasets.Change{
			change("c0", "a", 0, 6, reject, "x"),
			change("c1", "a", 1, 8, landed, "y"),
			change("c2", "b", 2, 20, landed, "x", "y", "z"),
		}
	}
	tests := []struct {
		name   string
		mod    func(cs []datasets.Change) []datasets.Change
		builds []datasets.Build
		want   float64 // -1: no row
		skip   string
		build  string // the settling build of c2's row
	}{
		{"a success on a path says the change is good", nil, []datasets.Build{
			build("b1", "c2", fail, 3, 9, 60, "c1"), build("b2", "c2", ok, 3, 10, 60, "c0")}, 1, "", "b2"},
		{"a success alone", nil, []datasets.Build{
			build("b1", "c2", ok, 3, 9, 60)}, 1, "", "b1"},
		{"a failure alone", nil, []datasets.Build{
			build("b1", "c2", fail, 3, 9, 60)}, 0, "", "b1"},
		{"a failure alone after one on a path", nil, []datasets.Build{
			build("b1", "c2", fail, 3, 9, 60, "c1"), build("b2", "c2", fail, 10, 12, 60)}, 0, "", "b2"},
		{"a success wins over a flaky failure alone", nil, []datasets.Build{
			build("b1", "c2", fail, 3, 9, 60), build("b2", "c2", ok, 3, 12, 60, "c1")}, 1, "", "b2"},
		{"the first success settles it", nil, []datasets.Build{
			build("b1", "c2", ok, 3, 12, 60, "c1"), build("b2", "c2", ok, 3, 9, 60)}, 1, "", "b2"},
		{"failures on paths only are undetermined", nil, []datasets.Build{
			build("b1", "c2", fail, 3, 9, 60, "c1"), build("b2", "c2", fail, 3, 9, 60, "c0", "c1")}, -1, SkipUndeterminedAlone, ""},
		{"infra_failed and aborted builds alone say nothing", nil, []datasets.Build{
			build("b1", "c2", fail, 3, 9, 60, "c1"), build("b2", "c2", infra, 9, 12, 60),
			build("b3", "c2", abort, 9, 11, 60)}, -1, SkipUndeterminedAlone, ""},
		{"infra_failed and aborted ignored", nil, []datasets.Build{
			build("b1", "c2", ok, 3, 9, 60, "c1"), build("b2", "c2", infra, 9, 12, 60),
			build("b3", "c2", abort, 9, 11, 60)}, 1, "", "b1"},
		{"no decisive build", nil, []datasets.Build{
			build("b1", "c2", infra, 3, 9, 60), build("b2", "c2", abort, 3, 9, 60, "c1")}, -1, SkipNoDecisiveBuild, ""},
		{"no build at all", nil, nil, -1, SkipNoDecisiveBuild, ""},
		{"decision time from builds when decided_at is unknown",
			func(cs []datasets.Change) []datasets.Change { cs[2].DecidedAt = at(-1); return cs }, []datasets.Build{
				build("b1", "c2", ok, 3, 9, 60, "c1")}, 1, "", "b1"},
		{"undecided", func(cs []datasets.Change) []datasets.Change {
			cs[2].DecidedAt, cs[2].Outcome = at(-1), pending
			return cs
		}, []datasets.Build{build("b1", "c2", ok, -1, -1, 60)}, -1, SkipUndecided, ""},
		{"decided by its outcome at an unknown time", func(cs []datasets.Change) []datasets.Change {
			cs[2].DecidedAt = at(-1)
			return cs
		}, []datasets.Build{build("b1", "c2", ok, -1, -1, 60)}, 1, "", "b1"},
		{"a record without any time is decided", func(cs []datasets.Change) []datasets.Change {
			for i := range cs {
				cs[i].SubmittedAt, cs[i].DecidedAt, cs[i].Outcome = at(-1), at(-1), pending
			}
			return cs
		}, []datasets.Build{build("b1", "c2", fail, -1, -1, 60)}, 0, "", "b1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := base()
			if tc.mod != nil {
				cs = tc.mod(cs)
			}
			h := &datasets.History{Changes: cs, Builds: tc.builds}
			_, tb := tableOf(t, h, KindSuccess)
			var got float64 = -1
			var gotBuild string
			for r, id := range tb.ChangeID {
				if id == "c2" {
					got, gotBuild = tb.Y[r], tb.BuildID[r]
				}
			}
			if got != tc.want || gotBuild != tc.build {
				t.Errorf("label(c2) = %v settled by %q, want %v by %q", got, gotBuild, tc.want, tc.build)
			}
			if tc.skip != "" && tb.Skipped[tc.skip] < 1 {
				t.Errorf("skipped = %v, want %s", tb.Skipped, tc.skip)
			}
		})
	}
}

func TestConflictLabels(t *testing.T) {
	// A (submitted 0, decided 10) is pending when B is submitted at 2; A's own builds are
	// on the empty path.
	aliceOK := build("a1", "A", ok, 1, 5, 60)
	tests := []struct {
		name    string
		targets [2][]string
		builds  []datasets.Build
		decA    float64
		want    float64 // -1: no row
		skip    string
	}{
		{"conflicted", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, 1, ""},
		{"conflicted whatever else is on the path", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60, "X"), build("b2", "B", fail, 3, 7, 60, "X", "A")}, 10, 1, ""},
		{"ahead fails alone", [2][]string{}, []datasets.Build{build("a1", "A", fail, 1, 5, 60),
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipNotBothSucceedAlone},
		{"behind fails alone", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", fail, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipNotBothSucceedAlone},
		{"behind fails without ahead on another path", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", fail, 3, 6, 60, "X")}, 10, -1, SkipNotBothSucceedAlone},
		{"behind succeeds with ahead", [2][]string{}, []datasets.Build{aliceOK,
			build("b2", "B", ok, 3, 7, 60, "A")}, 10, 0, ""},
		{"success with ahead outweighs a failure without it", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", fail, 3, 6, 60), build("b2", "B", ok, 3, 7, 60, "A")}, 10, 0, ""},
		{"one success alone is enough", [2][]string{}, []datasets.Build{aliceOK,
			build("b0", "B", fail, 3, 5, 60), build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, 1, ""},
		{"paths compared as sets", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60, "X", "Y"), build("b2", "B", fail, 3, 7, 60, "Y", "A", "X")}, 10, 1, ""},
		{"bystander: fails with ahead and another change", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A", "X")}, 10, -1, SkipUndetermined},
		{"culprit found by bisection", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A", "X"),
			build("b3", "B", fail, 21, 25, 60, "A"), build("b4", "B", ok, 21, 25, 60, "X")}, 10, 1, ""},
		{"bystander cleared by bisection", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "X", "A"),
			build("b3", "B", fail, 21, 25, 60, "X"), build("b4", "B", ok, 21, 25, 60, "A")}, 10, 0, ""},
		{"failure on the path without ahead is no evidence", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "X", "A"),
			build("b3", "B", fail, 21, 25, 60, "X")}, 10, -1, SkipUndetermined},
		{"contradictory builds", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A"), build("b3", "B", ok, 8, 9, 60, "A")}, 10, -1, SkipContradictory},
		{"undetermined: only failed with ahead", [2][]string{}, []datasets.Build{aliceOK,
			build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipUndetermined},
		{"undetermined: ahead's outcome and label unknown", [2][]string{}, []datasets.Build{
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipUndetermined},
		{"undetermined: ahead good, outcome unknown", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipUndetermined},
		{"ahead landed without builds", [2][]string{}, []datasets.Build{
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, 1, ""},
		{"ahead good but rejected does not succeed", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipNotBothSucceedAlone},
		{"infra_failed with ahead ignored", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", infra, 3, 7, 60, "A")}, 10, -1, SkipUndetermined},
		{"aborted with ahead ignored", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", abort, 3, 7, 60, "A")}, 10, -1, SkipUndetermined},
		{"disjoint targets are no candidate", [2][]string{{"x"}, {"y"}}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, ""},
		{"unknown targets", [2][]string{{"x"}, nil}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 10, -1, SkipUnknownTargets},
		{"ahead decided before behind was submitted", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 1.9, -1, ""},
		{"ahead decided at the instant behind is submitted is pending", [2][]string{}, []datasets.Build{aliceOK,
			build("b1", "B", ok, 3, 6, 60), build("b2", "B", fail, 3, 7, 60, "A")}, 2, 1, ""},
	}
	// A's outcome where it is not landed.
	outcomeA := map[string]datasets.Outcome{
		"undetermined: ahead's outcome and label unknown": pending,
		"undetermined: ahead good, outcome unknown":       pending,
		"ahead good but rejected does not succeed":        reject,
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ta, tb := []string{"x", "y"}, []string{"y", "z"}
			if tc.targets[0] != nil || tc.targets[1] != nil {
				ta, tb = tc.targets[0], tc.targets[1]
			}
			h := &datasets.History{
				Changes: []datasets.Change{
					change("X", "carol", -1, 1, landed, "q"), // no submission time: in no pair
					change("Y", "dan", -1, 1, landed, "q"),
					change("A", "alice", 0, tc.decA, landed, ta...),
					change("B", "bob", 2, 20, landed, tb...),
				},
				Builds: tc.builds,
			}
			h.Changes[2].AffectedTargets = ta
			if o, ok := outcomeA[tc.name]; ok {
				h.Changes[2].Outcome = o
			}
			h.Changes[3].AffectedTargets = tb
			_, tab := tableOf(t, h, KindConflict)
			var got float64 = -1
			for r := range tab.Y {
				if tab.AheadID[r] == "A" && tab.ChangeID[r] == "B" {
					got = tab.Y[r]
				} else {
					t.Errorf("unexpected pair (%s, %s)", tab.AheadID[r], tab.ChangeID[r])
				}
			}
			if got != tc.want {
				t.Errorf("conflicted(A, B) = %v, want %v (skipped %v)", got, tc.want, tab.Skipped)
			}
			if tc.skip != "" && tab.Skipped[tc.skip] != 1 {
				t.Errorf("skipped = %v, want one %s", tab.Skipped, tc.skip)
			}
			if tc.skip == "" && len(tab.Skipped) != 0 {
				t.Errorf("skipped = %v, want nothing", tab.Skipped)
			}
		})
	}
}

// TestSuccessRowIgnoresBuilds checks that a success row describes its change at
// submission: the builds a queue runs for it (speculative ones, the deciding one, and
// those it runs after a rejection to find the culprit) may settle its label, but never
// change its features.
func TestSuccessRowIgnoresBuilds(t *testing.T) {
	hist := func(culprit bool) *datasets.History {
		h := &datasets.History{
			Changes: []datasets.Change{
				change("c1", "a", 0, 10, landed, "x"),
				change("c2", "b", 2, 12, reject, "x", "y"),
			},
			Builds: []datasets.Build{
				build("b1", "c1", ok, 1, 5, 240),
				build("b2", "c2", fail, 3, 7, 240, "c1"),      // speculated c1 would land
				build("b3", "c2", fail, 7.5, 11.5, 240, "c1"), // the deciding build
			},
		}
		if culprit {
			h.Builds = append(h.Builds,
				build("b4", "c2", ok, 13, 17, 240),         // alone: c2 is good
				build("b5", "c2", infra, 17, 18, 60, "c1"), // ignored
			)
		}
		return h
	}
	_, base := tableOf(t, hist(false), KindSuccess)
	_, got := tableOf(t, hist(true), KindSuccess)
	// Without the culprit builds c2 failed only with c1: its own outcome is unknown.
	if !equalStrings(base.ChangeID, []string{"c1"}) || base.Skipped[SkipUndeterminedAlone] != 1 {
		t.Fatalf("rows %v, skipped %v, want c1 only and c2 undetermined alone", base.ChangeID, base.Skipped)
	}
	if got.NRows() != 2 || got.BuildID[1] != "b4" || got.Y[1] != 1 {
		t.Fatalf("rows %v, builds %v, labels %v: want c2 labelled 1 by b4", got.ChangeID, got.BuildID, got.Y)
	}
	ix, err := NewIndex(context.Background(), hist(false))
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, NSuccess)
	success(row, &ix.h.Changes[1], ix.changes[1].nTargets, ix.SuccessSpeculation(1), ix.DevStats(1), ix.Recent(1))
	if !sameBits(row, got.Row(1)) {
		t.Errorf("builds changed c2's row:\n%v\n%v", row, got.Row(1))
	}
	// At minute 2, c1 was pending and overlapping; none of c2's builds counts.
	checkRow(t, got, 1, map[string]float64{"spec_succeeded": 0, "spec_failed": 0, "path_changes": 1,
		"speculation_height": 1, "queue_ahead": 1, "conflicts_count": 1})
}

// TestRevisionAttempts checks the success row's spec_succeeded and spec_failed: the
// earlier submissions of the same revision_id decided strictly before the change's
// submission that landed, and that were rejected.
func TestRevisionAttempts(t *testing.T) {
	rev := func(c datasets.Change, r string) datasets.Change { c.RevisionID = r; return c }
	h := &datasets.History{
		Changes: []datasets.Change{
			rev(change("r0", "a", 0, 3, landed, "x"), "R"),
			rev(change("r1", "a", 1, 5, reject, "x"), "R"),
			rev(change("r2", "a", 6, 9, reject, "x"), "R"),
			rev(change("r3", "a", 8, 30, landed, "x"), "R"),  // sees r0, r1; r2 is pending
			rev(change("s1", "b", 2, 4, reject, "q"), "S"),   // another revision
			rev(change("e1", "c", 2.5, 4, reject, "z"), ""),  // no revision id
			rev(change("e2", "c", 7, 10, landed, "z"), ""),   // no revision id: no attempts
			rev(change("r4", "a", 9, 30, landed, "x"), "R"),  // decided at the instant: r2 not before
			rev(change("r5", "a", 40, 50, landed, "x"), "R"), // sees r0 to r4
		},
	}
	for i := range h.Changes {
		h.Builds = append(h.Builds, build("b"+h.Changes[i].ChangeID, h.Changes[i].ChangeID, ok, 0, 0, 60))
	}
	ix, tb := tableOf(t, h, KindSuccess)
	want := map[string][2]float64{"r0": {0, 0}, "r1": {0, 0}, "r2": {1, 1}, "r3": {1, 1}, "s1": {0, 0},
		"e1": {0, 0}, "e2": {0, 0}, "r4": {1, 1}, "r5": {3, 2}}
	for r, id := range tb.ChangeID {
		checkRow(t, tb, r, map[string]float64{"spec_succeeded": want[id][0], "spec_failed": want[id][1]})
	}
	if tb.NRows() != len(want) {
		t.Errorf("%d rows, want %d", tb.NRows(), len(want))
	}
	// r3: r2 (same targets) and e2 (other targets) are pending ahead; the path holds r2.
	if s := ix.SuccessSpeculation(3); s.PathChanges != 1 || s.QueueAhead != 2 || s.Height != 2 {
		t.Errorf("r3 speculation %+v, want r2 on its path", s)
	}
}

// TestDevStatsWaitForCulpritBuilds checks that developer statistics count a result only
// once it is known: a conflict label that a culprit-finding build settles after the
// behind change was decided, and that build's duration, count from the build's finish,
// not from the decision.
func TestDevStatsWaitForCulpritBuilds(t *testing.T) {
	h := &datasets.History{
		Changes: []datasets.Change{
			change("c1", "alice", 0, 10, landed, "x"),
			change("c2", "bob", 2, 12, reject, "x"),
			change("c3", "carol", 15, 30, landed, "y"), // between c2's decision and b3's finish
			change("c4", "dan", 25, 40, landed, "z"),   // after b3 finished
		},
		Builds: []datasets.Build{
			build("b1", "c1", ok, 1, 5, 240),
			build("b2", "c2", fail, 3, 11, 240, "c1"), // c2's deciding build
			build("b3", "c2", ok, 13, 20, 600),        // culprit finding: c2 succeeds alone
			build("b4", "c3", ok, 16, 29, 240),
			build("b5", "c4", ok, 26, 39, 240),
		},
	}
	ix, tb := tableOf(t, h, KindSuccess)
	_, cf := tableOf(t, h, KindConflict)
	if cf.NRows() != 1 || cf.Y[0] != 1 {
		t.Fatalf("conflict rows %v %v, want (c1, c2) conflicted", cf.AheadID, cf.Y)
	}
	// At 15 the population has c1 (succeeded) and c2 (failed), two builds of 240 s,
	// no labelled pair; at 25 also the conflicted pair and b3's 600 s.
	for _, tc := range []struct {
		row     int
		asOf    float64
		conf    float64
		logDur  float64
		changes string
	}{
		{2, 15, 0.5, math.Log1p(240), "c3"},
		{3, 25, 2.0 / 3, (2*math.Log1p(240) + math.Log1p(600)) / 3, "c4"},
	} {
		if tb.ChangeID[tc.row] != tc.changes {
			t.Fatalf("row %d is %s, want %s", tc.row, tb.ChangeID[tc.row], tc.changes)
		}
		checkRow(t, tb, tc.row, map[string]float64{"dev_prior_conflict_rate": tc.conf})
		d := ix.DevTable(at(tc.asOf)).Lookup("nobody")
		if !scalar.EqualWithinAbsOrRel(d.ConflictRate, tc.conf, exactTol, exactTol) ||
			!scalar.EqualWithinAbsOrRel(d.MeanLogDuration, tc.logDur, exactTol, exactTol) {
			t.Errorf("DevTable(%v): conflict rate %v, mean log duration %v; want %v, %v",
				tc.asOf, d.ConflictRate, d.MeanLogDuration, tc.conf, tc.logDur)
		}
	}
}
