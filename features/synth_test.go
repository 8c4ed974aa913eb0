package features

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
)

// TestSyntheticLabels checks the label derivation against the synthetic world, where the
// truth is known independently: with culprit finding, every change is built alone when
// it is rejected on a path, so every change must get a success label equal to whether
// it is intrinsically good (World.Good); without it, the changes rejected on a path are
// undetermined and the others still get their intrinsic outcome. And the candidate pairs
// must be the pairs table's pairs (pending at the same time, overlapping), up to
// submissions and decisions at the same second, which the history cannot order.
func TestSyntheticLabels(t *testing.T) {
	for _, tc := range []struct {
		prof      string
		noCulprit bool
	}{{"go", false}, {"ios", false}, {"go", true}} {
		t.Run(fmt.Sprintf("%s/noCulprit=%v", tc.prof, tc.noCulprit), func(t *testing.T) {
			w, err := synth.Simulate(context.Background(), synth.Config{Profile: tc.prof, Days: 3, Seed: 11, NoCulpritFinding: tc.noCulprit})
			if err != nil {
				t.Fatal(err)
			}
			h := w.History
			ix, tb := tableOf(t, h, KindSuccess)
			idx := make(map[string]int, len(h.Changes))
			for i := range h.Changes {
				idx[h.Changes[i].ChangeID] = i
			}
			for r, id := range tb.ChangeID {
				if want := w.Good[idx[id]]; (tb.Y[r] == 1) != want {
					t.Errorf("change %s: label %v, intrinsically good %v", id, tb.Y[r], want)
				}
			}
			skipped := tb.Considered - tb.NRows()
			if !tc.noCulprit && skipped != 0 {
				t.Errorf("%d success rows of %d changes, skipped %v", tb.NRows(), len(h.Changes), tb.Skipped)
			}
			if tc.noCulprit {
				if skipped == 0 || tb.Skipped[SkipUndeterminedAlone] != skipped {
					t.Errorf("skipped %v, want some, all %s", tb.Skipped, SkipUndeterminedAlone)
				}
				inTable := make(map[string]bool, tb.NRows())
				for _, id := range tb.ChangeID {
					inTable[id] = true
				}
				for i := range h.Changes {
					if !inTable[h.Changes[i].ChangeID] && h.Changes[i].Outcome != datasets.OutcomeRejected {
						t.Errorf("change %s (%v) has no success row", h.Changes[i].ChangeID, h.Changes[i].Outcome)
					}
				}
			}
			t.Logf("%d success rows of %d changes, mean label %.3f, skipped %v", tb.NRows(), len(h.Changes), mean(tb.Y), tb.Skipped)
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

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestSyntheticSuccessAtSubmission checks success rows on a synthetic history with
// culprit finding against the tables directly: the speculation group is the one a scorer
// builds at the change's submission (SubmissionSpeculation from the changes pending
// ahead and the revision's earlier attempts, found by brute force), and the row's
// BuildID is its first succeeded build (label 1) or first failed build alone (label 0).
func TestSyntheticSuccessAtSubmission(t *testing.T) {
	w, err := synth.Simulate(context.Background(), synth.Config{Profile: "go", Days: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	h := w.History
	ix, tb := tableOf(t, h, KindSuccess)
	idx := make(map[string]int, len(h.Changes))
	for i := range h.Changes {
		idx[h.Changes[i].ChangeID] = i
	}
	buildsOf := make(map[string][]*datasets.Build)
	for k := range h.Builds {
		b := &h.Builds[k]
		buildsOf[b.ChangeID] = append(buildsOf[b.ChangeID], b)
	}
	spec := make([]float64, NSuccess)
	resubmitted, onPath := 0, 0
	for r, id := range tb.ChangeID {
		c := &h.Changes[idx[id]]
		want := submissionSpec(h, c)
		if got := ix.SuccessSpeculation(idx[id]); got != want {
			t.Fatalf("change %s: speculation %+v, want %+v", id, got, want)
		}
		writeSpeculation(spec, 0, want)
		if g := tb.Row(r)[NSuccess-nRecent-nSpeculation : NSuccess-nRecent]; !sameBits(g, spec[:nSpeculation]) {
			t.Errorf("change %s: speculation group %v, want %v", id, g, spec[:nSpeculation])
		}
		if want.Failed > 0 {
			resubmitted++
		}
		if want.PathChanges > 0 {
			onPath++
		}
		var first *datasets.Build
		for _, b := range buildsOf[id] {
			settles := b.Status == datasets.StatusSucceeded
			if tb.Y[r] == 0 {
				settles = b.Status == datasets.StatusFailed && len(b.Path) == 0
			}
			if settles && (first == nil || b.FinishedAt.Before(first.FinishedAt)) {
				first = b
			}
		}
		if first == nil || first.BuildID != tb.BuildID[r] {
			t.Errorf("change %s: row build %s, want the first build that settles label %v (%v)", id, tb.BuildID[r], tb.Y[r], first)
		}
	}
	t.Logf("%d success rows, %d with earlier rejected attempts, %d with changes on the path", tb.NRows(), resubmitted, onPath)
	if resubmitted < 20 || onPath < 100 {
		t.Errorf("only %d rows with rejected attempts and %d with a path: the test is too weak", resubmitted, onPath)
	}
}

// conflictAgreementMin is the share of labelled pairs whose derived conflict label must
// equal the generator's draw.
const conflictAgreementMin = 0.99

// conflictPrecisionMin and conflictRecallMin bound the conflict label's precision and
// recall against the synthetic truth (see TestSyntheticConflictLabels). The synthetic
// queue bisects every rejected path, so both are near 1: the margins allow for
// flaky-build contradictions and for pairs whose evidence the history cannot order
// (decisions and submissions in the same second).
const (
	conflictPrecisionMin = 0.99
	conflictRecallMin    = 0.95
)

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

			// Precision and recall of label 1 against the truth. Precision: of the pairs
			// labelled a conflict, the share that really conflicted (the rest would be
			// the behind change failing with the ahead one for another reason). Recall:
			// of the real conflicts inside the label's condition (the ahead change landed
			// and the behind change is intrinsically good: P-conf's event), the share
			// labelled a conflict; the others got no row or label 0.
			label := make(map[[2]string]float64, tb.NRows())
			var tp, fp int
			for r, y := range tb.Y {
				label[[2]string{tb.AheadID[r], tb.ChangeID[r]}] = y
				switch {
				case y == 1 && drawn[r] == 1:
					tp++
				case y == 1:
					fp++
				}
			}
			var real, found, zero int
			for _, p := range h.Pairs {
				a, b := idx[p.AheadChangeID], idx[p.BehindChangeID]
				if !p.Conflicted || h.Changes[a].Outcome != datasets.OutcomeLanded || !w.Good[b] {
					continue
				}
				real++
				switch y, ok := label[[2]string{p.AheadChangeID, p.BehindChangeID}]; {
				case ok && y == 1:
					found++
				case ok:
					zero++
				}
			}
			precision, recall := float64(tp)/float64(tp+fp), float64(found)/float64(real)
			t.Logf("%s: conflict label precision %.4f (%d of %d), recall %.4f (%d of %d real conflicts in the condition; %d labelled 0, %d without a row)",
				prof, precision, tp, tp+fp, recall, found, real, zero, real-found-zero)
			if precision < conflictPrecisionMin || recall < conflictRecallMin || zero > 0 {
				t.Errorf("conflict label precision %.4f, recall %.4f (%d real conflicts labelled 0), want at least %v and %v",
					precision, recall, zero, conflictPrecisionMin, conflictRecallMin)
			}
		})
	}
}
