package synth

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// minDerivable is the share of real conflicts on a real path that the builds table must
// let a reader derive.
const minDerivable = 0.9

// attribution compares the conflict labels derived from the builds table with the pairs
// table's conflicted column, over the pairs (Ci ahead, Cj behind) of two intrinsically
// good changes with Ci on Cj's real path (Ci landed).
type attribution struct {
	pairs, conflicts int
	// Pairwise label: conflict when Cj has a succeeded build on a path S without Ci and
	// a failed build on S plus Ci; no conflict when Cj has a succeeded build whose path
	// contains Ci; otherwise undetermined.
	pairTrue, pairFalse, pairWrong int
	// Path label of ARCHITECTURE.md: conflict when Cj has a succeeded build whose path
	// lacks Ci and a failed deciding build whose path contains Ci.
	pathPos, pathFalsePos int
	// pathFalsePosAlone counts path-label false positives where Ci is alone on Cj's
	// real path.
	pathFalsePosAlone int
}

func pathKey(p []string) string { return strings.Join(p, ";") }

// attribute derives the labels of attribution from w's history, with the hidden truth
// of w.Good choosing the pairs.
func attribute(w *World) attribution {
	h := w.History
	idx := make(map[string]int, len(h.Changes))
	for i := range h.Changes {
		idx[h.Changes[i].ChangeID] = i
	}
	real := make([][]string, len(h.Changes)) // the landed changes ahead, in queue order
	for _, p := range h.Pairs {
		if h.Changes[idx[p.AheadChangeID]].Outcome == datasets.OutcomeLanded {
			b := idx[p.BehindChangeID]
			real[b] = append(real[b], p.AheadChangeID)
		}
	}
	builds := make([][]*datasets.Build, len(h.Changes))
	succeeded := make([]map[string]bool, len(h.Changes)) // paths of succeeded builds
	deciding := make([]*datasets.Build, len(h.Changes))
	for k := range h.Builds {
		b := &h.Builds[k]
		i := idx[b.ChangeID]
		builds[i] = append(builds[i], b)
		if b.Status == datasets.StatusSucceeded {
			if succeeded[i] == nil {
				succeeded[i] = map[string]bool{}
			}
			succeeded[i][pathKey(b.Path)] = true
		}
		if (b.Status == datasets.StatusSucceeded || b.Status == datasets.StatusFailed) && slices.Equal(b.Path, real[i]) {
			deciding[i] = b
		}
	}
	var a attribution
	for _, p := range h.Pairs {
		i, j := idx[p.AheadChangeID], idx[p.BehindChangeID]
		if !w.Good[i] || !w.Good[j] || h.Changes[i].Outcome != datasets.OutcomeLanded {
			continue
		}
		a.pairs++
		if p.Conflicted {
			a.conflicts++
		}
		aheadOK := deciding[i].Status == datasets.StatusSucceeded
		var alone, with, pairTrue, pairFalse bool
		for _, b := range builds[j] {
			has := slices.Contains(b.Path, p.AheadChangeID)
			switch {
			case b.Status == datasets.StatusSucceeded && has:
				pairFalse = true
			case b.Status == datasets.StatusSucceeded:
				alone = true
			case b.Status == datasets.StatusFailed && has:
				without := slices.DeleteFunc(slices.Clone(b.Path), func(id string) bool { return id == p.AheadChangeID })
				pairTrue = pairTrue || succeeded[j][pathKey(without)]
			}
		}
		with = deciding[j].Status == datasets.StatusFailed && slices.Contains(deciding[j].Path, p.AheadChangeID)
		switch {
		case pairTrue && pairFalse:
			a.pairWrong++ // contradictory evidence
		case aheadOK && pairTrue:
			if p.Conflicted {
				a.pairTrue++
			} else {
				a.pairWrong++
			}
		case pairFalse:
			if p.Conflicted {
				a.pairWrong++
			} else {
				a.pairFalse++
			}
		}
		if aheadOK && alone && with {
			a.pathPos++
			if !p.Conflicted {
				a.pathFalsePos++
				if len(real[j]) == 1 {
					a.pathFalsePosAlone++
				}
			}
		}
	}
	return a
}

// TestCulpritAttribution checks that culprit finding makes conflict labels derivable
// from the builds table: the pairwise label is never wrong and decides at least
// minDerivable of the real conflicts and of the other pairs; the path label of
// ARCHITECTURE.md finds at least minDerivable of the real conflicts and is exact when Ci
// is alone on Cj's real path (with more changes there it also flags the innocent ones:
// the builds cannot tell them apart under that label).
func TestCulpritAttribution(t *testing.T) {
	t.Parallel()
	for _, prof := range Profiles {
		t.Run(prof, func(t *testing.T) {
			t.Parallel()
			w := simulate(t, Config{Profile: prof, Days: 5, Seed: 1})
			a := attribute(w)
			t.Logf("%s: %+v", prof, a)
			if a.conflicts < 50 {
				t.Fatalf("only %d real conflicts on real paths: too few to measure", a.conflicts)
			}
			if a.pairWrong > 0 {
				t.Errorf("pairwise label wrong for %d of %d pairs", a.pairWrong, a.pairs)
			}
			if got := float64(a.pairTrue) / float64(a.conflicts); got < minDerivable {
				t.Errorf("pairwise label derives %d of %d real conflicts (%.3f), want at least %v", a.pairTrue, a.conflicts, got, minDerivable)
			}
			if got := float64(a.pairFalse) / float64(a.pairs-a.conflicts); got < minDerivable {
				t.Errorf("pairwise label derives %d of %d non-conflicts (%.3f), want at least %v", a.pairFalse, a.pairs-a.conflicts, got, minDerivable)
			}
			if got := float64(a.pathPos-a.pathFalsePos) / float64(a.conflicts); got < minDerivable {
				t.Errorf("path label derives %d of %d real conflicts (%.3f), want at least %v", a.pathPos-a.pathFalsePos, a.conflicts, got, minDerivable)
			}
			if a.pathFalsePosAlone > 0 {
				t.Errorf("path label flags %d pairs alone on the real path that do not conflict", a.pathFalsePosAlone)
			}
		})
	}
}

// TestNoCulpritFinding checks that Config.NoCulpritFinding leaves out every build after
// a decision, and changes no build started before the first culprit build would start.
func TestNoCulpritFinding(t *testing.T) {
	t.Parallel()
	cfg := Config{Profile: "go", Days: 2, Seed: 3}
	on := simulate(t, cfg).History
	cfg.NoCulpritFinding = true
	off := simulate(t, cfg).History
	if s := Summarize(off); s.Culprit != [len(s.Culprit)]int{} {
		t.Fatalf("NoCulpritFinding: culprit builds %v, want none", s.Culprit)
	}
	s := Summarize(on)
	if s.Culprit[datasets.StatusSucceeded] == 0 || s.Culprit[datasets.StatusFailed] == 0 {
		t.Fatalf("culprit finding ran no succeeded or failed build: %v", s.Culprit)
	}
	// Up to the start of the first culprit build the two queues are the same.
	decided := map[string]time.Time{}
	for _, c := range on.Changes {
		decided[c.ChangeID] = c.DecidedAt
	}
	first := -1
	for i, b := range on.Builds {
		if !b.StartedAt.Before(decided[b.ChangeID]) {
			first = i
			break
		}
	}
	if first <= 0 || !slices.EqualFunc(on.Builds[:first], off.Builds[:first], func(a, b datasets.Build) bool {
		return a.BuildID == b.BuildID && a.StartedAt.Equal(b.StartedAt) && slices.Equal(a.Path, b.Path) &&
			(a.Status == b.Status || !a.FinishedAt.Before(on.Builds[first].StartedAt))
	}) {
		t.Fatalf("the builds started before the first culprit build (%d) differ with and without culprit finding", first)
	}
}
