package scoring_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/scoring"
)

// TestScorerNoConflict checks a scorer built without a P-conf model: it refuses to be
// built without a reason or with a prior outside [0, 1), reports the missing model, gives
// the prior for every pair and scores success as a full scorer does.
func TestScorerNoConflict(t *testing.T) {
	ms := bundleModels(t)
	for _, tc := range []struct {
		why   string
		prior float64
	}{{"", 0.05}, {"no labels", -0.1}, {"no labels", 1}} {
		if _, err := scoring.NewScorerNoConflict(ms.Success, ms.BuildTime, ms.DevTable, tc.why, tc.prior); !errors.Is(err, scoring.ErrInvalidConfig) {
			t.Errorf("NewScorerNoConflict(%q, %v) = %v, want ErrInvalidConfig", tc.why, tc.prior, err)
		}
	}
	if _, err := scoring.NewScorerNoConflict(nil, ms.BuildTime, ms.DevTable, "x", 0); !errors.Is(err, scoring.ErrNoModel) {
		t.Errorf("without a success model: %v, want ErrNoModel", err)
	}
	s, err := scoring.NewScorerNoConflict(ms.Success, ms.BuildTime, ms.DevTable, "the history has no conflict labels", 0.03)
	if err != nil {
		t.Fatal(err)
	}
	full, err := scoring.NewScorer(ms.Success, ms.Conflict, ms.BuildTime, ms.DevTable)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ConflictModel(); !errors.Is(err, scoring.ErrNoConflictModel) || !strings.Contains(err.Error(), "no conflict labels") {
		t.Errorf("ConflictModel = %v", err)
	}
	if err := full.ConflictModel(); err != nil {
		t.Errorf("full scorer ConflictModel = %v", err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	a, c := testChange(rnd, 0), testChange(rnd, 1)
	if got := s.PredictConflict(nil, []scoring.PairInput{{Ahead: &a, Behind: &c}, {Ahead: &c, Behind: &a}}); got[0] != 0.03 || got[1] != 0.03 {
		t.Errorf("PredictConflict = %v, want the prior", got)
	}
	in := []scoring.SuccessInput{{Change: &a}, {Change: &c}}
	x, y := s.PredictSuccess(nil, in), full.PredictSuccess(nil, in)
	if x[0] != y[0] || x[1] != y[1] {
		t.Errorf("PredictSuccess = %v, full scorer %v", x, y)
	}
}
