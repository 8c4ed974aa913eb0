package ngboost

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// durationPoints are boosted parameters of the Exponential (p[0] = log scale) and the
// Gamma (log α, log β): shapes from 0.37 to 12, with observations in both tails.
var durationPoints = []struct {
	p [2]float64
	y float64
}{
	{[2]float64{0, 0}, 0.5},
	{[2]float64{1.2, -0.5}, 9},
	{[2]float64{-1, 0.7}, 0.01},
	{[2]float64{2.5, 1}, 3},
	{[2]float64{0.4, -3}, 60},
}

var durationFamilies = []Family{Exponential, Gamma}

// logQuantile returns log of the p-quantile of d. Far in the lower tail of a Gamma of
// small shape the quantile underflows GammaIncRegInv; there F(y) ≈ (y/Scale)^α/Γ(α+1),
// which inverts in closed form.
func logQuantile(d Dist, p float64) float64 {
	if q := d.Quantile(p); q > 0 {
		return math.Log(q)
	}
	lg, _ := math.Lgamma(d.Shape + 1)
	return (math.Log(p)+lg)/d.Shape + math.Log(d.Scale)
}

// expectY integrates g(y)·f(y) over y > 0 for the distribution d, in u = log y
// (dy = e^u du) between the 1e-13 and 1-1e-13 quantiles, where the integrand is
// smooth; the tails left out hold 2e-13 of the mass.
func expectY(d Dist, g func(y float64) float64) float64 {
	lo, hi := logQuantile(d, 1e-13), logQuantile(d, 1-1e-13)
	return simpson(func(u float64) float64 {
		y := math.Exp(u)
		return g(y) * math.Exp(d.LogPDF(y)) * y
	}, lo, hi, quadN)
}

// hessStep and hessTol are the step and the tolerance of the Hessian by central
// differences of Grad: the Gamma's gradient holds gonum's Digamma, accurate to about
// 1e-10, whose error a difference over 2h magnifies by 1/h; with h = 1e-3 that is
// 1e-7, and the truncation error h²·f‴/6 is of the same order.
const (
	hessStep = 1e-3
	hessTol  = 1e-5
)

func TestDurationGradFiniteDifferences(t *testing.T) {
	t.Parallel()
	for _, f := range durationFamilies {
		for _, pt := range durationPoints {
			got := LogScore.Grad(f, pt.p, pt.y)
			want := fd.Gradient(nil, func(q []float64) float64 {
				return LogScore.Score(f, [2]float64{q[0], q[1]}, pt.y)
			}, pt.p[:], &fd.Settings{Formula: fd.Central, Step: fdStep})
			if !floats.EqualApprox(got[:], want, fdTol) {
				t.Errorf("LogScore.Grad(%v, %v, %v) = %v, finite differences %v", f, pt.p, pt.y, got, want)
			}
			if got, want := LogScore.Score(f, pt.p, pt.y), -distOf(f, pt.p).LogPDF(pt.y); got != want {
				t.Errorf("LogScore.Score(%v, %v, %v) = %v, want -LogPDF %v", f, pt.p, pt.y, got, want)
			}
		}
	}
}

// TestDurationFisherInformation checks the metric of the Exponential and the Gamma
// against E[∇s ∇sᵀ] and E[∇²s] over y drawn from the distribution itself, by
// quadrature (the Hessian by finite differences of Grad), and the natural gradient
// against the metric.
func TestDurationFisherInformation(t *testing.T) {
	t.Parallel()
	for _, f := range durationFamilies {
		for _, pt := range durationPoints {
			d := distOf(f, pt.p)
			got := LogScore.Metric(f, pt.p)
			for j := range f.nParams() {
				for k := range f.nParams() {
					outer := expectY(d, func(y float64) float64 {
						g := LogScore.Grad(f, pt.p, y)
						return g[j] * g[k]
					})
					hess := expectY(d, func(y float64) float64 {
						hi, lo := pt.p, pt.p
						hi[k] += hessStep
						lo[k] -= hessStep
						return (LogScore.Grad(f, hi, y)[j] - LogScore.Grad(f, lo, y)[j]) / (2 * hessStep)
					})
					if !scalar.EqualWithinAbsOrRel(got[j][k], outer, quadTol, quadTol) {
						t.Errorf("LogScore.Metric(%v, %v)[%d][%d] = %v, E[∇s∇sᵀ] = %v", f, pt.p, j, k, got[j][k], outer)
					}
					if !scalar.EqualWithinAbsOrRel(got[j][k], hess, hessTol, hessTol) {
						t.Errorf("LogScore.Metric(%v, %v)[%d][%d] = %v, E[∇²s] = %v", f, pt.p, j, k, got[j][k], hess)
					}
				}
			}
			ng, g := LogScore.NaturalGrad(f, pt.p, pt.y), LogScore.Grad(f, pt.p, pt.y)
			for j := range f.nParams() {
				if mg := got[j][0]*ng[0] + got[j][1]*ng[1]; !scalar.EqualWithinAbsOrRel(mg, g[j], exactTol, exactTol) {
					t.Errorf("Metric·NaturalGrad(%v, %v, %v)[%d] = %v, want Grad %v", f, pt.p, pt.y, j, mg, g[j])
				}
			}
			if f == Exponential && (ng[1] != 0 || g[1] != 0) {
				t.Errorf("Exponential: gradient %v, natural gradient %v of the unused parameter, want 0", g, ng)
			}
		}
	}
}

func TestTrigamma(t *testing.T) {
	t.Parallel()
	// Closed forms: ψ'(1) = π²/6, ψ'(1/2) = π²/2, ψ'(n+1) = π²/6 - Σ_{k<=n} 1/k².
	for _, c := range []struct{ x, want float64 }{
		{1, math.Pi * math.Pi / 6},
		{0.5, math.Pi * math.Pi / 2},
		{4, math.Pi*math.Pi/6 - 1 - 1.0/4 - 1.0/9},
	} {
		if got := trigamma(c.x); !scalar.EqualWithinAbsOrRel(got, c.want, exactTol, exactTol) {
			t.Errorf("trigamma(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	// Elsewhere: central differences of gonum's Digamma.
	for _, x := range []float64{0.03, 0.37, 2.2, 9.9, 10.1, 55, 1e4} {
		h := 1e-5 * x
		want := (mathext.Digamma(x+h) - mathext.Digamma(x-h)) / (2 * h)
		if got := trigamma(x); !scalar.EqualWithinAbsOrRel(got, want, fdTol, fdTol) {
			t.Errorf("trigamma(%v) = %v, finite differences of Digamma %v", x, got, want)
		}
	}
}

// TestDurationDistAgainstGonum checks densities, CDFs, quantiles and moments against
// gonum/stat/distuv, and the CRPS against quadrature of its definition.
func TestDurationDistAgainstGonum(t *testing.T) {
	t.Parallel()
	type ref interface {
		LogProb(float64) float64
		CDF(float64) float64
		Quantile(float64) float64
		Mean() float64
		StdDev() float64
	}
	for _, pt := range durationPoints {
		cases := []struct {
			d   Dist
			ref ref
		}{
			{distOf(Exponential, pt.p), distuv.Exponential{Rate: math.Exp(-pt.p[0])}},
			{distOf(Gamma, pt.p), distuv.Gamma{Alpha: math.Exp(pt.p[0]), Beta: math.Exp(pt.p[1])}},
		}
		for _, c := range cases {
			check := func(name string, got, want, tol float64) {
				t.Helper()
				if !scalar.EqualWithinAbsOrRel(got, want, tol, tol) {
					t.Errorf("%+v.%s = %v, want %v", c.d, name, got, want)
				}
			}
			check("LogPDF", c.d.LogPDF(pt.y), c.ref.LogProb(pt.y), 1e-10)
			check("CDF", c.d.CDF(pt.y), c.ref.CDF(pt.y), 1e-10)
			check("Mean", c.d.Mean(), c.ref.Mean(), 1e-10)
			check("StdDev", c.d.StdDev(), c.ref.StdDev(), 1e-10)
			for _, p := range []float64{0.025, 0.1, 0.5, 0.9, 0.975} {
				check("Quantile", c.d.Quantile(p), c.ref.Quantile(p), 1e-10)
				check("CDF(Quantile)", c.d.CDF(c.d.Quantile(p)), p, 1e-10)
			}
			// CRPS = ∫(F(z) - 1{z >= y})² dz, by quadrature in u = log z; for z below
			// the 1e-13 quantile F² < 1e-26, and above the top one (1-F)² < 1e-26.
			lo, hi, ly := logQuantile(c.d, 1e-13), logQuantile(c.d, 1-1e-13), math.Log(pt.y)
			left := simpson(func(u float64) float64 { F := c.d.CDF(math.Exp(u)); return F * F * math.Exp(u) }, math.Min(lo, ly), ly, quadN)
			right := simpson(func(u float64) float64 { F := c.d.CDF(math.Exp(u)); return (1 - F) * (1 - F) * math.Exp(u) }, ly, math.Max(hi, ly), quadN)
			check("CRPS", c.d.CRPS(pt.y), left+right, quadTol)
			// Below the support the CRPS grows by -y: ∫ over (y, 0) of 1.
			check("CRPS(-2)", c.d.CRPS(-2), 2+c.d.CRPS(0), exactTol)
		}
	}
	for _, f := range durationFamilies {
		d := distOf(f, [2]float64{0.3, 0.2})
		if !math.IsInf(d.LogPDF(-1), -1) || d.CDF(-1) != 0 || !math.IsInf(LogScore.Score(f, d.params(), -1), 1) || !math.IsNaN(d.Quantile(1.5)) {
			t.Errorf("%v outside its support: LogPDF(-1) = %v, CDF(-1) = %v, Quantile(1.5) = %v", f, d.LogPDF(-1), d.CDF(-1), d.Quantile(1.5))
		}
	}
}

// TestDurationFitMarginal checks the marginal fits by their defining property: the
// weighted log-likelihood gradient vanishes at the maximum.
func TestDurationFitMarginal(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 1))
	y, w := make([]float64, 300), make([]float64, 300)
	g := distuv.Gamma{Alpha: 2.5, Beta: 0.01, Src: rng}
	for i := range y {
		y[i], w[i] = g.Rand(), float64(rng.IntN(3))
	}
	for _, f := range durationFamilies {
		p, err := FitMarginal(f, y, w)
		if err != nil {
			t.Fatal(err)
		}
		var sum [2]float64
		for i, yi := range y {
			gi := LogScore.Grad(f, p, yi)
			sum[0] += w[i] * gi[0]
			sum[1] += w[i] * gi[1]
		}
		// stationaryTol: the gradient sums terms of order 1 over 300 rows; Newton's
		// method stops at 1e-15 relative in α.
		const stationaryTol = 1e-9
		if math.Abs(sum[0]) > stationaryTol*float64(len(y)) || math.Abs(sum[1]) > stationaryTol*float64(len(y)) {
			t.Errorf("FitMarginal(%v) = %v: weighted score gradient %v, want 0", f, p, sum)
		}
	}
	if _, err := FitMarginal(Gamma, []float64{2, 2, 2}, nil); err == nil {
		t.Error("FitMarginal(Gamma) of a constant target succeeded, want an error")
	}
	if _, err := FitMarginal(Exponential, []float64{2, -1}, nil); err == nil {
		t.Error("FitMarginal(Exponential) with y = -1 succeeded, want an error")
	}
}

// TestDurationFit fits both families on durations whose scale grows with feature 0,
// and checks that boosting beats the marginal on held-out rows, that the artifact
// round-trips, and that the CRPS score is refused.
func TestDurationFit(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 1))
	draw := func(n int, f Family) (*mat.Dense, []float64) {
		x := mat.NewDense(n, 3, nil)
		y := make([]float64, n)
		for i := range n {
			a, b, c := rng.Float64(), rng.Float64(), rng.Float64()
			x.SetRow(i, []float64{a, b, c})
			scale := 100 * math.Exp(2*a)
			if f == Exponential {
				y[i] = rng.ExpFloat64() * scale
			} else {
				y[i] = distuv.Gamma{Alpha: 1 + 4*b, Beta: 1 / scale, Src: rng}.Rand()
			}
		}
		return x, y
	}
	for _, f := range durationFamilies {
		t.Run(f.String(), func(t *testing.T) {
			x, y := draw(1500, f)
			xt, yt := draw(500, f)
			m, err := Fit(context.Background(), x, y, nil, Config{Dist: f, NEstimators: 200, LearningRate: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			scores := m.StagedScore(LogScore, xt, yt, nil)
			// minGain is the least test NLL improvement over the marginal, in nats per
			// row: the scale varies by e² across feature 0, which is worth about 0.1.
			const minGain = 0.05
			if gain := scores[0] - scores[len(scores)-1]; gain < minGain {
				t.Errorf("test NLL %v at the marginal, %v after %d iterations: gain %v, want >= %v", scores[0], scores[len(scores)-1], m.NIterations(), gain, minGain)
			}
			var b bytes.Buffer
			if err := m.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			r, err := ReadJSON(&b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Family() != f {
				t.Errorf("read back family %v, want %v", r.Family(), f)
			}
			p1, p2 := m.PredictParams(nil, xt), r.PredictParams(nil, xt)
			for i := range p1 {
				if !scalar.EqualWithinAbsOrRel(p1[i], p2[i], exactTol, exactTol) {
					t.Fatalf("read-back model predicts %v at %d, the fitted one %v", p2[i], i, p1[i])
				}
			}
			row := xt.RawRowView(3)
			// PredictRow adds the trees onto the initial parameters, PredictDist adds
			// their sum to them: the same up to rounding.
			if got, want := m.PredictRow(row), m.PredictDist(xt)[3]; got.Family != f ||
				!scalar.EqualWithinAbsOrRel(got.Scale, want.Scale, exactTol, exactTol) ||
				!scalar.EqualWithinAbsOrRel(got.Shape, want.Shape, exactTol, exactTol) {
				t.Errorf("PredictRow = %+v, PredictDist = %+v", got, want)
			}
			if f == Exponential && (m.SplitCounts()[1][0] != 0 || p1[1] != 0) {
				t.Errorf("Exponential: splits %v and parameter %v of the unused parameter, want 0", m.SplitCounts()[1], p1[1])
			}
			// Staged prediction: the model of the first 50 iterations predicts stage 50.
			tr, err := m.Truncate(50)
			if err != nil {
				t.Fatal(err)
			}
			want := tr.PredictParams(nil, xt)
			for k, p := range m.StagedParams(xt) {
				if k != 50 {
					continue
				}
				for i := range p {
					if !scalar.EqualWithinAbsOrRel(p[i], want[i], stagedTol, stagedTol) {
						t.Fatalf("stage 50 param %d = %v, Truncate(50) predicts %v", i, p[i], want[i])
					}
				}
			}
			// Minibatches and column sampling take the one-parameter path of the
			// Exponential's tree outputs too.
			mb, err := Fit(context.Background(), x, y, nil, Config{Dist: f, NEstimators: 200, LearningRate: 0.05, MinibatchFrac: 0.5, ColSample: 0.67, RandomState: 2})
			if err != nil {
				t.Fatal(err)
			}
			if s := mb.StagedScore(LogScore, xt, yt, nil); s[0]-s[len(s)-1] < minGain {
				t.Errorf("minibatch fit: test NLL %v at the marginal, %v at the end: want a gain >= %v", s[0], s[len(s)-1], minGain)
			}
			if _, err := Fit(context.Background(), x, y, nil, Config{Dist: f, Score: CRPScore}); err == nil {
				t.Errorf("Fit(%v, crps) succeeded, want an error", f)
			}
		})
	}
}
