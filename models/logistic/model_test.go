package logistic

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

func TestRFEKeepsInformativeFeatures(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	// Features 1, 4 and 6 carry signal; the other five are noise.
	beta := []float64{0, 1.2, 0, 0, -0.9, 0, 0.7, 0}
	x, y := synthetic(rnd, 3000, beta, 0.2, 0)
	for _, step := range []int{1, 2} {
		m, err := Fit(x, y, nil, Config{NFeaturesToSelect: 3, Step: step})
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range m.Coefficients() {
			informative := beta[j] != 0
			if c.Selected != informative {
				t.Errorf("step %d: feature %s selected = %v, want %v", step, c.Name, c.Selected, informative)
			}
			if !c.Selected && c.Value != 0 {
				t.Errorf("step %d: dropped feature %s has coefficient %v", step, c.Name, c.Value)
			}
		}
	}
}

func TestL1ZeroesIrrelevantCoefficients(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	beta := []float64{1.5, 0, 0, -1, 0, 0}
	x, y := synthetic(rnd, 2000, beta, 0, 0)
	m, err := Fit(x, y, nil, Config{Penalty: L1, C: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Converged() {
		t.Errorf("L1 fit did not converge in %d iterations", m.Stats().Iterations)
	}
	for j, c := range m.Coefficients() {
		if (beta[j] == 0) != (c.Value == 0) {
			t.Errorf("L1 coefficient %s = %v; true coefficient %v", c.Name, c.Value, beta[j])
		}
	}
}

// TestL1Optimality checks the L1 solution against the optimality conditions of the
// objective: at the optimum, |∂g/∂w_j| <= λ where w_j = 0, ∂g/∂w_j = -λ sign(w_j)
// elsewhere and ∂g/∂b = 0, with g the averaged loss and λ = 1/(C Σc).
func TestL1Optimality(t *testing.T) {
	t.Parallel()
	// The fit stops once the minimum-norm subgradient is below tol.
	const tol = 1e-8
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 500, []float64{1, 0.1, -0.5, 0}, 0.4, 0.05)
	const C = 0.05
	m, err := Fit(x, y, nil, Config{Penalty: L1, C: C, Tol: tol, MaxIter: 100000})
	if err != nil {
		t.Fatal(err)
	}
	ones := make([]float64, len(y))
	for i := range ones {
		ones[i] = 1
	}
	raw := rowMajor(x)
	ds := newDesign(raw, m.mean, m.scale, []int{0, 1, 2, 3}, y, ones, nil)
	theta := append(append([]float64(nil), m.w...), m.b)
	g := make([]float64, len(theta))
	ds.dataLoss(theta, g)
	if opt := l1Optimality(theta, g, 1/(C*ds.sumC), ds.pen); opt > tol {
		t.Errorf("optimality measure %v > %v at %v", opt, tol, theta)
	}
	var zeros int
	for _, w := range m.w {
		if w == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		t.Errorf("no coefficient is zero at C = %v: %v", C, m.w)
	}
}

func TestArtifactRoundTrip(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 500, []float64{1, -0.5, 0.3, 0, 0.2}, 0.1, 0.1)
	for _, cfg := range []Config{
		{FeatureNames: []string{"a", "b", "c", "d", "e"}},
		{NFeaturesToSelect: 2, Penalty: L1, ClassWeight: Balanced, C: 0.3},
		{C: 0.01, Unpenalized: []int{3, 0}},
	} {
		m, err := Fit(x, y, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := m.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadJSON(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("ReadJSON: %v\n%s", err, buf.String())
		}
		p1, p2 := m.PredictRaw(nil, x), m2.PredictRaw(nil, x)
		for i := range p1 {
			if p1[i] != p2[i] { // bit-identical: same parameters, same arithmetic
				t.Fatalf("row %d: raw %v after round trip, want %v", i, p2[i], p1[i])
			}
		}
		if m2.Stats() != m.Stats() || m2.Config().C != m.Config().C || m2.Config().Penalty != m.Config().Penalty ||
			m2.Config().NFeaturesToSelect != m.Config().NFeaturesToSelect || !slices.Equal(m2.Config().Unpenalized, m.Config().Unpenalized) ||
			strings.Join(m2.FeatureNames(), ",") != strings.Join(m.FeatureNames(), ",") {
			t.Errorf("round trip: %+v %+v %v, want %+v %+v %v", m2.Stats(), m2.Config(), m2.FeatureNames(), m.Stats(), m.Config(), m.FeatureNames())
		}
		path := t.TempDir() + "/m.json"
		if err := m.SaveFile(path); err != nil {
			t.Fatal(err)
		}
		// The file is read by predictd, which may run as another user; it used to be
		// left 0600 by os.CreateTemp.
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != 0o644 {
			t.Errorf("SaveFile(%s): mode %v, want 0644", path, got)
		}
		m3, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := m3.PredictRaw(nil, x.Slice(0, 1, 0, 5)); got[0] != p1[0] {
			t.Errorf("LoadFile: raw %v, want %v", got[0], p1[0])
		}
	}
}

func TestReadJSONErrors(t *testing.T) {
	t.Parallel()
	good := `{"format_version": 1, "kind": "logistic", "feature_names": ["a", "b"],
		"means": [1, 2], "scales": [2, 4], "selected": [true, true],
		"coefficients": [2, -4], "intercept": 0.5,
		"original_coefficients": [1, -1], "original_intercept": 1.5,
		"config": {"C": 1, "penalty": "l2", "max_iter": 100, "tol": 0.0001, "class_weight": "none", "n_features_to_select": 0, "step": 1},
		"training": {"rows": 10, "iterations": 3, "converged": true, "log_loss": 0.5}}`
	for _, tc := range []struct {
		name     string
		old, new string // replace old by new in good
		want     error
		raw      float64 // the log-odds of x = (3, 6) when it reads; 0 means -1.5
	}{
		{name: "good", want: nil},
		{name: "version", old: `"format_version": 1`, new: `"format_version": 3`, want: ErrUnsupportedVersion},
		// Issue 12: format_version 2 clips the inputs to clip_lo, clip_hi: (3, 6) in
		// [0, 10]² is unchanged; in [0, 2.5] x [0, 6] it becomes (2.5, 6), log-odds
		// 1.5 + 1·2.5 − 1·6 = −2.
		{name: "clipped, in range", old: `"format_version": 1`, new: `"format_version": 2, "clip_lo": [0, 0], "clip_hi": [10, 10]`},
		{name: "clipped", old: `"format_version": 1`, new: `"format_version": 2, "clip_lo": [0, 0], "clip_hi": [2.5, 6]`, raw: -2},
		{name: "version 2 without clip", old: `"format_version": 1`, new: `"format_version": 2`, want: ErrMalformed},
		{name: "version 1 with clip", old: `"format_version": 1`, new: `"format_version": 1, "clip_lo": [0, 0], "clip_hi": [1, 1]`, want: ErrMalformed},
		{name: "clip lengths", old: `"format_version": 1`, new: `"format_version": 2, "clip_lo": [0], "clip_hi": [1, 1]`, want: ErrMalformed},
		{name: "clip inverted", old: `"format_version": 1`, new: `"format_version": 2, "clip_lo": [0, 2], "clip_hi": [1, 1]`, want: ErrMalformed},
		{name: "no version", old: `"format_version": 1,`, new: ``, want: ErrUnsupportedVersion},
		{name: "kind", old: `"kind": "logistic"`, new: `"kind": "gbm"`, want: ErrMalformed},
		{name: "lengths", old: `"means": [1, 2]`, new: `"means": [1]`, want: ErrMalformed},
		{name: "scale zero", old: `"scales": [2, 4]`, new: `"scales": [0, 4]`, want: ErrMalformed},
		{name: "original mismatch", old: `"original_coefficients": [1, -1]`, new: `"original_coefficients": [1, -2]`, want: ErrMalformed},
		{name: "intercept mismatch", old: `"original_intercept": 1.5`, new: `"original_intercept": 1`, want: ErrMalformed},
		{name: "unselected coefficient", old: `"selected": [true, true]`, new: `"selected": [true, false]`, want: ErrMalformed},
		{name: "penalty", old: `"penalty": "l2"`, new: `"penalty": "elasticnet"`, want: ErrMalformed},
		{name: "unknown field", old: `"intercept": 0.5`, new: `"intercept": 0.5, "bias": 1`, want: ErrMalformed},
		{name: "duplicate name", old: `["a", "b"]`, new: `["a", "a"]`, want: ErrMalformed},
		{name: "truncated", old: `"training"`, new: `}`, want: ErrMalformed},
		{name: "overflowing coefficient", old: `"scales": [2, 4]`, new: `"scales": [5e-324, 4]`, want: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strings.Replace(good, tc.old, tc.new, 1)
			m, err := ReadJSON(strings.NewReader(s))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("ReadJSON = %v, want %v", err, tc.want)
			}
			if err == nil {
				// x = (3, 6): standardised (1, 1), log-odds 0.5 + 2 - 4 = -1.5.
				want := tc.raw
				if want == 0 {
					want = -1.5
				}
				got := m.PredictRaw(nil, mat.NewDense(1, 2, []float64{3, 6}))
				if !scalar.EqualWithinAbsOrRel(got[0], want, 1e-15, 1e-15) {
					t.Errorf("PredictRaw = %v, want %v", got[0], want)
				}
			}
		})
	}
}

func TestPredictNaNImputesMean(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 400, []float64{1, -1, 0.5}, 0, 0.1)
	m, err := Fit(x, y, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	cs := m.Coefficients()
	nan := math.NaN()
	rows := mat.NewDense(2, 3, []float64{nan, 2, nan, cs[0].Mean, 2, cs[2].Mean})
	got := m.Predict(nil, rows)
	// Predict is exact up to the order of two additions per row.
	const tol = 1e-15
	if !scalar.EqualWithinAbsOrRel(got[0], got[1], tol, tol) {
		t.Errorf("Predict with NaN = %v, with the means = %v", got[0], got[1])
	}
}

func TestPredictMatchesLoop(t *testing.T) {
	t.Parallel()
	// The unrolled batch loop sums in a different order from the plain formula.
	const tol = 1e-13
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, d := range []int{1, 2, 5} {
		beta := make([]float64, d)
		for j := range beta {
			beta[j] = rnd.NormFloat64()
		}
		x, y := synthetic(rnd, 40000, beta, 0.3, 0.05) // above parallelRows
		for _, k := range []int{0, 1} {
			if k > 0 && d == 1 {
				continue
			}
			m, err := Fit(x, y, nil, Config{NFeaturesToSelect: d - k})
			if err != nil {
				t.Fatal(err)
			}
			raw := m.PredictRaw(nil, x)
			p := m.Predict(make([]float64, len(y)), x)
			cs := m.Coefficients()
			for i := range y {
				z := m.Intercept()
				for j, c := range cs {
					v := x.At(i, j)
					if math.IsNaN(v) {
						v = c.Mean
					}
					z += c.Value * v
				}
				if !scalar.EqualWithinAbsOrRel(raw[i], z, tol, tol) ||
					!scalar.EqualWithinAbsOrRel(p[i], 1/(1+math.Exp(-z)), tol, tol) {
					t.Fatalf("d=%d, drop %d, row %d: raw %v p %v, want %v %v", d, k, i, raw[i], p[i], z, 1/(1+math.Exp(-z)))
				}
			}
		}
	}
}

func TestPredictGeneralMatrix(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(rnd, 50, []float64{1, -1, 0.5}, 0, 0.1)
	m, err := Fit(x, y, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	// A doubly transposed matrix has no raw row-major view, so Predict copies it with At.
	want := m.PredictRaw(nil, x)
	got := m.PredictRaw(nil, mat.Transpose{Matrix: x.T()})
	for i := range want {
		if got[i] != want[i] { // same values, same arithmetic
			t.Errorf("row %d: PredictRaw(general) = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestPredictPanics(t *testing.T) {
	t.Parallel()
	m, err := Fit(mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, 9}), []float64{0, 1, 0, 1}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"dst length":   func() { m.Predict(make([]float64, 3), mat.NewDense(2, 2, nil)) },
		"raw dst":      func() { m.PredictRaw(make([]float64, 1), mat.NewDense(2, 2, nil)) },
		"column count": func() { m.Predict(nil, mat.NewDense(2, 3, nil)) },
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

func TestEnumStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{L2.String(), "l2"}, {L1.String(), "l1"}, {Penalty(7).String(), "Penalty(7)"},
		{Unweighted.String(), "none"}, {Balanced.String(), "balanced"}, {ClassWeight(7).String(), "ClassWeight(7)"},
	} {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
	for _, p := range []Penalty{L1, L2} {
		if q, err := ParsePenalty(p.String()); err != nil || q != p {
			t.Errorf("ParsePenalty(%q) = %v, %v", p, q, err)
		}
	}
	for _, c := range []ClassWeight{Unweighted, Balanced} {
		if q, err := ParseClassWeight(c.String()); err != nil || q != c {
			t.Errorf("ParseClassWeight(%q) = %v, %v", c, q, err)
		}
	}
	if _, err := ParsePenalty("elasticnet"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParsePenalty(elasticnet) = %v, want ErrInvalidConfig", err)
	}
	if _, err := ParseClassWeight("auto"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseClassWeight(auto) = %v, want ErrInvalidConfig", err)
	}
}

// TestClipToTrainingRange checks Config.ClipToTrainingRange (issue 12: a count beyond
// its training range extrapolates the log-odds): the fit is the same as without it, the
// range is each column's minimum and maximum over the weighted rows (computed here
// independently), rows inside the range predict as the unclipped model, rows outside it
// as the unclipped model on the row clamped by hand, NaN still imputes the mean, and the
// range survives a JSON round trip (format_version 2).
func TestClipToTrainingRange(t *testing.T) {
	t.Parallel()
	const tol = 1e-12 // the same coefficients and inputs; only summation order differs
	rnd := rand.New(rand.NewPCG(3, 1))
	x, y := synthetic(rnd, 300, []float64{1, -2, 0.5}, 0.2, 0.05)
	w := make([]float64, 300)
	for i := range w {
		w[i] = 1
	}
	w[7] = 0 // a row of zero weight does not widen the range
	x.Set(7, 0, 1e6)
	plain, err := Fit(x, y, w, Config{})
	if err != nil {
		t.Fatal(err)
	}
	clipped, err := Fit(x, y, w, Config{ClipToTrainingRange: true})
	if err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		if a, b := plain.Coefficients()[j], clipped.Coefficients()[j]; a != b {
			t.Errorf("coefficient %d: %v with clipping, %v without; the fit must not change", j, b, a)
		}
	}
	lo, hi := clipped.ClipRange()
	for j := range 3 {
		wantLo, wantHi := math.Inf(1), math.Inf(-1)
		for i := range 300 {
			if v := x.At(i, j); w[i] > 0 && !math.IsNaN(v) {
				wantLo, wantHi = math.Min(wantLo, v), math.Max(wantHi, v)
			}
		}
		if lo[j] != wantLo || hi[j] != wantHi {
			t.Errorf("feature %d: range [%v, %v], want [%v, %v]", j, lo[j], hi[j], wantLo, wantHi)
		}
	}
	if l, h := plain.ClipRange(); l != nil || h != nil || clipped.Unclipped().lo != nil || plain.Unclipped() != plain {
		t.Error("a model without clipping has a range, or Unclipped keeps one")
	}
	nan := math.NaN()
	rows := [][]float64{
		{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]}, // inside
		{hi[0] + 10, lo[1] - 3, (lo[2] + hi[2]) / 2},      // outside on two features
		{nan, hi[1] * 100, nan},                           // NaN and far outside
		{math.Inf(1), math.Inf(-1), (lo[2] + hi[2]) / 2},  // infinities clamp too
	}
	clamp := func(r []float64) []float64 {
		out := make([]float64, len(r))
		for j, v := range r {
			out[j] = v
			if !math.IsNaN(v) {
				out[j] = math.Min(math.Max(v, lo[j]), hi[j])
			}
		}
		return out
	}
	var buf bytes.Buffer
	if err := clipped.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"format_version": 2`) {
		t.Errorf("a clipping model is written as %.40q, want format_version 2", buf.String())
	}
	loaded, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rows {
		want := plain.PredictRaw(nil, mat.NewDense(1, 3, clamp(r)))[0]
		for name, m := range map[string]*Model{"fitted": clipped, "loaded": loaded} {
			if got := m.PredictRaw(nil, mat.NewDense(1, 3, r))[0]; !scalar.EqualWithinAbsOrRel(got, want, tol, tol) {
				t.Errorf("%s row %d %v: log-odds %v, want %v (unclipped model on the clamped row)", name, k, r, got, want)
			}
		}
	}
	if a, b := clipped.PredictRaw(nil, mat.NewDense(1, 3, rows[0]))[0], plain.PredictRaw(nil, mat.NewDense(1, 3, rows[0]))[0]; !scalar.EqualWithinAbsOrRel(a, b, tol, tol) {
		t.Errorf("inside the range: %v clipped, %v plain", a, b)
	}
}
