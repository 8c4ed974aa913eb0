package ngboost

import (
	"fmt"
	"iter"

	"gonum.org/v1/gonum/mat"
)

// Truncate returns the model made of the first k boosting iterations of m (0 <= k <=
// NIterations): its predictions are m's staged predictions at iteration k, and equal
// those of the same fit run for k iterations (a fit's first k iterations do not depend
// on how many follow). k = 0 predicts the marginal fit. The result keeps m's fit
// history (Info) apart from the scalings, which it truncates too.
func (m *Model) Truncate(k int) (*Model, error) {
	n := m.NIterations()
	if k < 0 || k > n {
		return nil, fmt.Errorf("ngboost: iteration %d out of range: the model has %d iterations: %w", k, n, ErrInvalidConfig)
	}
	t := &Model{
		family:       m.family,
		init:         m.init,
		featureNames: m.featureNames,
		nFeatures:    m.nFeatures,
		info:         m.Info(),
	}
	for p := range m.family.nParams() {
		t.trees[p] = m.trees[p][:k:k]
	}
	t.info.Scalings = t.info.Scalings[:k:k]
	if err := t.assemble(); err != nil {
		return nil, err
	}
	return t, nil
}

// StagedParams returns an iterator over the boosted parameters of every row of x after
// each iteration: it yields (k, params) for k = 0 (the marginal fit) through
// NIterations, params row-major as PredictParams writes them. params is reused from
// one step to the next: copy it to keep it. One pass costs about as much as one
// PredictParams, so that the validation score of every iteration (the NGBoost paper
// picks the number of iterations by it) costs no more than the last. It panics if x
// has the wrong number of columns.
func (m *Model) StagedParams(x mat.Matrix) iter.Seq2[int, []float64] {
	r, c := x.Dims()
	if c != m.nFeatures {
		panic(errFeatureCount)
	}
	return func(yield func(int, []float64) bool) {
		rows := make([]float64, r*c)
		for i := range r {
			row := rows[i*c : (i+1)*c]
			if rv, ok := x.(mat.RawRowViewer); ok {
				copy(row, rv.RawRowView(i))
				continue
			}
			for j := range row {
				row[j] = x.At(i, j)
			}
		}
		// raw holds the sums of the trees alone, added in iteration order from 0 as
		// PredictParams adds them, so that stage k equals Truncate(k)'s prediction.
		raw := make([]float64, 2*r)
		params := make([]float64, 2*r)
		for k := 0; ; k++ {
			for i := 0; i < len(params); i += 2 {
				params[i], params[i+1] = m.init[0]+raw[i], m.init[1]+raw[i+1]
			}
			if !yield(k, params) || k == m.NIterations() {
				return
			}
			t0 := m.trees[0][k]
			for i := range r {
				raw[2*i] += t0.Predict(rows[i*c : (i+1)*c])
			}
			if m.family.nParams() == 2 {
				t1 := m.trees[1][k]
				for i := range r {
					raw[2*i+1] += t1.Predict(rows[i*c : (i+1)*c])
				}
			}
		}
	}
}

// StagedScore returns the weighted mean score (rule at the family of m) of the rows x,
// y with weights w (nil = all 1) after each iteration: NIterations+1 values, the first
// at the marginal fit. A LogNormal scores +Inf at y <= 0. It panics if x has the wrong
// number of columns or y or w the wrong length.
func (m *Model) StagedScore(rule ScoreRule, x mat.Matrix, y, w []float64) []float64 {
	r, _ := x.Dims()
	if len(y) != r || (w != nil && len(w) != r) {
		panic("ngboost: StagedScore: len(y) or len(w) != rows of x")
	}
	var sumW float64
	for i := range r {
		sumW += weightOf(w, i)
	}
	out := make([]float64, 0, m.NIterations()+1)
	for _, p := range m.StagedParams(x) {
		var s float64
		for i, yi := range y {
			s += weightOf(w, i) * rule.Score(m.family, [2]float64{p[2*i], p[2*i+1]}, yi)
		}
		out = append(out, s/sumW)
	}
	return out
}

func weightOf(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}
