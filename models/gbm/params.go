package gbm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// paramAliases maps every accepted parameter name to its LightGBM name: the names and
// aliases of LightGBM's docs/Parameters.rst for the parameters Fit implements.
var paramAliases = map[string]string{}

func init() {
	for name, aliases := range map[string][]string{
		"objective":               {"objective_type", "app", "application", "loss"},
		"num_iterations":          {"num_iteration", "n_iter", "num_tree", "num_trees", "num_round", "num_rounds", "nrounds", "num_boost_round", "n_estimators", "max_iter"},
		"learning_rate":           {"shrinkage_rate", "eta"},
		"num_leaves":              {"num_leaf", "max_leaves", "max_leaf", "max_leaf_nodes"},
		"max_depth":               nil,
		"min_data_in_leaf":        {"min_data_per_leaf", "min_data", "min_child_samples", "min_samples_leaf"},
		"min_sum_hessian_in_leaf": {"min_sum_hessian_per_leaf", "min_sum_hessian", "min_hessian", "min_child_weight"},
		"lambda_l2":               {"reg_lambda", "lambda", "l2_regularization"},
		"max_bin":                 {"max_bins"},
		"feature_fraction":        {"sub_feature", "colsample_bytree"},
		"bagging_fraction":        {"sub_row", "subsample", "bagging"},
		"bagging_freq":            {"subsample_freq"},
		"num_threads":             {"num_thread", "nthread", "nthreads", "n_jobs"},
		"seed":                    {"random_seed", "random_state"},
		"early_stopping_round":    {"early_stopping_rounds", "early_stopping", "n_iter_no_change"},
		"categorical_feature":     {"cat_feature", "categorical_column", "cat_column", "categorical_features"},
		"max_cat_to_onehot":       nil,
		"cat_smooth":              nil,
		"cat_l2":                  nil,
		"max_cat_threshold":       nil,
		"min_data_per_group":      nil,
		"lambda_l1":               {"reg_alpha", "l1_regularization"},
		"min_gain_to_split":       {"min_split_gain"},
		"max_delta_step":          {"max_tree_output", "max_leaf_output"},
		"scale_pos_weight":        nil,
		"is_unbalance":            {"unbalance", "unbalanced_sets"},
		"poisson_max_delta_step":  nil,
		"alpha":                   nil,
		"monotone_constraints":    {"mc", "monotone_constraint", "monotonic_cst"},
	} {
		paramAliases[name] = name
		for _, a := range aliases {
			paramAliases[a] = name
		}
	}
}

// objectiveAliases maps LightGBM's names for the objectives Fit implements to
// the Objective constants.
var objectiveAliases = map[string]string{
	"regression": ObjectiveRegression, "regression_l2": ObjectiveRegression,
	"l2": ObjectiveRegression, "mean_squared_error": ObjectiveRegression,
	"mse": ObjectiveRegression, "l2_root": ObjectiveRegression,
	"root_mean_squared_error": ObjectiveRegression, "rmse": ObjectiveRegression,
	"binary":        ObjectiveBinary,
	"poisson":       ObjectivePoisson,
	"regression_l1": ObjectiveL1, "l1": ObjectiveL1, "mean_absolute_error": ObjectiveL1, "mae": ObjectiveL1,
	"huber": ObjectiveHuber, "quantile": ObjectiveQuantile,
}

// ParamNames returns the LightGBM parameter names ParseParams accepts (aliases not
// included), sorted.
func ParamNames() []string {
	var names []string
	for a, n := range paramAliases {
		if a == n {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// ParamAliases returns every accepted parameter name that is an alias of another
// (n_estimators, eta, ...), sorted.
func ParamAliases() []string {
	var names []string
	for a, n := range paramAliases {
		if a != n {
			names = append(names, a)
		}
	}
	slices.Sort(names)
	return names
}

// CanonicalParam returns the LightGBM name of a parameter name or alias, "" when
// ParseParams does not accept it.
func CanonicalParam(name string) string { return paramAliases[name] }

// ParseParams builds a Config from LightGBM parameters given by name or alias
// ("num_iterations" or "n_estimators", "learning_rate" or "eta", ...), with LightGBM's
// value conventions (max_depth <= 0 is no limit). An unknown key, a key given twice
// through aliases, or a bad value is an error naming the key.
func ParseParams(params map[string]string) (Config, error) {
	var c Config
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := map[string]string{}
	for _, key := range keys {
		val := strings.TrimSpace(params[key])
		name, ok := paramAliases[key]
		if !ok {
			return c, fmt.Errorf("%w: unknown parameter %q (known: %s)", ErrBadConfig, key, strings.Join(ParamNames(), ", "))
		}
		if prev, dup := seen[name]; dup {
			return c, fmt.Errorf("%w: parameter %s given twice, as %q and %q", ErrBadConfig, name, prev, key)
		}
		seen[name] = key
		bad := func(want string) error {
			return fmt.Errorf("%w: parameter %s=%q: want %s", ErrBadConfig, key, val, want)
		}
		intVal := func(dst *int, minV int) error {
			n, err := strconv.Atoi(val)
			if err != nil || n < minV {
				return bad("an integer >= " + strconv.Itoa(minV))
			}
			*dst = n
			return nil
		}
		floatVal := func(dst *float64, lo, hi float64, loOpen bool) error {
			v, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsNaN(v) || v > hi || v < lo || (loOpen && v == lo) {
				return bad(fmt.Sprintf("a number in %s%v, %v]", map[bool]string{true: "(", false: "["}[loOpen], lo, hi))
			}
			*dst = v
			return nil
		}
		var err error
		switch name {
		case "objective":
			obj, ok := objectiveAliases[val]
			if !ok {
				return c, fmt.Errorf("%w: parameter %s=%q: Fit implements %s", ErrBadConfig, key, val, strings.Join(fitObjectives, ", "))
			}
			c.Objective = obj
		case "num_iterations":
			err = intVal(&c.NumIterations, 1)
		case "learning_rate":
			err = floatVal(&c.LearningRate, 0, math.MaxFloat64, true)
		case "num_leaves":
			err = intVal(&c.NumLeaves, 2)
		case "max_depth":
			err = intVal(&c.MaxDepth, math.MinInt)
			if c.MaxDepth < 0 {
				c.MaxDepth = 0
			}
		case "min_data_in_leaf":
			err = intVal(&c.MinDataInLeaf, 0)
			if err == nil && c.MinDataInLeaf == 0 {
				c.MinDataInLeaf = 1 // 0 means the default in Config; no minimum is 1
			}
		case "min_sum_hessian_in_leaf":
			err = floatVal(&c.MinSumHessianInLeaf, 0, math.MaxFloat64, false)
			if err == nil && c.MinSumHessianInLeaf == 0 {
				c.MinSumHessianInLeaf = -1 // 0 means the default in Config; no minimum is < 0
			}
		case "lambda_l2":
			err = floatVal(&c.LambdaL2, 0, math.MaxFloat64, false)
		case "max_bin":
			err = intVal(&c.MaxBin, 2)
			if err == nil && c.MaxBin > 255 {
				err = bad("at most 255")
			}
		case "feature_fraction":
			err = floatVal(&c.FeatureFraction, 0, 1, true)
		case "bagging_fraction":
			err = floatVal(&c.BaggingFraction, 0, 1, true)
		case "bagging_freq":
			err = intVal(&c.BaggingFreq, 0)
		case "num_threads":
			err = intVal(&c.NumThreads, 0)
		case "seed":
			n, perr := strconv.ParseInt(val, 10, 64)
			if perr != nil {
				err = bad("an integer")
			}
			c.Seed = uint64(n)
		case "early_stopping_round":
			err = intVal(&c.EarlyStoppingRound, 0)
		case "categorical_feature":
			err = parseCategorical(&c, val)
			if err != nil {
				err = fmt.Errorf("%w: parameter %s=%q: %w", ErrBadConfig, key, val, err)
			}
		case "max_cat_to_onehot":
			err = intVal(&c.MaxCatToOnehot, 1)
		case "cat_smooth":
			err = floatVal(&c.CatSmooth, 0, math.MaxFloat64, false)
			if err == nil && c.CatSmooth == 0 {
				c.CatSmooth = -1 // 0 means the default in Config; none is < 0
			}
		case "cat_l2":
			err = floatVal(&c.CatL2, 0, math.MaxFloat64, false)
			if err == nil && c.CatL2 == 0 {
				c.CatL2 = -1 // 0 means the default in Config; none is < 0
			}
		case "max_cat_threshold":
			err = intVal(&c.MaxCatThreshold, 1)
		case "min_data_per_group":
			err = intVal(&c.MinDataPerGroup, 1)
		case "lambda_l1":
			err = floatVal(&c.LambdaL1, 0, math.MaxFloat64, false)
		case "min_gain_to_split":
			err = floatVal(&c.MinGainToSplit, 0, math.MaxFloat64, false)
		case "scale_pos_weight":
			err = floatVal(&c.ScalePosWeight, 0, math.MaxFloat64, true)
		case "is_unbalance":
			switch strings.ToLower(val) {
			case "true", "1", "+":
				c.IsUnbalance = true
			case "false", "0", "-":
				c.IsUnbalance = false
			default:
				err = bad("true or false")
			}
		case "monotone_constraints":
			c.MonotoneConstraints = nil
			for v := range strings.SplitSeq(val, ",") {
				k, perr := strconv.Atoi(strings.TrimSpace(v))
				if perr != nil || k < -1 || k > 1 {
					err = bad("-1, 0 or 1 for every feature, comma-separated")
					break
				}
				c.MonotoneConstraints = append(c.MonotoneConstraints, k)
			}
		case "alpha":
			err = floatVal(&c.Alpha, 0, math.MaxFloat64, true)
		case "poisson_max_delta_step":
			err = floatVal(&c.PoissonMaxDeltaStep, 0, math.MaxFloat64, true)
		case "max_delta_step":
			err = floatVal(&c.MaxDeltaStep, -math.MaxFloat64, math.MaxFloat64, false)
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// parseCategorical reads LightGBM's categorical_feature value: column indices
// ("0,3,4") or, after "name:", column names ("name:c0,c1"), resolved by FitContext.
func parseCategorical(c *Config, val string) error {
	c.CategoricalFeature, c.categoricalNames = nil, nil
	if val == "" {
		return nil
	}
	if names, ok := strings.CutPrefix(val, "name:"); ok {
		for n := range strings.SplitSeq(names, ",") {
			if n = strings.TrimSpace(n); n == "" {
				return fmt.Errorf("empty column name")
			}
			c.categoricalNames = append(c.categoricalNames, n)
		}
		return nil
	}
	for f := range strings.SplitSeq(val, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 0 {
			return fmt.Errorf("want column indices >= 0 or name:a,b")
		}
		c.CategoricalFeature = append(c.CategoricalFeature, k)
	}
	return nil
}
