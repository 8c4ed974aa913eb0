package logistic

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// synthetic returns n rows of d standard-normal features (the first informative ones
// scaled and shifted so the standardisation matters) and labels drawn from a logistic
// model with coefficients beta and intercept b0.
func synthetic(rnd *rand.Rand, n int, beta []float64, b0 float64, nanFrac float64) (*mat.Dense, []float64) {
	d := len(beta)
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		z := b0
		for j := range d {
			v := rnd.NormFloat64()
			z += beta[j] * v
			// Shift and scale column j so that the model has to standardise.
			x.Set(i, j, 10*float64(j)+v*float64(j+1))
			if rnd.Float64() < nanFrac {
				x.Set(i, j, math.NaN())
			}
		}
		if rnd.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return x, y
}

// newtonFit minimises ½ Σ_{j penalised} w_j² + C Σ c_i ℓ_i on the standardised,
// mean-imputed design by Newton-Raphson with a dense Hessian: an independent check of
// Fit's optimum. The columns in free are not penalised. It returns the original-scale
// coefficients and intercept.
func newtonFit(t *testing.T, x *mat.Dense, y, sw []float64, C float64, free ...int) ([]float64, float64) {
	t.Helper()
	n, d := x.Dims()
	mean := make([]float64, d)
	scale := make([]float64, d)
	for j := range d {
		var s, ws float64
		for i := range n {
			if v := x.At(i, j); !math.IsNaN(v) {
				s += sw[i] * v
				ws += sw[i]
			}
		}
		mean[j] = s / ws
		var ss float64
		for i := range n {
			if v := x.At(i, j); !math.IsNaN(v) {
				ss += sw[i] * (v - mean[j]) * (v - mean[j])
			}
		}
		scale[j] = math.Sqrt(ss / ws)
	}
	z := mat.NewDense(n, d+1, nil)
	for i := range n {
		for j := range d {
			v := x.At(i, j)
			if !math.IsNaN(v) {
				z.Set(i, j, (v-mean[j])/scale[j])
			}
		}
		z.Set(i, d, 1)
	}
	theta := mat.NewVecDense(d+1, nil)
	for range 50 {
		grad := mat.NewVecDense(d+1, nil)
		hess := mat.NewSymDense(d+1, nil)
		for j := range d {
			if slices.Contains(free, j) {
				continue
			}
			grad.SetVec(j, theta.AtVec(j))
			hess.SetSym(j, j, 1)
		}
		for i := range n {
			row := z.RawRowView(i)
			eta := floats.Dot(row, theta.RawVector().Data)
			p := 1 / (1 + math.Exp(-eta))
			for a := range d + 1 {
				grad.SetVec(a, grad.AtVec(a)+C*sw[i]*(p-y[i])*row[a])
				for b := a; b <= d; b++ {
					hess.SetSym(a, b, hess.At(a, b)+C*sw[i]*p*(1-p)*row[a]*row[b])
				}
			}
		}
		var step mat.VecDense
		if err := step.SolveVec(hess, grad); err != nil {
			t.Fatalf("newton: %v", err)
		}
		theta.SubVec(theta, &step)
		if mat.Norm(&step, math.Inf(1)) < 1e-13 {
			break
		}
	}
	beta := make([]float64, d)
	b0 := theta.AtVec(d)
	for j := range d {
		beta[j] = theta.AtVec(j) / scale[j]
		b0 -= beta[j] * mean[j]
	}
	return beta, b0
}

func TestFitMatchesNewton(t *testing.T) {
	t.Parallel()
	// Fit stops at a gradient norm of 1e-8 on the averaged objective (1e-10 is below what
	// the line search can resolve in float64); with Hessian eigenvalues above 1e-2 on
	// these problems that bounds the coefficient error near 1e-6.
	const tol = 1e-6
	for _, tc := range []struct {
		name    string
		n       int
		C       float64
		nanFrac float64
		weights bool
		free    []int // Config.Unpenalized
	}{
		{name: "C=1", n: 200, C: 1},
		{name: "C=0.01", n: 200, C: 0.01},
		{name: "C=0.01 first column unpenalized", n: 200, C: 0.01, free: []int{0}},
		{name: "C=0.01 two columns unpenalized, NaN", n: 300, C: 0.01, nanFrac: 0.1, free: []int{1, 3}},
		{name: "C=100 with NaN", n: 300, C: 100, nanFrac: 0.1},
		{name: "weighted", n: 150, C: 1, weights: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, 1))
			x, y := synthetic(rnd, tc.n, []float64{1, -0.5, 0, 0.25}, 0.3, tc.nanFrac)
			sw := make([]float64, tc.n)
			for i := range sw {
				sw[i] = 1
				if tc.weights {
					sw[i] = 0.5 + rnd.Float64()
				}
			}
			var w []float64
			if tc.weights {
				w = sw
			}
			m, err := Fit(x, y, w, Config{C: tc.C, Tol: 1e-8, MaxIter: 1000, Unpenalized: tc.free})
			if err != nil {
				t.Fatal(err)
			}
			beta, b0 := newtonFit(t, x, y, sw, tc.C, tc.free...)
			for j, c := range m.Coefficients() {
				if !scalar.EqualWithinAbsOrRel(c.Value, beta[j], tol, tol) {
					t.Errorf("coefficient %s = %v, want %v", c.Name, c.Value, beta[j])
				}
			}
			if !scalar.EqualWithinAbsOrRel(m.Intercept(), b0, tol, tol) {
				t.Errorf("intercept = %v, want %v", m.Intercept(), b0)
			}
			if !m.Converged() {
				t.Errorf("not converged after %d iterations", m.Stats().Iterations)
			}
		})
	}
}

func TestGradientFiniteDifference(t *testing.T) {
	t.Parallel()
	// Central differences with the default step have error O(h²) ≈ 1e-8 relative.
	const tol = 1e-6
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 9000, []float64{1, -2, 0.5}, -0.2, 0.05) // > 2 chunks
	sw := make([]float64, len(y))
	for i := range sw {
		sw[i] = rnd.Float64() * 2
	}
	raw := rowMajor(x)
	mean, scale, err := standardisation(raw, sw, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	ds := newDesign(raw, mean, scale, []int{0, 1, 2}, y, sw, nil)
	obj := &l2Objective{ds: ds, lambda: 1 / (0.3 * ds.sumC)}
	for _, theta := range [][]float64{
		{0, 0, 0, 0},
		{1, -2, 0.5, -0.2},
		{-3, 4, 2, 1},
		{10, 10, -10, 5}, // saturated: most |z| large
	} {
		obj.eval(theta)
		got := append([]float64(nil), obj.lastG...)
		want := fd.Gradient(nil, func(th []float64) float64 {
			var o l2Objective = l2Objective{ds: ds, lambda: obj.lambda}
			return o.eval(th)
		}, theta, &fd.Settings{Formula: fd.Central})
		if !floats.EqualApprox(got, want, tol) {
			t.Errorf("gradient at %v = %v, want %v", theta, got, want)
		}
	}
}

func TestSeparableStaysFinite(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(6, 1, []float64{-3, -2, -1, 1, 2, 3})
	y := []float64{0, 0, 0, 1, 1, 1}
	m, err := Fit(x, y, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Coefficients()[0]
	if math.IsInf(c.Value, 0) || math.IsNaN(c.Value) || c.Value <= 0 {
		t.Errorf("separable coefficient = %v, want finite and positive", c.Value)
	}
	p := m.Predict(nil, x)
	for i, v := range p {
		if !(v > 0 && v < 1) {
			t.Errorf("p[%d] = %v, want inside (0, 1)", i, v)
		}
	}
}

func TestIntegerWeightsEqualDuplication(t *testing.T) {
	t.Parallel()
	// Both fits stop at a gradient norm of 1e-8 of the same objective (up to summation
	// order), which bounds their distance near 1e-6 (see TestFitMatchesNewton).
	const tol = 1e-6
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 120, []float64{0.8, -0.4, 0.3}, 0.1, 0.05)
	w := make([]float64, len(y))
	var rows []float64
	var dupY []float64
	for i := range w {
		w[i] = float64(rnd.IntN(4)) // 0..3, zero weights included
		for range int(w[i]) {
			rows = append(rows, x.RawRowView(i)...)
			dupY = append(dupY, y[i])
		}
	}
	dup := mat.NewDense(len(dupY), 3, rows)
	for _, cw := range []ClassWeight{Unweighted, Balanced} {
		cfg := Config{Tol: 1e-8, MaxIter: 1000, ClassWeight: cw}
		a, err := Fit(x, y, w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Fit(dup, dupY, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ca, cb := a.Coefficients(), b.Coefficients()
		for j := range ca {
			if !scalar.EqualWithinAbsOrRel(ca[j].Value, cb[j].Value, tol, tol) ||
				!scalar.EqualWithinAbsOrRel(ca[j].Mean, cb[j].Mean, tol, tol) ||
				!scalar.EqualWithinAbsOrRel(ca[j].Scale, cb[j].Scale, tol, tol) {
				t.Errorf("%v: weighted %+v, duplicated %+v", cw, ca[j], cb[j])
			}
		}
		if !scalar.EqualWithinAbsOrRel(a.Intercept(), b.Intercept(), tol, tol) {
			t.Errorf("%v: intercept weighted %v, duplicated %v", cw, a.Intercept(), b.Intercept())
		}
	}
}

func TestFitContextCancelled(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 100, []float64{1, -1}, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []Penalty{L2, L1} {
		if _, err := FitContext(ctx, x, y, nil, Config{Penalty: p}); !errors.Is(err, context.Canceled) {
			t.Errorf("%v: FitContext(cancelled) = %v, want context.Canceled", p, err)
		}
	}
}

func TestFitErrors(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	for _, tc := range []struct {
		name string
		x    mat.Matrix
		y, w []float64
		cfg  Config
		want error
	}{
		{name: "label 2", x: x, y: []float64{0, 1, 2, 0}, want: ErrInvalidData},
		{name: "label NaN", x: x, y: []float64{0, 1, math.NaN(), 0}, want: ErrInvalidData},
		{name: "one class", x: x, y: []float64{1, 1, 1, 1}, want: ErrInvalidData},
		{name: "zero weight class", x: x, y: []float64{0, 1, 1, 1}, w: []float64{0, 1, 1, 1}, want: ErrInvalidData},
		{name: "negative weight", x: x, y: []float64{0, 1, 1, 0}, w: []float64{1, -1, 1, 1}, want: ErrInvalidData},
		{name: "label count", x: x, y: []float64{0, 1}, want: ErrInvalidData},
		{name: "inf input", x: mat.NewDense(2, 1, []float64{math.Inf(1), 0}), y: []float64{0, 1}, want: ErrInvalidData},
		{name: "negative C", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{C: -1}, want: ErrInvalidConfig},
		{name: "too many features", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{NFeaturesToSelect: 3}, want: ErrInvalidConfig},
		{name: "names", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{FeatureNames: []string{"a"}}, want: ErrInvalidConfig},
		{name: "duplicate names", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{FeatureNames: []string{"a", "a"}}, want: ErrInvalidConfig},
		{name: "unpenalized column out of range", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{Unpenalized: []int{2}}, want: ErrInvalidConfig},
		{name: "unpenalized column negative", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{Unpenalized: []int{-1}}, want: ErrInvalidConfig},
		{name: "unpenalized column twice", x: x, y: []float64{0, 1, 1, 0}, cfg: Config{Unpenalized: []int{1, 1}}, want: ErrInvalidConfig},
		{name: "ok", x: x, y: []float64{0, 1, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(tc.x, tc.y, tc.w, tc.cfg)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Fit = %v, want %v", err, tc.want)
			}
		})
	}
}

// columnView is a matrix that lends its columns (mat.RawColViewer) and not its rows,
// as the trainer's columnar.Matrix does.
type columnView struct {
	cols [][]float64
	n    int
}

func (v columnView) Dims() (int, int)           { return v.n, len(v.cols) }
func (v columnView) At(i, j int) float64        { return v.cols[j][i] }
func (v columnView) T() mat.Matrix              { return mat.Transpose{Matrix: v} }
func (v columnView) RawColView(j int) []float64 { return v.cols[j] }

// TestFitColumnMajor checks that a column-major matrix gives the model its rows give
// as a *mat.Dense: the same numbers in the same order.
func TestFitColumnMajor(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 300, []float64{1, -0.5, 0, 0.25}, 0.3, 0.1)
	n, d := x.Dims()
	v := columnView{n: n}
	for j := range d {
		v.cols = append(v.cols, mat.Col(nil, j, x))
	}
	want, err := Fit(x, y, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Fit(v, y, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	// The same numbers summed in the same order: equal up to rounding.
	const sameOrderTol = 1e-12
	wc, gc := want.Coefficients(), got.Coefficients()
	for j := range wc {
		if !scalar.EqualWithinAbsOrRel(gc[j].Value, wc[j].Value, sameOrderTol, sameOrderTol) {
			t.Errorf("coefficient %s = %v from columns, want %v", wc[j].Name, gc[j].Value, wc[j].Value)
		}
	}
	if !scalar.EqualWithinAbsOrRel(got.Intercept(), want.Intercept(), sameOrderTol, sameOrderTol) {
		t.Errorf("intercept = %v from columns, want %v", got.Intercept(), want.Intercept())
	}
}

// TestUnpenalizedLimit checks the anchored form at its limit: with every other
// coefficient penalised to nothing (C = 1e-9), a logistic with one unpenalised binary
// column is the saturated model of that column alone, whose probabilities are the
// share of label 1 among the rows with the column 0 and among those with it 1, in
// closed form; with the column penalised too it is the overall share.
func TestUnpenalizedLimit(t *testing.T) {
	t.Parallel()
	// The penalised coefficients are O(C) = 1e-9; the optimiser stops at a gradient of
	// 1e-10 on the averaged objective, which bounds the probability error well below it.
	const tol = 1e-6
	rnd := rand.New(rand.NewPCG(1, 1))
	const n = 400
	x := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	var k, ones [2]float64
	for i := range n {
		b := float64(rnd.IntN(2))
		x.Set(i, 0, rnd.NormFloat64())
		x.Set(i, 1, b)
		x.Set(i, 2, rnd.NormFloat64()*5+3)
		if rnd.Float64() < 0.9-0.5*b+0.05*x.At(i, 0) {
			y[i] = 1
		}
		k[int(b)]++
		ones[int(b)] += y[i]
	}
	probe := mat.NewDense(2, 3, []float64{1.5, 0, -2, -0.7, 1, 9})
	for _, tc := range []struct {
		name string
		free []int
		want [2]float64 // P(y = 1) at column 1 = 0 and = 1
	}{
		{"anchored", []int{1}, [2]float64{ones[0] / k[0], ones[1] / k[1]}},
		{"plain", nil, [2]float64{(ones[0] + ones[1]) / n, (ones[0] + ones[1]) / n}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Fit(x, y, nil, Config{C: 1e-9, Tol: 1e-10, MaxIter: 1000, Unpenalized: tc.free})
			if err != nil {
				t.Fatal(err)
			}
			got := m.Predict(nil, probe)
			for r := range 2 {
				if !scalar.EqualWithinAbsOrRel(got[r], tc.want[r], tol, tol) {
					t.Errorf("Predict(row with column 1 = %d) = %v, want %v", r, got[r], tc.want[r])
				}
			}
		})
	}
	t.Run("L1", func(t *testing.T) {
		// FISTA stops at a subgradient norm of 1e-9: the probabilities are close, not exact.
		const tolL1 = 1e-4
		m, err := Fit(x, y, nil, Config{Penalty: L1, C: 1e-6, Tol: 1e-9, MaxIter: 200000, Unpenalized: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		if c := m.Coefficients(); c[0].Value != 0 || c[2].Value != 0 || c[1].Value == 0 {
			t.Errorf("L1 coefficients %v, want only the unpenalised column's nonzero", c)
		}
		got := m.Predict(nil, probe)
		for r, want := range []float64{ones[0] / k[0], ones[1] / k[1]} {
			if !scalar.EqualWithinAbsOrRel(got[r], want, tolL1, tolL1) {
				t.Errorf("L1: Predict(row with column 1 = %d) = %v, want %v", r, got[r], want)
			}
		}
	})
}
