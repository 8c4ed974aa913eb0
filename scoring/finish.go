package scoring

import "math"

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
