package ngboost

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// This file holds the families for durations beyond the LogNormal, as the reference
// defines them (ngboost/distns/exponential.py and gamma.py), with the log score only:
//
//   - Exponential: one boosted parameter θ₀ = log Scale; Scale is the mean. Score
//     θ₀ + y·e^(-θ₀), gradient 1 - y/Scale, Fisher information 1.
//   - Gamma: θ = (log α, log β), shape α and rate β. Score
//     -α log β + lgamma(α) - (α-1) log y + βy, gradient (α(ψ(α) - log(βy)), βy - α),
//     Fisher information [[α²ψ'(α), -α], [-α, α]] (not diagonal; its determinant
//     α²(αψ'(α) - 1) is positive because αψ'(α) > 1).

// nParams returns the number of boosted parameters of f: 1 for the Exponential, 2 for
// the others.
func (f Family) nParams() int {
	if f == Exponential {
		return 1
	}
	return 2
}

// durationFamily reports whether f is one of the families of this file, whose score
// is not Normal arithmetic on a working target.
func (f Family) durationFamily() bool { return f == Exponential || f == Gamma }

// durationScore returns the log score of f at the boosted parameters (p0, p1) and y,
// and its gradient with respect to them (0 for the Exponential's unused p1). Outside
// the support (y < 0 for the Exponential, y <= 0 for the Gamma) the score is +Inf and
// the gradient NaN.
func durationScore(f Family, p0, p1, y float64) (s, g0, g1 float64) {
	if f == Exponential {
		if !(y >= 0) {
			return math.Inf(1), math.NaN(), math.NaN()
		}
		r := y * math.Exp(-p0)
		return p0 + r, 1 - r, 0
	}
	if !(y > 0) {
		return math.Inf(1), math.NaN(), math.NaN()
	}
	a, b := math.Exp(p0), math.Exp(p1)
	lg, _ := math.Lgamma(a)
	ly := math.Log(y)
	by := b * y
	return -a*p1 + lg - (a-1)*ly + by, a * (mathext.Digamma(a) - p1 - ly), by - a
}

// durationMetric returns the Fisher information of f at (p0, p1) as its entries m00,
// m01 = m10 and m11 (m01 = m11 = 0 for the Exponential).
func durationMetric(f Family, p0 float64) (m00, m01, m11 float64) {
	if f == Exponential {
		return 1, 0, 0
	}
	a := math.Exp(p0)
	return a * a * trigamma(a), -a, a
}

// durationNatural returns the natural gradient M⁻¹g of f at (p0, p1).
func durationNatural(f Family, p0, g0, g1 float64) (n0, n1 float64) {
	if f == Exponential {
		return g0, 0
	}
	m00, m01, m11 := durationMetric(f, p0)
	det := m00*m11 - m01*m01
	return (m11*g0 - m01*g1) / det, (m00*g1 - m01*g0) / det
}

// trigamma returns ψ'(x), the derivative of the digamma function, for x > 0: the
// recurrence ψ'(x) = ψ'(x+1) + 1/x² up to x >= 10, then the asymptotic series
// 1/x + 1/(2x²) + Σₖ B₂ₖ/x^(2k+1) (Abramowitz and Stegun 6.4.12) to the B₁₄ term; the
// first omitted term, B₁₆/x¹⁷ ≈ 7.1/10¹⁷, is below 1e-15 of ψ'(10) ≈ 0.105.
func trigamma(x float64) float64 {
	var acc float64
	for x < 10 {
		acc += 1 / (x * x)
		x++
	}
	z := 1 / (x * x)
	// B₂/x³ + B₄/x⁵ + ... with B₂ = 1/6, B₄ = -1/30, B₆ = 1/42, B₈ = -1/30, B₁₀ = 5/66,
	// B₁₂ = -691/2730, B₁₄ = 7/6.
	series := z * (1.0/6 + z*(-1.0/30+z*(1.0/42+z*(-1.0/30+z*(5.0/66+z*(-691.0/2730+z*(7.0/6)))))))
	return acc + 1/x + z/2 + series/x
}

// fitMarginalDuration is FitMarginal for the Exponential and the Gamma: the weighted
// maximum-likelihood fit. Exponential: Scale = the weighted mean of y (the reference's
// expon.fit gives loc + scale = the mean). Gamma: α solves log α - ψ(α) = log ȳ -
// mean(log y) (Newton's method from Minka's start), β = α/ȳ, as scipy's gamma.fit
// with floc=0.
func fitMarginalDuration(f Family, y, w []float64) ([2]float64, error) {
	var sw, mean, meanLog float64
	for i, yi := range y {
		if _, _, g := durationScore(f, 0, 0, yi); math.IsNaN(g) || math.IsInf(yi, 0) {
			return [2]float64{}, fmt.Errorf("ngboost: target row %d = %v is outside the support of %v: %w", i, yi, f, ErrInvalidData)
		}
		wi := weightOf(w, i)
		sw += wi
		if sw > 0 {
			mean += wi / sw * (yi - mean)
			if f == Gamma {
				meanLog += wi / sw * (math.Log(yi) - meanLog)
			}
		}
	}
	if !(sw > 0) {
		return [2]float64{}, fmt.Errorf("ngboost: no rows with positive weight: %w", ErrInvalidData)
	}
	if !(mean > 0) {
		return [2]float64{}, fmt.Errorf("ngboost: the mean target is %v, want > 0 for the %v: %w", mean, f, ErrInvalidData)
	}
	if f == Exponential {
		return [2]float64{math.Log(mean), 0}, nil
	}
	s := math.Log(mean) - meanLog
	if !(s > 1e-12) {
		return [2]float64{}, fmt.Errorf("ngboost: target is constant (%v), no shape to fit: %w", mean, ErrInvalidData)
	}
	// Minka (2002), "Estimating a Gamma distribution", eq. (5): within 1.5% of α.
	a := (3 - s + math.Sqrt((s-3)*(s-3)+24*s)) / (12 * s)
	for range 50 {
		// Newton on h(α) = log α - ψ(α) - s, h' = 1/α - ψ'(α) < 0, h convex and
		// decreasing, so the steps from Minka's start converge monotonically.
		step := (math.Log(a) - mathext.Digamma(a) - s) / (1/a - trigamma(a))
		next := a - step
		if !(next > 0) {
			next = a / 2
		}
		if math.Abs(next-a) <= 1e-15*a {
			a = next
			break
		}
		a = next
	}
	return [2]float64{math.Log(a), math.Log(a / mean)}, nil
}
