package logistic

import (
	"fmt"
	"math"
)

// Penalty is the regularisation term of the objective.
type Penalty int

const (
	// L2 is ½‖w‖², solved with L-BFGS. It is the zero value and the default.
	L2 Penalty = iota
	// L1 is ‖w‖₁, solved with FISTA; it sets weak coefficients exactly to zero.
	L1
)

// String returns the scikit-learn name of p: "l2" or "l1".
func (p Penalty) String() string {
	switch p {
	case L2:
		return "l2"
	case L1:
		return "l1"
	}
	return fmt.Sprintf("Penalty(%d)", int(p))
}

// ParsePenalty returns the Penalty named s ("l2" or "l1").
func ParsePenalty(s string) (Penalty, error) {
	switch s {
	case "l2":
		return L2, nil
	case "l1":
		return L1, nil
	}
	return 0, fmt.Errorf("%w: penalty %q (want l2 or l1)", ErrInvalidConfig, s)
}

// ClassWeight says how rows are weighted by class on top of their sample weights.
type ClassWeight int

const (
	// Unweighted gives both classes weight 1. It is the zero value.
	Unweighted ClassWeight = iota
	// Balanced gives class k the weight W / (2 W_k), with W the total sample weight and
	// W_k that of class k, as scikit-learn's class_weight="balanced" (which uses counts:
	// the same thing with unit weights). Weighted sums keep integer sample weights
	// equivalent to duplicated rows.
	Balanced
)

// String returns the scikit-learn name of c: "none" or "balanced".
func (c ClassWeight) String() string {
	switch c {
	case Unweighted:
		return "none"
	case Balanced:
		return "balanced"
	}
	return fmt.Sprintf("ClassWeight(%d)", int(c))
}

// ParseClassWeight returns the ClassWeight named s ("none" or "balanced").
func ParseClassWeight(s string) (ClassWeight, error) {
	switch s {
	case "none", "":
		return Unweighted, nil
	case "balanced":
		return Balanced, nil
	}
	return 0, fmt.Errorf("%w: class_weight %q (want none or balanced)", ErrInvalidConfig, s)
}

// Default values of Config fields left zero.
const (
	DefaultC       = 1.0  // scikit-learn's default C
	DefaultMaxIter = 100  // scikit-learn's default max_iter (L-BFGS iterations)
	DefaultL1Iter  = 1000 // FISTA needs many more, cheaper, iterations than L-BFGS
	DefaultTol     = 1e-4 // scikit-learn's default tol
)

// Config holds the hyperparameters of Fit. The zero value is scikit-learn's default
// LogisticRegression on standardised inputs, with all features kept.
type Config struct {
	// C is the inverse regularisation strength (larger C, weaker penalty), > 0.
	// Zero means DefaultC.
	C float64
	// Penalty is the regularisation term; the zero value is L2.
	Penalty Penalty
	// MaxIter caps the optimiser's iterations (per fit, in RFE per round). Zero means
	// DefaultMaxIter for L2 and DefaultL1Iter for L1. Reaching it is not an error: the
	// model records Converged() == false.
	MaxIter int
	// Tol stops the optimiser once the infinity norm of the gradient of the objective
	// divided by C Σ c_i (for L1, of its minimum-norm subgradient) is below it.
	// Zero means DefaultTol.
	Tol float64
	// ClassWeight weights the rows by class; the zero value is Unweighted.
	ClassWeight ClassWeight
	// NFeaturesToSelect > 0 keeps only that many features, chosen by recursive feature
	// elimination. Zero keeps every feature.
	NFeaturesToSelect int
	// Step is the number of features RFE removes per round. Zero means 1.
	Step int
	// FeatureNames names the columns of the input matrix. Nil means x0, x1, ...
	FeatureNames []string
	// ClipToTrainingRange makes Predict clip every feature to its training range [min,
	// max] (over the rows of nonzero weight, NaN ignored) before the linear predictor, so
	// that an unbounded count beyond anything seen in training (a developer's prior
	// changes a year later) does not extrapolate the log-odds. It does not change the fit.
	// The zero value, false, predicts on the raw inputs.
	ClipToTrainingRange bool
	// Unpenalized lists the columns whose coefficients the penalty leaves out, as it
	// leaves out the intercept (glmnet's penalty.factor of 0). With a strong penalty the
	// model tends to the unpenalised fit on those columns alone, not to a constant: a
	// logistic anchored at a baseline that one column encodes, which the other columns
	// correct as far as C lets them. Nil penalises every coefficient.
	Unpenalized []int
}

// validate checks the fields of c and the feature names against d columns.
func (c Config) validate(d int) error {
	switch {
	case c.C < 0 || math.IsNaN(c.C) || math.IsInf(c.C, 0):
		return fmt.Errorf("%w: C = %v, want > 0", ErrInvalidConfig, c.C)
	case c.Penalty != L1 && c.Penalty != L2:
		return fmt.Errorf("%w: penalty %v", ErrInvalidConfig, c.Penalty)
	case c.MaxIter < 0:
		return fmt.Errorf("%w: max_iter = %d, want >= 0", ErrInvalidConfig, c.MaxIter)
	case c.Tol < 0 || math.IsNaN(c.Tol):
		return fmt.Errorf("%w: tol = %v, want >= 0", ErrInvalidConfig, c.Tol)
	case c.ClassWeight != Unweighted && c.ClassWeight != Balanced:
		return fmt.Errorf("%w: class_weight %v", ErrInvalidConfig, c.ClassWeight)
	case c.NFeaturesToSelect < 0 || c.NFeaturesToSelect > d:
		return fmt.Errorf("%w: n_features_to_select = %d, want 0..%d", ErrInvalidConfig, c.NFeaturesToSelect, d)
	case c.Step < 0:
		return fmt.Errorf("%w: step = %d, want >= 0", ErrInvalidConfig, c.Step)
	case c.FeatureNames != nil && len(c.FeatureNames) != d:
		return fmt.Errorf("%w: %d feature names for %d columns", ErrInvalidConfig, len(c.FeatureNames), d)
	}
	free := make(map[int]bool, len(c.Unpenalized))
	for _, j := range c.Unpenalized {
		if j < 0 || j >= d || free[j] {
			return fmt.Errorf("%w: unpenalized column %d (want distinct columns 0..%d)", ErrInvalidConfig, j, d-1)
		}
		free[j] = true
	}
	seen := make(map[string]bool, len(c.FeatureNames))
	for _, n := range c.FeatureNames {
		if seen[n] {
			return fmt.Errorf("%w: duplicate feature name %q", ErrInvalidConfig, n)
		}
		seen[n] = true
	}
	return nil
}

// withDefaults returns c with zero fields replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.C == 0 {
		c.C = DefaultC
	}
	if c.MaxIter == 0 {
		c.MaxIter = DefaultMaxIter
		if c.Penalty == L1 {
			c.MaxIter = DefaultL1Iter
		}
	}
	if c.Tol == 0 {
		c.Tol = DefaultTol
	}
	if c.Step == 0 {
		c.Step = 1
	}
	return c
}
