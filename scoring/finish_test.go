package scoring

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat/distuv"
)

const (
	// tolExact is for results that follow from the same arithmetic.
	tolExact = 1e-12
	// tolPaperZ is the paper's rounding of Z: it divides by sigma_D rounded to two
	// decimals (4.47, 6.71), which moves Z in the second decimal.
	tolPaperZ = 0.05
	// tolPaperP is half a unit in the fourth decimal, the precision the paper prints.
	tolPaperP = 5e-5
)

// TestFinishBeforeProbPaper reproduces the three worked examples of paper 000 §VII
// (minutes; the unit cancels).
func TestFinishBeforeProbPaper(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                          string
		atx, mux, sx, aty, muy, sy    float64
		wantZExact, wantZPaper, wantP float64
	}{
		{"close arrival close build", 0, 25, 5, 5, 20, 4, 0, 0, 0.5},
		{"large arrival difference", 0, 20, 4, 480, 5, 2, -465 / math.Sqrt(20), -104.02, 0},
		{"small arrival large build difference", 0, 35, 6, 1, 15, 3, 19 / math.Sqrt(45), 2.83, 0.9977},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := FinishZ(tc.atx, tc.mux, tc.sx, tc.aty, tc.muy, tc.sy)
			if !scalar.EqualWithinAbsOrRel(z, tc.wantZExact, tolExact, tolExact) {
				t.Errorf("FinishZ = %v, want %v", z, tc.wantZExact)
			}
			if math.Abs(z-tc.wantZPaper) > tolPaperZ {
				t.Errorf("FinishZ = %v, want the paper's %v", z, tc.wantZPaper)
			}
			p := FinishBeforeProb(tc.atx, tc.mux, tc.sx, tc.aty, tc.muy, tc.sy)
			if math.Abs(p-tc.wantP) > tolPaperP {
				t.Errorf("FinishBeforeProb = %v, want the paper's %v", p, tc.wantP)
			}
		})
	}
}

// TestFinishBeforeProbGonum checks Phi against gonum's normal distribution and the
// definition P(T_y − T_x < AT_x − AT_y).
func TestFinishBeforeProbGonum(t *testing.T) {
	t.Parallel()
	for _, z := range []float64{-30, -8, -2.5, -1, 0, 0.3, 1, 2.83, 6} {
		got := FinishBeforeProb(0, 0, 3, 0, -3*z*math.Sqrt2, 3)
		want := distuv.UnitNormal.CDF(z)
		if !scalar.EqualWithinAbsOrRel(got, want, 1e-300, 1e-12) {
			t.Errorf("FinishBeforeProb(z=%v) = %v, want %v", z, got, want)
		}
	}
	d := distuv.Normal{Mu: 12 - 40, Sigma: math.Sqrt(4*4 + 7*7)}
	if got, want := FinishBeforeProb(100, 40, 4, 130, 12, 7), d.CDF(100-130); !scalar.EqualWithinAbsOrRel(got, want, tolExact, tolExact) {
		t.Errorf("FinishBeforeProb = %v, want %v", got, want)
	}
}

func TestFinishBeforeProbEdges(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		name                       string
		atx, mux, sx, aty, muy, sy float64
		want                       float64
	}{
		{"certain y first", 0, 10, 0, 1, 2, 0, 1},
		{"certain x first", 0, 10, 0, 1, 20, 0, 0},
		{"certain tie", 0, 10, 0, 1, 9, 0, 0.5},
		{"nan sigma", 0, 10, nan, 1, 9, 1, nan},
		{"negative sigma", 0, 10, 1, 1, 9, -1, nan},
		{"nan arrival", nan, 10, 1, 1, 9, 1, nan},
		{"inf ahead arrival", math.Inf(1), 10, 1, 1, 9, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FinishBeforeProb(tc.atx, tc.mux, tc.sx, tc.aty, tc.muy, tc.sy)
			if !scalar.Same(got, tc.want) {
				t.Errorf("FinishBeforeProb = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCombineBuildTimes(t *testing.T) {
	t.Parallel()
	mu, v := CombineBuildTimes([]float64{10, 20, 30}, []float64{1, 2, 3})
	if !scalar.EqualWithinAbsOrRel(mu, 20, tolExact, tolExact) || !scalar.EqualWithinAbsOrRel(v, 14.0/3, tolExact, tolExact) {
		t.Errorf("CombineBuildTimes = (%v, %v), want (20, 14/3)", mu, v)
	}
	if _, v := CombineBuildTimes([]float64{1, 2}, []float64{1, -1}); !math.IsNaN(v) {
		t.Errorf("CombineBuildTimes(negative sigma) variance = %v, want NaN", v)
	}
	mu, v = CombineBuildTimes(nil, nil)
	if !math.IsNaN(mu) || !math.IsNaN(v) {
		t.Errorf("CombineBuildTimes(empty) = (%v, %v), want NaN", mu, v)
	}
	defer func() {
		if recover() == nil {
			t.Error("CombineBuildTimes with a length mismatch did not panic")
		}
	}()
	CombineBuildTimes([]float64{1}, nil)
}
