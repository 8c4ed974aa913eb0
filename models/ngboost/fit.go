package ngboost

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/gbm"
)

// Fit fits an NGBoost model of the target y on the features x (NaN = missing), with
// row weights (nil = all 1), following the reference implementation:
//
//  1. every row starts at the maximum-likelihood parameters of the marginal of y;
//  2. each iteration draws MinibatchFrac of the rows and ColSample of the features,
//     computes the natural gradient of the score at each drawn row, and fits one
//     least-squares regression tree of depth MaxDepth per parameter to it;
//  3. a line search scales the trees' step: starting at 1, it doubles the scale while
//     the mean score of the batch does not get worse (up to 512), then halves it
//     until the score improves on the start (or the step's mean norm falls below Tol);
//  4. every row's parameters move by LearningRate·scale times the trees' outputs;
//  5. boosting ends after NEstimators iterations, or when the mean norm of the fitted
//     step falls below Tol.
//
// With EarlyStoppingRounds > 0, Fit holds out the last ValidationFraction of the rows,
// boosts on the others while tracking the validation score, stops EarlyStoppingRounds
// iterations after the best one and keeps the iterations up to the best; with Refit it
// then fits again on all rows for that many iterations.
func Fit(ctx context.Context, x mat.Matrix, y, weights []float64, cfg Config) (*Model, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r, _ := x.Dims()
	if cfg.EarlyStoppingRounds == 0 {
		return fitRun(ctx, x, y, weights, nil, nil, nil, cfg)
	}
	nVal := int(math.Round(cfg.ValidationFraction * float64(r)))
	if nVal < 1 || nVal >= r {
		return nil, fmt.Errorf("ngboost: validation_fraction %v of %d rows leaves no training or no validation rows: %w", cfg.ValidationFraction, r, ErrInvalidData)
	}
	nTrain := r - nVal
	xt, xv := rowSlice(x, 0, nTrain), rowSlice(x, nTrain, r)
	var wt, wv []float64
	if weights != nil {
		if len(weights) != r {
			return nil, fmt.Errorf("ngboost: %d weights for %d rows: %w", len(weights), r, ErrInvalidData)
		}
		wt, wv = weights[:nTrain], weights[nTrain:]
	}
	if len(y) != r {
		return nil, fmt.Errorf("ngboost: %d targets for %d rows: %w", len(y), r, ErrInvalidData)
	}
	m, err := fitRun(ctx, xt, y[:nTrain], wt, xv, y[nTrain:], wv, cfg)
	if err != nil || !cfg.Refit {
		return m, err
	}
	return refit(ctx, m, x, y, weights, cfg)
}

// FitValidate is Fit with an explicit validation set (xVal, yVal, wVal; nil wVal = all
// 1) instead of a held-out part of x. The validation score is tracked every iteration,
// boosting stops early when EarlyStoppingRounds > 0, and the model keeps the iterations
// up to the best validation score; with Refit it is then fitted again on the training
// and validation rows together for that many iterations. ValidationFraction is unused.
func FitValidate(ctx context.Context, x mat.Matrix, y, weights []float64, xVal mat.Matrix, yVal, wVal []float64, cfg Config) (*Model, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if xVal == nil {
		return nil, fmt.Errorf("ngboost: FitValidate without a validation matrix: %w", ErrInvalidData)
	}
	m, err := fitRun(ctx, x, y, weights, xVal, yVal, wVal, cfg)
	if err != nil || !cfg.Refit {
		return m, err
	}
	r, c := x.Dims()
	rv, cv := xVal.Dims()
	if c != cv {
		return nil, fmt.Errorf("ngboost: %d training and %d validation columns: %w", c, cv, ErrInvalidData)
	}
	all := mat.NewDense(r+rv, c, nil)
	all.Slice(0, r, 0, c).(*mat.Dense).Copy(x)
	all.Slice(r, r+rv, 0, c).(*mat.Dense).Copy(xVal)
	var w []float64
	if weights != nil || wVal != nil {
		w = append(orOnes(weights, r), orOnes(wVal, rv)...)
	}
	return refit(ctx, m, all, append(append([]float64(nil), y...), yVal...), w, cfg)
}

// refit fits on all rows for the number of iterations m kept, keeping m's validation
// history.
func refit(ctx context.Context, m *Model, x mat.Matrix, y, w []float64, cfg Config) (*Model, error) {
	cfg.NEstimators = m.NIterations()
	cfg.EarlyStoppingRounds = 0
	rm, err := fitRun(ctx, x, y, w, nil, nil, nil, cfg)
	if err != nil {
		return nil, fmt.Errorf("ngboost: refit on all rows: %w", err)
	}
	return refitted(rm, m), nil
}

// refitted returns rm, the refit on all rows, with the validation history of m, the
// early-stopped run that chose its number of iterations.
func refitted(rm, m *Model) *Model {
	rm.info.ValScore = m.info.ValScore
	rm.info.BestIteration = m.info.BestIteration
	rm.info.Refit = true
	// Record the configuration as given, not the refit's fixed iteration count.
	rm.info.Config = m.info.Config
	return rm
}

func orOnes(w []float64, n int) []float64 {
	if w != nil {
		return w
	}
	o := make([]float64, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

// rowSlice returns rows [lo, hi) of x.
func rowSlice(x mat.Matrix, lo, hi int) mat.Matrix {
	_, c := x.Dims()
	if s, ok := x.(interface {
		Slice(i, k, j, l int) mat.Matrix
	}); ok {
		return s.Slice(lo, hi, 0, c)
	}
	d := mat.NewDense(hi-lo, c, nil)
	for i := lo; i < hi; i++ {
		for j := range c {
			d.Set(i-lo, j, x.At(i, j))
		}
	}
	return d
}

// rowData is a set of rows prepared for boosting: features row-major, working targets
// (y, or log y for a LogNormal), weights and current parameters.
type rowData struct {
	n, p   int
	family Family
	// x holds the features row-major for walking the trees; nil for a training set
	// without a minibatch, whose rows' leaves come from the trees' growth.
	x []float64
	t []float64
	w []float64
	// jac is the term the LogNormal log score adds to the Normal one (log y; 0 for a
	// censored row); nil otherwise.
	jac []float64
	// cens marks the right-censored rows (see FitCensored); nil when none is.
	cens  []bool
	param [2][]float64
	// out holds the current iteration's tree outputs, one per row and parameter.
	out [2][]float64
}

// newRowData checks and prepares the rows x, y, w, cens of the set name; keepX keeps a
// copy of the features, for walking the trees.
func newRowData(name string, x mat.Matrix, y, w []float64, cens []bool, cfg Config, keepX bool) (*rowData, error) {
	n, p := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("ngboost: %s: %d targets for %d rows: %w", name, len(y), n, ErrInvalidData)
	}
	if cens != nil && len(cens) != n {
		return nil, fmt.Errorf("ngboost: %s: %d censoring flags for %d rows: %w", name, len(cens), n, ErrInvalidData)
	}
	nCens := 0
	for _, c := range cens {
		if c {
			nCens++
		}
	}
	if nCens > 0 && (cfg.Dist.durationFamily() || cfg.Score != LogScore) {
		return nil, fmt.Errorf("ngboost: %s: %d censored rows need dist normal or lognormal with score nll, not %v with %v: %w",
			name, nCens, cfg.Dist, cfg.Score, ErrInvalidConfig)
	}
	if w != nil && len(w) != n {
		return nil, fmt.Errorf("ngboost: %s: %d weights for %d rows: %w", name, len(w), n, ErrInvalidData)
	}
	if n == 0 {
		return nil, fmt.Errorf("ngboost: %s: no rows: %w", name, ErrInvalidData)
	}
	d := &rowData{n: n, p: p, family: cfg.Dist, t: make([]float64, n), w: make([]float64, n)}
	if keepX {
		d.x = make([]float64, n*p)
		for i := range n {
			row := d.x[i*p : (i+1)*p]
			if rd, ok := x.(mat.RawRowViewer); ok {
				copy(row, rd.RawRowView(i))
			} else {
				for j := range row {
					row[j] = x.At(i, j)
				}
			}
		}
	}
	if cfg.Dist == LogNormal && cfg.Score == LogScore {
		d.jac = make([]float64, n)
	}
	if nCens > 0 {
		d.cens = cens
	}
	for i, yi := range y {
		t, jac, ok := workingTarget(cfg.Dist, yi)
		if !ok || math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("ngboost: %s: target of row %d = %v is outside the support of the %v distribution: %w", name, i, yi, cfg.Dist, ErrInvalidData)
		}
		d.t[i] = t
		if d.jac != nil && (d.cens == nil || !d.cens[i]) {
			d.jac[i] = jac
		}
		d.w[i] = 1
		if w != nil {
			if !(w[i] >= 0) || math.IsInf(w[i], 0) {
				return nil, fmt.Errorf("ngboost: %s: weight of row %d = %v, want finite and >= 0: %w", name, i, w[i], ErrInvalidData)
			}
			d.w[i] = w[i]
		}
	}
	for k := range 2 {
		d.param[k] = make([]float64, n)
		d.out[k] = make([]float64, n)
	}
	return d, nil
}

// setParams sets every row's parameters to p.
func (d *rowData) setParams(p [2]float64) {
	for k := range 2 {
		for i := range d.param[k] {
			d.param[k][i] = p[k]
		}
	}
}

// predictTrees writes the outputs of the iteration's trees for every row into out,
// in two goroutines (each half of the rows) when there are rows enough to pay for it
// and threads allows two.
func (d *rowData) predictTrees(trees [2]*gbm.Tree, threads int) {
	work := func(lo, hi int) {
		t0, t1, o0, o1 := trees[0], trees[1], d.out[0], d.out[1]
		for i := lo; i < hi; i++ {
			row := d.x[i*d.p : (i+1)*d.p]
			o0[i] = t0.Predict(row)
			if t1 != nil {
				o1[i] = t1.Predict(row)
			}
		}
	}
	if d.n < parallelRows || threads < 2 {
		work(0, d.n)
		return
	}
	var wg sync.WaitGroup
	half := d.n / 2
	wg.Go(func() { work(half, d.n) })
	work(0, half)
	wg.Wait()
}

// treeOutputs writes the outputs of the iteration's trees for every training row into
// train.out: from the leaves GrowTreeLeaves reported for the batch rows, and by walking
// the trees for the rows outside the batch (a minibatch), whose parameters move too,
// in the two halves of splitRows. With one parameter (the Exponential) out[1] stays 0.
func (b *booster) treeOutputs(trees [2]*gbm.Tree) {
	d := b.train
	np := b.cfg.Dist.nParams()
	if b.batch == nil {
		for k := range np {
			t, out := trees[k], d.out[k]
			for i, l := range b.leafOf[k] {
				out[i] = t.LeafValue(int(l))
			}
		}
		return
	}
	// batch is sorted and without repeats: walk the rows in order, taking the batch
	// rows' leaves and predicting the others.
	b.splitRows(b.allRows(), func(part []int, _ int) float64 {
		next, _ := slices.BinarySearch(b.batch, part[0])
		for _, i := range part {
			if next < len(b.batch) && b.batch[next] == i {
				for k := range np {
					d.out[k][i] = trees[k].LeafValue(int(b.leafOf[k][i]))
				}
				next++
				continue
			}
			row := d.x[i*d.p : (i+1)*d.p]
			for k := range np {
				d.out[k][i] = trees[k].Predict(row)
			}
		}
		return 0
	})
}

// parallelRows is the number of rows from which predictTrees and splitRows split the
// rows in two halves.
const parallelRows = 2048

// meanScore returns the weighted mean score of rows (nil = all) at parameters
// param - step·out; sumW is the sum of their weights.
func (d *rowData) meanScore(r ScoreRule, rows []int, step, sumW float64) float64 {
	var s float64
	loc, ls, o0, o1 := d.param[0], d.param[1], d.out[0], d.out[1]
	if d.family.durationFamily() {
		return sumRows(d.n, rows, func(i int) float64 {
			sc, _, _ := durationScore(d.family, loc[i]-step*o0[i], ls[i]-step*o1[i], d.t[i])
			return d.w[i] * sc
		}) / sumW
	}
	if d.cens != nil {
		return sumRows(d.n, rows, func(i int) float64 {
			l, sc := loc[i]-step*o0[i], ls[i]-step*o1[i]
			if d.cens[i] {
				return d.w[i] * censoredLogScore(l, sc, d.t[i])
			}
			return d.w[i] * r.score(l, sc, d.t[i])
		})/sumW + d.jacMean(rows, sumW)
	}
	// The two loops differ only in the row index; keeping them separate keeps the hot
	// all-rows case of the log score free of an indirection.
	if rows == nil {
		for i := range d.n {
			s += d.w[i] * r.score(loc[i]-step*o0[i], ls[i]-step*o1[i], d.t[i])
		}
	} else {
		for _, i := range rows {
			s += d.w[i] * r.score(loc[i]-step*o0[i], ls[i]-step*o1[i], d.t[i])
		}
	}
	return s/sumW + d.jacMean(rows, sumW)
}

// sumRows returns the sum of f over rows, or over 0..n-1 when rows is nil.
func sumRows(n int, rows []int, f func(i int) float64) float64 {
	var s float64
	if rows == nil {
		for i := range n {
			s += f(i)
		}
		return s
	}
	for _, i := range rows {
		s += f(i)
	}
	return s
}

// score is the Normal score of the working target t at (loc, log scale ls).
func (r ScoreRule) score(loc, ls, t float64) float64 {
	if r == CRPScore {
		return normalCRPS(loc, ls, t)
	}
	return normalLogScore(loc, ls, t)
}

// booster is the state of one boosting run.
type booster struct {
	cfg   Config
	tree  gbm.TreeConfig
	ds    *gbm.Dataset
	train *rowData
	val   *rowData // nil without a validation set
	rng   *rand.Rand

	batch []int   // rows of this iteration, nil when MinibatchFrac is 1
	cols  []int   // features of this iteration, nil when ColSample is 1
	all   []int   // 0..n-1, see allRows
	sumW  float64 // the weight sum of all training rows, once sample has needed it
	// unitW is set when every training weight is 1: the row loops of the log score
	// then take the weight as the constant 1 instead of loading it (the same
	// arithmetic, since 1·x = x exactly, and 8 bytes less to read per row).
	unitW bool
	grad0 []float64
	grad1 []float64
	// hess is the trees' hessian of every row: its weight (the training weights
	// themselves).
	hess []float64
	// resid and invVar hold t - loc and exp(-2·log scale) of the batch rows for the
	// log-score line search; with fast set, invVar holds it for every row, kept up to
	// date by applyStep.
	resid  []float64
	invVar []float64
	// fast is set for the log score of the Normal and the LogNormal without censored
	// rows: applyStep keeps invVar up to date (gradients then takes no exp) and the line
	// search may sum the batch by leaf pair (see leafCells).
	fast bool
	// useCells reports that this iteration's line search reads cells.
	useCells bool
	// fuse is set when every iteration takes all rows and fast is set: then
	// stepAndGradients moves the parameters by an iteration's step and computes the
	// next iteration's gradients in one pass, and haveNext says that nextScore holds
	// the training score that pass returned for the next iteration.
	fuse, haveNext bool
	nextScore      float64
	cells          leafCells
	leafVals       [2][]float64
	cache          [2]expCache // one per splitRows half
	// threads is Config.NumThreads resolved (GOMAXPROCS for 0): the goroutines the
	// row loops and the trees may use.
	threads int
	// leafOf holds, per parameter, the leaf of the iteration's tree that each batch
	// row fell into while the tree was grown.
	leafOf [2][]int32
}

// treeConfig is the base learner of the reference, scikit-learn's
// DecisionTreeRegressor(max_depth=3, min_samples_leaf=1) fitted by least squares, as a
// models/gbm tree: every node above MaxDepth may split, down to single-row leaves.
func treeConfig(cfg Config) gbm.TreeConfig {
	return gbm.TreeConfig{MaxDepth: cfg.MaxDepth, NumLeaves: 1 << cfg.MaxDepth, MinDataInLeaf: 1, NumThreads: cfg.NumThreads}
}

func fitRun(ctx context.Context, x mat.Matrix, y, w []float64, xVal mat.Matrix, yVal, wVal []float64, cfg Config) (*Model, error) {
	return fitRunCensored(ctx, x, y, w, nil, xVal, yVal, wVal, nil, cfg)
}

// fitRunCensored is one boosting run on the training rows (x, y, w, cens) with an
// optional validation set; nil cens means no censored row.
func fitRunCensored(ctx context.Context, x mat.Matrix, y, w []float64, cens []bool, xVal mat.Matrix, yVal, wVal []float64, censVal []bool, cfg Config) (*Model, error) {
	b, err := newBooster(x, y, w, cens, xVal, yVal, wVal, censVal, cfg)
	if err != nil {
		return nil, err
	}
	return b.run(ctx, y, w)
}

// newBooster checks and bins the training rows and the optional validation set of
// fitRunCensored and returns the booster ready to run.
func newBooster(x mat.Matrix, y, w []float64, cens []bool, xVal mat.Matrix, yVal, wVal []float64, censVal []bool, cfg Config) (*booster, error) {
	train, err := newRowData("training set", x, y, w, cens, cfg, cfg.MinibatchFrac < 1)
	if err != nil {
		return nil, err
	}
	if cfg.FeatureNames != nil && len(cfg.FeatureNames) != train.p {
		return nil, fmt.Errorf("ngboost: %d feature names for %d columns: %w", len(cfg.FeatureNames), train.p, ErrInvalidConfig)
	}
	b := &booster{
		cfg:    cfg,
		tree:   treeConfig(cfg),
		train:  train,
		rng:    rand.New(rand.NewPCG(cfg.RandomState, 0x4e47426f6f7374)), // "NGBoost"
		grad0:  make([]float64, train.n),
		grad1:  make([]float64, train.n),
		hess:   train.w,
		fast:   cfg.Score == LogScore && !cfg.Dist.durationFamily() && train.cens == nil,
		resid:  make([]float64, train.n),
		invVar: make([]float64, train.n),
		leafOf: [2][]int32{make([]int32, train.n), make([]int32, train.n)},
	}
	b.fuse = b.fast && !(cfg.MinibatchFrac < 1)
	b.unitW = !slices.ContainsFunc(train.w, func(wi float64) bool { return wi != 1 })
	b.threads = cfg.NumThreads
	if b.threads == 0 {
		b.threads = runtime.GOMAXPROCS(0)
	}
	if xVal != nil {
		if b.val, err = newRowData("validation set", xVal, yVal, wVal, censVal, cfg, true); err != nil {
			return nil, err
		}
		if b.val.p != train.p {
			return nil, fmt.Errorf("ngboost: %d training and %d validation columns: %w", train.p, b.val.p, ErrInvalidData)
		}
	}
	if b.ds, err = gbm.NewDatasetThreads(x, cfg.MaxBin, nil, b.threads); err != nil {
		return nil, fmt.Errorf("ngboost: binning the training set: %w", err)
	}
	return b, nil
}

func (b *booster) run(ctx context.Context, y, w []float64) (*Model, error) {
	cfg, tr := b.cfg, b.train
	init, err := FitMarginalCensored(cfg.Dist, y, w, tr.cens)
	if err != nil {
		return nil, err
	}
	tr.setParams(init)
	if b.fast {
		v := math.Exp(-2 * init[1])
		for i := range b.invVar {
			b.invVar[i] = v
		}
	}
	var valSumW float64
	if b.val != nil {
		b.val.setParams(init)
		for _, wi := range b.val.w {
			valSumW += wi
		}
		if !(valSumW > 0) {
			return nil, fmt.Errorf("ngboost: validation set has no weight: %w", ErrInvalidData)
		}
	}
	m := &Model{
		family:       cfg.Dist,
		init:         init,
		featureNames: slices.Clone(cfg.FeatureNames),
		nFeatures:    tr.p,
		info:         FitInfo{Config: cfg, BestIteration: -1},
	}
	m.info.Config.Progress = nil
	m.info.Config.FeatureNames = nil
	var scaled [2][]*gbm.Tree
	bestVal := math.Inf(1)
	// lastAtBest is the last iteration whose validation score equals the best: the
	// reference stops when the last EarlyStoppingRounds scores are all worse than the
	// best, so a tie with the best postpones the stop.
	lastAtBest := -1
	for iter := range cfg.NEstimators {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ngboost: iteration %d: %w", iter, err)
		}
		sumW := b.sample()
		trainScore := b.nextScore
		if !b.haveNext {
			trainScore = b.gradients(sumW)
		}
		b.haveNext = false
		if !finite(trainScore) {
			return nil, fmt.Errorf("ngboost: iteration %d: training score is %v: %w", iter, trainScore, ErrInvalidData)
		}
		trees, err := b.growTrees()
		if err != nil {
			return nil, fmt.Errorf("ngboost: iteration %d, %w", iter, err)
		}
		b.useCells = b.fast && trees[0].NLeaves() <= maxLeaves && trees[1].NLeaves() <= maxLeaves
		if b.useCells {
			for k := range 2 {
				b.leafVals[k] = b.leafVals[k][:0]
				for j := range trees[k].NLeaves() {
					b.leafVals[k] = append(b.leafVals[k], trees[k].LeafValue(j))
				}
			}
			b.cells.fill(b, b.batch, b.leafOf, b.leafVals)
		}
		if !b.useCells || b.batch != nil {
			b.treeOutputs(trees)
		}
		scale, stepNorm := b.lineSearch(trainScore, sumW)
		step := cfg.LearningRate * scale
		if b.fuse && b.useCells {
			b.nextScore, b.haveNext = b.stepAndGradients(step, sumW), true
		} else {
			b.applyStep(step)
		}
		for k := range 2 {
			if trees[k] != nil {
				scaled[k] = append(scaled[k], trees[k].Scaled(-step))
			}
		}
		m.info.Scalings = append(m.info.Scalings, scale)
		m.info.TrainScore = append(m.info.TrainScore, trainScore)
		valScore := math.NaN()
		if v := b.val; v != nil {
			v.predictTrees(trees, b.threads)
			for k := range 2 {
				p, o := v.param[k], v.out[k]
				for i := range p {
					p[i] -= step * o[i]
				}
			}
			valScore = v.meanScore(cfg.Score, nil, 0, valSumW)
			m.info.ValScore = append(m.info.ValScore, valScore)
			if valScore < bestVal {
				bestVal, m.info.BestIteration = valScore, iter
			}
			if valScore <= bestVal {
				lastAtBest = iter
			}
		}
		if cfg.Progress != nil {
			cfg.Progress(iter, trainScore, valScore)
		}
		if b.val != nil && cfg.EarlyStoppingRounds > 0 && lastAtBest >= 0 && iter-lastAtBest >= cfg.EarlyStoppingRounds {
			break
		}
		if stepNorm < cfg.Tol {
			break
		}
	}
	keep := len(scaled[0])
	if b.val != nil {
		if m.info.BestIteration < 0 {
			return nil, fmt.Errorf("ngboost: validation score never finite: %w", ErrInvalidData)
		}
		keep = m.info.BestIteration + 1
	}
	for k := range cfg.Dist.nParams() {
		m.trees[k] = scaled[k][:keep:keep]
	}
	m.info.Scalings = m.info.Scalings[:keep:keep]
	if err := m.assemble(); err != nil {
		return nil, err
	}
	return m, nil
}

// sample draws the iteration's rows and features and returns the rows' weight sum.
func (b *booster) sample() float64 {
	tr, cfg := b.train, b.cfg
	b.batch = nil
	if cfg.MinibatchFrac < 1 {
		b.batch = sampleSorted(b.rng, b.batch[:0], tr.n, max(1, int(cfg.MinibatchFrac*float64(tr.n))))
	}
	b.cols = nil
	if cfg.ColSample < 1 {
		b.cols = sampleSorted(b.rng, b.cols[:0], tr.p, max(1, int(cfg.ColSample*float64(tr.p))))
	}
	var sumW float64
	if b.batch == nil {
		if b.sumW == 0 {
			for _, wi := range tr.w {
				b.sumW += wi
			}
		}
		sumW = b.sumW
	} else {
		for _, i := range b.batch {
			sumW += tr.w[i]
		}
	}
	return sumW
}

// sampleSorted appends k distinct integers drawn uniformly from [0, n) to dst, in
// increasing order (Knuth's selection sampling, TAOCP vol. 2, Algorithm S), so that
// the trees read their rows in memory order.
func sampleSorted(rng *rand.Rand, dst []int, n, k int) []int {
	for i := 0; i < n && k > 0; i++ {
		if rng.IntN(n-i) < k {
			dst = append(dst, i)
			k--
		}
	}
	return dst
}

// gradients fills grad0, grad1 and hess for the trees of the two parameters and
// returns the weighted mean score of the batch, in one pass with one exp per row. The
// trees fit the (natural) gradient g of each row by weighted least squares, which for
// the Newton leaves of models/gbm means gradient -w·g and hessian w. Rows outside the
// batch keep stale but finite values the trees do not read. For the log score it also
// stores t - loc and exp(-2·log scale) of each row for the line search.
func (b *booster) gradients(sumW float64) float64 {
	tr := b.train
	rows := b.batch
	if rows == nil {
		rows = b.allRows()
	}
	natural := !b.cfg.OrdinaryGradient
	loc, lsc, t, w := tr.param[0], tr.param[1], tr.t, tr.w
	if f := b.cfg.Dist; f.durationFamily() {
		sum := b.splitRows(rows, func(part []int, _ int) float64 {
			var sum float64
			for _, i := range part {
				s, g0, g1 := durationScore(f, loc[i], lsc[i], t[i])
				if natural {
					g0, g1 = durationNatural(f, loc[i], g0, g1)
				}
				sum += w[i] * s
				b.grad0[i], b.grad1[i] = -w[i]*g0, -w[i]*g1
			}
			return sum
		})
		return sum / sumW
	}
	if b.cfg.Score == CRPScore {
		sum := b.splitRows(rows, func(part []int, _ int) float64 {
			var sum float64
			for _, i := range part {
				e := math.Exp(lsc[i])
				d := t[i] - loc[i]
				z := d / e
				a := 2*stdNormalCDF(z) - 1
				s := e * (z*a + 2*stdNormalPDF(z) - invSqrtPi)
				g0, g1 := -a, s-d*a
				if natural {
					// diag(2, σ²)/(2√π), inverted
					g0 /= invSqrtPi
					g1 /= e * e * invSqrtPi / 2
				}
				sum += w[i] * s
				b.grad0[i], b.grad1[i] = -w[i]*g0, -w[i]*g1
			}
			return sum
		})
		return sum/sumW + tr.jacMean(b.batch, sumW)
	}
	cens, fast := tr.cens, b.fast
	sum := b.splitRows(rows, func(part []int, _ int) float64 {
		var sum float64
		for _, i := range part {
			ls := lsc[i]
			var v float64
			if fast {
				v = b.invVar[i]
			} else {
				v = math.Exp(-2 * ls)
				b.invVar[i] = v
			}
			d := t[i] - loc[i]
			if cens != nil && cens[i] {
				// -log Q(z), less the log√(2π) added to every row below.
				s, g0, g1 := censoredRow(d, ls, natural)
				sum += w[i] * (s - logSqrt2Pi)
				b.resid[i] = d
				b.grad0[i], b.grad1[i] = -w[i]*g0, -w[i]*g1
				continue
			}
			sum += b.normalRow(i, d, ls, v, w[i], natural)
		}
		return sum
	})
	return sum/sumW + logSqrt2Pi + tr.jacMean(b.batch, sumW)
}

// normalRow stores row i's residual d = t - loc and its two gradients of the log
// score of the Normal (and of the LogNormal's log) at log scale ls, with v =
// exp(-2·ls) and weight wi, and returns the row's weighted score less log√(2π).
func (b *booster) normalRow(i int, d, ls, v, wi float64, natural bool) float64 {
	z2 := d * d * v
	var g0, g1 float64
	if natural {
		// Fisher information diag(1/σ², 2), inverted
		g0, g1 = -d, (1-z2)/2
	} else {
		g0, g1 = -d*v, 1-z2
	}
	b.resid[i] = d
	b.grad0[i], b.grad1[i] = -wi*g0, -wi*g1
	return wi * (0.5*z2 + ls)
}

// splitRows returns fn(rows, 0) below parallelRows rows, and otherwise the sum
// fn(first half, 0) + fn(second half, 1), the halves computed in two goroutines when
// b.threads allows two and one after the other when not. The split and the order of
// the addition do not depend on the number of threads, so neither does the result.
func (b *booster) splitRows(rows []int, fn func(part []int, worker int) float64) float64 {
	if len(rows) < parallelRows {
		return fn(rows, 0)
	}
	half := len(rows) / 2
	if b.threads < 2 {
		return fn(rows[:half], 0) + fn(rows[half:], 1)
	}
	var s1 float64
	var wg sync.WaitGroup
	wg.Go(func() { s1 = fn(rows[half:], 1) })
	s0 := fn(rows[:half], 0)
	wg.Wait()
	return s0 + s1
}

// allRows returns 0, 1, ..., n-1 for the training rows, built once.
func (b *booster) allRows() []int {
	if len(b.all) != b.train.n {
		b.all = make([]int, b.train.n)
		for i := range b.all {
			b.all[i] = i
		}
	}
	return b.all
}

// jacMean returns the weighted mean of the LogNormal log-score term over rows (nil =
// all), 0 when there is none.
func (d *rowData) jacMean(rows []int, sumW float64) float64 {
	if d.jac == nil {
		return 0
	}
	var j float64
	if rows == nil {
		for i := range d.n {
			j += d.w[i] * d.jac[i]
		}
	} else {
		for _, i := range rows {
			j += d.w[i] * d.jac[i]
		}
	}
	return j / sumW
}

// batchScore returns the weighted mean score of the batch at parameters
// param - step·out. For the log score it avoids an exp per row: with the residual
// d = t - loc and v = exp(-2·log scale) stored by gradients, the score at the step is
// ½(d + step·out₀)²·v·exp(2·step·out₁) + log scale - step·out₁ + log√(2π), and out₁
// takes one value per leaf of the scale tree, so exp(2·step·out₁) comes from a small
// cache keyed by that value.
func (b *booster) batchScore(step, sumW, jac float64) float64 {
	tr := b.train
	if b.cfg.Score == CRPScore || b.cfg.Dist.durationFamily() || tr.cens != nil {
		return tr.meanScore(b.cfg.Score, b.batch, step, sumW)
	}
	rows := b.batch
	if rows == nil {
		rows = b.allRows()
	}
	o0, o1, ls, w, resid, iv := tr.out[0], tr.out[1], tr.param[1], tr.w, b.resid, b.invVar
	sum := b.splitRows(rows, func(part []int, worker int) float64 {
		c := &b.cache[worker]
		c.reset(2 * step)
		var sum float64
		for _, i := range part {
			d := resid[i] + step*o0[i]
			sum += w[i] * (0.5*d*d*iv[i]*c.exp(o1[i]) + ls[i] - step*o1[i])
		}
		return sum
	})
	return sum/sumW + logSqrt2Pi + jac
}

// expCache memoises exp(k·x) for the few distinct x of one tree's outputs: a
// direct-mapped table keyed by the bits of x.
type expCache struct {
	k    float64
	keys [256]uint64
	vals [256]float64
	set  [256]bool
}

func (c *expCache) reset(k float64) {
	c.k = k
	c.set = [256]bool{}
}

func (c *expCache) exp(x float64) float64 {
	bits := math.Float64bits(x)
	h := (bits * 0x9e3779b97f4a7c15) >> 56
	if c.set[h] && c.keys[h] == bits {
		return c.vals[h]
	}
	v := math.Exp(c.k * x)
	c.keys[h], c.vals[h], c.set[h] = bits, v, true
	return v
}

// lineSearch returns the reference's step scale for the trees' outputs and the mean
// norm of the unscaled step over the batch. init is the batch's score before the step.
func (b *booster) lineSearch(init, sumW float64) (scale, stepNorm float64) {
	tr, cfg := b.train, b.cfg
	norm := func(i int) float64 { return math.Hypot(tr.out[0][i], tr.out[1][i]) }
	if b.useCells {
		stepNorm = b.cells.stepNorm()
	} else if b.batch == nil {
		for i := range tr.n {
			stepNorm += norm(i)
		}
		stepNorm /= float64(tr.n)
	} else {
		for _, i := range b.batch {
			stepNorm += norm(i)
		}
		stepNorm /= float64(len(b.batch))
	}
	// Scores already computed, by scale: the scale-down loop starts where the
	// scale-up loop stopped and often revisits 1.
	var memo [12]struct{ scale, score float64 }
	nMemo := 0
	jac := tr.jacMean(b.batch, sumW)
	score := func(s float64) float64 {
		for _, e := range memo[:nMemo] {
			if e.scale == s {
				return e.score
			}
		}
		var v float64
		if b.useCells {
			v = b.cells.score(s, sumW) + logSqrt2Pi + jac
		} else {
			v = b.batchScore(s, sumW, jac)
		}
		if nMemo < len(memo) {
			memo[nMemo] = struct{ scale, score float64 }{s, v}
			nMemo++
		}
		return v
	}
	scale = 1
	for {
		v := score(scale)
		if !finite(v) || v > init || scale > 256 {
			break
		}
		scale *= 2
	}
	for {
		if scale*stepNorm < cfg.Tol {
			break
		}
		if v := score(scale); finite(v) && v < init {
			break
		}
		scale /= 2
	}
	return scale, stepNorm
}

// censoredRow returns the log score of a censored row with residual d = t - loc and
// log scale ls, and its gradient in (loc, log scale): the natural gradient under the
// uncensored Fisher information diag(1/σ², 2) when natural is set (see censored.go).
func censoredRow(d, ls float64, natural bool) (s, g0, g1 float64) {
	sigma := math.Exp(ls)
	z := d / sigma
	h := stdNormalHazard(z)
	s = -logStdNormalSF(z)
	if natural {
		return s, -h * sigma, -z * h / 2
	}
	return s, -h / sigma, -z * h
}
