package scoring

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// sampleBuildTime draws one build time of b.
func sampleBuildTime(rng *rand.Rand, b BuildTime) float64 {
	return b.quantileAt(rng.NormFloat64())
}

// TestFinishBeforeProbOfMonteCarlo checks the quadrature against a Monte Carlo estimate
// of P(AT_y + T_y < AT_x + T_x) from 400,000 draws (fixed seed): the two must agree
// within 5 standard errors of the estimate (sqrt(p(1-p)/n) ≤ 7.9e-4).
func TestFinishBeforeProbOfMonteCarlo(t *testing.T) {
	t.Parallel()
	ln := func(mean, sd float64) BuildTime { return BuildTime{BuildLogNormal, mean, sd} }
	nm := func(mean, sd float64) BuildTime { return BuildTime{BuildNormal, mean, sd} }
	for _, tc := range []struct {
		name          string
		atx, aty      float64
		ahead, behind BuildTime
	}{
		{"lognormal both, similar", 0, 60, ln(600, 200), ln(500, 150)},
		{"lognormal both, heavy tail ahead", 0, 30, ln(600, 1800), ln(900, 100)},
		{"lognormal both, heavy tail behind", 0, 300, ln(1200, 100), ln(400, 1600)},
		{"lognormal ahead, normal behind", 0, 120, ln(900, 700), nm(700, 80)},
		{"normal ahead, lognormal behind", 0, 10, nm(900, 300), ln(700, 900)},
		{"point mass ahead", 0, 100, ln(800, 0), ln(600, 400)},
		{"point mass behind", 0, 100, ln(800, 300), nm(600, 0)},
		{"y far behind", 0, 5000, ln(800, 300), ln(600, 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := FinishBeforeProbOf(tc.atx, tc.ahead, tc.aty, tc.behind)
			rng := rand.New(rand.NewPCG(17, 29))
			const n = 400_000
			hits := 0
			for range n {
				if tc.aty+sampleBuildTime(rng, tc.behind) < tc.atx+sampleBuildTime(rng, tc.ahead) {
					hits++
				}
			}
			p := float64(hits) / n
			se := math.Sqrt(max(p*(1-p), 1/float64(n)) / n)
			if math.Abs(got-p) > 5*se {
				t.Errorf("FinishBeforeProbOf = %.6f, Monte Carlo %.6f ± %.6f", got, p, se)
			}
		})
	}
}

// TestFinishBeforeProbOfNormalLimit: a LogNormal with a coefficient of variation c has
// skewness 3c + c³, so as c → 0 it tends to the Normal with the same two moments and
// the probability to Phi(Z). With c ≤ 1e-3 the two agree within 2e-3 (the
// first-order effect of the skewness on a CDF is about skewness·φ/6 ≤ 5e-4).
func TestFinishBeforeProbOfNormalLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mx, sx, my, sy, d float64 }{
		{1e5, 100, 1e5, 60, 30},
		{2e5, 150, 1.999e5, 200, 0},
		{1e5, 50, 1e5, 50, -120},
	} {
		want := FinishBeforeProb(tc.d, tc.mx, tc.sx, 0, tc.my, tc.sy)
		got := FinishBeforeProbOf(tc.d, BuildTime{BuildLogNormal, tc.mx, tc.sx}, 0, BuildTime{BuildLogNormal, tc.my, tc.sy})
		if math.Abs(got-want) > 2e-3 {
			t.Errorf("%+v: LogNormal %v, Normal Phi(Z) %v", tc, got, want)
		}
	}
}

// TestFinishBeforeIntegralNormal checks the quadrature itself against the closed form:
// on two Normal build times it must give Phi(Z) to 1e-10 absolute and relative in the
// lower tail.
func TestFinishBeforeIntegralNormal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ d, mx, sx, my, sy float64 }{
		{0, 600, 100, 500, 300},
		{50, 600, 300, 500, 10},
		{-2000, 600, 100, 500, 300}, // Z ≈ -6.6: P ≈ 2e-11
		{900, 600, 100, 500, 300},
	} {
		x, y := BuildTime{BuildNormal, tc.mx, tc.sx}, BuildTime{BuildNormal, tc.my, tc.sy}
		got := finishBeforeIntegral(tc.d, x, y)
		want := FinishBeforeProb(tc.d, tc.mx, tc.sx, 0, tc.my, tc.sy)
		if !scalar.EqualWithinAbsOrRel(got, want, 1e-10, 1e-8) && !(math.Abs(got-want) <= 1e-8*want) {
			t.Errorf("%+v: integral %v, Phi(Z) %v", tc, got, want)
		}
	}
}

// TestFinishBeforeProbOfComplement: y before x and x before y are complementary events
// for continuous build times, whatever the families.
func TestFinishBeforeProbOfComplement(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		a := BuildTime{BuildFamily(rng.IntN(2)), 100 + 3000*rng.Float64(), 10 + 2000*rng.Float64()}
		b := BuildTime{BuildFamily(rng.IntN(2)), 100 + 3000*rng.Float64(), 10 + 2000*rng.Float64()}
		ata, atb := 0.0, 600*rng.Float64()
		p, q := FinishBeforeProbOf(ata, a, atb, b), FinishBeforeProbOf(atb, b, ata, a)
		if math.Abs(p+q-1) > 1e-9 || p < 0 || p > 1 {
			t.Fatalf("%+v at %v, %+v at %v: P(b first) = %v, P(a first) = %v, sum %v", a, ata, b, atb, p, q, p+q)
		}
	}
}

func TestFinishBeforeProbOfEdges(t *testing.T) {
	t.Parallel()
	ln := BuildTime{BuildLogNormal, 600, 100}
	for _, tc := range []struct {
		name          string
		ahead, behind BuildTime
	}{
		{"nan mean", BuildTime{BuildLogNormal, math.NaN(), 1}, ln},
		{"negative sd", ln, BuildTime{BuildLogNormal, 600, -1}},
		{"lognormal mean 0", BuildTime{BuildLogNormal, 0, 10}, ln},
		{"unknown family", ln, BuildTime{7, 600, 10}},
	} {
		if got := FinishBeforeProbOf(0, tc.ahead, 10, tc.behind); !math.IsNaN(got) {
			t.Errorf("%s: %v, want NaN", tc.name, got)
		}
	}
	// Two point masses: certain order, whatever the family.
	if got := FinishBeforeProbOf(0, BuildTime{BuildLogNormal, 600, 0}, 10, BuildTime{BuildLogNormal, 500, 0}); got != 1 {
		t.Errorf("certain finish first = %v, want 1", got)
	}
}

func TestLogNormalParamsMoments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mean, sd float64 }{{600, 100}, {1, 30}, {1e5, 1e-3}} {
		m, s := LogNormalParams(tc.mean, tc.sd)
		mean, sd := LogNormalMoments(m, s)
		if !scalar.EqualWithinAbsOrRel(mean, tc.mean, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(sd, tc.sd, 1e-12, 1e-9) {
			t.Errorf("round trip of (%v, %v) = (%v, %v)", tc.mean, tc.sd, mean, sd)
		}
	}
}

// TestCombineLogNormalBuildTimes checks the combined log-normal's moments: the mean of
// the builds' means and the mean of their variances.
func TestCombineLogNormalBuildTimes(t *testing.T) {
	t.Parallel()
	m, s := []float64{6, 6.5, 7}, []float64{0.2, 0.5, 0.1}
	cm, cs := CombineLogNormalBuildTimes(m, s)
	var wantMean, wantVar float64
	for i := range m {
		e := math.Exp(m[i] + s[i]*s[i]/2)
		wantMean += e / 3
		wantVar += (math.Exp(s[i]*s[i]) - 1) * e * e / 3
	}
	mean, sd := LogNormalMoments(cm, cs)
	if !scalar.EqualWithinAbsOrRel(mean, wantMean, 1e-9, 1e-12) || !scalar.EqualWithinAbsOrRel(sd*sd, wantVar, 1e-6, 1e-10) {
		t.Errorf("combined mean, variance = %v, %v, want %v, %v", mean, sd*sd, wantMean, wantVar)
	}
	if cm, cs := CombineLogNormalBuildTimes(nil, nil); !math.IsNaN(cm) || !math.IsNaN(cs) {
		t.Errorf("empty = (%v, %v), want NaN", cm, cs)
	}
}

// TestSpeculateLogNormalBruteForce runs the search on queues of log-normal (and mixed)
// build times against the brute-force enumeration, whose P(FT_y < FT_x) comes from
// FinishBeforeProbOf.
func TestSpeculateLogNormalBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 8))
	for trial := range 10 {
		q := randomQueue(rng, 8, 0.3+0.5*rng.Float64())
		for j := range q.Changes {
			q.Changes[j].BuildFamily = BuildLogNormal
			if trial%3 == 2 && j%2 == 0 {
				q.Changes[j].BuildFamily = BuildNormal
			}
			q.Changes[j].BuildSigma *= 1 + 3*rng.Float64()
		}
		for _, pol := range []Policy{PolicySQ2024, PolicyExpected} {
			cfg := allNodes(pol)
			cfg.FallbackFloor = 0.05
			p, err := Speculate(q, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, want := byKey(t, p), refNodes(q, cfg)
			if len(got) != len(want) {
				t.Fatalf("trial %d %v: %d nodes, want %d", trial, pol, len(got), len(want))
			}
			for k, w := range want {
				if !scalar.EqualWithinAbsOrRel(got[k], w, tolExact, 1e-10) {
					t.Errorf("trial %d %v: P-needed(%s) = %v, want %v", trial, pol, k, got[k], w)
				}
			}
		}
	}
	bad := Queue{Changes: []Change{{PSucc: 0.5, BuildMu: -1, BuildSigma: 1, BuildFamily: BuildLogNormal}}}
	if _, err := Speculate(bad, allNodes(PolicySQ2024)); err == nil {
		t.Error("a log-normal change with a negative mean was accepted")
	}
}
