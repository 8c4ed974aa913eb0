package ngboost

// SplitCounts returns, per boosted parameter in the family's order (loc and log scale
// for the Normal and the LogNormal, log scale for the Exponential, log shape and log
// rate for the Gamma), the number of splits on every feature over the trees of all
// iterations: LightGBM's "split" importance of each parameter's trees. The
// Exponential's unused second parameter has no splits (all zeros).
func (m *Model) SplitCounts() [2][]int {
	if m.family.nParams() == 1 {
		return [2][]int{m.ens[0].SplitCounts(), make([]int, m.nFeatures)}
	}
	return [2][]int{m.ens[0].SplitCounts(), m.ens[1].SplitCounts()}
}

// SplitGains returns, per boosted parameter in SplitCounts' order, the total gain of the
// splits on every feature over the trees of all iterations: LightGBM's "gain"
// importance of each parameter's trees. The trees fit each row's natural gradient by
// weighted least squares, so the gain of a split is the decrease, over the rows of the
// node (the minibatch's, when MinibatchFrac < 1), of the weighted sum of squared
// errors of that fit: the impurity decrease scikit-learn's feature_importances_ sums.
// The reference's feature_importances_ normalises it to 1 per tree and averages the
// trees weighted by their line-search scale; this sum weighs every split by its own
// gain, so that an iteration that fits more signal counts for more. The artifact keeps
// six significant digits of each gain (the LightGBM text), so a loaded model's gains
// match the fitted model's to about 1e-6 relative.
func (m *Model) SplitGains() [2][]float64 {
	if m.family.nParams() == 1 {
		return [2][]float64{m.ens[0].SplitGains(), make([]float64, m.nFeatures)}
	}
	return [2][]float64{m.ens[0].SplitGains(), m.ens[1].SplitGains()}
}
