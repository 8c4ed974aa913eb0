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
