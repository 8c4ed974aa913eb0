package ngboost

import (
	"fmt"
	"math"
)

// ScoreRule is the proper scoring rule NGBoost minimises. Its methods take the boosted
// parameters p = (loc, log scale) of a Family and an observation y.
type ScoreRule int

const (
	// LogScore is the negative log-likelihood -log f(y), in nats (the reference's LogScore).
	LogScore ScoreRule = iota
	// CRPScore is the continuous ranked probability score ∫(F(z) - 1{z >= y})² dz (the
	// reference's CRPScore). For a LogNormal the reference, and this package, apply it to
	// log y, so the score is in units of log Y; [Dist.CRPS] gives the CRPS of Y itself.
	CRPScore
)

// String returns the name of r as ParseScoreRule accepts it.
func (r ScoreRule) String() string {
	switch r {
	case LogScore:
		return "nll"
	case CRPScore:
		return "crps"
	}
	return fmt.Sprintf("ScoreRule(%d)", int(r))
}

// ParseScoreRule returns the ScoreRule named s ("nll" or "crps").
func ParseScoreRule(s string) (ScoreRule, error) {
	switch s {
	case "nll", "logscore":
		return LogScore, nil
	case "crps", "crpscore":
		return CRPScore, nil
	}
	return 0, fmt.Errorf("ngboost: unknown score %q (want nll or crps): %w", s, ErrInvalidConfig)
}

func (r ScoreRule) valid() bool { return r == LogScore || r == CRPScore }

// Every (Family, ScoreRule) pair reduces to Normal arithmetic on a working target t:
// t = y for Normal and t = log y for LogNormal. The LogNormal log score adds log y to the
// Normal one (the Jacobian of the log), which changes the score but not its gradient or
// metric; the LogNormal CRPScore is the Normal CRPS of log y, as in the reference.

// Score returns the score of the distribution with parameters p at y; lower is better.
// A LogNormal scores +Inf at y <= 0.
func (r ScoreRule) Score(f Family, p [2]float64, y float64) float64 {
	if f.durationFamily() {
		sc, _, _ := durationScore(f, p[0], p[1], y)
		return sc
	}
	t, jac, ok := workingTarget(f, y)
	if !ok {
		return math.Inf(1)
	}
	if r == CRPScore {
		return normalCRPS(p[0], p[1], t)
	}
	return normalLogScore(p[0], p[1], t) + jac
}

// Grad returns the gradient of Score with respect to the boosted parameters p: (loc,
// log scale), or those of the Exponential and the Gamma (see the Family constants; the
// Exponential's second entry is 0).
//
// LogScore: ((loc-t)/σ², 1-(t-loc)²/σ²). CRPScore: with z = (t-loc)/σ,
// (-(2Φ(z)-1), CRPS + (t-loc)·(-(2Φ(z)-1))).
func (r ScoreRule) Grad(f Family, p [2]float64, y float64) [2]float64 {
	if f.durationFamily() {
		_, g0, g1 := durationScore(f, p[0], p[1], y)
		return [2]float64{g0, g1}
	}
	t, _, ok := workingTarget(f, y)
	if !ok {
		return [2]float64{math.NaN(), math.NaN()}
	}
	var g0, g1 float64
	if r == CRPScore {
		g0, g1 = normalCRPSGrad(p[0], p[1], t)
	} else {
		g0, g1 = normalLogScoreGrad(p[0], p[1], t)
	}
	return [2]float64{g0, g1}
}

// Metric returns the Riemannian metric of the score at p, the matrix the natural gradient
// solves against. Both are diagonal in (loc, log scale).
//
// LogScore: the Fisher information diag(1/σ², 2), which is E[∇s ∇sᵀ] over y from the
// distribution itself. CRPScore: the reference's diag(2, σ²)/(2√π). The exact CRPS metric
// 2∫∇F(z)∇F(z)ᵀdz of Gneiting and Raftery is diag(2, σ²)/(2√π σ); the reference's matrix is
// σ times it, which rescales each row's natural gradient by 1/σ and keeps it a descent
// direction. This package matches the reference.
//
// Exponential (log score): 1, and 0 in the entries of the unused second parameter.
// Gamma (log score): [[α²ψ'(α), -α], [-α, α]], not diagonal.
func (r ScoreRule) Metric(f Family, p [2]float64) [2][2]float64 {
	if f.durationFamily() {
		m00, m01, m11 := durationMetric(f, p[0])
		return [2][2]float64{{m00, m01}, {m01, m11}}
	}
	m0, m1 := r.diagMetric(p[1])
	return [2][2]float64{{m0, 0}, {0, m1}}
}

// NaturalGrad returns Metric(p)⁻¹·Grad(p): the steepest-descent direction of the score
// in the geometry of the distributions rather than of the parameters.
func (r ScoreRule) NaturalGrad(f Family, p [2]float64, y float64) [2]float64 {
	g := r.Grad(f, p, y)
	if f.durationFamily() {
		n0, n1 := durationNatural(f, p[0], g[0], g[1])
		return [2]float64{n0, n1}
	}
	m0, m1 := r.diagMetric(p[1])
	return [2]float64{g[0] / m0, g[1] / m1}
}

// diagMetric returns the diagonal of the metric at log scale ls.
func (r ScoreRule) diagMetric(ls float64) (m0, m1 float64) {
	if r == CRPScore {
		// diag(2, σ²)/(2√π)
		return invSqrtPi, math.Exp(2*ls) * invSqrtPi / 2
	}
	return math.Exp(-2 * ls), 2
}

// workingTarget returns t and the additive log-score term of family f at y; ok is false
// when y is outside the support. The Exponential and the Gamma work on y itself.
func workingTarget(f Family, y float64) (t, jac float64, ok bool) {
	switch f {
	case Exponential:
		return y, 0, y >= 0
	case Gamma:
		return y, 0, y > 0
	}
	if f == LogNormal {
		if !(y > 0) {
			return 0, 0, false
		}
		ly := math.Log(y)
		return ly, ly, true
	}
	return y, 0, true
}

// normalLogScore is -log N(t; loc, exp(ls)²).
func normalLogScore(loc, ls, t float64) float64 {
	z := (t - loc) * math.Exp(-ls)
	return 0.5*z*z + ls + logSqrt2Pi
}

func normalLogScoreGrad(loc, ls, t float64) (g0, g1 float64) {
	iv := math.Exp(-2 * ls)
	d := loc - t
	return d * iv, 1 - d*d*iv
}

// normalCRPS is the closed-form CRPS of N(loc, σ²) at t (Gneiting and Raftery 2007):
// σ·[z(2Φ(z)-1) + 2φ(z) - 1/√π], z = (t-loc)/σ.
func normalCRPS(loc, ls, t float64) float64 {
	s := math.Exp(ls)
	z := (t - loc) / s
	return s * (z*(2*stdNormalCDF(z)-1) + 2*stdNormalPDF(z) - invSqrtPi)
}

func normalCRPSGrad(loc, ls, t float64) (g0, g1 float64) {
	s := math.Exp(ls)
	z := (t - loc) / s
	a := 2*stdNormalCDF(z) - 1
	crps := s * (z*a + 2*stdNormalPDF(z) - invSqrtPi)
	g0 = -a
	return g0, crps + (t-loc)*g0
}

// FitMarginal returns the maximum-likelihood parameters (loc, log scale) of family f
// for the observations y with weights w (nil = all 1): the weighted mean and the
// weighted standard deviation with divisor sum(w) of y (Normal) or log y (LogNormal).
// NGBoost starts boosting from them, for every row. For the Exponential and the Gamma
// it returns their boosted parameters (log Scale, 0) and (log α, log β) of the weighted
// maximum-likelihood fit, as the reference's marginal fits.
func FitMarginal(f Family, y, w []float64) ([2]float64, error) {
	if w != nil && len(w) != len(y) {
		panic("ngboost: FitMarginal: len(w) != len(y)")
	}
	if f.durationFamily() {
		return fitMarginalDuration(f, y, w)
	}
	var sw, mean float64
	for i, yi := range y {
		t, _, ok := workingTarget(f, yi)
		if !ok || math.IsNaN(t) || math.IsInf(t, 0) {
			return [2]float64{}, fmt.Errorf("ngboost: target row %d = %v is outside the support of %v: %w", i, yi, f, ErrInvalidData)
		}
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		// West's running weighted mean keeps precision for targets far from 0.
		sw += wi
		if sw > 0 {
			mean += wi / sw * (t - mean)
		}
	}
	if !(sw > 0) {
		return [2]float64{}, fmt.Errorf("ngboost: no rows with positive weight: %w", ErrInvalidData)
	}
	var ss float64
	for i, yi := range y {
		t, _, _ := workingTarget(f, yi)
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		ss += wi * (t - mean) * (t - mean)
	}
	sd := math.Sqrt(ss / sw)
	if !(sd > 0) {
		return [2]float64{}, fmt.Errorf("ngboost: target is constant (%v of every row = %v), no scale to fit: %w", f, mean, ErrInvalidData)
	}
	return [2]float64{mean, math.Log(sd)}, nil
}
