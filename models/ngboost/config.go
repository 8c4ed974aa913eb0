package ngboost

import (
	"fmt"
	"math"
)

// Defaults of the reference implementation (ngboost.NGBoost and its default tree
// learner), used for zero Config fields.
const (
	DefaultNEstimators        = 500
	DefaultLearningRate       = 0.01
	DefaultMaxDepth           = 3
	DefaultTol                = 1e-4
	DefaultValidationFraction = 0.1
	// DefaultMaxBin is the number of histogram bins per feature of the base trees,
	// LightGBM's default. The reference's scikit-learn trees search exact thresholds.
	DefaultMaxBin = 255
)

// Config holds the hyper-parameters of Fit. Field comments give the reference
// implementation's parameter name; a zero field means the reference default.
type Config struct {
	// Dist is the distribution family (dist: normal, lognormal, exponential, gamma).
	// Zero is Normal.
	Dist Family
	// Score is the scoring rule (score: nll, crps). Zero is LogScore. The Exponential
	// and the Gamma take LogScore only.
	Score ScoreRule
	// NEstimators is the number of boosting iterations (n_estimators), 0 means 500.
	NEstimators int
	// LearningRate multiplies every step (learning_rate), 0 means 0.01.
	LearningRate float64
	// MinibatchFrac is the fraction of rows, drawn without replacement, each iteration
	// fits on (minibatch_frac), in (0, 1]; 0 means 1.
	MinibatchFrac float64
	// ColSample is the fraction of features, drawn without replacement, each
	// iteration's trees may split on (col_sample), in (0, 1]; 0 means 1.
	ColSample float64
	// OrdinaryGradient fits the trees to the ordinary gradient of the score instead of
	// the natural gradient: the reference's natural_gradient=false.
	OrdinaryGradient bool
	// MaxDepth is the depth of the base regression trees (max_depth of the reference's
	// default learner), 0 means 3. A tree has at most 2^MaxDepth leaves.
	MaxDepth int
	// MaxBin is the number of histogram bins per feature, 0 means DefaultMaxBin.
	MaxBin int
	// Tol stops boosting when the mean norm of the fitted step falls below it, and ends
	// the line search (tol), 0 means 1e-4.
	Tol float64
	// RandomState seeds the row and column subsampling (random_state).
	RandomState uint64
	// EarlyStoppingRounds stops boosting once the validation score has not improved on
	// its best for this many iterations (early_stopping_rounds); 0 means never. The
	// model keeps the iterations up to the best one in either case.
	EarlyStoppingRounds int
	// ValidationFraction is the fraction of the rows Fit holds out as the validation set
	// when EarlyStoppingRounds > 0 (validation_fraction), in (0, 1); 0 means 0.1. Fit
	// holds out the LAST rows, not a random sample as the reference does, so that a
	// time-ordered history validates on its most recent part.
	ValidationFraction float64
	// Refit, after early stopping has found the best number of iterations, fits again
	// on all rows (training and validation) with that number.
	Refit bool
	// FeatureNames names the columns of x in the artifact; nil means "Column_0", ...
	FeatureNames []string
	// NumThreads bounds the goroutines of binning the features
	// (gbm.NewDatasetThreads), tree growing and the row loops (gradients, line search,
	// validation predictions), 0 means GOMAXPROCS. The fitted model does not depend on
	// it: every sum is split and added in the same order whatever the number of threads.
	NumThreads int
	// Progress, when not nil, is called after every iteration with its 0-based index,
	// the training score before the step and the validation score after it (NaN
	// without a validation set).
	Progress func(iter int, trainScore, valScore float64)
}

// withDefaults returns c with zero fields replaced by the defaults, or an error naming
// the first field out of range.
func (c Config) withDefaults() (Config, error) {
	if c.NEstimators == 0 {
		c.NEstimators = DefaultNEstimators
	}
	if c.LearningRate == 0 {
		c.LearningRate = DefaultLearningRate
	}
	if c.MinibatchFrac == 0 {
		c.MinibatchFrac = 1
	}
	if c.ColSample == 0 {
		c.ColSample = 1
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxBin == 0 {
		c.MaxBin = DefaultMaxBin
	}
	if c.Tol == 0 {
		c.Tol = DefaultTol
	}
	if c.ValidationFraction == 0 {
		c.ValidationFraction = DefaultValidationFraction
	}
	bad := func(field string, v any, want string) (Config, error) {
		return c, fmt.Errorf("ngboost: %s = %v, want %s: %w", field, v, want, ErrInvalidConfig)
	}
	switch {
	case !c.Dist.valid():
		return bad("dist", c.Dist, "normal, lognormal, exponential or gamma")
	case !c.Score.valid():
		return bad("score", c.Score, "nll or crps")
	case c.Dist.durationFamily() && c.Score != LogScore:
		return bad("score", c.Score, "nll for dist "+c.Dist.String())
	case c.NEstimators < 0:
		return bad("n_estimators", c.NEstimators, "> 0")
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return bad("learning_rate", c.LearningRate, "a finite value > 0")
	case !(c.MinibatchFrac > 0 && c.MinibatchFrac <= 1):
		return bad("minibatch_frac", c.MinibatchFrac, "in (0, 1]")
	case !(c.ColSample > 0 && c.ColSample <= 1):
		return bad("col_sample", c.ColSample, "in (0, 1]")
	case c.MaxDepth < 1 || c.MaxDepth > 16:
		return bad("max_depth", c.MaxDepth, "1..16")
	case c.MaxBin < 2:
		return bad("max_bin", c.MaxBin, ">= 2")
	case !(c.Tol > 0):
		return bad("tol", c.Tol, "> 0")
	case c.NumThreads < 0:
		return bad("num_threads", c.NumThreads, ">= 0")
	case c.EarlyStoppingRounds < 0:
		return bad("early_stopping_rounds", c.EarlyStoppingRounds, ">= 0")
	case !(c.ValidationFraction > 0 && c.ValidationFraction < 1):
		return bad("validation_fraction", c.ValidationFraction, "in (0, 1)")
	}
	return c, nil
}
