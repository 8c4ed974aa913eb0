package ngboost

import (
	"fmt"
	"math"
)

// Family is the parametric form of the predictive distribution of the target.
type Family int

const (
	// Normal is N(Loc, Scale²): Loc is the mean and Scale the standard deviation of Y.
	// It is the distribution of paper 000 §VII.
	Normal Family = iota
	// LogNormal is the distribution of Y = exp(Z) with Z ~ N(Loc, Scale²): Loc and Scale are
	// the mean and standard deviation of log Y. Build times are positive and right-skewed,
	// which a LogNormal captures and a Normal does not.
	LogNormal
)

// String returns the name of f as ParseFamily accepts it.
func (f Family) String() string {
	switch f {
	case Normal:
		return "normal"
	case LogNormal:
		return "lognormal"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// ParseFamily returns the Family named s ("normal" or "lognormal").
func ParseFamily(s string) (Family, error) {
	switch s {
	case "normal":
		return Normal, nil
	case "lognormal":
		return LogNormal, nil
	}
	return 0, fmt.Errorf("ngboost: unknown distribution %q (want normal or lognormal): %w", s, ErrInvalidConfig)
}

func (f Family) valid() bool { return f == Normal || f == LogNormal }

// Dist is one predictive distribution: a Family and its two parameters. The boosted
// parameters are Loc and log(Scale); Dist holds Scale itself.
type Dist struct {
	Family Family
	// Loc is the mean of Y (Normal) or of log Y (LogNormal).
	Loc float64
	// Scale is the standard deviation of Y (Normal) or of log Y (LogNormal); it is positive.
	Scale float64
}

// Mean returns the mean of Y, in the units of the target (seconds for build times).
func (d Dist) Mean() float64 {
	if d.Family == LogNormal {
		return math.Exp(d.Loc + d.Scale*d.Scale/2)
	}
	return d.Loc
}

// StdDev returns the standard deviation of Y, in the units of the target. For a
// LogNormal it is sqrt(exp(s²)-1)·exp(m+s²/2), computed with Expm1 so that small s
// keeps its precision.
func (d Dist) StdDev() float64 {
	if d.Family == LogNormal {
		return math.Sqrt(math.Expm1(d.Scale*d.Scale)) * math.Exp(d.Loc+d.Scale*d.Scale/2)
	}
	return d.Scale
}

// Quantile returns the p-quantile of Y for p in (0, 1); p outside [0, 1] gives NaN.
func (d Dist) Quantile(p float64) float64 {
	q := d.Loc + d.Scale*stdNormalQuantile(p)
	if d.Family == LogNormal {
		return math.Exp(q)
	}
	return q
}

// Interval returns the central interval holding probability level of Y: the
// (1-level)/2 and (1+level)/2 quantiles.
func (d Dist) Interval(level float64) (lo, hi float64) {
	return d.Quantile((1 - level) / 2), d.Quantile((1 + level) / 2)
}

// CDF returns P(Y <= y).
func (d Dist) CDF(y float64) float64 {
	if d.Family == LogNormal {
		if y <= 0 {
			return 0
		}
		y = math.Log(y)
	}
	return stdNormalCDF((y - d.Loc) / d.Scale)
}

// LogPDF returns the natural log of the density of Y at y: the log-likelihood of an
// observed y. For a LogNormal it is -Inf at y <= 0.
func (d Dist) LogPDF(y float64) float64 {
	if d.Family == LogNormal {
		if y <= 0 {
			return math.Inf(-1)
		}
		ly := math.Log(y)
		return normalLogPDF(d.Loc, d.Scale, ly) - ly
	}
	return normalLogPDF(d.Loc, d.Scale, y)
}

// params returns the boosted parameters (Loc, log Scale).
func (d Dist) params() [2]float64 { return [2]float64{d.Loc, math.Log(d.Scale)} }

// distOf returns the Dist with boosted parameters p = (loc, log scale).
func distOf(f Family, p [2]float64) Dist {
	return Dist{Family: f, Loc: p[0], Scale: math.Exp(p[1])}
}

const (
	// logSqrt2Pi is log(sqrt(2π)), the constant of the Normal log-density.
	logSqrt2Pi = 0.91893853320467274178032973640561763986139747363778
	// invSqrtPi is 1/sqrt(π), the constant of the Normal CRPS.
	invSqrtPi = 0.56418958354775628694807945156077258584405062932900
	// invSqrt2Pi is 1/sqrt(2π), the standard Normal density at 0.
	invSqrt2Pi = 0.39894228040143267793994605993438186847585863116493
)

func normalLogPDF(loc, scale, y float64) float64 {
	z := (y - loc) / scale
	return -0.5*z*z - math.Log(scale) - logSqrt2Pi
}

// stdNormalCDF is Φ(z), through Erfc so that the lower tail keeps its relative precision.
func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// stdNormalPDF is φ(z).
func stdNormalPDF(z float64) float64 { return invSqrt2Pi * math.Exp(-0.5*z*z) }

// stdNormalQuantile is Φ⁻¹(p).
func stdNormalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// CRPS returns the continuous ranked probability score ∫(F(z) - 1{z >= y})² dz of d at
// y, in the units of Y. Normal: σ·[z(2Φ(z)-1) + 2φ(z) - 1/√π] with z = (y-m)/σ (Gneiting
// and Raftery 2007). LogNormal, with w = (log y - m)/s and mean M = exp(m+s²/2):
// y(2Φ(w)-1) - 2M(Φ(w-s) + Φ(s/√2) - 1) (Baran and Lerch 2015); for y <= 0, where the
// density is 0, the integral is -y plus its value at 0⁺, 2M(1-Φ(s/√2)).
func (d Dist) CRPS(y float64) float64 {
	if d.Family != LogNormal {
		return normalCRPS(d.Loc, math.Log(d.Scale), y)
	}
	s := d.Scale
	m := math.Exp(d.Loc + s*s/2)
	at0 := 2 * m * stdNormalCDF(-s/math.Sqrt2)
	if y <= 0 {
		return at0 - y
	}
	w := (math.Log(y) - d.Loc) / s
	return y*(2*stdNormalCDF(w)-1) - 2*m*(stdNormalCDF(w-s)-stdNormalCDF(-s/math.Sqrt2))
}
