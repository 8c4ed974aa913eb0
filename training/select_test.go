package training

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/logistic"
)

// randSuccessTable returns a success table of n rows in submission order whose features
// are independent standard normals and whose label is 1 with probability
// sigmoid(a + b·x0): b = 0 gives labels that are noise.
func randSuccessTable(n int, a, b float64, seed uint64) *features.Table {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := features.KindSuccess.Schema()
	nf := s.NFeatures()
	t := &features.Table{Schema: s, X: make([]float64, n*nf), Y: make([]float64, n)}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range n {
		for j := range nf {
			t.X[r*nf+j] = rng.NormFloat64()
		}
		if rng.Float64() < 1/(1+math.Exp(-(a+b*t.X[r*nf]))) {
			t.Y[r] = 1
		}
		t.SubmittedAt = append(t.SubmittedAt, t0.Add(time.Duration(r)*time.Minute))
		t.ChangeID = append(t.ChangeID, "c")
	}
	return t
}

func TestInnerFoldCuts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, folds int
		want     [][2]int
	}{
		{"two folds of 10%", 100, 2, [][2]int{{80, 90}, {90, 100}}},
		{"uneven", 101, 2, [][2]int{{81, 91}, {91, 101}}},
		{"too small for two, one fold", 30, 2, [][2]int{{24, 30}}},
		{"one fold asked", 100, 1, [][2]int{{80, 100}}},
		{"too small for one", 20, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := innerFoldCuts(tc.n, tc.folds); !slices.Equal(got, tc.want) {
				t.Errorf("innerFoldCuts(%d, %d) = %v, want %v", tc.n, tc.folds, got, tc.want)
			}
		})
	}
}

// TestSelectC checks the choice of C against its definition: every candidate's loss is
// recomputed here with logistic.Fit on the fold's earlier rows and eval.LogLoss on its
// block, the chosen C has the lowest; noise labels get a strong penalty and a strong
// signal a weak one; a configured C is kept, and a table without two classes in a fold's
// fitting rows falls back to logistic.DefaultC.
func TestSelectC(t *testing.T) {
	const tol = 1e-12 // the same fits on the same rows: only summation order differs
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		tb         *features.Table
		minC, maxC float64
	}{
		{"noise", randSuccessTable(300, 1, 0, 1), 0, 0.01},
		{"signal", randSuccessTable(2000, 0.5, 3, 2), 0.1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := SelectC(ctx, tc.tb, LogisticParams{})
			if err != nil {
				t.Fatal(err)
			}
			if sel.Folds != innerFolds || !slices.Equal(sel.Grid, LogisticCGrid) || len(sel.Losses) != len(LogisticCGrid) || len(sel.LossesRaw) != len(LogisticCGrid) {
				t.Fatalf("SelectC = %+v, want %d folds over the grid", sel, innerFolds)
			}
			cuts := innerFoldCuts(tc.tb.NRows(), innerFolds)
			chosen := sel.LossesRaw[slices.Index(LogisticCGrid, sel.C)]
			if sel.Clip {
				chosen = sel.Losses[slices.Index(LogisticCGrid, sel.C)]
			}
			for i, c := range LogisticCGrid {
				var sum, sumRaw float64
				var n int
				for _, cut := range cuts {
					fit, valid := tc.tb.Slice(0, cut[0]), tc.tb.Slice(cut[0], cut[1])
					m, err := logistic.Fit(fit.Dense(), fit.Y, nil, logistic.Config{C: c})
					if err != nil {
						t.Fatal(err)
					}
					mc, err := logistic.Fit(fit.Dense(), fit.Y, nil, logistic.Config{C: c, ClipToTrainingRange: true})
					if err != nil {
						t.Fatal(err)
					}
					sum += eval.LogLoss(valid.Y, mc.Predict(nil, valid.Dense())) * float64(valid.NRows())
					sumRaw += eval.LogLoss(valid.Y, m.Predict(nil, valid.Dense())) * float64(valid.NRows())
					n += valid.NRows()
				}
				if want := sum / float64(n); !scalar.EqualWithinAbsOrRel(sel.Losses[i], want, tol, tol) {
					t.Errorf("C=%g: clipped validation loss %v, want %v", c, sel.Losses[i], want)
				}
				if want := sumRaw / float64(n); !scalar.EqualWithinAbsOrRel(sel.LossesRaw[i], want, tol, tol) {
					t.Errorf("C=%g: validation loss %v, want %v", c, sel.LossesRaw[i], want)
				}
				if min(sel.Losses[i], sel.LossesRaw[i]) < chosen {
					t.Errorf("chose C=%g clip %v (loss %v), but C=%g has losses %v clipped, %v not", sel.C, sel.Clip, chosen, c, sel.Losses[i], sel.LossesRaw[i])
				}
			}
			if sel.C < tc.minC || sel.C > tc.maxC {
				t.Errorf("SelectC chose C=%g, want it in [%g, %g] (losses %v)", sel.C, tc.minC, tc.maxC, sel.Losses)
			}
			again, err := SelectC(ctx, tc.tb, LogisticParams{})
			if err != nil || again.C != sel.C || !slices.Equal(again.Losses, sel.Losses) {
				t.Errorf("SelectC is not deterministic: %+v then %+v", sel, again)
			}
			m, err := fitLogistic(ctx, tc.tb, LogisticParams{})
			if err != nil || m.Config().C != sel.C || m.Config().ClipToTrainingRange != sel.Clip {
				t.Errorf("fitLogistic with C unset fitted %+v (err %v), want the selected C %g, clip %v", m.Config(), err, sel.C, sel.Clip)
			}
			m, err = fitLogistic(ctx, tc.tb, LogisticParams{C: 0.5})
			if err != nil || m.Config().C != 0.5 || m.Config().ClipToTrainingRange {
				t.Errorf("fitLogistic with C=0.5 fitted %+v (err %v), want the configured 0.5 without clipping", m.Config(), err)
			}
		})
	}
	t.Run("trend", func(t *testing.T) {
		// x0 grows with time like a developer's prior changes, and its effect saturates
		// (at 3): the validation blocks lie beyond the range of the rows before them,
		// where a linear model extrapolates the early slope and clipping does not.
		tb := randSuccessTable(1500, 0, 0, 9)
		nf := tb.Schema.NFeatures()
		rng := newTestRand(10)
		for r := range tb.NRows() {
			x0 := 10 * float64(r) / float64(tb.NRows())
			tb.X[r*nf] = x0
			tb.Y[r] = 0
			if rng.Float64() < 1/(1+math.Exp(-(-1+math.Min(x0, 3)))) {
				tb.Y[r] = 1
			}
		}
		sel, err := SelectC(ctx, tb, LogisticParams{})
		if err != nil {
			t.Fatal(err)
		}
		if !sel.Clip {
			t.Errorf("SelectC on a saturating trend = %+v, want clipping", sel)
		}
	})
	t.Run("fallback", func(t *testing.T) {
		tb := randSuccessTable(100, 0, 0, 3)
		for r := range 80 { // the rows before the first block all succeed: its fit has one class
			tb.Y[r] = 1
		}
		tb.Y[90] = 0
		sel, err := SelectC(ctx, tb, LogisticParams{})
		if err != nil || sel.C != logistic.DefaultC || sel.Clip || sel.Losses != nil || sel.Folds != 0 {
			t.Errorf("SelectC of a table with one class before the folds = %+v, %v; want the default C %g", sel, err, logistic.DefaultC)
		}
	})
	t.Run("out of order", func(t *testing.T) {
		tb := randSuccessTable(300, 1, 0, 1)
		want, err := SelectC(ctx, tb, LogisticParams{})
		if err != nil {
			t.Fatal(err)
		}
		rev := make([]int, tb.NRows())
		for r := range rev {
			rev[r] = tb.NRows() - 1 - r
		}
		got, err := SelectC(ctx, subset(tb, rev), LogisticParams{})
		if err != nil || got.C != want.C || !slices.Equal(got.Losses, want.Losses) {
			t.Errorf("SelectC of the rows in reverse order = %+v, want %+v (rows are put in submission order)", got, want)
		}
	})
}

func newTestRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
