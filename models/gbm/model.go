package gbm

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"gonum.org/v1/gonum/mat"
)

// Model is an ensemble of regression trees with an output transform: a model fitted by
// Fit, assembled by NewModel or read from a LightGBM text file. The raw score of a row
// is the sum of its trees' leaf values (per class for multiclass models, whose trees
// are interleaved by class); Predict applies the objective's link. A Model is
// immutable and safe for concurrent use.
type Model struct {
	trees        []*Tree
	nClasses     int // trees per iteration
	nFeatures    int
	featureNames []string
	// featureInfos is LightGBM's feature_infos header (value ranges or categories),
	// kept for the writer; nil when unknown.
	featureInfos  []string
	obj           objective
	averageOutput bool // random-forest models: Predict averages the trees before the link
	// params are the "[key: value]" lines of the parameters section, kept for the writer.
	params []string
	// cfg is the configuration Fit used, defaults filled in; zero for other models.
	cfg Config
	// pandasCategorical is the "pandas_categorical:..." line the Python package adds
	// to files it saves, kept for the writer; "" when absent.
	pandasCategorical string
	// flat is the compiled form of trees that prediction walks; nil when a tree has
	// a split it does not cover (categorical, missing type Zero).
	flat *flatModel
	// shallow is the form of flat for trees of depth at most 3 on at most 256
	// features; nil otherwise.
	shallow *shallowModel
	// fitScore holds the raw scores of the training rows as Fit left them, for
	// TrainingPredictions; nil for other models.
	fitScore []float64
}

// TrainingPredictions returns what Predict gives for the training rows of a model
// that Fit made in this process, from the raw scores Fit kept up to date tree by tree,
// without walking the trees again (at 1M rows and 100 trees that walk takes a second).
// It is nil for a model read from a file or assembled by NewModel, and when early
// stopping dropped trees after the best round.
func (m *Model) TrainingPredictions() []float64 {
	if m.fitScore == nil {
		return nil
	}
	p := slices.Clone(m.fitScore)
	k := m.nClasses
	for i := 0; i+k <= len(p); i += k {
		m.obj.transform(p[i : i+k])
	}
	return p
}

// NewModel assembles trees into a model. The trees must already be scaled by their
// learning rate, and for a multiclass objective ("multiclass num_class:K") be
// interleaved by class (tree i belongs to class i mod K). featureNames names the input
// columns; nil means "Column_0", "Column_1", ... for as many columns as the trees were
// grown on (LightGBM's default names). objective is a LightGBM objective string:
// "regression" (identity link), "binary" (sigmoid), "poisson", "multiclass num_class:3",
// ..., or "" for a custom objective, whose predictions are the raw scores.
func NewModel(trees []*Tree, featureNames []string, objective string) (*Model, error) {
	obj, err := parseObjective(objective)
	if err != nil {
		return nil, err
	}
	m := &Model{trees: slices.Clone(trees), nClasses: obj.nClass, obj: obj}
	if len(trees)%m.nClasses != 0 {
		return nil, fmt.Errorf("%w: %d trees is not a multiple of %d classes", ErrFormat, len(trees), m.nClasses)
	}
	need := 0
	for _, t := range trees {
		need = max(need, t.maxFeature()+1, t.nFeatures)
	}
	if featureNames == nil {
		featureNames = make([]string, need)
		for i := range featureNames {
			featureNames[i] = "Column_" + strconv.Itoa(i)
		}
	}
	if len(featureNames) < need {
		return nil, fmt.Errorf("%w: %d feature names for trees that use %d features", ErrFormat, len(featureNames), need)
	}
	for i, n := range featureNames {
		// The text format separates names by spaces.
		if n == "" || strings.ContainsFunc(n, unicode.IsSpace) {
			return nil, fmt.Errorf("%w: feature name %d (%q) is empty or contains white space", ErrBadConfig, i, n)
		}
	}
	m.featureNames = slices.Clone(featureNames)
	m.nFeatures = len(featureNames)
	m.compile()
	return m, nil
}

// Config returns the configuration the model was fitted with, defaults filled in (a
// NumThreads of 0 means all cores); the zero Config for a model read from a file or
// assembled by NewModel.
func (m *Model) Config() Config {
	c := m.cfg
	c.FeatureNames = slices.Clone(c.FeatureNames)
	return c
}

// NFeatures returns the number of input columns the model expects.
func (m *Model) NFeatures() int { return m.nFeatures }

// NClasses returns the number of outputs per row: the number of classes of a
// multiclass model, 1 otherwise.
func (m *Model) NClasses() int { return m.nClasses }

// NTrees returns the number of trees, over all classes.
func (m *Model) NTrees() int { return len(m.trees) }

// FeatureNames returns a copy of the names of the input columns.
func (m *Model) FeatureNames() []string { return slices.Clone(m.featureNames) }

// Objective returns the model's objective string as in the LightGBM text format, such
// as "binary sigmoid:1"; "" for a custom objective.
func (m *Model) Objective() string { return m.obj.text }

// Tree returns tree i.
func (m *Model) Tree(i int) *Tree { return m.trees[i] }

// PredictRaw writes the raw scores (sums of leaf values) of the rows of x into dst and
// returns it: NRows values, or NRows·NClasses for a multiclass model, row-major. A nil
// dst is allocated; a dst of the wrong length, or x without NFeatures columns, panics.
// Large batches are split over GOMAXPROCS goroutines; a single row with a dst and x a
// *mat.Dense does not allocate.
func (m *Model) PredictRaw(dst []float64, x mat.Matrix) []float64 {
	return m.predict(dst, x, false)
}

// Predict is PredictRaw followed by the objective's link: probabilities for binary and
// cross_entropy (sigmoid) and multiclass (softmax) models, exp of the raw score for
// poisson, gamma and tweedie, the raw score for regression. For a random-forest model
// (average_output) the raw score is divided by the number of iterations before the
// link, as LightGBM's GBDT::Predict does.
func (m *Model) Predict(dst []float64, x mat.Matrix) []float64 {
	return m.predict(dst, x, true)
}

// PredictLeaf writes, for every row of x and every tree, the index of the leaf the row
// falls into (NRows·NTrees values, row-major, trees in model order) into dst and
// returns it. A nil dst is allocated; a wrong length panics.
func (m *Model) PredictLeaf(dst []int, x mat.Matrix) []int {
	r, c := x.Dims()
	if c != m.nFeatures {
		panic(errFeatureCount)
	}
	nt := len(m.trees)
	if dst == nil {
		dst = make([]int, r*nt)
	}
	if len(dst) != r*nt {
		panic(errDstLength)
	}
	work := func(lo, hi int, buf []float64) {
		var rows [predictBatchRows][]float64
		for b := lo; b < hi; b += predictBatchRows {
			block := rows[:min(hi, b+predictBatchRows)-b]
			fillRows(block, x, b, buf)
			for i, row := range block {
				out := dst[(b+i)*nt : (b+i+1)*nt]
				for j, t := range m.trees {
					out[j] = int(t.leaf(row))
				}
			}
		}
	}
	if !parallelRows(r) {
		work(0, r, rowBuffer(x))
		return dst
	}
	forBatches(x, work)
	return dst
}

// predictBatchRows is the number of rows one worker takes at a time, and batches below
// two of them run in the caller's goroutine (the pattern of leaves' PredictDense).
const predictBatchRows = 64

func (m *Model) predict(dst []float64, x mat.Matrix, transform bool) []float64 {
	r, c := x.Dims()
	if c != m.nFeatures {
		panic(errFeatureCount)
	}
	k := m.nClasses
	if dst == nil {
		dst = make([]float64, r*k)
	}
	if len(dst) != r*k {
		panic(errDstLength)
	}
	if !parallelRows(r) {
		// The caller's goroutine, with no closure, so that one row allocates nothing.
		m.predictRows(dst, x, 0, r, rowBuffer(x), transform)
		return dst
	}
	forBatches(x, func(lo, hi int, buf []float64) {
		m.predictRows(dst, x, lo, hi, buf, transform)
	})
	return dst
}

// predictRows predicts rows [lo, hi) of x into dst; buf is a buffer of
// predictBatchRows rows for matrices that cannot lend their rows. It goes through the
// rows in blocks of predictBatchRows with the trees in the outer loop, so that each
// tree's nodes stay in the L1 cache while it routes the block's rows; each row still
// adds its trees' values in model order starting from 0, as LightGBM's
// GBDT::PredictRaw does, so the sums agree to the bit.
func (m *Model) predictRows(dst []float64, x mat.Matrix, lo, hi int, buf []float64, transform bool) {
	k := m.nClasses
	var rows [predictBatchRows][]float64
	raw, dense := x.(mat.RawMatrixer)
	for b := lo; b < hi; b += predictBatchRows {
		e := min(hi, b+predictBatchRows)
		out := dst[b*k : e*k]
		clear(out)
		if m.flat != nil {
			// The block's rows as one slice with a stride: the matrix's own data,
			// or a copy in buf.
			var data []float64
			stride := m.nFeatures
			if dense {
				r := raw.RawMatrix()
				data, stride = r.Data[b*r.Stride:], r.Stride
			} else if cv, ok := x.(mat.RawColViewer); ok {
				// A column-major matrix (columnar.Matrix): gather the block's rows
				// column by column.
				data = buf[:(e-b)*stride]
				for j := range stride {
					for i, v := range cv.RawColView(j)[b:e] {
						data[i*stride+j] = v
					}
				}
			} else {
				data = buf[:(e-b)*stride]
				for i := range e - b {
					for j := range stride {
						data[i*stride+j] = x.At(b+i, j)
					}
				}
			}
			nf := m.nFeatures
			switch {
			case e-b < 4:
				for i := range e - b {
					m.addRawRow(out[i*k:(i+1)*k], data[i*stride:i*stride+nf])
				}
			case m.shallow != nil && !nonFinite(data, stride, e-b, nf):
				m.shallow.addBlock(out, data, stride, e-b, nf, k)
			default:
				m.flat.addBlock(out, data, stride, e-b, nf, k)
			}
		} else {
			block := rows[:e-b]
			fillRows(block, x, b, buf)
			if k == 1 {
				for _, t := range m.trees {
					for i, row := range block {
						out[i] += t.leafValues[t.leaf(row)]
					}
				}
			} else {
				for j, t := range m.trees {
					for i, row := range block {
						out[i*k+j%k] += t.leafValues[t.leaf(row)]
					}
				}
			}
		}
		if transform && m.averageOutput {
			// LightGBM's GBDT::Predict divides by the number of iterations before the
			// link; its PredictRaw does not, and neither does ours.
			n := float64(len(m.trees) / k)
			for i := range out {
				out[i] /= n
			}
		}
		if transform {
			for i := range e - b {
				m.obj.transform(out[i*k : (i+1)*k])
			}
		}
	}
}

// PredictRawRow writes the raw scores of one row of raw feature values (NaN =
// missing) into dst, NClasses values, and returns it: the sums of the trees' leaf
// values, as PredictRaw gives for the row, without a matrix and without allocating. A
// nil dst is allocated; a dst of the wrong length, or a row without NFeatures values,
// panics.
func (m *Model) PredictRawRow(dst, row []float64) []float64 {
	if dst == nil {
		dst = make([]float64, m.nClasses)
	}
	if len(dst) != m.nClasses {
		panic(errDstLength)
	}
	clear(dst)
	m.AddRawRow(dst, row)
	return dst
}

// AddRawRow adds the leaf values of every tree for one row of raw feature values
// (NaN = missing) to dst, tree by tree in model order (tree j to dst[j mod
// NClasses]), so that starting from dst = c gives ((c + tree 0) + tree 1) + ... It
// does not allocate. A dst without NClasses values, or a row without NFeatures
// values, panics.
func (m *Model) AddRawRow(dst, row []float64) {
	if len(row) != m.nFeatures {
		panic(errFeatureCount)
	}
	k := m.nClasses
	if len(dst) != k {
		panic(errDstLength)
	}
	m.addRawRow(dst, row)
}

// addRawRow is AddRawRow without the checks.
func (m *Model) addRawRow(dst, row []float64) {
	k := m.nClasses
	switch {
	case m.shallow != nil && !nonFinite(row, 0, 1, len(row)):
		m.shallow.addRow(dst, row, k)
	case m.flat != nil:
		m.flat.addRow(dst, row, k)
	default:
		for j, t := range m.trees {
			dst[j%k] += t.leafValues[t.leaf(row)]
		}
	}
}

// compile sets the compiled forms of the trees that prediction walks.
func (m *Model) compile() {
	m.flat = compile(m.trees)
	m.shallow = compileShallow(m.flat, m.nFeatures)
}

// parallelRows reports whether r rows are worth splitting over goroutines: at least two
// batches and more than one usable processor.
func parallelRows(r int) bool {
	return r >= 2*predictBatchRows && runtime.GOMAXPROCS(0) > 1
}

// rowBuffer returns a buffer for predictBatchRows rows of x, nil when x is a matrix
// whose data prediction reads in place (mat.RawMatrixer, such as *mat.Dense).
func rowBuffer(x mat.Matrix) []float64 {
	if _, ok := x.(mat.RawMatrixer); ok {
		return nil
	}
	_, c := x.Dims()
	return make([]float64, predictBatchRows*c)
}

// fillRows sets rows[i] to row first+i of x: a view when x lends its data, else a copy
// in buf.
func fillRows(rows [][]float64, x mat.Matrix, first int, buf []float64) {
	if rm, ok := x.(mat.RawMatrixer); ok {
		r := rm.RawMatrix()
		for i := range rows {
			o := (first + i) * r.Stride
			rows[i] = r.Data[o : o+r.Cols]
		}
		return
	}
	_, c := x.Dims()
	for i := range rows {
		r := buf[i*c : (i+1)*c]
		for j := range r {
			r[j] = x.At(first+i, j)
		}
		rows[i] = r
	}
}

// forBatches splits the rows of x into batches of predictBatchRows and runs work on
// them from at most GOMAXPROCS workers (and at most one per batch), each with its own
// row buffer; work must write only the outputs of its rows. This is the pattern of
// leaves' PredictDense.
func forBatches(x mat.Matrix, work func(lo, hi int, buf []float64)) {
	r, _ := x.Dims()
	nBatches := (r + predictBatchRows - 1) / predictBatchRows
	workers := min(runtime.GOMAXPROCS(0), nBatches)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := rowBuffer(x)
			for {
				b := int(next.Add(1) - 1)
				if b >= nBatches {
					return
				}
				work(b*predictBatchRows, min(r, (b+1)*predictBatchRows), buf)
			}
		}()
	}
	wg.Wait()
}

// SplitCounts returns, for every feature, the number of splits on it over all trees:
// LightGBM's "split" feature importance.
func (m *Model) SplitCounts() []int {
	counts := make([]int, m.nFeatures)
	for _, t := range m.trees {
		for j := range t.nodes {
			counts[t.nodes[j].feature]++
		}
	}
	return counts
}
