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
