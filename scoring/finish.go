package scoring

import (
	"fmt"
	"math"
)

// FinishZ returns the standardised score of paper 000 §VII for two conflicting changes:
// the ahead change x (it arrived first) and the new change y,
//
//	Z = ((AT_x − AT_y) − (mu_y − mu_x)) / sqrt(sigma_x² + sigma_y²),
//
// so that P(FT_y < FT_x) = Phi(Z). Arrival times and build-time parameters share one
// unit (seconds everywhere in sqpredict).
//
// If both sigmas are zero the finish times are certain: FinishZ returns +Inf when y
// finishes first, -Inf when x does, and 0 for an exact tie. A NaN or negative sigma,
// or any NaN input, gives NaN; infinite inputs follow IEEE arithmetic (Inf − Inf is NaN).
func FinishZ(aheadArrival, aheadMu, aheadSigma, arrival, mu, sigma float64) float64 {
	if math.IsNaN(aheadSigma) || math.IsNaN(sigma) || aheadSigma < 0 || sigma < 0 {
		return math.NaN()
	}
	num := (aheadArrival - arrival) - (mu - aheadMu)
	den := math.Sqrt(aheadSigma*aheadSigma + sigma*sigma)
	if den == 0 {
		switch {
		case math.IsNaN(num):
			return math.NaN()
		case num > 0:
			return math.Inf(1)
		case num < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return num / den
}

// FinishBeforeProb returns P(FT_y < FT_x) = Phi(FinishZ(...)) of paper 000 §VII: the
// probability that the new change y, arriving at arrival with build time
// N(mu, sigma²), finishes before the ahead change x, arriving at aheadArrival with build
// time N(aheadMu, aheadSigma²). x is the change ahead in the queue, y the one behind it
// that may bypass x.
//
// The result is in [0, 1]. With both sigmas zero it is 1, 0 or 0.5 (an exact tie, the
// limit of Phi(0) as the sigmas shrink). NaN or a negative sigma gives NaN.
func FinishBeforeProb(aheadArrival, aheadMu, aheadSigma, arrival, mu, sigma float64) float64 {
	return stdNormalCDF(FinishZ(aheadArrival, aheadMu, aheadSigma, arrival, mu, sigma))
}

// stdNormalCDF is Phi(z), computed with Erfc so that the lower tail keeps its relative
// precision. Phi(±Inf) is 1 or 0 and Phi(NaN) is NaN.
func stdNormalCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// CombineBuildTimes returns the combined build time of a change from the predicted
// build times of its builds, as paper 000 §VII defines it: the mean of the builds'
// means and the mean of their variances, sigma_i². It returns (mu, variance); take the
// square root of variance for the sigma that FinishBeforeProb expects.
//
// Empty input gives (NaN, NaN). Any NaN gives NaN in the affected result, and so does a
// negative sigma in the variance; infinities propagate. A length mismatch between mu
// and sigma panics.
func CombineBuildTimes(mu, sigma []float64) (meanMu, meanVariance float64) {
	if len(mu) != len(sigma) {
		panic("scoring: mu and sigma length mismatch")
	}
	if len(mu) == 0 {
		return math.NaN(), math.NaN()
	}
	var sm, sv float64
	for i := range mu {
		sm += mu[i]
		if sigma[i] < 0 {
			sv = math.NaN()
		}
		sv += sigma[i] * sigma[i]
	}
	n := float64(len(mu))
	return sm / n, sv / n
}

// BuildFamily is the shape of a predicted build-time distribution. Whatever the family,
// a build time is given by its mean and standard deviation in seconds (Change.BuildMu and
// Change.BuildSigma, BuildTime.Mean and BuildTime.StdDev), as the serving API carries it;
// the family says which distribution with those two moments it is.
type BuildFamily uint8

// The build-time families.
const (
	// BuildNormal is N(mean, sd²): P(FT_y < FT_x) is Phi(Z) of paper 000 §VII.
	BuildNormal BuildFamily = iota
	// BuildLogNormal is the log-normal distribution with the given mean and standard
	// deviation: log T ~ N(m, s²) with s² = log(1 + sd²/mean²) and m = log(mean) − s²/2
	// (LogNormalParams). P(FT_y < FT_x) has no closed form; FinishBeforeProbOf integrates
	// it numerically.
	BuildLogNormal
)

// String returns "normal" or "lognormal".
func (f BuildFamily) String() string {
	switch f {
	case BuildNormal:
		return "normal"
	case BuildLogNormal:
		return "lognormal"
	}
	return fmt.Sprintf("BuildFamily(%d)", uint8(f))
}

// valid reports whether f is a known family.
func (f BuildFamily) valid() bool { return f == BuildNormal || f == BuildLogNormal }

// LogNormalParams returns the parameters (m, s) of the log-normal distribution with the
// given mean > 0 and standard deviation sd >= 0: log T ~ N(m, s²) with
// s² = log1p(sd²/mean²) and m = log(mean) − s²/2. A mean <= 0 or a NaN gives NaN.
func LogNormalParams(mean, sd float64) (m, s float64) {
	if !(mean > 0) || !(sd >= 0) {
		return math.NaN(), math.NaN()
	}
	cv := sd / mean
	s2 := math.Log1p(cv * cv)
	return math.Log(mean) - s2/2, math.Sqrt(s2)
}

// LogNormalMoments returns the mean and standard deviation of T with log T ~ N(m, s²):
// exp(m + s²/2) and sqrt(expm1(s²))·exp(m + s²/2). It is the inverse of LogNormalParams.
func LogNormalMoments(m, s float64) (mean, sd float64) {
	mean = math.Exp(m + s*s/2)
	return mean, math.Sqrt(math.Expm1(s*s)) * mean
}

// CombineLogNormalBuildTimes returns the combined build time of a change whose builds
// have log-normal build times, log T_i ~ N(m_i, s_i²), as the log-normal parameters
// (m, s) of the combined build time. The combination is the one CombineBuildTimes makes
// for Normal builds (paper 000 §VII): its mean is the mean of the builds' means and its
// variance the mean of their variances; the combined build time is the log-normal with
// those two moments (LogNormalParams). A Change carries the moments themselves:
// BuildMu = mean and BuildSigma = sqrt(variance), with BuildFamily = BuildLogNormal.
//
// Empty input gives (NaN, NaN), as does a negative s. A length mismatch panics.
func CombineLogNormalBuildTimes(m, s []float64) (cm, cs float64) {
	if len(m) != len(s) {
		panic("scoring: m and s length mismatch")
	}
	if len(m) == 0 {
		return math.NaN(), math.NaN()
	}
	// CombineBuildTimes of the builds' moments, without their slices.
	var sm, sv float64
	for i := range m {
		if s[i] < 0 {
			return math.NaN(), math.NaN()
		}
		mean, sd := LogNormalMoments(m[i], s[i])
		sm += mean
		sv += sd * sd
	}
	n := float64(len(m))
	return LogNormalParams(sm/n, math.Sqrt(sv/n))
}

// BuildTime is the predicted build time of a change: its family and its mean and
// standard deviation, in seconds.
type BuildTime struct {
	Family       BuildFamily
	Mean, StdDev float64
}

// quantileAt returns the build time at standard-normal score z: Mean + StdDev·z for a
// Normal, exp(m + s·z) for a LogNormal (its z-quantile when z = Phi⁻¹(p)). A zero
// StdDev gives Mean for every z.
func (b BuildTime) quantileAt(z float64) float64 {
	if b.StdDev == 0 {
		return b.Mean
	}
	if b.Family == BuildLogNormal {
		m, s := LogNormalParams(b.Mean, b.StdDev)
		return math.Exp(m + s*z)
	}
	return b.Mean + b.StdDev*z
}

// cdf returns P(T <= t) (upper = false) or P(T > t) (upper = true), each computed
// directly so that a small tail keeps its relative precision. A zero StdDev is a point
// mass at Mean.
func (b BuildTime) cdf(t float64, upper bool) float64 {
	var z float64
	switch {
	case b.StdDev == 0:
		if (t >= b.Mean) != upper {
			return 1
		}
		return 0
	case b.Family == BuildLogNormal:
		if t <= 0 {
			z = math.Inf(-1)
		} else {
			m, s := LogNormalParams(b.Mean, b.StdDev)
			z = (math.Log(t) - m) / s
		}
	default:
		z = (t - b.Mean) / b.StdDev
	}
	if upper {
		return stdNormalCDF(-z)
	}
	return stdNormalCDF(z)
}

// FinishBeforeProbOf returns P(FT_y < FT_x) for the ahead change x, arriving at
// aheadArrival with build time ahead, and the new change y, arriving at arrival with
// build time behind, where FT = arrival + T and the build times are independent.
//
// When both build times are Normal it is FinishBeforeProb's Phi(Z), exactly; when one
// is a point mass it is the other's CDF. Otherwise it is the integral
//
//	P(T_y < T_x + D) = ∫ φ(z) F_y(q_x(z) + D) dz = ∫ φ(z) S_x(q_y(z) − D) dz,
//
// D = AT_x − AT_y, with q the build time at standard-normal score z (Mean + StdDev·z, or
// exp(m + s·z) for a LogNormal), F the CDF and S = 1 − F the survival function, each
// computed directly. Two LogNormals with D = 0 have the closed form
// Phi((m_x − m_y)/sqrt(s_x² + s_y²)). Otherwise a 20-, 32- or 64-point Gauss–Hermite rule
// over one build time's z takes the integral where a check on its own nodes says it
// resolves the integrand (finishBeforeFixed): within 1e-7 of a brute-force integral on a
// grid of log-sigmas from 0.001 to 3, at 2–5 µs of CPU a pair (BenchmarkFinishBefore-
// LogNormal: equal or differing coefficients of variation) where the adaptive rule
// below needs about 30 µs. Where the check fails, the integral runs
// over the build time that keeps the other's CDF smooth (finishBeforeIntegral), on
// z ∈ [−8.5, 8.5] (the rest of the Normal mass is below 2e-17), by adaptive
// Gauss–Kronrod (7–15) quadrature on 16 panels split at the integrand's steepest point,
// to an absolute error of 1e-13 or a relative one of 1e-10 per panel.
//
// The result is in [0, 1]. A zero StdDev is a point mass at Mean. A NaN input, a
// negative StdDev, a LogNormal with Mean <= 0 and positive StdDev, or an unknown family
// gives NaN.
func FinishBeforeProbOf(aheadArrival float64, ahead BuildTime, arrival float64, behind BuildTime) float64 {
	for _, b := range [2]BuildTime{ahead, behind} {
		if !b.Family.valid() || math.IsNaN(b.Mean) || !(b.StdDev >= 0) ||
			b.Family == BuildLogNormal && b.StdDev > 0 && !(b.Mean > 0) {
			return math.NaN()
		}
	}
	if math.IsNaN(aheadArrival) || math.IsNaN(arrival) {
		return math.NaN()
	}
	bothNormal := ahead.Family == BuildNormal && behind.Family == BuildNormal
	if bothNormal || ahead.StdDev == 0 && behind.StdDev == 0 {
		return FinishBeforeProb(aheadArrival, ahead.Mean, ahead.StdDev, arrival, behind.Mean, behind.StdDev)
	}
	switch d := aheadArrival - arrival; {
	case ahead.StdDev == 0:
		return behind.cdf(ahead.Mean+d, false)
	case behind.StdDev == 0:
		return ahead.cdf(behind.Mean-d, true)
	default:
		return finishBeforeFixed(d, ahead, behind)
	}
}

// finishBeforeIntegral returns P(T_y < T_x + d) by quadrature, for any two families.
//
// The outer variable is chosen so that the inner CDF is smooth in z: a Normal inner
// CDF always is, a LogNormal one only where its argument stays positive, since its CDF
// rises from 0 at t = 0 faster than any polynomial can follow. So a Normal is always the
// inner one when the other is a LogNormal, and with two LogNormals the outer is x when
// d >= 0 (the argument q_x(z) + d > 0) and y otherwise (q_y(z) − d > 0). The domain is
// split at the z where the argument reaches the inner's median, where the integrand
// changes fastest.
func finishBeforeIntegral(d float64, x, y BuildTime) float64 {
	outerX := x.StdDev <= y.StdDev
	switch {
	case x.StdDev == 0:
		return y.cdf(x.Mean+d, false)
	case y.StdDev == 0:
		return x.cdf(y.Mean-d, true)
	case x.Family != y.Family:
		outerX = x.Family == BuildLogNormal
	case x.Family == BuildLogNormal:
		outerX = d >= 0
	}
	var f func(z float64) float64
	var zMid float64
	xs, ys := prepareSide(x), prepareSide(y)
	if outerX {
		f = func(z float64) float64 { return stdNormalPDF(z) * stdNormalCDF(ys.score(xs.quantile(z)+d)) }
		zMid = xs.score(ys.quantile(0) - d)
	} else {
		f = func(z float64) float64 { return stdNormalPDF(z) * stdNormalCDF(-xs.score(ys.quantile(z)-d)) }
		zMid = ys.score(xs.quantile(0) + d)
	}
	const lim, panels = 8.5, 16
	edges := make([]float64, 0, panels+2)
	for k := range panels + 1 {
		e := -lim + 2*lim*float64(k)/panels
		if k > 0 && zMid > edges[len(edges)-1] && zMid < e {
			edges = append(edges, zMid)
		}
		edges = append(edges, e)
	}
	var sum float64
	for k := 1; k < len(edges); k++ {
		sum += gaussKronrod(f, edges[k-1], edges[k], 0)
	}
	return min(1, max(0, sum))
}

// stdNormalPDF is φ(z).
func stdNormalPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// Nodes and weights of the 7-point Gauss and 15-point Kronrod rules on [−1, 1]
// (QUADPACK's qk15): gkNodes[0] = 0 and the Gauss nodes are gkNodes[2], [4], [6].
var (
	gkNodes = [8]float64{
		0, 0.207784955007898467600689403773245, 0.405845151377397166906606412076961,
		0.586087235467691130294144845693013, 0.741531185599394439863864773280788,
		0.864864423359769072789712788640926, 0.949107912342758524526189684047851,
		0.991455371120812639206854697526329,
	}
	gkKronrod = [8]float64{
		0.209482141084727828012999174891714, 0.204432940075298892414161999234649,
		0.190350578064785409913256402421014, 0.169004726639267902826583426598550,
		0.140653259715525918745189590510238, 0.104790010322250183839876322541518,
		0.063092092629978553290700663189204, 0.022935322010529224963732008058970,
	}
	gkGauss = [4]float64{
		0.417959183673469387755102040816327, 0.381830050505118944950369775488975,
		0.279705391489276667901467771423780, 0.129484966168869693270611432679082,
	}
)

// gaussKronrod integrates f on [a, b], bisecting until the Gauss and Kronrod estimates
// agree to 1e-13 absolute or 1e-10 relative, at most 40 levels deep.
func gaussKronrod(f func(float64) float64, a, b float64, depth int) float64 {
	c, h := (a+b)/2, (b-a)/2
	fc := f(c)
	k, g := gkKronrod[0]*fc, gkGauss[0]*fc
	for i := 1; i < 8; i++ {
		x := h * gkNodes[i]
		s := f(c-x) + f(c+x)
		k += gkKronrod[i] * s
		if i%2 == 0 {
			g += gkGauss[i/2] * s
		}
	}
	k, g = k*h, g*h
	if err := math.Abs(k - g); err <= 1e-13 || err <= 1e-10*math.Abs(k) || depth >= 40 {
		return k
	}
	return gaussKronrod(f, a, c, depth+1) + gaussKronrod(f, c, b, depth+1)
}

// buildTimeOf returns the build time of a queue change.
func buildTimeOf(c Change) BuildTime {
	return BuildTime{Family: c.BuildFamily, Mean: c.BuildMu, StdDev: c.BuildSigma}
}

// changeFinishBefore returns P(FT_j < FT_i) for the change ci ahead and the change cj
// behind it, for the build-time family of each (FinishBeforeProbOf).
func changeFinishBefore(ci, cj Change) float64 {
	if ci.BuildFamily == BuildNormal && cj.BuildFamily == BuildNormal {
		return FinishBeforeProb(ci.Arrival, ci.BuildMu, ci.BuildSigma, cj.Arrival, cj.BuildMu, cj.BuildSigma)
	}
	return FinishBeforeProbOf(ci.Arrival, buildTimeOf(ci), cj.Arrival, buildTimeOf(cj))
}
