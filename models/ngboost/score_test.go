package ngboost

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat/distuv"
)

const (
	// fdTol bounds central finite differences with step fdStep: truncation error
	// O(h²·f''') ≈ 1e-10 plus rounding ε/h ≈ 1e-11, with margin.
	fdTol  = 1e-6
	fdStep = 1e-5
	// quadTol bounds composite Simpson integrals over ±quadSpan standard deviations with
	// quadN intervals: the truncated tail is below 1e-30 and the Simpson error below 1e-12.
	quadTol  = 1e-8
	quadSpan = 14.0
	quadN    = 20000
	// exactTol is for closed forms that reproduce each other up to a few roundings.
	exactTol = 1e-12
)

// simpson integrates f over [a, b] with the composite Simpson rule on n (even) intervals.
func simpson(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	sum := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(a+float64(i)*h)
	}
	return sum * h / 3
}

// testPoints are (loc, log scale, y) points covering both tails and the centre; y > 0 so
// that they are valid for the LogNormal too.
var testPoints = []struct{ loc, ls, y float64 }{
	{0, 0, 0.5},
	{1.5, -0.7, 4.2},
	{-2, 0.9, 0.01},
	{3, 0.3, 150},
	{0.2, -2.5, 1.3},
	{5, 1.5, 30},
}

var allRules = []ScoreRule{LogScore, CRPScore}
var allFamilies = []Family{Normal, LogNormal}

func TestGradFiniteDifferences(t *testing.T) {
	t.Parallel()
	for _, r := range allRules {
		for _, f := range allFamilies {
			for _, pt := range testPoints {
				p := [2]float64{pt.loc, pt.ls}
				got := r.Grad(f, p, pt.y)
				want := fd.Gradient(nil, func(q []float64) float64 {
					return r.Score(f, [2]float64{q[0], q[1]}, pt.y)
				}, p[:], &fd.Settings{Formula: fd.Central, Step: fdStep})
				if !floats.EqualApprox(got[:], want, fdTol) {
					t.Errorf("%v.Grad(%v, %v, %v) = %v, finite differences %v", r, f, p, pt.y, got, want)
				}
			}
		}
	}
}

// fromWorking returns the y whose working target is tv: exp(tv) for a LogNormal, tv
// itself for a Normal.
func fromWorking(f Family, tv float64) float64 {
	if f == LogNormal {
		return math.Exp(tv)
	}
	return tv
}

// expectOver integrates g(t)·φ((t-loc)/σ)/σ over the working target t, the expectation
// of g under the Normal of t (which is log Y for a LogNormal).
func expectOver(loc, sigma float64, g func(t float64) float64) float64 {
	return simpson(func(t float64) float64 {
		return g(t) * stdNormalPDF((t-loc)/sigma) / sigma
	}, loc-quadSpan*sigma, loc+quadSpan*sigma, quadN)
}

// TestFisherInformation checks the LogScore metric against its two definitions:
// E[∇s ∇sᵀ] and E[∇²s], both over y drawn from the distribution itself, by quadrature
// (the Hessian by finite differences of Grad).
func TestFisherInformation(t *testing.T) {
	t.Parallel()
	for _, f := range allFamilies {
		for _, pt := range testPoints {
			p := [2]float64{pt.loc, pt.ls}
			sigma := math.Exp(pt.ls)
			y := func(tv float64) float64 { return fromWorking(f, tv) }
			got := LogScore.Metric(f, p)
			for j := range 2 {
				for k := range 2 {
					outer := expectOver(pt.loc, sigma, func(tv float64) float64 {
						g := LogScore.Grad(f, p, y(tv))
						return g[j] * g[k]
					})
					hess := expectOver(pt.loc, sigma, func(tv float64) float64 {
						hi, lo := p, p
						hi[k] += fdStep
						lo[k] -= fdStep
						return (LogScore.Grad(f, hi, y(tv))[j] - LogScore.Grad(f, lo, y(tv))[j]) / (2 * fdStep)
					})
					if !scalar.EqualWithinAbsOrRel(got[j][k], outer, quadTol, quadTol) {
						t.Errorf("LogScore.Metric(%v, %v)[%d][%d] = %v, E[∇s∇sᵀ] = %v", f, p, j, k, got[j][k], outer)
					}
					if !scalar.EqualWithinAbsOrRel(got[j][k], hess, fdTol, fdTol) {
						t.Errorf("LogScore.Metric(%v, %v)[%d][%d] = %v, E[∇²s] = %v", f, p, j, k, got[j][k], hess)
					}
				}
			}
		}
	}
}

// TestCRPSMetric checks the reference's CRPS metric against σ times the exact
// Riemannian metric 2∫∇F(z)∇F(z)ᵀdz, with ∇F by finite differences and the integral by
// quadrature over the working target.
func TestCRPSMetric(t *testing.T) {
	t.Parallel()
	for _, pt := range testPoints {
		p := [2]float64{pt.loc, pt.ls}
		sigma := math.Exp(pt.ls)
		dF := func(z float64, k int) float64 {
			hi, lo := p, p
			hi[k] += fdStep
			lo[k] -= fdStep
			return (distOf(Normal, hi).CDF(z) - distOf(Normal, lo).CDF(z)) / (2 * fdStep)
		}
		got := CRPScore.Metric(Normal, p)
		for j := range 2 {
			for k := range 2 {
				exact := 2 * simpson(func(z float64) float64 { return dF(z, j) * dF(z, k) },
					pt.loc-quadSpan*sigma, pt.loc+quadSpan*sigma, quadN)
				if !scalar.EqualWithinAbsOrRel(got[j][k], sigma*exact, fdTol, fdTol) {
					t.Errorf("CRPScore.Metric(%v)[%d][%d] = %v, σ·2∫∇F∇Fᵀ = %v", p, j, k, got[j][k], sigma*exact)
				}
			}
		}
		// The metric is the same for both families: the LogNormal one acts on log y.
		if got, want := CRPScore.Metric(LogNormal, p), CRPScore.Metric(Normal, p); got != want {
			t.Errorf("CRPScore.Metric(LogNormal, %v) = %v, want the Normal one %v", p, got, want)
		}
	}
}

func TestNaturalGrad(t *testing.T) {
	t.Parallel()
	for _, r := range allRules {
		for _, f := range allFamilies {
			for _, pt := range testPoints {
				p := [2]float64{pt.loc, pt.ls}
				ng := r.NaturalGrad(f, p, pt.y)
				m := r.Metric(f, p)
				g := r.Grad(f, p, pt.y)
				for j := range 2 {
					mg := m[j][0]*ng[0] + m[j][1]*ng[1]
					if !scalar.EqualWithinAbsOrRel(mg, g[j], exactTol, exactTol) {
						t.Errorf("%v: Metric·NaturalGrad(%v, %v, %v)[%d] = %v, want Grad %v", r, f, p, pt.y, j, mg, g[j])
					}
				}
			}
		}
	}
	// LogScore Normal in closed form: (loc - y, (1 - z²)/2).
	ng := LogScore.NaturalGrad(Normal, [2]float64{1, math.Log(2)}, 5)
	if want := [2]float64{-4, (1 - 4) / 2.0}; !scalar.EqualWithinAbsOrRel(ng[0], want[0], exactTol, exactTol) ||
		!scalar.EqualWithinAbsOrRel(ng[1], want[1], exactTol, exactTol) {
		t.Errorf("LogScore.NaturalGrad(Normal, (1, log 2), 5) = %v, want %v", ng, want)
	}
}

// crpsByQuadrature integrates (F(z) - 1{z >= y})² over z on both sides of y. LogNormal
// integrals run in u = log z (dz = e^u du), where the integrand is smooth.
func crpsByQuadrature(d Dist, y float64) float64 {
	if d.Family == Normal {
		lo, hi := d.Loc-quadSpan*d.Scale, d.Loc+quadSpan*d.Scale
		left := simpson(func(z float64) float64 { F := d.CDF(z); return F * F }, math.Min(lo, y), y, quadN)
		right := simpson(func(z float64) float64 { F := d.CDF(z); return (1 - F) * (1 - F) }, y, math.Max(hi, y), quadN)
		return left + right
	}
	lo, hi := d.Loc-quadSpan*d.Scale, d.Loc+quadSpan*d.Scale
	ly := math.Log(y)
	left := simpson(func(u float64) float64 { F := d.CDF(math.Exp(u)); return F * F * math.Exp(u) }, math.Min(lo, ly), ly, quadN)
	right := simpson(func(u float64) float64 { F := d.CDF(math.Exp(u)); return (1 - F) * (1 - F) * math.Exp(u) }, ly, math.Max(hi, ly), quadN)
	return left + right
}

func TestCRPSClosedForm(t *testing.T) {
	t.Parallel()
	for _, f := range allFamilies {
		for _, pt := range testPoints {
			d := Dist{Family: f, Loc: pt.loc, Scale: math.Exp(pt.ls)}
			want := crpsByQuadrature(d, pt.y)
			if got := d.CRPS(pt.y); !scalar.EqualWithinAbsOrRel(got, want, quadTol, quadTol) {
				t.Errorf("%+v.CRPS(%v) = %v, quadrature %v", d, pt.y, got, want)
			}
			// The training score is the Normal CRPS of the working target.
			tv := pt.y
			if f == LogNormal {
				tv = math.Log(pt.y)
			}
			nd := Dist{Family: Normal, Loc: pt.loc, Scale: math.Exp(pt.ls)}
			if got, want := CRPScore.Score(f, nd.params(), pt.y), nd.CRPS(tv); !scalar.EqualWithinAbsOrRel(got, want, exactTol, exactTol) {
				t.Errorf("CRPScore.Score(%v, %v, %v) = %v, want Normal CRPS of the working target %v", f, nd.params(), pt.y, got, want)
			}
		}
	}
	// LogNormal below its support: -y plus the value at 0⁺.
	d := Dist{Family: LogNormal, Loc: 0.3, Scale: 0.8}
	if got, want := d.CRPS(-2), 2+d.CRPS(1e-300); !scalar.EqualWithinAbsOrRel(got, want, exactTol, exactTol) {
		t.Errorf("%+v.CRPS(-2) = %v, want %v", d, got, want)
	}
}

// TestDistAgainstGonum checks densities, CDFs, quantiles and moments against the
// independent implementations in gonum/stat/distuv.
func TestDistAgainstGonum(t *testing.T) {
	t.Parallel()
	for _, pt := range testPoints {
		sigma := math.Exp(pt.ls)
		type ref interface {
			LogProb(float64) float64
			CDF(float64) float64
			Quantile(float64) float64
			Mean() float64
			StdDev() float64
		}
		cases := []struct {
			d   Dist
			ref ref
		}{
			{Dist{Family: Normal, Loc: pt.loc, Scale: sigma}, distuv.Normal{Mu: pt.loc, Sigma: sigma}},
			{Dist{Family: LogNormal, Loc: pt.loc, Scale: sigma}, distuv.LogNormal{Mu: pt.loc, Sigma: sigma}},
		}
		for _, c := range cases {
			check := func(name string, got, want float64) {
				t.Helper()
				if !scalar.EqualWithinAbsOrRel(got, want, 1e-10, 1e-10) {
					t.Errorf("%+v.%s = %v, gonum %v", c.d, name, got, want)
				}
			}
			check("LogPDF", c.d.LogPDF(pt.y), c.ref.LogProb(pt.y))
			check("CDF", c.d.CDF(pt.y), c.ref.CDF(pt.y))
			check("Mean", c.d.Mean(), c.ref.Mean())
			check("StdDev", c.d.StdDev(), c.ref.StdDev())
			for _, p := range []float64{0.025, 0.1, 0.5, 0.9, 0.975} {
				check("Quantile", c.d.Quantile(p), c.ref.Quantile(p))
				check("CDF(Quantile)", c.d.CDF(c.d.Quantile(p)), p)
			}
			lo, hi := c.d.Interval(0.8)
			check("Interval(0.8) mass", c.d.CDF(hi)-c.d.CDF(lo), 0.8)
			// Score of LogScore is -LogPDF.
			check("LogScore", LogScore.Score(c.d.Family, c.d.params(), pt.y), -c.d.LogPDF(pt.y))
		}
	}
	if d := (Dist{Family: LogNormal, Loc: 0, Scale: 1}); !math.IsInf(d.LogPDF(0), -1) || d.CDF(-1) != 0 || !math.IsInf(LogScore.Score(LogNormal, d.params(), 0), 1) {
		t.Errorf("LogNormal outside its support: LogPDF(0) = %v, CDF(-1) = %v", d.LogPDF(0), d.CDF(-1))
	}
}

func TestFitMarginal(t *testing.T) {
	t.Parallel()
	y := []float64{3, 7, 1.5, 9, 4.25, 6}
	w := []float64{1, 2, 0.5, 1, 3, 1}
	for _, f := range allFamilies {
		for _, wt := range [][]float64{nil, w} {
			p, err := FitMarginal(f, y, wt)
			if err != nil {
				t.Fatalf("FitMarginal(%v) = %v", f, err)
			}
			// At the maximum-likelihood point the weighted mean gradient is zero.
			var g [2]float64
			for i, yi := range y {
				wi := 1.0
				if wt != nil {
					wi = wt[i]
				}
				gi := LogScore.Grad(f, p, yi)
				g[0] += wi * gi[0]
				g[1] += wi * gi[1]
			}
			if !scalar.EqualWithinAbsOrRel(g[0], 0, exactTol, 0) || !scalar.EqualWithinAbsOrRel(g[1], 0, 1e-11, 0) {
				t.Errorf("FitMarginal(%v, weights %v) = %v: score gradient there %v, want 0", f, wt != nil, p, g)
			}
		}
	}
	errCases := []struct {
		name string
		f    Family
		y    []float64
	}{
		{"constant", Normal, []float64{2, 2, 2}},
		{"lognormal zero", LogNormal, []float64{2, 0, 3}},
		{"nan", Normal, []float64{2, math.NaN(), 3}},
		{"empty", Normal, nil},
	}
	for _, tc := range errCases {
		if _, err := FitMarginal(tc.f, tc.y, nil); !errors.Is(err, ErrInvalidData) {
			t.Errorf("FitMarginal(%s) = %v, want ErrInvalidData", tc.name, err)
		}
	}
}

func TestParseNames(t *testing.T) {
	t.Parallel()
	for _, f := range []Family{Normal, LogNormal, Exponential, Gamma} {
		if got, err := ParseFamily(f.String()); err != nil || got != f {
			t.Errorf("ParseFamily(%q) = %v, %v", f.String(), got, err)
		}
	}
	for _, r := range allRules {
		if got, err := ParseScoreRule(r.String()); err != nil || got != r {
			t.Errorf("ParseScoreRule(%q) = %v, %v", r.String(), got, err)
		}
	}
	if got := Family(7).String(); got != "Family(7)" {
		t.Errorf("Family(7).String() = %q", got)
	}
	if got := ScoreRule(7).String(); got != "ScoreRule(7)" {
		t.Errorf("ScoreRule(7).String() = %q", got)
	}
	if _, err := ParseFamily("weibull"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseFamily(weibull) = %v, want ErrInvalidConfig", err)
	}
	if _, err := ParseScoreRule("mse"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseScoreRule(mse) = %v, want ErrInvalidConfig", err)
	}
}
