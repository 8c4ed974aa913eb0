package gbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gonum.org/v1/gonum/mat"
)

// LightGBM's defaults for the boosting parameters (docs/Parameters.rst).
const (
	DefaultNumIterations = 100
	DefaultLearningRate  = 0.1
)

// Objectives Fit implements. Any other is a custom objective given by Config.Gradient.
const (
	ObjectiveRegression = "regression"    // squared error, identity link
	ObjectiveBinary     = "binary"        // log loss on labels 0 and 1, sigmoid link
	ObjectivePoisson    = "poisson"       // Poisson log likelihood on counts y >= 0, log link
	ObjectiveL1         = "regression_l1" // absolute error, identity link
	ObjectiveHuber      = "huber"         // Huber loss with threshold Alpha, identity link
	ObjectiveQuantile   = "quantile"      // pinball loss of quantile Alpha, identity link
)

// DefaultAlpha is LightGBM's alpha, the Huber threshold and the quantile.
const DefaultAlpha = 0.9

// DefaultPoissonMaxDeltaStep is LightGBM's poisson_max_delta_step.
const DefaultPoissonMaxDeltaStep = 0.7

// GradientFunc computes the gradient and hessian of a custom loss with respect to the
// raw score of each row: it fills grad and hess (one value per row, weights already
// applied) from the current raw scores, the targets y and the weights w (all 1 when
// Fit got nil weights). It is called once per iteration, never concurrently.
type GradientFunc func(grad, hess, score, y, w []float64)

// LossFunc returns the loss of raw scores score on targets y with weights w, lower is
// better. Early stopping evaluates it on the validation rows.
type LossFunc func(score, y, w []float64) float64

// Config holds the hyperparameters of Fit. Names follow LightGBM's parameters, and zero
// values mean LightGBM's defaults; ParseParams fills a Config from LightGBM parameter
// names and aliases.
type Config struct {
	// Objective is one of the Objective constants; "" means regression, or the
	// custom objective Gradient when that is set.
	Objective string
	// Gradient, when set, is a custom objective: Fit boosts on its gradients and
	// hessians from a zero initial score, and the model's predictions are raw scores.
	// Objective must then be "".
	Gradient GradientFunc
	// Loss is the loss of the custom objective, needed for early stopping with it.
	Loss LossFunc

	// NumIterations is the number of boosting rounds (trees); 0 means 100.
	NumIterations int
	// LearningRate scales every tree; 0 means 0.1.
	LearningRate float64
	// NumLeaves, MaxDepth, MinDataInLeaf, MinSumHessianInLeaf and LambdaL2 shape every
	// tree; see TreeConfig for their zero values (31, no limit, 20, 1e-3, 0).
	NumLeaves           int
	MaxDepth            int
	MinDataInLeaf       int
	MinSumHessianInLeaf float64
	LambdaL2            float64
	// MaxBin is the number of histogram bins per feature; 0 means 255 (the maximum).
	MaxBin int
	// FeatureFraction is the share of features each tree may split on, drawn anew for
	// every tree; 0 means 1 (all).
	FeatureFraction float64
	// BaggingFraction is the share of rows, drawn without replacement, that trees are
	// grown on; a new sample is drawn every BaggingFreq iterations. 0 means 1, and
	// BaggingFreq 0 means no bagging.
	BaggingFraction float64
	BaggingFreq     int
	// NumThreads is the number of goroutines; 0 means GOMAXPROCS.
	NumThreads int
	// Seed seeds feature and row sampling (0 is a seed like any other); the same seed,
	// data and parameters give the same model whatever the number of threads.
	Seed uint64
	// EarlyStoppingRound stops training when the validation loss (L2 for regression,
	// log loss for binary, Loss for a custom objective) has not improved for this many
	// rounds, and keeps the trees up to the best round. 0 means no early stopping; it
	// needs a validation set.
	EarlyStoppingRound int
	// FeatureNames names the columns of x; nil means Column_0, Column_1, ...
	FeatureNames []string

	// CategoricalFeature lists the columns of x that hold categories (LightGBM's
	// categorical_feature): non-negative integers, NaN and negative values missing.
	// Trees split them by sets of categories as LightGBM does; see
	// NewDatasetCategorical and the categorical fields of TreeConfig.
	CategoricalFeature []int
	// categoricalNames are categorical_feature=name:a,b from ParseParams, resolved
	// against FeatureNames by FitContext.
	categoricalNames []string
	// MaxCatToOnehot, CatSmooth, CatL2, MaxCatThreshold and MinDataPerGroup shape
	// categorical splits; see TreeConfig for their zero values (4, 10, 10, 32, 100).
	MaxCatToOnehot  int
	CatSmooth       float64
	CatL2           float64
	MaxCatThreshold int
	MinDataPerGroup int
	// LambdaL1, MinGainToSplit and MaxDeltaStep are LightGBM's lambda_l1,
	// min_gain_to_split and max_delta_step; see TreeConfig. 0 means none.
	LambdaL1       float64
	MinGainToSplit float64
	MaxDeltaStep   float64

	// ScalePosWeight multiplies the gradients and hessians of the positive rows of
	// the binary objective (LightGBM scale_pos_weight); 0 means 1.
	ScalePosWeight float64
	// IsUnbalance weights the binary objective's rarer class up by the ratio of the
	// class counts (LightGBM is_unbalance); not with ScalePosWeight.
	IsUnbalance bool
	// PoissonMaxDeltaStep is LightGBM's poisson_max_delta_step: the poisson hessian
	// is exp(score + it), which damps the first steps; 0 means 0.7.
	PoissonMaxDeltaStep float64
	// MonotoneConstraints holds -1, 0 or 1 per column (LightGBM monotone_constraints,
	// basic method); see TreeConfig. nil means none.
	MonotoneConstraints []int
	// Alpha is the threshold of the huber objective and the quantile of the quantile
	// objective (LightGBM alpha); 0 means 0.9.
	Alpha float64
}

// fitObjectives are the objectives Fit implements.
var fitObjectives = []string{ObjectiveRegression, ObjectiveBinary, ObjectivePoisson, ObjectiveL1, ObjectiveHuber, ObjectiveQuantile}

// renewsLeaves reports whether the objective replaces each leaf's value by a
// percentile of its rows' residuals after the tree is grown (LightGBM's
// RenewTreeOutput): the median for regression_l1, the alpha quantile for quantile.
func (c Config) renewsLeaves() bool {
	return c.Gradient == nil && (c.Objective == ObjectiveL1 || c.Objective == ObjectiveQuantile)
}

// percentileAlpha is the percentile renewsLeaves uses; the quantile objective keeps
// alpha as a float32 (score_t), as LightGBM's RegressionQuantileloss does.
func (c Config) percentileAlpha() float64 {
	if c.Objective == ObjectiveL1 {
		return 0.5
	}
	return float64(float32(c.Alpha))
}

// validate checks c and returns it with defaults filled in.
func (c Config) validate() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("%w: "+format, append([]any{ErrBadConfig}, args...)...)
	}
	switch {
	case c.Gradient != nil && c.Objective != "":
		return bad("objective=%q together with a custom gradient", c.Objective)
	case c.Gradient == nil && c.Objective == "":
		c.Objective = ObjectiveRegression
	case c.Gradient == nil && !slices.Contains(fitObjectives, c.Objective):
		return bad("objective=%q, want one of %s (or a custom gradient)", c.Objective, strings.Join(fitObjectives, ", "))
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	switch {
	case c.Objective == ObjectiveQuantile && !(c.Alpha > 0 && c.Alpha < 1):
		return bad("alpha=%v, the quantile, want in (0, 1)", c.Alpha)
	case !(c.Alpha > 0) || math.IsInf(c.Alpha, 0):
		return bad("alpha=%v, want > 0", c.Alpha)
	}
	if c.ScalePosWeight == 0 {
		c.ScalePosWeight = 1
	}
	if c.PoissonMaxDeltaStep == 0 {
		c.PoissonMaxDeltaStep = DefaultPoissonMaxDeltaStep
	}
	switch {
	case !(c.ScalePosWeight > 0) || math.IsInf(c.ScalePosWeight, 0):
		return bad("scale_pos_weight=%v, want > 0", c.ScalePosWeight)
	case c.IsUnbalance && c.ScalePosWeight != 1:
		return bad("is_unbalance together with scale_pos_weight=%v", c.ScalePosWeight)
	case (c.IsUnbalance || c.ScalePosWeight != 1) && c.Objective != ObjectiveBinary:
		return bad("is_unbalance and scale_pos_weight need objective=binary")
	case !(c.PoissonMaxDeltaStep > 0) || math.IsInf(c.PoissonMaxDeltaStep, 0):
		return bad("poisson_max_delta_step=%v, want > 0", c.PoissonMaxDeltaStep)
	}
	if c.NumIterations == 0 {
		c.NumIterations = DefaultNumIterations
	}
	if c.LearningRate == 0 {
		c.LearningRate = DefaultLearningRate
	}
	if c.FeatureFraction == 0 {
		c.FeatureFraction = 1
	}
	if c.BaggingFraction == 0 {
		c.BaggingFraction = 1
	}
	if c.MaxBin == 0 {
		c.MaxBin = DefaultMaxBin
	}
	switch {
	case c.NumIterations < 0:
		return bad("num_iterations=%d, want > 0", c.NumIterations)
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return bad("learning_rate=%v, want > 0", c.LearningRate)
	case !(c.FeatureFraction > 0 && c.FeatureFraction <= 1):
		return bad("feature_fraction=%v, want in (0, 1]", c.FeatureFraction)
	case !(c.BaggingFraction > 0 && c.BaggingFraction <= 1):
		return bad("bagging_fraction=%v, want in (0, 1]", c.BaggingFraction)
	case c.BaggingFreq < 0:
		return bad("bagging_freq=%d, want >= 0", c.BaggingFreq)
	case c.EarlyStoppingRound < 0:
		return bad("early_stopping_round=%d, want >= 0", c.EarlyStoppingRound)
	case c.NumThreads < 0:
		return bad("num_threads=%d, want >= 0", c.NumThreads)
	case c.MaxBin < 2 || c.MaxBin > 255:
		return bad("max_bin=%d, want 2..255", c.MaxBin)
	}
	for i, n := range c.FeatureNames {
		if n == "" || strings.ContainsFunc(n, unicode.IsSpace) {
			return bad("feature name %d (%q) is empty or contains white space", i, n)
		}
	}
	tc, err := c.treeConfig().withDefaults()
	if err != nil {
		return c, err
	}
	c.NumLeaves, c.MinDataInLeaf, c.MinSumHessianInLeaf = tc.NumLeaves, tc.MinDataInLeaf, tc.MinSumHessianInLeaf
	return c, nil
}

func (c Config) treeConfig() TreeConfig {
	return TreeConfig{
		NumLeaves:           c.NumLeaves,
		MaxDepth:            c.MaxDepth,
		MinDataInLeaf:       c.MinDataInLeaf,
		MinSumHessianInLeaf: c.MinSumHessianInLeaf,
		LambdaL2:            c.LambdaL2,
		NumThreads:          c.NumThreads,
		LambdaL1:            c.LambdaL1,
		MinGainToSplit:      c.MinGainToSplit,
		MaxDeltaStep:        c.MaxDeltaStep,
		MaxCatToOnehot:      c.MaxCatToOnehot,
		CatSmooth:           c.CatSmooth,
		CatL2:               c.CatL2,
		MaxCatThreshold:     c.MaxCatThreshold,
		MinDataPerGroup:     c.MinDataPerGroup,
		MonotoneConstraints: c.MonotoneConstraints,
		lightGBMCounts:      true,
	}
}

// Validation is a held-out data set for early stopping.
type Validation struct {
	X       mat.Matrix
	Y       []float64
	Weights []float64 // nil means all 1
}

// Fit trains a gradient-boosted tree model on the rows of x (NaN = missing) with
// targets y and weights (nil means all 1). It is FitContext without cancellation or
// validation set.
func Fit(x mat.Matrix, y, weights []float64, cfg Config) (*Model, error) {
	return FitContext(context.Background(), x, y, weights, cfg, nil)
}

// FitContext trains a model like LightGBM's gbdt boosting: the raw score starts at the
// weighted mean of y for regression and at its log-odds for binary (LightGBM's
// boost_from_average; 0 for a custom objective), each round grows one tree on the
// gradients and hessians at the current scores with GrowTree and adds it scaled by the
// learning rate; the initial score is folded into the first tree's leaves, as LightGBM
// does, so the model is the sum of its trees. With cfg.EarlyStoppingRound, training
// stops when the loss on valid stops improving; valid is not used otherwise. It returns ctx's error if
// ctx is cancelled between rounds.
func FitContext(ctx context.Context, x mat.Matrix, y, weights []float64, cfg Config, valid *Validation) (*Model, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	n, nf := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d targets for %d rows", ErrBadData, len(y), n)
	}
	w, err := checkTargets(y, weights, cfg.Objective)
	if err != nil {
		return nil, err
	}
	if cfg.FeatureNames != nil && len(cfg.FeatureNames) != nf {
		return nil, fmt.Errorf("%w: %d feature names for %d columns", ErrBadConfig, len(cfg.FeatureNames), nf)
	}
	if cfg.categoricalNames != nil {
		for _, name := range cfg.categoricalNames {
			k := slices.Index(cfg.FeatureNames, name)
			if k < 0 {
				return nil, fmt.Errorf("%w: categorical_feature names %q, which is not a feature name", ErrBadConfig, name)
			}
			cfg.CategoricalFeature = append(cfg.CategoricalFeature, k)
		}
		cfg.categoricalNames = nil
	}
	if cfg.renewsLeaves() && weights != nil {
		return nil, fmt.Errorf("%w: objective %s with row weights (LightGBM's weighted percentiles are not implemented)", ErrBadConfig, cfg.Objective)
	}
	if cfg.EarlyStoppingRound > 0 && valid == nil {
		return nil, fmt.Errorf("%w: early_stopping_round=%d needs a validation set", ErrBadConfig, cfg.EarlyStoppingRound)
	}
	if cfg.EarlyStoppingRound == 0 {
		valid = nil // the validation set serves early stopping only
	}
	if valid != nil && cfg.Gradient != nil && cfg.Loss == nil {
		return nil, fmt.Errorf("%w: early stopping with a custom gradient needs a Loss", ErrBadConfig)
	}
	var vw []float64
	if valid != nil {
		vr, vc := valid.X.Dims()
		if vc != nf || len(valid.Y) != vr {
			return nil, fmt.Errorf("%w: validation set has %d columns and %d targets for %d rows, want %d columns", ErrBadData, vc, len(valid.Y), vr, nf)
		}
		if vw, err = checkTargets(valid.Y, valid.Weights, cfg.Objective); err != nil {
			return nil, fmt.Errorf("validation set: %w", err)
		}
	}
	d, err := NewDatasetThreads(x, cfg.MaxBin, cfg.CategoricalFeature, cfg.NumThreads)
	if err != nil {
		return nil, err
	}
	obj := cfg.Objective
	if cfg.Gradient != nil {
		obj = ""
	}
	if obj == ObjectiveBinary {
		obj = "binary sigmoid:1"
	}
	tcfg, _ := cfg.treeConfig().withDefaults()

	b := newBooster(cfg, y, w)
	init := b.initScore()
	score := make([]float64, n)
	for i := range score {
		score[i] = init
	}
	// Out-of-bag rows are scored by prediction, which needs the raw rows.
	var rowsX func(int) []float64
	if cfg.BaggingFreq > 0 && cfg.BaggingFraction < 1 {
		rowsX = rowSource(x)
	}
	var vscore []float64
	var vrows func(int) []float64
	if valid != nil {
		vscore = make([]float64, len(valid.Y))
		for i := range vscore {
			vscore[i] = init
		}
		vrows = rowSource(valid.X)
	}

	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9b5d_1f3a_6c27_e408))
	grad, hess := make([]float64, n), make([]float64, n)
	leafOf := make([]int32, n)
	gr := &grower{d: d, pool: newWorkPool(tcfg.NumThreads)}
	defer gr.pool.close()
	inBag := make([]bool, n)
	var bag []int
	var trees []*Tree
	bestLoss, bestIter := math.Inf(1), 0
	cut := false // early stopping dropped the trees after the best round
	for it := 0; it < cfg.NumIterations; it++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("gbm: fit stopped after %d of %d trees: %w", it, cfg.NumIterations, err)
		}
		if cfg.Gradient != nil {
			b.gradients(grad, hess, score, 0) // called once per iteration, as documented
		} else {
			gr.rowChunks(n, tcfg.NumThreads, func(lo, hi int) {
				b.gradients(grad[lo:hi], hess[lo:hi], score[lo:hi], lo)
			})
		}
		if cfg.BaggingFreq > 0 && cfg.BaggingFraction < 1 && it%cfg.BaggingFreq == 0 {
			bag = sampleRows(rng, n, cfg.BaggingFraction, bag)
			clear(inBag)
			for _, r := range bag {
				inBag[r] = true
			}
		}
		feats := sampleFeatures(rng, nf, cfg.FeatureFraction)
		if cfg.Gradient == nil && zeroHessians(hess, bag) {
			// float32 hessians of a binary model that is sure of every row round to
			// 0: no split can be made, which ends training as below.
			if it == 0 {
				return nil, fmt.Errorf("%w: every hessian is 0 at the initial score", ErrBadData)
			}
			break
		}
		t, err := d.grow(gr, grad, hess, bag, feats, tcfg, leafOf)
		if err != nil {
			return nil, fmt.Errorf("gbm: tree %d: %w", it, err)
		}
		if t.NLeaves() == 1 && cfg.Gradient == nil {
			// LightGBM stops when a tree finds no split (GBDT::TrainOneIter), keeping
			// a first tree as the constant initial score.
			if it > 0 {
				break
			}
			t = t.Scaled(0)
		}
		if cfg.renewsLeaves() {
			t = b.renewLeaves(t, score, leafOf, bag)
		}
		t = t.Scaled(cfg.LearningRate)
		// delta is what the tree adds to the scores, which start at init.
		delta := t.leafValues
		if it == 0 && init != 0 {
			t = t.addBias(init)
		}
		trees = append(trees, t)
		// Update the training scores: grown rows by the leaf they were partitioned
		// into, out-of-bag rows by prediction.
		if bag == nil {
			gr.rowChunks(n, tcfg.NumThreads, func(lo, hi int) {
				for i, l := range leafOf[lo:hi] {
					score[lo+i] += delta[l]
				}
			})
		} else {
			for i := range score {
				if inBag[i] {
					score[i] += delta[leafOf[i]]
				} else {
					score[i] += delta[t.leaf(rowsX(i))] // rowsX may reuse one buffer
				}
			}
		}
		if valid != nil {
			for i := range vscore {
				vscore[i] += delta[t.leaf(vrows(i))]
			}
			loss := b.loss(vscore, valid.Y, vw)
			if loss < bestLoss {
				bestLoss, bestIter = loss, it+1
			} else if cfg.EarlyStoppingRound > 0 && it+1-bestIter >= cfg.EarlyStoppingRound {
				trees = trees[:bestIter]
				cut = true
				break
			}
		}
	}
	m, err := NewModel(trees, cfg.FeatureNames, obj)
	if err != nil {
		return nil, err
	}
	m.featureInfos = d.featureInfos()
	m.params = cfg.paramLines()
	m.cfg = cfg
	if !cut {
		m.fitScore = score
	}
	return m, nil
}

// zeroHessians reports whether every hessian of the rows in bag (nil: all rows) is 0.
func zeroHessians(hess []float64, bag []int) bool {
	if bag == nil {
		for _, h := range hess {
			if h != 0 {
				return false
			}
		}
		return true
	}
	for _, r := range bag {
		if hess[r] != 0 {
			return false
		}
	}
	return true
}

// checkTargets checks y and weights and returns the weights, all 1 for nil.
func checkTargets(y, weights []float64, objective string) ([]float64, error) {
	if len(y) == 0 {
		return nil, fmt.Errorf("%w: no rows", ErrBadData)
	}
	if weights != nil && len(weights) != len(y) {
		return nil, fmt.Errorf("%w: %d weights for %d rows", ErrBadData, len(weights), len(y))
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: target of row %d is %v", ErrBadData, i, v)
		}
		if objective == ObjectiveBinary && v != 0 && v != 1 {
			return nil, fmt.Errorf("%w: target of row %d is %v, binary needs 0 or 1", ErrBadData, i, v)
		}
		if objective == ObjectivePoisson && v < 0 {
			return nil, fmt.Errorf("%w: target of row %d is %v, poisson needs y >= 0", ErrBadData, i, v)
		}
	}
	if objective == ObjectivePoisson && !slices.ContainsFunc(y, func(v float64) bool { return v > 0 }) {
		return nil, fmt.Errorf("%w: poisson needs a target > 0 in some row", ErrBadData)
	}
	if weights == nil {
		w := make([]float64, len(y))
		for i := range w {
			w[i] = 1
		}
		return w, nil
	}
	sum := 0.0
	for i, v := range weights {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: weight of row %d is %v, want finite and >= 0", ErrBadData, i, v)
		}
		sum += v
	}
	if !(sum > 0) {
		return nil, fmt.Errorf("%w: weights sum to %v", ErrBadData, sum)
	}
	return weights, nil
}

// booster holds the objective of one Fit. Like LightGBM, which keeps labels and
// weights as float32 (label_t) and gradients and hessians as float32 (score_t), it
// rounds them to float32 where LightGBM does, so that its trees are LightGBM's.
type booster struct {
	cfg  Config
	y, w []float64
	// y32 and w32 are y and w rounded to float32, nil for a custom objective.
	y32, w32 []float64
	weighted bool
	// labelWeight multiplies the binary gradients of negative ([0]) and positive
	// ([1]) rows: is_unbalance and scale_pos_weight (BinaryLogloss::Init).
	labelWeight [2]float64
}

func newBooster(cfg Config, y, w []float64) *booster {
	b := &booster{cfg: cfg, y: y, w: w}
	if cfg.Gradient != nil {
		return b
	}
	b.y32, b.w32 = make([]float64, len(y)), make([]float64, len(w))
	var pos, neg int
	for i := range y {
		b.y32[i] = float64(float32(y[i]))
		b.w32[i] = float64(float32(w[i]))
		b.weighted = b.weighted || w[i] != 1
		if b.y32[i] > 0 {
			pos++
		} else {
			neg++
		}
	}
	b.labelWeight = [2]float64{1, 1}
	if cfg.IsUnbalance && pos > 0 && neg > 0 {
		if pos > neg {
			b.labelWeight[0] = float64(pos) / float64(neg)
		} else {
			b.labelWeight[1] = float64(neg) / float64(pos)
		}
	}
	b.labelWeight[1] *= cfg.ScalePosWeight
	return b
}

// initScore is LightGBM's BoostFromScore: the weighted mean of y for regression, the
// log-odds of the weighted mean for binary, 0 for a custom objective.
func (b *booster) initScore() float64 {
	if b.cfg.Gradient != nil {
		return 0
	}
	// LightGBM's BoostFromScore sums the float32 labels and weights in double.
	var sy, sw float64
	for i, v := range b.y32 {
		sy += b.w32[i] * v
		sw += b.w32[i]
	}
	if b.cfg.renewsLeaves() {
		// PercentileFun over the float32 labels, the result rounded to float32.
		return float64(float32(lgPercentile(slices.Clone(b.y32), b.cfg.percentileAlpha())))
	}
	mean := sy / sw
	if b.cfg.Objective == ObjectivePoisson {
		// Common::SafeLog of the mean.
		if !(mean > 0) {
			return math.Inf(-1)
		}
		return math.Log(mean)
	}
	if b.cfg.Objective == ObjectiveBinary {
		// LightGBM clips the mean away from 0 and 1 (kEpsilon = 1e-15).
		p := min(max(mean, 1e-15), 1-1e-15)
		return math.Log(p / (1 - p))
	}
	return mean
}

// gradients fills grad and hess at the raw scores score, for the rows from lo on: the
// slices start at row lo (Fit hands out chunks of rows to its pool). A custom
// objective takes all rows at once (lo = 0).
func (b *booster) gradients(grad, hess, score []float64, lo int) {
	y32, w32 := b.y32, b.w32
	if b.cfg.Gradient == nil {
		y32, w32 = y32[lo:lo+len(score)], w32[lo:lo+len(score)]
	}
	switch {
	case b.cfg.Gradient != nil:
		b.cfg.Gradient(grad, hess, score, b.y, b.w)
	case b.cfg.Objective == ObjectiveBinary:
		// Log loss with p = sigmoid(score), in LightGBM's form (BinaryLogloss): with
		// the label l in {-1, 1}, the response -l/(1 + exp(l·score)) = p - y is the
		// gradient and |response|·(1 - |response|) = p(1-p) the hessian, each
		// multiplied by the weight in double and rounded to float32.
		// is_unbalance and scale_pos_weight multiply by the class's label weight.
		for i, s := range score {
			l, lw := -1.0, b.labelWeight[0]
			if y32[i] > 0 {
				l, lw = 1, b.labelWeight[1]
			}
			r := -l / (1 + math.Exp(l*s))
			a := math.Abs(r)
			if b.weighted {
				grad[i] = float64(float32(r * lw * w32[i]))
				hess[i] = float64(float32(a * (1 - a) * lw * w32[i]))
			} else {
				grad[i] = float64(float32(r * lw))
				hess[i] = float64(float32(a * (1 - a) * lw))
			}
		}
	case b.cfg.Objective == ObjectiveL1 || b.cfg.Objective == ObjectiveQuantile || b.cfg.Objective == ObjectiveHuber:
		// RegressionL1loss: sign(score - y); RegressionQuantileloss: 1-alpha above
		// the label, -alpha below; RegressionHuberLoss: score - y clipped to
		// ±alpha. Hessians are the weights (1).
		alpha := b.cfg.Alpha
		for i, s := range score {
			diff := s - y32[i]
			var gr float64
			switch b.cfg.Objective {
			case ObjectiveL1:
				gr = sign(diff)
			case ObjectiveQuantile:
				// In float32, like LightGBM's score_t delta and alpha.
				a32 := float32(alpha)
				gr = float64(-a32)
				if float32(diff) >= 0 {
					gr = float64(1 - a32)
				}
			default:
				gr = diff
				if math.Abs(diff) > alpha {
					gr = sign(diff) * alpha
				}
			}
			if b.weighted {
				grad[i] = float64(float32(gr * w32[i]))
				hess[i] = w32[i]
			} else {
				grad[i] = float64(float32(gr))
				hess[i] = 1
			}
		}
	case b.cfg.Objective == ObjectivePoisson:
		// RegressionPoissonLoss: gradient exp(score) - y, hessian
		// exp(score)·exp(poisson_max_delta_step), times the weight, in float32.
		em := math.Exp(b.cfg.PoissonMaxDeltaStep)
		for i, s := range score {
			e := math.Exp(s)
			if b.weighted {
				grad[i] = float64(float32((e - y32[i]) * w32[i]))
				hess[i] = float64(float32(e * em * w32[i]))
			} else {
				grad[i] = float64(float32(e - y32[i]))
				hess[i] = float64(float32(e * em))
			}
		}
	default:
		// Squared error ½(score - y)²: gradient score - y rounded to float32, times
		// the float32 weight in float32 arithmetic; hessian the weight (RegressionL2loss).
		for i, s := range score {
			if b.weighted {
				grad[i] = float64(float32(s-y32[i]) * float32(w32[i]))
				hess[i] = w32[i]
			} else {
				grad[i] = float64(float32(s - y32[i]))
				hess[i] = 1
			}
		}
	}
}

// loss is the weighted mean validation loss: squared error for regression, log loss
// for binary, cfg.Loss for a custom objective.
func (b *booster) loss(score, y, w []float64) float64 {
	if b.cfg.Gradient != nil {
		return b.cfg.Loss(score, y, w)
	}
	var s, sw float64
	for i, v := range score {
		var l float64
		if b.cfg.Objective == ObjectiveBinary {
			// -log p(y) = log(1 + exp(-s)) for y = 1, log(1 + exp(s)) for y = 0.
			z := v
			if y[i] == 1 {
				z = -v
			}
			l = softplus(z)
		} else if b.cfg.Objective == ObjectivePoisson {
			// Negative Poisson log likelihood without the log(y!) term.
			l = math.Exp(v) - y[i]*v
		} else if b.cfg.Objective == ObjectiveL1 {
			l = math.Abs(v - y[i])
		} else if b.cfg.Objective == ObjectiveQuantile {
			d := y[i] - v
			l = max(b.cfg.Alpha*d, (b.cfg.Alpha-1)*d)
		} else if b.cfg.Objective == ObjectiveHuber {
			d := math.Abs(v - y[i])
			if d <= b.cfg.Alpha {
				l = d * d / 2
			} else {
				l = b.cfg.Alpha * (d - b.cfg.Alpha/2)
			}
		} else {
			l = (v - y[i]) * (v - y[i])
		}
		s += w[i] * l
		sw += w[i]
	}
	return s / sw
}

// renewLeaves returns t with each leaf's value replaced by the percentile of its rows'
// residuals y - score (rows of bag, or all rows), as LightGBM's RenewTreeOutput
// for regression_l1 and quantile.
func (b *booster) renewLeaves(t *Tree, score []float64, leafOf []int32, bag []int) *Tree {
	res := make([][]float64, t.NLeaves())
	add := func(r int) {
		l := leafOf[r]
		res[l] = append(res[l], b.y32[r]-score[r])
	}
	if bag == nil {
		for r := range score {
			add(r)
		}
	} else {
		for _, r := range bag {
			add(r)
		}
	}
	c := *t
	c.leafValues = slices.Clone(t.leafValues)
	for l, rs := range res {
		if len(rs) > 0 {
			c.leafValues[l] = lgPercentile(rs, b.cfg.percentileAlpha())
		}
	}
	return &c
}

// lgPercentile is LightGBM 4.6.0's percentile of vals for renewed leaves and initial
// scores: linear interpolation between the values in descending order d at position
// (1-alpha)·(n-1), d[p] - (d[p] - d[p+1])·bias. (The median of an even count is the
// mean of the middle two; of an odd count, the middle value.) It reorders vals.
func lgPercentile(vals []float64, alpha float64) float64 {
	n := len(vals)
	if n <= 1 {
		return vals[0]
	}
	slices.SortFunc(vals, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	floatPos := (1 - alpha) * float64(n-1)
	pos := int(floatPos)
	if pos >= n-1 {
		return vals[n-1]
	}
	bias := floatPos - float64(pos)
	v1, v2 := vals[pos], vals[pos+1]
	return v1 - (v1-v2)*bias
}

// softplus returns log(1 + exp(z)) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// rowSource returns a function giving row i of x: a view when x lends its rows, the
// row gathered into a buffer (valid until the next call) when x lends its columns, and
// otherwise a view of a copy of x made once, up front.
func rowSource(x mat.Matrix) func(int) []float64 {
	if rv, ok := x.(mat.RawRowViewer); ok {
		return rv.RawRowView
	}
	if cv, ok := x.(mat.RawColViewer); ok {
		_, c := x.Dims()
		cols := make([][]float64, c)
		for j := range cols {
			cols[j] = cv.RawColView(j)
		}
		row := make([]float64, c)
		return func(i int) []float64 {
			for j, col := range cols {
				row[j] = col[i]
			}
			return row
		}
	}
	d := mat.DenseCopyOf(x)
	return d.RawRowView
}

// sampleRows returns round(frac·n) distinct row indices in increasing order (a partial
// Fisher-Yates shuffle), reusing buf.
func sampleRows(rng *rand.Rand, n int, frac float64, buf []int) []int {
	k := max(1, int(math.Round(frac*float64(n))))
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < k; i++ {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	buf = append(buf[:0], perm[:k]...)
	slices.Sort(buf)
	return buf
}

// sampleFeatures returns round(frac·nf) (at least 1) feature indices in increasing
// order, or nil (all features) when frac is 1.
func sampleFeatures(rng *rand.Rand, nf int, frac float64) []int {
	if frac >= 1 {
		return nil
	}
	return sampleRows(rng, nf, frac, nil)
}

// addBias returns a copy of t with b added to every leaf and internal value, as
// LightGBM's Tree::AddBias folds the initial score into the first tree.
func (t *Tree) addBias(b float64) *Tree {
	c := *t
	c.leafValues = slices.Clone(t.leafValues)
	for i := range c.leafValues {
		c.leafValues[i] += b
	}
	c.internalValue = slices.Clone(t.internalValue)
	for i := range c.internalValue {
		c.internalValue[i] += b
	}
	return &c
}

// paramLines returns the parameters section of the text format for c, in LightGBM's
// "[name: value]" form.
func (c Config) paramLines() []string {
	obj := c.Objective
	if c.Gradient != nil {
		obj = "custom"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	tc, _ := c.treeConfig().withDefaults()
	maxDepth := c.MaxDepth
	if maxDepth <= 0 {
		maxDepth = -1
	}
	return []string{
		"[boosting: gbdt]",
		"[objective: " + obj + "]",
		"[num_iterations: " + strconv.Itoa(c.NumIterations) + "]",
		"[learning_rate: " + f(c.LearningRate) + "]",
		"[num_leaves: " + strconv.Itoa(tc.NumLeaves) + "]",
		"[num_threads: " + strconv.Itoa(c.NumThreads) + "]",
		"[seed: " + strconv.FormatUint(c.Seed, 10) + "]",
		"[max_depth: " + strconv.Itoa(maxDepth) + "]",
		"[min_data_in_leaf: " + strconv.Itoa(tc.MinDataInLeaf) + "]",
		"[min_sum_hessian_in_leaf: " + f(tc.MinSumHessianInLeaf) + "]",
		"[bagging_fraction: " + f(c.BaggingFraction) + "]",
		"[bagging_freq: " + strconv.Itoa(c.BaggingFreq) + "]",
		"[feature_fraction: " + f(c.FeatureFraction) + "]",
		"[early_stopping_round: " + strconv.Itoa(c.EarlyStoppingRound) + "]",
		"[lambda_l2: " + f(c.LambdaL2) + "]",
		"[max_bin: " + strconv.Itoa(c.MaxBin) + "]",
	}
}
