package gbm

// SplitGains returns, for every feature, the sum of the gains of the splits on it over
// all trees: LightGBM's "gain" feature importance (feature_importance(importance_type=
// "gain"); GBDT::FeatureImportance adds only splits with gain > 0). A tree read from a
// file without split_gain adds nothing. The gain of a split is the decrease of the
// second-order loss, Σ_children G²/(H+λ) - G²/(H+λ) over the node's rows, as grown.
func (m *Model) SplitGains() []float64 {
	gains := make([]float64, m.nFeatures)
	for _, t := range m.trees {
		if t.splitGain == nil {
			continue
		}
		for j := range t.nodes {
			if g := t.splitGain[j]; g > 0 {
				gains[t.nodes[j].feature] += g
			}
		}
	}
	return gains
}
