package features

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
)

// TestSyntheticLabels checks the label derivation against the synthetic world, where the
// truth is known independently: a change lands exactly when its build on the path of the
// changes that really landed succeeds, so every change must get a success label equal to
// its outcome; and the candidate pairs must be the pairs table's pairs (pending at the
// same time, overlapping), up to submissions and decisions at the same second, which the
// history cannot order.
func TestSyntheticLabels(t *testing.T) {
	for _, prof := range []string{"go", "ios"} {
		t.Run(prof, func(t *testing.T) {
			h, err := synth.Generate(context.Background(), synth.Config{Profile: prof, Days: 3, Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			ix, tb := tableOf(t, h, KindSuccess)
			if tb.NRows() != len(h.Changes) {
				t.Errorf("%d success rows of %d changes, skipped %v", tb.NRows(), len(h.Changes), tb.Skipped)
			}
			outcome := make(map[string]datasets.Outcome)
			for i := range h.Changes {
				outcome[h.Changes[i].ChangeID] = h.Changes[i].Outcome
			}
			for r, id := range tb.ChangeID {
				if want := outcome[id] == datasets.OutcomeLanded; (tb.Y[r] == 1) != want {
					t.Errorf("change %s: label %v, outcome %v", id, tb.Y[r], outcome[id])
				}
			}
			truth := make(map[[2]string]bool)
			for _, p := range h.Pairs {
				truth[[2]string{p.AheadChangeID, p.BehindChangeID}] = true
			}
			missing := len(truth)
			for _, p := range ix.pairs {
				if _, ok := truth[[2]string{h.Changes[p.ahead].ChangeID, h.Changes[p.behind].ChangeID}]; ok {
					missing--
				} else if !h.Changes[p.ahead].DecidedAt.Equal(h.Changes[p.behind].SubmittedAt) {
					t.Errorf("candidate pair (%s, %s) is not in the pairs table", h.Changes[p.ahead].ChangeID, h.Changes[p.behind].ChangeID)
				}
			}
			// Pairs the synthetic queue saw pending across a same-second tie.
			if missing > len(truth)/1000+1 {
				t.Errorf("%d of %d true pairs are not candidates", missing, len(truth))
			}
		})
	}
}

// TestSyntheticSuccessAsOf checks the moment a success row describes on a synthetic
// history with culprit finding: its build is the change's deciding build (the one on the
// path of the changes that really landed, whose status is the outcome), and its
// speculation counts are the change's decisive builds that finished strictly before
// that build started, counted here directly from the builds table: the deciding build
// and every build that started at or after it (culprit-finding builds among them) are
// not counted.
func TestSyntheticSuccessAsOf(t *testing.T) {
	w, err := synth.Simulate(context.Background(), synth.Config{Profile: "go", Days: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	h := w.History
	_, tb := tableOf(t, h, KindSuccess)
	idx := make(map[string]int, len(h.Changes))
	for i := range h.Changes {
		idx[h.Changes[i].ChangeID] = i
	}
	landedPath := make([][]string, len(h.Changes))
	for _, p := range h.Pairs {
		if h.Changes[idx[p.AheadChangeID]].Outcome == datasets.OutcomeLanded {
			b := idx[p.BehindChangeID]
			landedPath[b] = append(landedPath[b], p.AheadChangeID)
		}
	}
	buildsOf := make(map[string][]*datasets.Build)
	byID := make(map[string]*datasets.Build, len(h.Builds))
	for k := range h.Builds {
		b := &h.Builds[k]
		buildsOf[b.ChangeID] = append(buildsOf[b.ChangeID], b)
		byID[b.BuildID] = b
	}
	cSucc, cFail := colOf(tb.Schema, "spec_succeeded"), colOf(tb.Schema, "spec_failed")
	cPath := colOf(tb.Schema, "path_changes")
	withLater := 0 // rows whose change has a decisive build started after the row's
	for r, id := range tb.ChangeID {
		c := &h.Changes[idx[id]]
		l := byID[tb.BuildID[r]]
		if l == nil || l.ChangeID != id {
			t.Fatalf("change %s: row build %q is not one of its builds", id, tb.BuildID[r])
		}
		if want := c.Outcome == datasets.OutcomeLanded; (l.Status == datasets.StatusSucceeded) != want || !sameSet(l.Path, landedPath[idx[id]]) {
			t.Errorf("change %s (%v): row build %s (%v, path %v) is not its deciding build (landed path %v)",
				id, c.Outcome, l.BuildID, l.Status, l.Path, landedPath[idx[id]])
		}
		var succ, fail float64
		later := false
		for _, b := range buildsOf[id] {
			if !decisive(b.Status) {
				continue
			}
			if !b.StartedAt.Before(l.StartedAt) && b != l {
				later = true
			}
			if b.FinishedAt.Before(l.StartedAt) {
				if b.Status == datasets.StatusSucceeded {
					succ++
				} else {
					fail++
				}
			}
		}
		if later {
			withLater++
		}
		row := tb.Row(r)
		if row[cSucc] != succ || row[cFail] != fail || row[cPath] != float64(len(l.Path)) {
			t.Errorf("change %s: spec_succeeded, spec_failed, path_changes = %v, %v, %v; want %v, %v, %v (as of %s)",
				id, row[cSucc], row[cFail], row[cPath], succ, fail, len(l.Path), l.BuildID)
		}
	}
	t.Logf("%d success rows, %d with decisive builds started after the deciding one", tb.NRows(), withLater)
	if withLater < 20 {
		t.Errorf("only %d rows have a later decisive build: the test is too weak", withLater)
	}
}

// sameSet reports whether a and b hold the same strings, ignoring order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// conflictAgreementMin is the share of labelled pairs whose derived conflict label must
// equal the generator's draw.
const conflictAgreementMin = 0.99

// conflictMeanSigmas is the tolerance, in binomial standard deviations, of the mean
// conflict label about the mean true_p_conflict of the labelled pairs.
const conflictMeanSigmas = 4

// TestSyntheticConflictLabels checks the conflict labels against the synthetic truth: a
// labelled pair's label is the pairs table's conflicted draw, and the pairs that get a
// label are chosen without looking at the draw, so their mean label estimates the mean
// true_p_conflict (the probability of a conflict given that both changes succeed
// alone).
func TestSyntheticConflictLabels(t *testing.T) {
	for _, prof := range []string{"go", "ios"} {
		t.Run(prof, func(t *testing.T) {
			w, err := synth.Simulate(context.Background(), synth.Config{Profile: prof, Days: 3, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			h := w.History
			_, tb := tableOf(t, h, KindConflict)
			var pTrue, drawn []float64
			for _, tr := range tb.Truth {
				switch tr.Name {
				case "true_p_conflict":
					pTrue = tr.Values
				case "true_conflicted":
					drawn = tr.Values
				}
			}
			if pTrue == nil || drawn == nil {
				t.Fatalf("truth columns %v, want true_p_conflict and true_conflicted", tb.Truth)
			}
			idx := make(map[string]int, len(h.Changes))
			for i := range h.Changes {
				idx[h.Changes[i].ChangeID] = i
			}
			var n, agree, pos, noTruth int
			var sumP, varP float64
			for r := range tb.Y {
				if math.IsNaN(drawn[r]) {
					noTruth++
					continue
				}
				n++
				if tb.Y[r] == drawn[r] {
					agree++
				}
				pos += int(tb.Y[r])
				sumP += pTrue[r]
				varP += pTrue[r] * (1 - pTrue[r])
				if !w.Good[idx[tb.ChangeID[r]]] {
					t.Errorf("pair (%s, %s) labelled although the behind change fails alone", tb.AheadID[r], tb.ChangeID[r])
				}
			}
			share := float64(agree) / float64(n)
			meanL, meanP := float64(pos)/float64(n), sumP/float64(n)
			tol := conflictMeanSigmas * math.Sqrt(varP) / float64(n)
			t.Logf("%s: %d labelled pairs (%d without truth), %d conflicts; label = conflicted for %d (%.4f); mean label %.4f, mean true_p_conflict %.4f (tolerance %.4f); skipped %v",
				prof, n, noTruth, pos, agree, share, meanL, meanP, tol, tb.Skipped)
			if n < 500 || pos < 30 {
				t.Fatalf("%d labelled pairs, %d conflicts: too few to measure", n, pos)
			}
			if share < conflictAgreementMin {
				t.Errorf("label = conflicted for %d of %d labelled pairs (%.4f), want at least %v", agree, n, share, conflictAgreementMin)
			}
			if math.Abs(meanL-meanP) > tol {
				t.Errorf("mean label %.4f, mean true_p_conflict %.4f: differ by more than %.4f", meanL, meanP, tol)
			}
			if tb.Skipped[SkipNotBothSucceedAlone] == 0 {
				t.Errorf("no pair skipped as %s: %v", SkipNotBothSucceedAlone, tb.Skipped)
			}
		})
	}
}
