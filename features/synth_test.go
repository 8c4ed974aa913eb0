package features

import (
	"context"
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
