package ngboost

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Right-censored observations (issue 12 item 4). An aborted build ran at least its
// recorded duration: all that is known is Y > y. Its log score is the negative log
// survival -log P(Y > y) = -log Q(z), with Q = 1 - Φ and z = (t - loc)/σ on the working
// target t (y, or log y for a LogNormal; the survival of Y above y is that of log Y above
// log y, so no Jacobian term). With the hazard h(z) = φ(z)/Q(z), its gradient in
// (loc, log scale) is (-h/σ, -z·h).
//
// The natural gradient uses the Fisher information of an uncensored observation,
// diag(1/σ², 2), for censored rows too, as the reference does for its censored
// LogNormal (ngboost/distns/lognormal.py, LogNormalLogScoreCensored): the information
// of a censored observation depends on the censoring distribution, which is not
// modelled, and is never more than that of an uncensored one, so the step this
// metric gives is never longer than the exact natural gradient's.

// ScoreCensored returns the log score of a right-censored observation, -log P(Y > y),
// of the Normal or LogNormal with boosted parameters p = (loc, log scale); lower is
// better. A LogNormal at y <= 0 scores 0 (Y > y is certain). It panics for the
// Exponential and the Gamma, which take no censored rows.
func ScoreCensored(f Family, p [2]float64, y float64) float64 {
	t, ok := censoredTarget(f, y)
	if !ok {
		return 0
	}
	return censoredLogScore(p[0], p[1], t)
}

// GradCensored returns the gradient of ScoreCensored with respect to p = (loc, log
// scale): (-h/σ, -z·h) with z = (t - loc)/σ and the hazard h(z) = φ(z)/Q(z). It is 0 for
// a LogNormal at y <= 0, and panics for the Exponential and the Gamma.
func GradCensored(f Family, p [2]float64, y float64) [2]float64 {
	t, ok := censoredTarget(f, y)
	if !ok {
		return [2]float64{}
	}
	g0, g1 := censoredGrad(p[0], p[1], t)
	return [2]float64{g0, g1}
}

// censoredTarget returns the working target of a censored y of family f; ok is false
// for a LogNormal at y <= 0, where the survival is 1.
func censoredTarget(f Family, y float64) (t float64, ok bool) {
	switch f {
	case Normal:
		return y, true
	case LogNormal:
		if !(y > 0) {
			return 0, false
		}
		return math.Log(y), true
	}
	panic("ngboost: censored observations need the Normal or the LogNormal, not the " + f.String())
}

// censoredLogScore is -log Q((t - loc)/σ), σ = exp(ls).
func censoredLogScore(loc, ls, t float64) float64 {
	return -logStdNormalSF((t - loc) * math.Exp(-ls))
}

// censoredGrad is the gradient of censoredLogScore in (loc, ls).
func censoredGrad(loc, ls, t float64) (g0, g1 float64) {
	e := math.Exp(-ls)
	z := (t - loc) * e
	h := stdNormalHazard(z)
	return -h * e, -z * h
}

// millsAsymptotic is the z above which logStdNormalSF and stdNormalHazard use the
// asymptotic series of the Mills ratio instead of Erfc, which underflows near z = 38.
// At 30 the series to z⁻⁸ has a relative error below 945/30¹⁰ ≈ 2e-12.
const millsAsymptotic = 30

// millsSeries is 1 - 1/z² + 3/z⁴ - 15/z⁶ + 105/z⁸, the asymptotic series of z·Q(z)/φ(z)
// (Abramowitz and Stegun 26.2.12).
func millsSeries(z float64) float64 {
	u := 1 / (z * z)
	return 1 + u*(-1+u*(3+u*(-15+u*105)))
}

// logStdNormalSF returns log Q(z) = log P(Z > z) for a standard Normal Z, keeping its
// precision in the upper tail.
func logStdNormalSF(z float64) float64 {
	if z < millsAsymptotic {
		return math.Log(0.5 * math.Erfc(z/math.Sqrt2))
	}
	return -0.5*z*z - math.Log(z) - logSqrt2Pi + math.Log(millsSeries(z))
}

// stdNormalHazard returns φ(z)/Q(z), the inverse Mills ratio.
func stdNormalHazard(z float64) float64 {
	if z < millsAsymptotic {
		return stdNormalPDF(z) / (0.5 * math.Erfc(z/math.Sqrt2))
	}
	return z / millsSeries(z)
}

// FitCensored is Fit with right-censored rows: censored[i] true means that y[i] is a
// lower bound of row i's target (an aborted build ran at least y[i] seconds), fitted
// with the log survival -log P(Y > y[i]) instead of the log density. A nil censored
// means none, and FitCensored is then Fit. Censored rows need the Normal or the
// LogNormal family and the log score, and at least one row must be uncensored. The
// initial parameters are the censored maximum-likelihood fit (FitMarginalCensored);
// early stopping scores the validation rows the same way, censored ones included.
func FitCensored(ctx context.Context, x mat.Matrix, y, weights []float64, censored []bool, cfg Config) (*Model, error) {
	if censored == nil {
		return Fit(ctx, x, y, weights, cfg)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r, _ := x.Dims()
	if len(censored) != r || len(y) != r {
		return nil, fmt.Errorf("ngboost: %d censoring flags and %d targets for %d rows: %w", len(censored), len(y), r, ErrInvalidData)
	}
	if weights != nil && len(weights) != r {
		return nil, fmt.Errorf("ngboost: %d weights for %d rows: %w", len(weights), r, ErrInvalidData)
	}
	if cfg.EarlyStoppingRounds == 0 {
		return fitRunCensored(ctx, x, y, weights, censored, nil, nil, nil, nil, cfg)
	}
	nVal := int(math.Round(cfg.ValidationFraction * float64(r)))
	if nVal < 1 || nVal >= r {
		return nil, fmt.Errorf("ngboost: validation_fraction %v of %d rows leaves no training or no validation rows: %w", cfg.ValidationFraction, r, ErrInvalidData)
	}
	nTrain := r - nVal
	var wt, wv []float64
	if weights != nil {
		wt, wv = weights[:nTrain], weights[nTrain:]
	}
	m, err := fitRunCensored(ctx, rowSlice(x, 0, nTrain), y[:nTrain], wt, censored[:nTrain],
		rowSlice(x, nTrain, r), y[nTrain:], wv, censored[nTrain:], cfg)
	if err != nil || !cfg.Refit {
		return m, err
	}
	cfg.NEstimators = m.NIterations()
	cfg.EarlyStoppingRounds = 0
	rm, err := fitRunCensored(ctx, x, y, weights, censored, nil, nil, nil, nil, cfg)
	if err != nil {
		return nil, fmt.Errorf("ngboost: refit on all rows: %w", err)
	}
	return refitted(rm, m), nil
}

// FitMarginalCensored is FitMarginal with right-censored rows (censored[i]: y[i] is a
// lower bound), for the Normal and the LogNormal: the weighted maximum-likelihood
// (loc, log scale) of the working target, found by the EM algorithm for censored Normal
// data (each censored t is replaced by its conditional moments given T > t; Dempster,
// Laird and Rubin 1977, §4.1.3), started from the uncensored rows' fit. A nil censored
// means none. At least one row with positive weight must be uncensored.
func FitMarginalCensored(f Family, y, w []float64, censored []bool) ([2]float64, error) {
	if censored == nil {
		return FitMarginal(f, y, w)
	}
	if len(censored) != len(y) || w != nil && len(w) != len(y) {
		panic("ngboost: FitMarginalCensored: lengths of y, w and censored differ")
	}
	if f != Normal && f != LogNormal {
		return [2]float64{}, fmt.Errorf("ngboost: censored rows need the normal or lognormal distribution, not %v: %w", f, ErrInvalidConfig)
	}
	var ty, tw []float64
	var cy, cw []float64
	for i, yi := range y {
		wi := weightOf(w, i)
		if !censored[i] {
			ty, tw = append(ty, yi), append(tw, wi)
			continue
		}
		t, ok := censoredTarget(f, yi)
		if !ok || !finite(t) {
			if math.IsNaN(yi) || math.IsInf(yi, 1) {
				return [2]float64{}, fmt.Errorf("ngboost: censored target row %d = %v is not a finite lower bound: %w", i, yi, ErrInvalidData)
			}
			continue // a LogNormal lower bound <= 0 says nothing
		}
		cy, cw = append(cy, t), append(cw, wi)
	}
	if len(ty) == 0 {
		return [2]float64{}, fmt.Errorf("ngboost: every row is censored, no maximum-likelihood fit: %w", ErrInvalidData)
	}
	p, err := FitMarginal(f, ty, tw)
	if err != nil {
		return p, err
	}
	if len(cy) == 0 {
		return p, nil
	}
	// The uncensored working targets' weighted sums are fixed through the iterations.
	var s0, s1, s2 float64
	for i, yi := range ty {
		t, _, _ := workingTarget(f, yi)
		s0 += tw[i]
		s1 += tw[i] * t
		s2 += tw[i] * t * t
	}
	var cs0 float64
	for _, wi := range cw {
		cs0 += wi
	}
	mu, sigma := p[0], math.Exp(p[1])
	for range emMaxIterations {
		// E[T | T > c] = μ + σh and E[T² | T > c] = μ² + σ² + σh(μ + c), h = h((c-μ)/σ).
		e1, e2 := s1, s2
		for i, c := range cy {
			h := stdNormalHazard((c - mu) / sigma)
			e1 += cw[i] * (mu + sigma*h)
			e2 += cw[i] * (mu*mu + sigma*sigma + sigma*h*(mu+c))
		}
		n := s0 + cs0
		nmu := e1 / n
		v := e2/n - nmu*nmu
		if !(v > 0) || !finite(v) {
			return [2]float64{}, fmt.Errorf("ngboost: censored maximum-likelihood fit diverged (variance %v): %w", v, ErrInvalidData)
		}
		ns := math.Sqrt(v)
		done := math.Abs(nmu-mu) <= emTol*sigma && math.Abs(ns-sigma) <= emTol*sigma
		mu, sigma = nmu, ns
		if done {
			break
		}
	}
	return [2]float64{mu, math.Log(sigma)}, nil
}

// EM stops when an iteration moves μ and σ by less than emTol·σ, or after
// emMaxIterations (EM converges linearly, at a rate set by the censored share).
const (
	emTol           = 1e-10
	emMaxIterations = 10000
)
