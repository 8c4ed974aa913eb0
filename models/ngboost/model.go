package ngboost

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/gbm"
)

// Model is a fitted NGBoost model: the initial parameters and, per parameter, the
// trees of every kept iteration, already multiplied by -learning_rate·scale, so that
//
//	loc(x)       = init[0] + Σ trees[0](x)
//	log scale(x) = init[1] + Σ trees[1](x).
//
// A *Model is immutable and safe for concurrent use.
type Model struct {
	family Family
	init   [2]float64
	trees  [2][]*gbm.Tree
	ens    [2]*gbm.Model // the same trees, for the artifact
	// both holds the trees of the two parameters interleaved (iteration i's trees at
	// 2i and 2i+1) as one model with two outputs, so that prediction walks them in
	// one pass over the rows; see predictor. For a one-parameter family (the
	// Exponential) it holds that parameter's trees, and trees[1] is empty.
	both         *gbm.Model
	featureNames []string
	nFeatures    int
	info         FitInfo
}

// FitInfo records how a model was fitted.
type FitInfo struct {
	// Config is the configuration with defaults filled in (without Progress and
	// FeatureNames).
	Config Config
	// Scalings are the line-search scales of the kept iterations.
	Scalings []float64
	// TrainScore is the mean training score before each iteration that ran.
	TrainScore []float64
	// ValScore is the mean validation score after each iteration that ran; nil without
	// a validation set.
	ValScore []float64
	// BestIteration is the 0-based iteration with the lowest validation score, -1
	// without a validation set.
	BestIteration int
	// Refit reports that the model was fitted again on all rows after early stopping;
	// ValScore and BestIteration are then those of the run on the training part, and
	// TrainScore that of the refit.
	Refit bool
}

// assemble builds the gbm models of the trees and fills in the feature names.
func (m *Model) assemble() error {
	if m.featureNames == nil {
		m.featureNames = make([]string, m.nFeatures)
		for i := range m.featureNames {
			m.featureNames[i] = fmt.Sprintf("Column_%d", i)
		}
	}
	for k := range m.family.nParams() {
		e, err := gbm.NewModel(m.trees[k], m.featureNames, "regression")
		if err != nil {
			return fmt.Errorf("ngboost: assembling the trees of parameter %d: %w", k, err)
		}
		m.ens[k] = e
	}
	return m.predictor()
}

// predictor builds m.both from m.trees.
func (m *Model) predictor() error {
	n := len(m.trees[0])
	if m.family.nParams() == 1 {
		if len(m.trees[1]) != 0 {
			return fmt.Errorf("ngboost: %d trees for the unused second parameter of the %v: %w", len(m.trees[1]), m.family, ErrFormat)
		}
		b, err := gbm.NewModel(m.trees[0], m.featureNames, "regression")
		if err != nil {
			return fmt.Errorf("ngboost: assembling the trees: %w", err)
		}
		m.both = b
		return nil
	}
	if len(m.trees[1]) != n {
		return fmt.Errorf("ngboost: %d trees for loc and %d for log scale: %w", n, len(m.trees[1]), ErrFormat)
	}
	inter := make([]*gbm.Tree, 0, 2*n)
	for i := range n {
		inter = append(inter, m.trees[0][i], m.trees[1][i])
	}
	// A two-class objective only sets the number of outputs per row: Model.both is
	// used through PredictRaw and AddRawRow, which apply no link.
	b, err := gbm.NewModel(inter, m.featureNames, "multiclass num_class:2")
	if err != nil {
		return fmt.Errorf("ngboost: assembling the trees: %w", err)
	}
	m.both = b
	return nil
}

// Family returns the distribution family of the predictions.
func (m *Model) Family() Family { return m.family }

// NFeatures returns the number of input columns.
func (m *Model) NFeatures() int { return m.nFeatures }

// FeatureNames returns the names of the input columns.
func (m *Model) FeatureNames() []string { return slices.Clone(m.featureNames) }

// NIterations returns the number of boosting iterations the model kept.
func (m *Model) NIterations() int { return len(m.trees[0]) }

// InitParams returns the initial boosted parameters, fitted to the marginal: (loc, log
// scale), (log scale, 0) for the Exponential and (log α, log β) for the Gamma.
func (m *Model) InitParams() [2]float64 { return m.init }

// Info returns how the model was fitted.
func (m *Model) Info() FitInfo {
	i := m.info
	i.Scalings = slices.Clone(i.Scalings)
	i.TrainScore = slices.Clone(i.TrainScore)
	i.ValScore = slices.Clone(i.ValScore)
	return i
}

// PredictParams writes the boosted parameters (loc, log scale) of every row of x into
// dst, row-major (dst[2i] = loc, dst[2i+1] = log scale of row i), and returns it; for
// the Exponential (log scale, 0) and for the Gamma (log α, log β). A nil
// dst is allocated; a dst of the wrong length, or x with the wrong number of columns,
// panics.
func (m *Model) PredictParams(dst []float64, x mat.Matrix) []float64 {
	r, c := x.Dims()
	if c != m.nFeatures {
		panic(errFeatureCount)
	}
	if dst == nil {
		dst = make([]float64, 2*r)
	}
	if len(dst) != 2*r {
		panic(errDstLength)
	}
	if r == 0 {
		return dst
	}
	if m.family.nParams() == 1 {
		raw := m.both.PredictRaw(nil, x)
		for i, v := range raw {
			dst[2*i], dst[2*i+1] = m.init[0]+v, m.init[1]
		}
		return dst
	}
	m.both.PredictRaw(dst, x)
	for i := 0; i < len(dst); i += 2 {
		dst[i] = m.init[0] + dst[i]
		dst[i+1] = m.init[1] + dst[i+1]
	}
	return dst
}

// Predict writes the mean and the standard deviation of the predicted distribution of
// Y for every row of x into dst, row-major (dst[2i] = mean, dst[2i+1] = standard
// deviation of row i), in the units of the target, for both families. A nil dst is
// allocated; a dst of the wrong length, or x with the wrong number of columns, panics.
func (m *Model) Predict(dst []float64, x mat.Matrix) []float64 {
	dst = m.PredictParams(dst, x)
	for i := 0; i < len(dst); i += 2 {
		d := distOf(m.family, [2]float64{dst[i], dst[i+1]})
		dst[i], dst[i+1] = d.Mean(), d.StdDev()
	}
	return dst
}

// PredictDist returns the predicted distribution of every row of x. It panics if x
// has the wrong number of columns.
func (m *Model) PredictDist(x mat.Matrix) []Dist {
	p := m.PredictParams(nil, x)
	out := make([]Dist, len(p)/2)
	for i := range out {
		out[i] = distOf(m.family, [2]float64{p[2*i], p[2*i+1]})
	}
	return out
}

// PredictRow returns the predicted distribution of one row of raw feature values (NaN
// = missing), without allocating. It panics if row has the wrong length.
func (m *Model) PredictRow(row []float64) Dist {
	if len(row) != m.nFeatures {
		panic(errFeatureCount)
	}
	p := m.init
	m.both.AddRawRow(p[:m.family.nParams()], row)
	return distOf(m.family, p)
}

// Panic messages for misuse by the caller.
const (
	errDstLength    = "ngboost: dst length mismatch"
	errFeatureCount = "ngboost: feature count mismatch"
)

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
