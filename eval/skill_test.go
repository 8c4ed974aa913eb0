package eval

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// skillTol is the tolerance of the skill checks: closed forms of a few logarithms, so
// only rounding differs.
const skillTol = 1e-12

func TestSkill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		model, ref, best float64
		want             float64
	}{
		{"as good as the best", 0.3, 0.5, 0.3, 1},
		{"as good as the reference", 0.5, 0.5, 0.3, 0},
		{"half way", 0.4, 0.5, 0.3, 0.5},
		{"worse than the reference", 0.6, 0.5, 0.3, -0.5},
		{"beats the best by chance", 0.28, 0.5, 0.3, 1.1},
		{"nothing to gain", 0.4, 0.3, 0.3, math.NaN()},
		{"reference better than the best", 0.4, 0.2, 0.3, math.NaN()},
		{"NaN model", math.NaN(), 0.5, 0.3, math.NaN()},
		{"NaN best", 0.4, 0.5, math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		got := Skill(tc.model, tc.ref, tc.best)
		if !scalar.Same(got, tc.want) && !scalar.EqualWithinAbsOrRel(got, tc.want, skillTol, skillTol) {
			t.Errorf("%s: Skill(%v, %v, %v) = %v, want %v", tc.name, tc.model, tc.ref, tc.best, got, tc.want)
		}
	}
}

// TestLogLossSkill checks LogLossSkill against log losses written out by hand, and that
// the truth scores 1 and the constant 0.
func TestLogLossSkill(t *testing.T) {
	t.Parallel()
	y := []float64{1, 0, 1, 1}
	p := []float64{0.7, 0.4, 0.8, 0.6}
	truth := []float64{0.9, 0.1, 0.9, 0.8}
	ref := Constant(len(y), 0.75)
	ll := func(q []float64) float64 {
		return -(math.Log(q[0]) + math.Log(1-q[1]) + math.Log(q[2]) + math.Log(q[3])) / 4
	}
	want := (ll(ref) - ll(p)) / (ll(ref) - ll(truth))
	if got := LogLossSkill(y, p, ref, truth); !scalar.EqualWithinAbsOrRel(got, want, skillTol, skillTol) {
		t.Errorf("LogLossSkill = %v, want %v", got, want)
	}
	if got := LogLossSkill(y, truth, ref, truth); !scalar.EqualWithinAbsOrRel(got, 1, skillTol, skillTol) {
		t.Errorf("LogLossSkill of the truth = %v, want 1", got)
	}
	if got := LogLossSkill(y, ref, ref, truth); got != 0 {
		t.Errorf("LogLossSkill of the reference = %v, want 0", got)
	}
	if got := LogLossSkill(nil, nil, nil, nil); !math.IsNaN(got) {
		t.Errorf("LogLossSkill of no rows = %v, want NaN", got)
	}
}

// TestConstantFailsMinSkill draws labels from known probabilities and checks that the
// constant base rate, fitted on the same rows, has a skill near 0 and fails MinSkill,
// while the true probabilities pass it.
func TestConstantFailsMinSkill(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 20000
	y, q := make([]float64, n), make([]float64, n)
	var rate float64
	for i := range y {
		q[i] = 1 / (1 + math.Exp(-(-3 + 2*rng.NormFloat64())))
		if rng.Float64() < q[i] {
			y[i] = 1
		}
		rate += y[i] / n
	}
	c := Constant(n, rate)
	// The base rate of the same rows is the best constant, so its skill is 0 exactly up
	// to rounding; a half-way model mixes the two.
	if s := LogLossSkill(y, c, c, q); s != 0 || s >= MinSkill {
		t.Errorf("constant skill = %v, want 0 (< MinSkill %v)", s, MinSkill)
	}
	if s := LogLossSkill(y, q, c, q); !scalar.EqualWithinAbsOrRel(s, 1, skillTol, skillTol) || s < MinSkill {
		t.Errorf("truth skill = %v, want 1", s)
	}
	// A prediction that keeps only part of the signal on the logit scale falls between.
	half := make([]float64, n)
	logit := math.Log(rate / (1 - rate))
	for i, v := range q {
		l := math.Log(v / (1 - v))
		half[i] = 1 / (1 + math.Exp(-(logit + 0.3*(l-logit))))
	}
	if s := LogLossSkill(y, half, c, q); !(s > 0 && s < MinSkill) {
		t.Errorf("shrunk prediction skill = %v, want in (0, %v)", s, MinSkill)
	}
	defer func() {
		if recover() == nil {
			t.Error("Constant(-1) did not panic")
		}
	}()
	Constant(-1, 0.5)
}

func TestQuantileCalibration(t *testing.T) {
	t.Parallel()
	y := []float64{1, 0, 0, 1, 0, 1}
	p := []float64{0.9, 0.2, 0.1, 0.2, 0.2, 0.5} // three ties at 0.2, out of order
	got := QuantileCalibration(y, p, 3)
	want := []CalibrationBin{
		// The first cut (after 2 rows) falls inside the ties, which stay together.
		{Lo: 0.1, Hi: 0.2, Count: 4, MeanPredicted: 0.175, Observed: 0.25},
		{Lo: 0.5, Hi: math.Nextafter(0.5, 2), Count: 1, MeanPredicted: 0.5, Observed: 1},
		{Lo: 0.9, Hi: math.Nextafter(0.9, 2), Count: 1, MeanPredicted: 0.9, Observed: 1},
	}
	same := func(a, b CalibrationBin) bool {
		return a.Lo == b.Lo && a.Hi == b.Hi && a.Count == b.Count &&
			scalar.EqualWithinAbsOrRel(a.MeanPredicted, b.MeanPredicted, skillTol, skillTol) &&
			scalar.EqualWithinAbsOrRel(a.Observed, b.Observed, skillTol, skillTol)
	}
	for i := range want {
		if !same(got[i], want[i]) {
			t.Errorf("bin %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// A constant predictor fills one bin; the others are empty and span [0, 1].
	got = QuantileCalibration(y, Constant(len(y), 1), 4)
	if got[0].Count != len(y) || !(got[0].Lo < got[0].Hi) || got[0].Hi != 1 || got[0].Observed != 0.5 {
		t.Errorf("constant 1: first bin %+v", got[0])
	}
	for _, b := range got[1:] {
		if b != (CalibrationBin{Lo: 0, Hi: 1}) {
			t.Errorf("constant 1: unused bin %+v, want empty [0, 1]", b)
		}
	}
	// Random predictions: every bin is non-empty with about n/bins rows, the bins are
	// ordered and disjoint, and they agree with a brute-force count of the rows in
	// [Lo, Hi].
	rng := rand.New(rand.NewPCG(1, 1))
	const n, bins = 1003, 10
	y, p = make([]float64, n), make([]float64, n)
	for i := range p {
		p[i] = math.Round(rng.Float64()*0.3*1000) / 1000 // ties, and a range far below 1
		if rng.Float64() < p[i] {
			y[i] = 1
		}
	}
	got = QuantileCalibration(y, p, bins)
	total := 0
	for i, b := range got {
		var k int
		var sy float64
		for r := range p {
			if p[r] >= b.Lo && p[r] <= b.Hi {
				k++
				sy += y[r]
			}
		}
		if b.Count != k || b.Count < n/bins-5 || b.Count > n/bins+20 || !scalar.EqualWithinAbsOrRel(b.Observed, sy/float64(k), skillTol, skillTol) {
			t.Errorf("bin %d %+v: %d rows in [Lo, Hi] with observed %v", i, b, k, sy/float64(k))
		}
		if i > 0 && !(got[i-1].Hi < b.Lo) {
			t.Errorf("bins %d and %d overlap: %+v, %+v", i-1, i, got[i-1], b)
		}
		total += b.Count
	}
	if total != n || got[bins-1].Hi > 0.31 {
		t.Errorf("bins hold %d rows (want %d), last ends at %v", total, n, got[bins-1].Hi)
	}
}
