package logistic

import (
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Model is a fitted logistic regression. It is immutable and safe for concurrent use.
type Model struct {
	names       []string
	mean, scale []float64
	w           []float64 // standardised coefficients, 0 for features not selected
	b           float64   // standardised intercept
	selected    []bool
	cfg         Config // with defaults filled in, FeatureNames nil
	stats       TrainStats

	// Derived for prediction: original-scale coefficients and intercept, and the
	// selected features in column order.
	beta   []float64
	beta0  float64
	active []int
	betaA  []float64 // beta[active]
	meanA  []float64 // mean[active]

	// lo and hi are the training range of each feature that Predict clips to
	// (Config.ClipToTrainingRange); nil when it does not clip.
	lo, hi []float64
}

// TrainStats summarises the final fit of a model.
type TrainStats struct {
	// Rows is the number of training rows.
	Rows int
	// Iterations is the number of optimiser iterations of the final fit.
	Iterations int
	// Converged reports whether the final fit met Config.Tol before Config.MaxIter.
	Converged bool
	// LogLoss is the training log loss (natural log), averaged with the sample weights
	// (not the class weights).
	LogLoss float64
}

// newModel assembles a model from its standardised parameters and derives the
// original-scale ones used by Predict.
func newModel(names []string, mean, scale, w []float64, b float64, selected []bool, cfg Config) *Model {
	m := &Model{names: names, mean: mean, scale: scale, w: w, b: b, selected: selected, cfg: cfg}
	m.beta = make([]float64, len(w))
	m.beta0 = b
	for j := range w {
		m.beta[j] = w[j] / scale[j]
		m.beta0 -= m.beta[j] * mean[j]
		if selected[j] {
			m.active = append(m.active, j)
			m.betaA = append(m.betaA, m.beta[j])
			m.meanA = append(m.meanA, mean[j])
		}
	}
	return m
}

// ClipRange returns copies of the training range [lo, hi] of each feature that Predict
// clips to, and nil, nil for a model that does not clip.
func (m *Model) ClipRange() (lo, hi []float64) { return slices.Clone(m.lo), slices.Clone(m.hi) }

// Unclipped returns m without clipping: the same coefficients, predicting on the raw
// inputs. It returns m itself when m does not clip.
func (m *Model) Unclipped() *Model {
	if m.lo == nil {
		return m
	}
	c := *m
	c.lo, c.hi = nil, nil
	c.cfg.ClipToTrainingRange = false
	return &c
}

// NFeatures returns the number of input columns the model expects.
func (m *Model) NFeatures() int { return len(m.names) }

// FeatureNames returns a copy of the names of the input columns, in order.
func (m *Model) FeatureNames() []string { return slices.Clone(m.names) }

// Config returns the configuration the model was fitted with, defaults filled in and
// without FeatureNames (see FeatureNames).
func (m *Model) Config() Config { return m.cfg }

// Stats returns the summary of the model's final fit.
func (m *Model) Stats() TrainStats { return m.stats }

// Converged reports whether the final fit met the tolerance; see TrainStats.
func (m *Model) Converged() bool { return m.stats.Converged }

// Intercept returns the intercept on the original scale of the inputs: the log-odds of
// a row whose inputs are all 0.
func (m *Model) Intercept() float64 { return m.beta0 }

// Coef is one feature's coefficient.
type Coef struct {
	// Name is the feature name.
	Name string
	// Value is the coefficient on the original scale: the change in log-odds per unit of
	// the input.
	Value float64
	// Standardised is the coefficient on the standardised scale: the change in log-odds
	// per standard deviation of the input, comparable between features.
	Standardised float64
	// Mean and Scale are the training mean (also the imputed value for NaN) and
	// standard deviation of the input.
	Mean, Scale float64
	// Selected is false for a feature removed by recursive feature elimination.
	Selected bool
}

// Coefficients returns every feature's coefficient, in column order.
func (m *Model) Coefficients() []Coef {
	cs := make([]Coef, len(m.names))
	for j := range cs {
		cs[j] = Coef{Name: m.names[j], Value: m.beta[j], Standardised: m.w[j],
			Mean: m.mean[j], Scale: m.scale[j], Selected: m.selected[j]}
	}
	return cs
}

// Coefficient returns the coefficient of the feature called name, and whether it exists.
func (m *Model) Coefficient(name string) (Coef, bool) {
	for j, n := range m.names {
		if n == name {
			return m.Coefficients()[j], true
		}
	}
	return Coef{}, false
}

// parallelRows is the batch size above which Predict splits the rows between
// goroutines; below it the goroutine start-up costs more than it saves.
const parallelRows = 1 << 14

// PredictRaw writes the log-odds log(p/(1-p)) of every row of x into dst and returns it.
// A nil dst is allocated; a dst whose length is not the number of rows, or an x whose
// column count is not NFeatures, panics. NaN inputs are replaced by the training mean.
func (m *Model) PredictRaw(dst []float64, x mat.Matrix) []float64 {
	return m.predict(dst, x, false)
}

// Predict writes the probability P(y=1) of every row of x into dst and returns it, with
// the conventions of PredictRaw.
func (m *Model) Predict(dst []float64, x mat.Matrix) []float64 {
	return m.predict(dst, x, true)
}

// predict checks the dimensions of x and dst, allocates a nil dst, and writes the
// margins (prob false) or probabilities (prob true) of the rows of x into it.
func (m *Model) predict(dst []float64, x mat.Matrix, prob bool) []float64 {
	r, c := x.Dims()
	if c != len(m.names) {
		panic("logistic: feature count mismatch")
	}
	if dst == nil {
		dst = make([]float64, r)
	} else if len(dst) != r {
		panic("logistic: dst length mismatch")
	}
	m.parallel(dst, asDense(x), prob)
	return dst
}

// asDense returns a row-major view of x, copying only matrices that have none. A
// *mat.Dense is checked first: a concrete type assertion is cheaper than the interface
// one, which matters for single-row calls.
func asDense(x mat.Matrix) dense {
	if d, ok := x.(*mat.Dense); ok {
		g := d.RawMatrix()
		return dense{rows: g.Rows, cols: g.Cols, stride: g.Stride, data: g.Data}
	}
	return rowMajor(x)
}

// parallel predicts rows of x into dst, splitting large batches over GOMAXPROCS workers
// that each write only their own part of dst.
func (m *Model) parallel(dst []float64, x dense, prob bool) {
	if x.rows < parallelRows {
		m.rows(dst, x, 0, x.rows, prob)
		return
	}
	workers := min(runtime.GOMAXPROCS(0), x.rows/(parallelRows/2))
	if workers <= 1 {
		m.rows(dst, x, 0, x.rows, prob)
		return
	}
	per := (x.rows + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < x.rows; lo += per {
		hi := min(lo+per, x.rows)
		wg.Go(func() { m.rows(dst, x, lo, hi, prob) })
	}
	wg.Wait()
}

// rows predicts rows lo0..hi0-1 of x into dst[lo0:hi0].
func (m *Model) rows(dst []float64, x dense, lo0, hi0 int, prob bool) {
	d := x.cols
	if m.lo != nil {
		// Clipping: NaN imputes the mean as below, other values are clamped to the
		// training range first.
		lo, hi := m.lo, m.hi
		for i := lo0; i < hi0; i++ {
			row := x.data[i*x.stride : i*x.stride+d]
			z := m.beta0
			for j, v := range row {
				switch {
				case v != v:
					v = m.mean[j]
				case v < lo[j]:
					v = lo[j]
				case v > hi[j]:
					v = hi[j]
				}
				z += m.beta[j] * v
			}
			dst[i] = z
		}
	} else if len(m.active) == d {
		for i := lo0; i < hi0; i++ {
			row := x.data[i*x.stride : i*x.stride+d]
			z := m.beta0 + dot(m.beta, row)
			if z != z {
				// NaN propagates through the sum, so only rows that hold a NaN (or
				// infinities that cancel) take the imputing loop.
				z = m.beta0
				for j, v := range row {
					if v != v {
						v = m.mean[j]
					}
					z += m.beta[j] * v
				}
			}
			dst[i] = z
		}
	} else {
		act, beta, mean := m.active, m.betaA, m.meanA[:len(m.betaA)]
		for i := lo0; i < hi0; i++ {
			row := x.data[i*x.stride : i*x.stride+d]
			z := m.beta0
			for k, j := range act {
				v := row[j]
				if v != v {
					v = mean[k]
				}
				z += beta[k] * v
			}
			dst[i] = z
		}
	}
	if prob {
		out := dst[lo0:hi0]
		for i, z := range out {
			out[i] = sigmoid(z)
		}
	}
}

// dot returns Σ beta[j]·row[j] with four accumulators, which breaks the dependency
// chain of floating-point additions so that the loop runs at load throughput.
func dot(beta, row []float64) float64 {
	beta = beta[:len(row)]
	var s0, s1, s2, s3 float64
	for len(row) >= 4 && len(beta) >= 4 {
		s0 += beta[0] * row[0]
		s1 += beta[1] * row[1]
		s2 += beta[2] * row[2]
		s3 += beta[3] * row[3]
		row, beta = row[4:], beta[4:]
	}
	for j, v := range row {
		s0 += beta[j] * v
	}
	return (s0 + s1) + (s2 + s3)
}

// sigmoid is 1/(1+e^-z), evaluated without overflow for either sign of z.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// weightedLogLoss is Σ sw_i ℓ_i / Σ sw_i of the model on x.
func (m *Model) weightedLogLoss(x dense, y, sw []float64) float64 {
	z := make([]float64, x.rows)
	m.parallel(z, x, false)
	var l, s float64
	for i, zi := range z {
		// log(1+e^z) - y z, stably.
		li := math.Max(zi, 0) + math.Log1p(math.Exp(-math.Abs(zi))) - y[i]*zi
		l += sw[i] * li
		s += sw[i]
	}
	return l / s
}
