package eval

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// regTol is for sums of a few terms that reproduce the hand computation up to rounding.
const regTol = 1e-14

func TestRegressionMetrics(t *testing.T) {
	t.Parallel()
	// Errors 0.5, 0, 1, -2; the y = 0 row is left out of MAPE.
	y := []float64{1, 2, 0, 4}
	pred := []float64{1.5, 2, 1, 2}
	got := EvaluateRegression(y, pred)
	want := RegressionMetrics{
		N:        4,
		RMSE:     math.Sqrt((0.25 + 0 + 1 + 4) / 4),
		MAE:      (0.5 + 0 + 1 + 2) / 4,
		MAPE:     100 * (0.5/1 + 0.0/2 + 2.0/4) / 3,
		MAPERows: 3,
	}
	if got.N != want.N || got.MAPERows != want.MAPERows ||
		!scalar.EqualWithinAbsOrRel(got.RMSE, want.RMSE, regTol, regTol) ||
		!scalar.EqualWithinAbsOrRel(got.MAE, want.MAE, regTol, regTol) ||
		!scalar.EqualWithinAbsOrRel(got.MAPE, want.MAPE, regTol, regTol) {
		t.Errorf("EvaluateRegression(%v, %v) = %+v, want %+v", y, pred, got, want)
	}
	// APEs 50, 0, 50 (y = 0 left out): the median is 50.
	if got.MdAPE != 50 {
		t.Errorf("MdAPE = %v, want 50", got.MdAPE)
	}
	// Even count: APEs 10, 20, 40, 100 → (20+40)/2.
	if m := MdAPE([]float64{10, 10, 10, 10}, []float64{11, 8, 14, 20}); !scalar.EqualWithinAbsOrRel(m, 30, regTol, regTol) {
		t.Errorf("MdAPE(even) = %v, want 30", m)
	}
	if m := MdAPE([]float64{0}, []float64{1}); !math.IsNaN(m) {
		t.Errorf("MdAPE(all zero) = %v, want NaN", m)
	}
	if m, used := MAPE([]float64{0, 0}, []float64{1, 2}); !math.IsNaN(m) || used != 0 {
		t.Errorf("MAPE(all zero) = %v, %d, want NaN, 0", m, used)
	}
	if got := RMSE(nil, nil); !math.IsNaN(got) {
		t.Errorf("RMSE(nil, nil) = %v, want NaN", got)
	}
}

func TestRegressionLengthMismatchPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Errorf("RMSE with mismatched lengths did not panic")
		}
	}()
	RMSE([]float64{1, 2}, []float64{1})
}
