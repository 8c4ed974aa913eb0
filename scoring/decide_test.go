package scoring

import (
	"errors"
	"slices"
	"testing"
)

// TestDecideBLRD checks the BLRD decisions of paper 003 on a slow change C_1 ahead of a
// small conflicting change C_2 (and, for three changes, C_3 behind both).
func TestDecideBLRD(t *testing.T) {
	t.Parallel()
	ok, fail, run := BuildSucceeded, BuildFailed, BuildRunning
	two := []Change{{PSucc: 0.9, BuildMu: 7200}, {PSucc: 0.9, BuildMu: 300}}
	three := append(slices.Clone(two), Change{PSucc: 0.9, BuildMu: 200})
	b := func(change int, s BuildStatus, path ...int) Build {
		return Build{Change: change, Path: path, Status: s}
	}
	for _, tc := range []struct {
		name      string
		changes   []Change
		conflicts []Conflict
		builds    []Build
		want      []Decision
	}{
		{
			name: "all paths succeeded: lands ahead of the slow change", changes: two, conflicts: fullConflict(2, 0.1),
			builds: []Build{b(0, run), b(1, ok), b(1, ok, 0)},
			want: []Decision{
				{Change: 0, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 1, Verdict: Land, Bypassed: []int{0}, PathsFinished: 2, PathsTotal: 2},
			},
		},
		{
			name: "mixed results wait", changes: two, conflicts: fullConflict(2, 0.1),
			builds: []Build{b(0, run), b(1, ok), b(1, fail, 0)},
			want: []Decision{
				{Change: 0, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 1, Reason: WaitPathsDisagree, WaitingFor: []int{0}, PathsFinished: 2, PathsTotal: 2},
			},
		},
		{
			name: "all paths failed: rejected now", changes: two, conflicts: fullConflict(2, 0.1),
			builds: []Build{b(0, run), b(1, fail), b(1, fail, 0)},
			want: []Decision{
				{Change: 0, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 1, Verdict: Reject, Bypassed: []int{0}, PathsFinished: 2, PathsTotal: 2},
			},
		},
		{
			name: "one path missing waits", changes: two, conflicts: fullConflict(2, 0.1),
			builds: []Build{b(1, ok, 0)},
			want: []Decision{
				{Change: 0, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 1, Reason: WaitPaths, WaitingFor: []int{0}, PathsFinished: 1, PathsTotal: 2},
			},
		},
		{
			name: "independent change decided by its own build", changes: two,
			builds: []Build{b(1, ok)},
			want: []Decision{
				{Change: 0, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 1, Verdict: Land, PathsFinished: 1, PathsTotal: 1},
			},
		},
		{
			name: "bypasses two changes with all four paths", changes: three, conflicts: fullConflict(3, 0.1),
			builds: []Build{b(2, ok), b(2, ok, 0), b(2, ok, 1), b(2, ok, 0, 1), b(1, ok)},
			want: []Decision{
				{Change: 0, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 1, Reason: WaitPaths, WaitingFor: []int{0}, PathsFinished: 1, PathsTotal: 2},
				{Change: 2, Verdict: Land, Bypassed: []int{0, 1}, PathsFinished: 4, PathsTotal: 4},
			},
		},
		{
			name: "decisions cascade in queue order", changes: three, conflicts: fullConflict(3, 0.1),
			// C_1 lands; C_2's build on HEAD alone is now irrelevant; C_3 bypasses C_2.
			builds: []Build{b(0, ok), b(1, fail), b(1, run, 0), b(2, fail, 0), b(2, fail, 0, 1), b(2, ok)},
			want: []Decision{
				{Change: 0, Verdict: Land, PathsFinished: 1, PathsTotal: 1},
				{Change: 1, Reason: WaitDecidingBuild, PathsTotal: 1},
				{Change: 2, Verdict: Reject, Bypassed: []int{1}, PathsFinished: 2, PathsTotal: 2},
			},
		},
		{
			name: "a flaky path disagrees with itself", changes: two, conflicts: fullConflict(2, 0.1),
			builds: []Build{b(0, ok), b(1, ok, 0), b(1, fail, 0)},
			want: []Decision{
				{Change: 0, Verdict: Land, PathsFinished: 1, PathsTotal: 1},
				{Change: 1, Reason: WaitPathsDisagree, PathsFinished: 1, PathsTotal: 1},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(Queue{Changes: tc.changes, Conflicts: tc.conflicts, Builds: tc.builds})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Decide = %+v, want %+v", got, tc.want)
			}
			for x, w := range tc.want {
				g := got[x]
				if g.Change != w.Change || g.Verdict != w.Verdict || g.Reason != w.Reason ||
					!slices.Equal(g.Bypassed, w.Bypassed) || !slices.Equal(g.WaitingFor, w.WaitingFor) ||
					g.PathsFinished != w.PathsFinished || g.PathsTotal != w.PathsTotal {
					t.Errorf("decision %d = %+v, want %+v", x, g, w)
				}
			}
		})
	}
	if _, err := Decide(Queue{Changes: two, Builds: []Build{b(0, ok, 1)}}); !errors.Is(err, ErrInvalidQueue) {
		t.Errorf("Decide(path behind) = %v, want ErrInvalidQueue", err)
	}
}
