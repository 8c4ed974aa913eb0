package ngboost

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
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
	// Exponential has density exp(-y/Scale)/Scale for y >= 0: Scale is the mean and the
	// standard deviation of Y. It has one boosted parameter, log Scale. Loc is unused.
	Exponential
	// Gamma has density β^α y^(α-1) exp(-βy)/Γ(α) for y > 0, with shape α (Shape) and
	// rate β = 1/Scale. Its boosted parameters are (log α, log β), as the reference's
	// Gamma. Loc is unused.
	Gamma
)

// String returns the name of f as ParseFamily accepts it.
func (f Family) String() string {
	switch f {
	case Normal:
		return "normal"
	case LogNormal:
		return "lognormal"
	case Exponential:
		return "exponential"
	case Gamma:
		return "gamma"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// ParseFamily returns the Family named s ("normal", "lognormal", "exponential" or
// "gamma").
func ParseFamily(s string) (Family, error) {
	for _, f := range []Family{Normal, LogNormal, Exponential, Gamma} {
		if s == f.String() {
			return f, nil
		}
	}
	return 0, fmt.Errorf("ngboost: unknown distribution %q (want normal, lognormal, exponential or gamma): %w", s, ErrInvalidConfig)
}

func (f Family) valid() bool { return f >= Normal && f <= Gamma }

// Dist is one predictive distribution: a Family and its parameters. The boosted
// parameters are Loc and log(Scale) (Normal, LogNormal), log(Scale) (Exponential), and
// log(Shape) and -log(Scale) (Gamma: log α, log β); Dist holds Shape and Scale
// themselves.
type Dist struct {
	Family Family
	// Loc is the mean of Y (Normal) or of log Y (LogNormal); unused otherwise.
	Loc float64
	// Scale is the standard deviation of Y (Normal) or of log Y (LogNormal), the mean
	// (Exponential) or 1/rate (Gamma); it is positive.
	Scale float64
	// Shape is α of a Gamma; unused otherwise.
	Shape float64
}

// Mean returns the mean of Y, in the units of the target (seconds for build times).
func (d Dist) Mean() float64 {
	switch d.Family {
	case Exponential:
		return d.Scale
	case Gamma:
		return d.Shape * d.Scale
	}
	if d.Family == LogNormal {
		return math.Exp(d.Loc + d.Scale*d.Scale/2)
	}
	return d.Loc
}

// StdDev returns the standard deviation of Y, in the units of the target. For a
// LogNormal it is sqrt(exp(s²)-1)·exp(m+s²/2), computed with Expm1 so that small s
// keeps its precision.
func (d Dist) StdDev() float64 {
	switch d.Family {
	case Exponential:
		return d.Scale
	case Gamma:
		return math.Sqrt(d.Shape) * d.Scale
	}
	if d.Family == LogNormal {
		return math.Sqrt(math.Expm1(d.Scale*d.Scale)) * math.Exp(d.Loc+d.Scale*d.Scale/2)
	}
	return d.Scale
}

// Quantile returns the p-quantile of Y for p in (0, 1); p outside [0, 1] gives NaN.
func (d Dist) Quantile(p float64) float64 {
	switch d.Family {
	case Exponential:
		if !(p >= 0 && p <= 1) {
			return math.NaN()
		}
		return -d.Scale * math.Log1p(-p)
	case Gamma:
		if !(p >= 0 && p <= 1) {
			return math.NaN()
		}
		return mathext.GammaIncRegInv(d.Shape, p) * d.Scale
	}
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
	switch d.Family {
	case Exponential:
		if y <= 0 {
			return 0
		}
		return -math.Expm1(-y / d.Scale)
	case Gamma:
		if y <= 0 {
			return 0
		}
		return mathext.GammaIncReg(d.Shape, y/d.Scale)
	}
	if d.Family == LogNormal {
		if y <= 0 {
			return 0
		}
		y = math.Log(y)
	}
	return stdNormalCDF((y - d.Loc) / d.Scale)
}

// LogPDF returns the natural log of the density of Y at y: the log-likelihood of an
// observed y. It is -Inf at y <= 0 for a LogNormal and a Gamma, at y < 0 for an
// Exponential.
func (d Dist) LogPDF(y float64) float64 {
	if d.Family.durationFamily() {
		p := d.params()
		s, _, _ := durationScore(d.Family, p[0], p[1], y)
		return -s
	}
	if d.Family == LogNormal {
		if y <= 0 {
			return math.Inf(-1)
		}
		ly := math.Log(y)
		return normalLogPDF(d.Loc, d.Scale, ly) - ly
	}
	return normalLogPDF(d.Loc, d.Scale, y)
}

// params returns the boosted parameters: (Loc, log Scale), (log Scale, 0) for an
// Exponential, (log Shape, -log Scale) for a Gamma.
func (d Dist) params() [2]float64 {
	switch d.Family {
	case Exponential:
		return [2]float64{math.Log(d.Scale), 0}
	case Gamma:
		return [2]float64{math.Log(d.Shape), -math.Log(d.Scale)}
	}
	return [2]float64{d.Loc, math.Log(d.Scale)}
}

// distOf returns the Dist of family f with boosted parameters p (see params).
func distOf(f Family, p [2]float64) Dist {
	switch f {
	case Exponential:
		return Dist{Family: f, Scale: math.Exp(p[0])}
	case Gamma:
		return Dist{Family: f, Shape: math.Exp(p[0]), Scale: math.Exp(-p[1])}
	}
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
// Exponential, with mean θ: y + θ(2e^(-y/θ) - 3/2) for y >= 0 (the reference's
// ExponentialCRPScore) and θ/2 - y below. Gamma, with F_a the CDF of shape a and the
// same rate β: y(2F_α(y) - 1) - (α/β)(2F_α₊₁(y) - 1) - 1/(β·B(1/2, α)) (Scheuerer and
// Möller 2015).
func (d Dist) CRPS(y float64) float64 {
	switch d.Family {
	case Exponential:
		if y < 0 {
			return d.Scale/2 - y
		}
		return y + d.Scale*(2*math.Exp(-y/d.Scale)-1.5)
	case Gamma:
		a, sc := d.Shape, d.Scale
		f0, f1 := 0.0, 0.0
		if y > 0 {
			f0, f1 = mathext.GammaIncReg(a, y/sc), mathext.GammaIncReg(a+1, y/sc)
		}
		return y*(2*f0-1) - a*sc*(2*f1-1) - sc*math.Exp(-mathext.Lbeta(0.5, a))
	}
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
