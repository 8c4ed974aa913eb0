package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets/columnar"
	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/models/gbm"
)

// gbmParamHelp documents the --param keys of --algo gbm: LightGBM's parameter names,
// each also accepted under LightGBM's aliases.
var gbmParamHelp = map[string]string{
	"objective":               "regression, binary (target 0/1), poisson (counts, log link), regression_l1, huber or quantile (default regression)",
	"alpha":                   "huber threshold, or the quantile of objective quantile (default 0.9)",
	"monotone_constraints":    "-1, 0 or 1 per feature column, comma-separated: predictions fall, move freely or rise with it (default none)",
	"num_iterations":          "boosting rounds; aliases n_estimators, num_round, ... (default 100)",
	"learning_rate":           "shrinkage of every tree; alias eta (default 0.1)",
	"num_leaves":              "maximum leaves per tree (default 31)",
	"max_depth":               "maximum leaf depth, <= 0 for none (default -1)",
	"min_data_in_leaf":        "minimum rows per leaf; alias min_child_samples (default 20)",
	"min_sum_hessian_in_leaf": "minimum hessian sum per leaf; alias min_child_weight (default 1e-3)",
	"lambda_l2":               "L2 penalty on leaf values; alias reg_lambda (default 0)",
	"max_bin":                 "histogram bins per feature, 2..255 (default 255)",
	"feature_fraction":        "share of features per tree; alias colsample_bytree (default 1)",
	"bagging_fraction":        "share of rows per bagging round; alias subsample (default 1)",
	"bagging_freq":            "redraw the rows every k rounds, 0 = no bagging (default 0)",
	"num_threads":             "goroutines, 0 = all cores (default 0)",
	"seed":                    "seed of feature and row sampling (default 0)",
	"early_stopping_round":    "stop after k rounds without validation improvement; needs --valid (default 0)",
	"categorical_feature":     "columns holding integer categories, split by category sets as LightGBM: indices 0,3 or name:a,b (default none)",
	"max_cat_to_onehot":       "categorical features with at most this many bins split one category against the rest (default 4)",
	"cat_smooth":              "categories with fewer rows are not split on; smoothing of category ordering (default 10)",
	"cat_l2":                  "L2 penalty added for categorical splits (default 10)",
	"max_cat_threshold":       "most categories on one side of a categorical split (default 32)",
	"min_data_per_group":      "least rows per group of categories in a categorical split (default 100)",
	"lambda_l1":               "L1 penalty on leaf values; alias reg_alpha (default 0)",
	"min_gain_to_split":       "least gain of a split; alias min_split_gain (default 0)",
	"max_delta_step":          "cap on a leaf's output before the learning rate, <= 0 for none (default 0)",
	"scale_pos_weight":        "weight of the positive rows of objective binary (default 1)",
	"is_unbalance":            "weight the rarer class of objective binary up by the class ratio (default false)",
	"poisson_max_delta_step":  "the poisson hessian is exp(score + this) (default 0.7)",
	"weight_column":           "a training column of row weights, name:w or its index among the features; alias weight (default none)",
}

func init() {
	var ps []param
	for _, name := range gbm.ParamNames() {
		ps = append(ps, param{key: name, help: gbmParamHelp[name]})
	}
	// weight_column is LightGBM's name for a column of row weights; fitGBM takes it
	// out of the features.
	ps = append(ps, param{key: "weight_column", help: gbmParamHelp["weight_column"]},
		param{key: "weight", help: "alias of weight_column"})
	// LightGBM's aliases are accepted too; fit checks --param keys against this list.
	aliases := map[string]bool{}
	for _, name := range gbm.ParamNames() {
		aliases[name] = true
	}
	for _, a := range gbm.ParamAliases() {
		if !aliases[a] {
			ps = append(ps, param{key: a, help: "alias of " + gbm.CanonicalParam(a)})
		}
	}
	registerFitter(fitter{
		name:    "gbm",
		summary: "gradient-boosted trees (LightGBM parameters; saved as a LightGBM text model)",
		params:  ps,
		fit:     fitGBM,
	})
	registerLoader(loader{
		name:   "lightgbm",
		detect: isLightGBMText,
		load: func(data []byte) (predictor, error) {
			m, err := gbm.ReadLightGBM(bytes.NewReader(data))
			if err != nil {
				return nil, err
			}
			return gbmModel{m: m}, nil
		},
	})
}

// isLightGBMText reports whether head starts a LightGBM text model: a "tree" line
// followed by the "version=" and "num_class=" headers LightGBM always writes.
func isLightGBMText(head []byte, kind string) bool {
	if kind != "" {
		return false
	}
	first, rest, _ := bytes.Cut(bytes.TrimLeft(head, " \t\r\n"), []byte("\n"))
	hasLine := func(key string) bool {
		return bytes.HasPrefix(rest, []byte(key)) || bytes.Contains(rest, []byte("\n"+key))
	}
	return string(bytes.TrimSpace(first)) == "tree" && hasLine("version=") && hasLine("num_class=")
}

func fitGBM(ctx context.Context, in *fitInput) (fitted, error) {
	ps := maps.Clone(in.params)
	wcol, err := weightColumn(ps, in.features)
	if err != nil {
		return nil, err
	}
	cfg, err := gbm.ParseParams(ps)
	if err != nil {
		return nil, fmt.Errorf("%w: --param: %w", errUsage, err)
	}
	x, features := in.x, in.features
	var validX mat.Matrix
	var weights, validW []float64
	if in.validX != nil {
		validX = in.validX
	}
	if wcol >= 0 {
		x, weights = splitColumn(in.x, wcol)
		features = slices.Delete(slices.Clone(features), wcol, wcol+1)
		if validX != nil {
			validX, validW = splitColumn(validX, wcol)
		}
	}
	cfg.FeatureNames = features
	var valid *gbm.Validation
	if cfg.EarlyStoppingRound > 0 {
		if in.validX == nil {
			return nil, fmt.Errorf("%w: --param early_stopping_round needs --valid", errUsage)
		}
		valid = &gbm.Validation{X: validX, Y: in.validY, Weights: validW}
	}
	m, err := gbm.FitContext(ctx, x, in.y, weights, cfg, valid)
	if errors.Is(err, gbm.ErrBadConfig) {
		return nil, fmt.Errorf("%w: --param: %w", errUsage, err)
	}
	if err != nil {
		return nil, err
	}
	g := gbmModel{m: m}
	p := m.TrainingPredictions()
	if p == nil {
		p = m.Predict(nil, x)
	}
	g.trainLoss = g.loss(in.y, p)
	return g, nil
}

// weightColumn removes weight_column (or its alias weight) from ps and returns the
// index of that column among features, -1 when not given. The value is LightGBM's:
// name:col, or an index into the feature columns.
func weightColumn(ps params, features []string) (int, error) {
	val, key := "", ""
	for _, k := range []string{"weight_column", "weight"} {
		if v, ok := ps[k]; ok {
			if key != "" {
				return -1, fmt.Errorf("%w: --param: weight_column given twice, as %q and %q", errUsage, key, k)
			}
			val, key = v, k
			delete(ps, k)
		}
	}
	if key == "" || val == "" {
		return -1, nil
	}
	if name, ok := strings.CutPrefix(val, "name:"); ok {
		i := slices.Index(features, name)
		if i < 0 {
			return -1, fmt.Errorf("%w: --param %s=%s: no feature column %q", errUsage, key, val, name)
		}
		return i, nil
	}
	i, err := strconv.Atoi(val)
	if err != nil || i < 0 || i >= len(features) {
		return -1, fmt.Errorf("%w: --param %s=%s: want name:col or a feature index below %d", errUsage, key, val, len(features))
	}
	return i, nil
}

// splitColumn returns x without column j, and column j. The columns of a column-major
// x (a columnar.Matrix) are shared, not copied.
func splitColumn(x mat.Matrix, j int) (mat.Matrix, []float64) {
	r, c := x.Dims()
	if cv, ok := x.(mat.RawColViewer); ok {
		cols := make([][]float64, 0, c-1)
		for k := range c {
			if k != j {
				cols = append(cols, cv.RawColView(k))
			}
		}
		rest, err := columnar.NewMatrix(cols, r)
		if err != nil {
			panic(err) // every column of x has r values
		}
		return rest, cv.RawColView(j)
	}
	rest := mat.NewDense(r, c-1, nil)
	col := make([]float64, r)
	for i := range r {
		out := rest.RawRowView(i)
		for k := range c {
			switch v := x.At(i, k); {
			case k < j:
				out[k] = v
			case k == j:
				col[i] = v
			default:
				out[k-1] = v
			}
		}
	}
	return rest, col
}

// gbmModel adapts *gbm.Model to fitted and predictor.
type gbmModel struct {
	m         *gbm.Model
	trainLoss float64 // set by fitGBM
}

func (g gbmModel) save(path string) error { return gbm.SaveLightGBMFile(path, g.m) }

// binary reports whether the model outputs a probability through a sigmoid.
func (g gbmModel) binary() bool {
	name, _, _ := strings.Cut(g.m.Objective(), " ")
	return name == "binary" || name == "cross_entropy"
}

// loss is the training loss summary reports, of predictions p of targets y: log loss
// for binary, RMSE otherwise.
func (g gbmModel) loss(y, p []float64) float64 {
	if g.binary() {
		return eval.LogLoss(y, p)
	}
	return eval.RMSE(y, p)
}

// topFeatures is how many features the fit summary lists.
const topFeatures = 10

func (g gbmModel) summary(w io.Writer) error {
	c := g.m.Config()
	fmt.Fprintf(w, "objective %s, %d trees (num_iterations %d), num_leaves %d, learning_rate %g, max_bin %d\n",
		g.m.Objective(), g.m.NTrees(), c.NumIterations, c.NumLeaves, c.LearningRate, c.MaxBin)
	if c.EarlyStoppingRound > 0 && g.m.NTrees() < c.NumIterations {
		fmt.Fprintf(w, "early stopping kept the best %d rounds\n", g.m.NTrees())
	}
	if g.binary() {
		fmt.Fprintf(w, "train log loss %.6g\n", g.trainLoss)
	} else {
		fmt.Fprintf(w, "train rmse %.6g\n", g.trainLoss)
	}
	names := g.m.FeatureNames()
	counts := g.m.SplitCounts()
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(counts[b], counts[a]) })
	fmt.Fprintf(w, "top features by number of splits:\n")
	for _, f := range order[:min(len(order), topFeatures)] {
		if counts[f] > 0 {
			fmt.Fprintf(w, "  %-30s %8d\n", names[f], counts[f])
		}
	}
	return nil
}

func (g gbmModel) validate(w io.Writer, x *mat.Dense, y []float64) error {
	p := g.m.Predict(nil, x)
	if g.binary() {
		return writeClassifierMetrics(w, y, p)
	}
	r := eval.EvaluateRegression(y, p)
	fmt.Fprintf(w, "  rows %d\n", r.N)
	fmt.Fprintf(w, "  rmse       %.6g\n", r.RMSE)
	fmt.Fprintf(w, "  mae        %.6g\n", r.MAE)
	if !math.IsNaN(r.MAPE) {
		fmt.Fprintf(w, "  mape       %.6g%% (%d rows with y != 0)\n", r.MAPE, r.MAPERows)
	}
	return nil
}

func (g gbmModel) featureNames() []string { return g.m.FeatureNames() }

// outputs are "p" and "raw" for a sigmoid model, "p0".."pK-1" for multiclass
// (softmax), "raw0".."rawK-1" for a multi-output custom objective, and "prediction"
// (after the link: exp for poisson, gamma and tweedie) otherwise.
func (g gbmModel) outputs() []string {
	k := g.m.NClasses()
	switch {
	case g.binary():
		return []string{"p", "raw"}
	case k > 1:
		prefix := "p"
		if g.m.Objective() == "" {
			prefix = "raw"
		}
		out := make([]string, k)
		for i := range out {
			out[i] = prefix + strconv.Itoa(i)
		}
		return out
	}
	return []string{"prediction"}
}

func (g gbmModel) predict(x *mat.Dense) ([][]float64, error) {
	p := g.m.Predict(nil, x)
	if g.binary() {
		return [][]float64{p, g.m.PredictRaw(nil, x)}, nil
	}
	k := g.m.NClasses()
	if k == 1 {
		return [][]float64{p}, nil
	}
	n, _ := x.Dims()
	cols := make([][]float64, k)
	for c := range cols {
		cols[c] = make([]float64, n)
		for i := range n {
			cols[c][i] = p[i*k+c]
		}
	}
	return cols, nil
}
