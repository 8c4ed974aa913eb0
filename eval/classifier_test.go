package eval

import (
	"errors"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
)

// classTol: the expected values are hand-computed fractions and logarithms; the code
// sums a handful of terms in a possibly different order.
const classTol = 1e-14

func TestClassifierMetrics(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		y, p []float64
		want ClassifierMetrics
	}{
		{
			// Rows (y, p): (0,.1) (0,.4) (1,.35) (1,.8) (0,.8) (1,.9): a tie at 0.8
			// between the classes.
			name: "mixed with a tie",
			y:    []float64{0, 0, 1, 1, 0, 1},
			p:    []float64{0.1, 0.4, 0.35, 0.8, 0.8, 0.9},
			want: ClassifierMetrics{
				N: 6, Failures: 3,
				Accuracy: 4.0 / 6,
				LogLoss:  -(math.Log(0.9) + math.Log(0.6) + math.Log(0.35) + math.Log(0.8) + math.Log(0.2) + math.Log(0.9)) / 6,
				Brier:    (0.01 + 0.16 + 0.4225 + 0.04 + 0.64 + 0.01) / 6,
				// Positive-negative pairs won: 0.35 beats 0.1 (1); 0.8 beats 0.1, 0.4
				// and ties 0.8 (2.5); 0.9 beats all three (3): 6.5 of 9.
				ROCAUC: 6.5 / 9,
				// Thresholds p <= 0.1, 0.35, 0.4, 0.8, 0.9: (P, R) = (1, 1/3),
				// (1/2, 1/3), (2/3, 2/3), (3/5, 1), (1/2, 1).
				PRAUC: 1.0/3 + 2.0/9 + 1.0/5,
				// Predicted failures (p < 0.5): rows 0, 1 (failures), 2 (success);
				// row 4 is a missed failure: TP 2, FP 1, FN 1.
				Precision: 2.0 / 3, Recall: 2.0 / 3, F1: 2.0 / 3,
				// Bins 1, 3, 4, 8, 9 hold 1, 1, 1, 2, 1 rows with |mean p - observed|
				// 0.1, 0.65, 0.4, 0.3, 0.1.
				ECE: (0.1 + 0.65 + 0.4 + 2*0.3 + 0.1) / 6,
			},
		},
		{
			name: "all tied",
			y:    []float64{0, 1, 1, 0},
			p:    []float64{0.5, 0.5, 0.5, 0.5},
			want: ClassifierMetrics{
				N: 4, Failures: 2,
				Accuracy: 0.5, LogLoss: math.Log(2), Brier: 0.25,
				ROCAUC: 0.5, PRAUC: 0.5,
				// Nothing is predicted to fail.
				Precision: nan, Recall: 0, F1: 0,
				ECE: 0,
			},
		},
		{
			name: "separated, clipped log loss",
			y:    []float64{0, 0, 1},
			p:    []float64{0, 0.2, 1},
			want: ClassifierMetrics{
				N: 3, Failures: 2,
				Accuracy: 1,
				LogLoss:  -(math.Log1p(-LogLossEpsilon) + math.Log(0.8) + math.Log(1-LogLossEpsilon)) / 3,
				Brier:    0.04 / 3,
				ROCAUC:   1, PRAUC: 1,
				Precision: 1, Recall: 1, F1: 1,
				ECE: (0 + 0.2 + 0) / 3,
			},
		},
		{
			name: "one class",
			y:    []float64{1, 1},
			p:    []float64{0.7, 0.2},
			want: ClassifierMetrics{
				N: 2, Failures: 0,
				Accuracy: 0.5, LogLoss: -(math.Log(0.7) + math.Log(0.2)) / 2, Brier: (0.09 + 0.64) / 2,
				ROCAUC: nan, PRAUC: nan,
				Precision: 0, Recall: nan, F1: 0,
				ECE: (0.3 + 0.8) / 2,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := EvaluateClassifier(tc.y, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got.N != tc.want.N || got.Failures != tc.want.Failures {
				t.Errorf("N, Failures = %d, %d, want %d, %d", got.N, got.Failures, tc.want.N, tc.want.Failures)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"Accuracy", got.Accuracy, tc.want.Accuracy},
				{"LogLoss", got.LogLoss, tc.want.LogLoss},
				{"Brier", got.Brier, tc.want.Brier},
				{"ROCAUC", got.ROCAUC, tc.want.ROCAUC},
				{"PRAUC", got.PRAUC, tc.want.PRAUC},
				{"Precision", got.Precision, tc.want.Precision},
				{"Recall", got.Recall, tc.want.Recall},
				{"F1", got.F1, tc.want.F1},
				{"ECE", got.ECE, tc.want.ECE},
			} {
				if math.IsNaN(c.want) {
					if !math.IsNaN(c.got) {
						t.Errorf("%s = %v, want NaN", c.name, c.got)
					}
					continue
				}
				if !scalar.EqualWithinAbsOrRel(c.got, c.want, classTol, classTol) {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestCalibrationBins(t *testing.T) {
	t.Parallel()
	y := []float64{0, 0, 1, 1, 0, 1}
	p := []float64{0.1, 0.4, 0.35, 0.8, 0.8, 0.9}
	bins, _ := Calibration(y, p, 5)
	want := []CalibrationBin{
		{Lo: 0, Hi: 0.2, Count: 1, MeanPredicted: 0.1, Observed: 0},
		{Lo: 0.2, Hi: 0.4, Count: 1, MeanPredicted: 0.35, Observed: 1},
		{Lo: 0.4, Hi: 0.6, Count: 1, MeanPredicted: 0.4, Observed: 0},
		{Lo: 0.6, Hi: 0.8, Count: 0},
		{Lo: 0.8, Hi: 1, Count: 3, MeanPredicted: (0.8 + 0.8 + 0.9) / 3, Observed: 2.0 / 3},
	}
	for b, w := range want {
		g := bins[b]
		if g.Count != w.Count ||
			!scalar.EqualWithinAbsOrRel(g.Lo, w.Lo, classTol, classTol) ||
			!scalar.EqualWithinAbsOrRel(g.Hi, w.Hi, classTol, classTol) ||
			!scalar.EqualWithinAbsOrRel(g.MeanPredicted, w.MeanPredicted, classTol, classTol) ||
			!scalar.EqualWithinAbsOrRel(g.Observed, w.Observed, classTol, classTol) {
			t.Errorf("bin %d = %+v, want %+v", b, g, w)
		}
	}
}

func TestEvaluateClassifierErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		y, p []float64
		want error
	}{
		{name: "label 2", y: []float64{0, 2}, p: []float64{0.5, 0.5}, want: ErrLabel},
		{name: "label NaN", y: []float64{math.NaN()}, p: []float64{0.5}, want: ErrLabel},
		{name: "p above 1", y: []float64{0, 1}, p: []float64{0.5, 1.5}, want: ErrProbability},
		{name: "p NaN", y: []float64{0, 1}, p: []float64{math.NaN(), 0.5}, want: ErrProbability},
		{name: "ok", y: []float64{0, 1}, p: []float64{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EvaluateClassifier(tc.y, tc.p)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("EvaluateClassifier(%v, %v) = %v, want %v", tc.y, tc.p, err, tc.want)
			}
		})
	}
}

func TestClassifierMisusePanics(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"length":      func() { Accuracy([]float64{0, 1}, []float64{0.5}) },
		"label":       func() { LogLoss([]float64{3}, []float64{0.5}) },
		"calibration": func() { Calibration([]float64{1}, []float64{0.5}, 0) },
		"holdout":     func() { HoldoutByTime(nil, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestHoldoutByTime(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name            string
		t               []time.Time
		frac            float64
		wantTr, wantTst []int
	}{
		{name: "plain", t: []time.Time{at(3), at(1), at(4), at(2), at(5)}, frac: 0.4,
			wantTr: []int{1, 3, 0}, wantTst: []int{2, 4}},
		// 10·0.3 rounds to 3.0000000000000004 in float64 and must still give 3 rows.
		{name: "exact product", t: []time.Time{at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8), at(9)}, frac: 0.3,
			wantTr: []int{0, 1, 2, 3, 4, 5, 6}, wantTst: []int{7, 8, 9}},
		// The cut-off time 2 is shared by rows 1 and 2: both go to the test side.
		{name: "tie at cut", t: []time.Time{at(1), at(2), at(2), at(3)}, frac: 0.25 + 0.25,
			wantTr: []int{0}, wantTst: []int{1, 2, 3}},
		{name: "all tied", t: []time.Time{at(1), at(1)}, frac: 0.5, wantTr: []int{}, wantTst: []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, ts := HoldoutByTime(tc.t, tc.frac)
			if !equalInts(tr, tc.wantTr) || !equalInts(ts, tc.wantTst) {
				t.Errorf("HoldoutByTime = %v, %v, want %v, %v", tr, ts, tc.wantTr, tc.wantTst)
			}
		})
	}
}

func equalInts(a, b []int) bool {
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
