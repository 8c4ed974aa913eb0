package eval

import "math"

// MinSkill is the log-loss skill over the constant (see [LogLossSkill]) a classifier must
// reach on a synthetic holdout, where the truth is known: issue 13's acceptance, "at
// least 0.7 of the truth's". A constant predictor has skill about 0 and fails it.
const MinSkill = 0.7

// Skill returns the share of the possible loss reduction a model achieves:
// (ref - model) / (ref - best), where ref is the loss of a reference (the constant
// rate, or on real data the best baseline) and best the lowest achievable loss (the
// Bayes limit, the loss of the true probabilities). It is 1 for a model as good as the
// best, 0 for one as good as the reference, negative for a worse one, and above 1 only
// when the model beats the Bayes limit (by chance on a finite sample). It returns NaN
// when any loss is NaN or when ref <= best: the reference leaves nothing to gain, so no
// skill can be measured.
func Skill(model, ref, best float64) float64 {
	if math.IsNaN(model) || math.IsNaN(ref) || math.IsNaN(best) || !(ref > best) {
		return math.NaN()
	}
	return (ref - model) / (ref - best)
}

// LogLossSkill returns Skill of the log losses (see [LogLoss]) of p, ref and truth on
// the labels y: (LL_ref - LL_p) / (LL_ref - LL_truth). With ref the constant training
// rate ([Constant]) and truth the true probabilities of a synthetic history, it is the
// share of the gain from knowing nothing to knowing everything that p captures. NaN for
// no rows. Labels must be 0 or 1 and every probability in [0, 1]; other values and
// slices of different lengths panic, as in [LogLoss].
func LogLossSkill(y, p, ref, truth []float64) float64 {
	return Skill(LogLoss(y, p), LogLoss(y, ref), LogLoss(y, truth))
}

// Constant returns n copies of rate: the predictions of a model that knows only the base
// rate. It panics for a negative n.
func Constant(n int, rate float64) []float64 {
	if n < 0 {
		panic("eval: negative length")
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = rate
	}
	return out
}

// QuantileCalibration returns a reliability diagram of at most bins bins holding about
// the same number of rows each: the rows sorted by p are cut into bins runs of equal
// length, and runs that share a value of p are merged, so that equal predictions stay in
// one bin. Where equal-width bins over [0, 1] (Calibration) put every row of a rare-event
// classifier (P-conf near 0, or 1 − P-conf near 1) into one bin, these cover the range
// of the predictions. Bin b holds the rows with Lo <= p <= Hi, its smallest and largest
// prediction; a bin of a single value v is [v, v+ε] (ε the float64 spacing, [v−ε, v] at
// v = 1) so that Lo < Hi always. Unused bins at the end have Count 0 and span [0, 1].
// The diagram always has bins entries, so that several classifiers' diagrams can be
// drawn together. It panics if bins < 1 and, as Calibration, on invalid labels or
// probabilities; no rows gives bins empty bins.
func QuantileCalibration(y, p []float64, bins int) []CalibrationBin {
	mustBinary("QuantileCalibration", y, p)
	if bins < 1 {
		panic("eval: QuantileCalibration: bins < 1")
	}
	order := sortedByP(p)
	out := make([]CalibrationBin, bins)
	n, b := len(order), 0
	for i := 0; i < n; b++ {
		j := max(i+1, (b+1)*n/bins)
		for j < n && p[order[j]] == p[order[j-1]] {
			j++ // keep ties together
		}
		bin := &out[b]
		var sp, sy float64
		for _, r := range order[i:j] {
			sp += p[r]
			sy += y[r]
		}
		bin.Count = j - i
		bin.MeanPredicted, bin.Observed = sp/float64(bin.Count), sy/float64(bin.Count)
		bin.Lo, bin.Hi = p[order[i]], p[order[j-1]]
		if !(bin.Lo < bin.Hi) {
			if bin.Hi < 1 {
				bin.Hi = math.Nextafter(bin.Hi, 2)
			} else {
				bin.Lo = math.Nextafter(bin.Lo, -1)
			}
		}
		i = j
	}
	for ; b < bins; b++ {
		out[b] = CalibrationBin{Lo: 0, Hi: 1}
	}
	return out
}
