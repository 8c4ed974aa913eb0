package gbm

import (
	"bytes"
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// colMajor is a matrix that lends its columns (mat.RawColViewer) but not its rows, as
// the trainer's columnar.Matrix does.
type colMajor [][]float64

func (c colMajor) Dims() (int, int)           { return len(c[0]), len(c) }
func (c colMajor) At(i, j int) float64        { return c[j][i] }
func (c colMajor) T() mat.Matrix              { return mat.Transpose{Matrix: c} }
func (c colMajor) RawColView(j int) []float64 { return c[j] }

// columnsOf returns the columns of x as a colMajor matrix.
func columnsOf(x *mat.Dense) colMajor {
	_, c := x.Dims()
	cols := make(colMajor, c)
	for j := range cols {
		cols[j] = mat.Col(nil, j, x)
	}
	return cols
}

// modelText returns m in the LightGBM text format.
func modelText(t *testing.T, m *Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteLightGBM(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFitColumnMajor checks that Fit on a column-major matrix gives the model Fit
// gives on the same rows as a *mat.Dense (with bagging, which scores out-of-bag rows
// from the raw rows), and that Predict reads it as it reads the dense matrix.
func TestFitColumnMajor(t *testing.T) {
	t.Parallel()
	x, y := friedman(600, 1, 31)
	for i := 0; i < 600; i += 7 {
		x.Set(i, 2, math.NaN())
	}
	for _, cfg := range []Config{
		{NumIterations: 20, NumLeaves: 7},
		{NumIterations: 20, NumLeaves: 7, BaggingFraction: 0.5, BaggingFreq: 2, Seed: 3},
	} {
		want, err := Fit(x, y, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Fit(columnsOf(x), y, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelText(t, got), modelText(t, want)) {
			t.Errorf("bagging %v: Fit on columns gave another model than Fit on rows", cfg.BaggingFreq > 0)
		}
		pw, pg := want.Predict(nil, x), want.Predict(nil, columnsOf(x))
		for i := range pw {
			if !scalar.EqualWithinAbsOrRel(pg[i], pw[i], exactTol, exactTol) {
				t.Fatalf("Predict(columns)[%d] = %v, want %v", i, pg[i], pw[i])
			}
		}
	}
}

// TestTrainingPredictions checks that TrainingPredictions equals Predict on the
// training rows, and is nil when there is nothing to give.
func TestTrainingPredictions(t *testing.T) {
	t.Parallel()
	x, yReg, yBin, w := smallProblem(5)
	fx, fy := friedman(400, 3, 6)
	vx, vy := friedman(400, 3, 7)
	tests := []struct {
		name  string
		x     *mat.Dense
		y, w  []float64
		cfg   Config
		valid *Validation
		isNil bool
	}{
		{name: "regression", x: x, y: yReg, cfg: Config{NumIterations: 15, NumLeaves: 5, MinDataInLeaf: 3}},
		{name: "binary weighted", x: x, y: yBin, w: w, cfg: Config{Objective: ObjectiveBinary, NumIterations: 15, NumLeaves: 5, MinDataInLeaf: 3}},
		{name: "bagging", x: fx, y: fy, cfg: Config{NumIterations: 15, BaggingFraction: 0.6, BaggingFreq: 1, Seed: 2}},
		{name: "quantile", x: fx, y: fy, cfg: Config{Objective: ObjectiveQuantile, Alpha: 0.3, NumIterations: 15}},
		{name: "early stopping cut", x: fx, y: fy, isNil: true,
			cfg:   Config{NumIterations: 300, LearningRate: 0.3, NumLeaves: 31, MinDataInLeaf: 2, Seed: 1, EarlyStoppingRound: 10},
			valid: &Validation{X: vx, Y: vy}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := FitContext(context.Background(), tc.x, tc.y, tc.w, tc.cfg, tc.valid)
			if err != nil {
				t.Fatal(err)
			}
			got := m.TrainingPredictions()
			if tc.isNil {
				if got != nil {
					t.Fatalf("TrainingPredictions() after early stopping = %d values, want nil", len(got))
				}
				return
			}
			want := m.Predict(nil, tc.x)
			if len(got) != len(want) {
				t.Fatalf("TrainingPredictions() has %d values, want %d", len(got), len(want))
			}
			for i := range want {
				// The same leaf values added in the same order: equal up to rounding.
				if !scalar.EqualWithinAbsOrRel(got[i], want[i], exactTol, exactTol) {
					t.Fatalf("TrainingPredictions()[%d] = %v, want Predict's %v", i, got[i], want[i])
				}
			}
		})
	}
	read, err := ReadLightGBM(bytes.NewReader(modelText(t, mustFit(t, x, yReg))))
	if err != nil {
		t.Fatal(err)
	}
	if p := read.TrainingPredictions(); p != nil {
		t.Errorf("TrainingPredictions() of a model read from text = %d values, want nil", len(p))
	}
}

// mustFit fits a small default model.
func mustFit(t *testing.T, x *mat.Dense, y []float64) *Model {
	t.Helper()
	m, err := Fit(x, y, nil, Config{NumIterations: 5, MinDataInLeaf: 3})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
