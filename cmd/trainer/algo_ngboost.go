package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/models/ngboost"
)

func init() {
	registerFitter(fitter{
		name:    "ngboost",
		summary: "NGBoost probabilistic regression (predicts mu and sigma of the target); Normal, LogNormal, Exponential or Gamma",
		params: []param{
			{key: "dist", help: "normal, lognormal, exponential or gamma (the last two for durations; nll only) (default normal)"},
			{key: "score", help: "scoring rule: nll or crps (of log y for lognormal, as the reference; normal and lognormal only) (default nll)"},
			{key: "n_estimators", help: "boosting iterations (default 500)"},
			{key: "learning_rate", help: "step multiplier (default 0.01)"},
			{key: "minibatch_frac", help: "fraction of rows per iteration, in (0, 1] (default 1)"},
			{key: "col_sample", help: "fraction of features per iteration, in (0, 1] (default 1)"},
			{key: "natural_gradient", help: "true: natural gradient; false: ordinary gradient (default true)"},
			{key: "max_depth", help: "depth of the base trees (default 3)"},
			{key: "max_bin", help: "histogram bins per feature (default 255)"},
			{key: "tol", help: "stop when the mean step norm falls below it (default 1e-4)"},
			{key: "random_state", help: "seed of the subsampling (default 0)"},
			{key: "early_stopping_rounds", help: "stop this many iterations after the best validation score (of --valid, else of the last validation_fraction of the rows); 0 = never (default 0)"},
			{key: "validation_fraction", help: "with early stopping and no --valid: the last fraction of the training rows held out (default 0.1)"},
			{key: "refit", help: "with early stopping or --valid: fit again on all rows (with --valid's) with the best number of iterations (default false)"},
			{key: "verbose_eval", help: "log the training (and validation) score every K iterations; 0 = never (default 100)"},
			{key: "num_threads", help: "goroutines for the trees and the row loops; 0 = all cores; the model is the same for any value (default 0)"},
		},
		weights: true,
		fit:     fitNGBoost,
	})
	registerLoader(loader{
		name:   "ngboost",
		detect: func(_ []byte, kind string) bool { return kind == ngboost.Kind },
		load: func(data []byte) (predictor, error) {
			m, err := ngboost.ReadJSON(bytes.NewReader(data))
			if err != nil {
				return nil, err
			}
			return ngboostModel{m: m}, nil
		},
	})
}

// ngboostProgressEvery is how often, in iterations, fit logs the scores by default
// (verbose_eval).
const ngboostProgressEvery = 100

func fitNGBoost(ctx context.Context, in *fitInput) (fitted, error) {
	var cfg ngboost.Config
	var err error
	usage := func(key string, err error) error { return fmt.Errorf("%w: --param %s: %w", errUsage, key, err) }
	if cfg.Dist, err = ngboost.ParseFamily(in.params.str("dist", "normal")); err != nil {
		return nil, usage("dist", err)
	}
	if cfg.Score, err = ngboost.ParseScoreRule(in.params.str("score", "nll")); err != nil {
		return nil, usage("score", err)
	}
	ints := []struct {
		key string
		dst *int
	}{
		{"n_estimators", &cfg.NEstimators}, {"max_depth", &cfg.MaxDepth}, {"max_bin", &cfg.MaxBin},
		{"early_stopping_rounds", &cfg.EarlyStoppingRounds}, {"num_threads", &cfg.NumThreads},
	}
	for _, p := range ints {
		if *p.dst, err = in.params.int(p.key, 0); err != nil {
			return nil, err
		}
	}
	floats := []struct {
		key string
		dst *float64
	}{
		{"learning_rate", &cfg.LearningRate}, {"minibatch_frac", &cfg.MinibatchFrac},
		{"col_sample", &cfg.ColSample}, {"tol", &cfg.Tol}, {"validation_fraction", &cfg.ValidationFraction},
	}
	for _, p := range floats {
		if *p.dst, err = in.params.float(p.key, 0); err != nil {
			return nil, err
		}
		if _, given := in.params[p.key]; given && !(*p.dst > 0) {
			return nil, fmt.Errorf("%w: --param %s=%v: want > 0", errUsage, p.key, *p.dst)
		}
	}
	for _, key := range []string{"n_estimators", "max_depth", "max_bin"} {
		if v, _ := in.params.int(key, 1); v <= 0 {
			return nil, fmt.Errorf("%w: --param %s=%d: want > 0", errUsage, key, v)
		}
	}
	if cfg.NumThreads < 0 {
		return nil, fmt.Errorf("%w: --param num_threads=%d: want >= 0 (0 = all cores)", errUsage, cfg.NumThreads)
	}
	natural, err := in.params.bool("natural_gradient", true)
	if err != nil {
		return nil, err
	}
	cfg.OrdinaryGradient = !natural
	if cfg.Refit, err = in.params.bool("refit", false); err != nil {
		return nil, err
	}
	seed, err := in.params.int("random_state", 0)
	if err != nil {
		return nil, err
	}
	if seed < 0 {
		return nil, fmt.Errorf("%w: --param random_state=%d: want >= 0", errUsage, seed)
	}
	cfg.RandomState = uint64(seed)
	cfg.FeatureNames = in.features
	every, err := in.params.int("verbose_eval", ngboostProgressEvery)
	if err != nil {
		return nil, err
	}
	if every < 0 {
		return nil, fmt.Errorf("%w: --param verbose_eval=%d: want >= 0 (0 = never)", errUsage, every)
	}
	cfg.Progress = func(iter int, train, val float64) {
		if every == 0 || (iter+1)%every != 0 {
			return
		}
		if math.IsNaN(val) {
			fmt.Fprintf(in.log, "ngboost: iteration %d: train %s %.6g\n", iter+1, cfg.Score, train)
		} else {
			fmt.Fprintf(in.log, "ngboost: iteration %d: train %s %.6g, validation %s %.6g\n", iter+1, cfg.Score, train, cfg.Score, val)
		}
	}
	var m *ngboost.Model
	if in.validX != nil {
		// The --valid table is the validation set: its score is tracked every
		// iteration, stops boosting with early_stopping_rounds, and picks the number
		// of iterations kept.
		if _, given := in.params["validation_fraction"]; given {
			return nil, fmt.Errorf("%w: --param validation_fraction holds out training rows for validation; with --valid the --valid table is the validation set", errUsage)
		}
		m, err = ngboost.FitValidate(ctx, in.x, in.y, in.weights, in.validX, in.validY, in.validWeights, cfg)
	} else {
		m, err = ngboost.Fit(ctx, in.x, in.y, in.weights, cfg)
	}
	if errors.Is(err, ngboost.ErrInvalidConfig) {
		return nil, fmt.Errorf("%w: --param: %w", errUsage, err)
	}
	if err != nil {
		return nil, err
	}
	return ngboostModel{m: m, validChose: in.validX != nil}, nil
}

// ngboostModel adapts *ngboost.Model to fitted and predictor.
type ngboostModel struct {
	m *ngboost.Model
	// validChose records that the --valid rows picked the number of iterations.
	validChose bool
}

func (n ngboostModel) save(path string) error { return n.m.SaveFile(path) }

func (n ngboostModel) summary(w io.Writer) error {
	info := n.m.Info()
	c := info.Config
	fmt.Fprintf(w, "dist %s, score %s, learning_rate %g, max_depth %d, minibatch_frac %g, col_sample %g, natural_gradient %v\n",
		n.m.Family(), c.Score, c.LearningRate, c.MaxDepth, c.MinibatchFrac, c.ColSample, !c.OrdinaryGradient)
	fmt.Fprintf(w, "%d iterations kept", n.m.NIterations())
	if info.BestIteration >= 0 {
		fmt.Fprintf(w, " (best validation score %.6g at iteration %d of %d run)", info.ValScore[info.BestIteration], info.BestIteration+1, len(info.ValScore))
	}
	if info.Refit {
		fmt.Fprint(w, ", refitted on all rows")
	}
	fmt.Fprintln(w)
	if n.validChose {
		fmt.Fprintln(w, "the --valid rows chose the number of iterations: their metrics below are optimistic (and unweighted)")
	}
	if ts := info.TrainScore; len(ts) > 0 {
		fmt.Fprintf(w, "train %s: %.6g at the marginal, %.6g before the last step\n", c.Score, ts[0], ts[len(ts)-1])
	}
	p := n.m.InitParams()
	switch lb := ngboostParamLabels(n.m.Family()); n.m.Family() {
	case ngboost.Exponential:
		fmt.Fprintf(w, "initial parameters: %s %.6g\n", lb[0], p[0])
	default:
		fmt.Fprintf(w, "initial parameters: %s %.6g, %s %.6g\n", lb[0], p[0], lb[1], p[1])
	}
	writeNGBoostImportance(w, n.m)
	return nil
}

// ngboostParamLabels names the boosted parameters of family f for messages.
func ngboostParamLabels(f ngboost.Family) [2]string {
	switch f {
	case ngboost.Exponential:
		return [2]string{"log scale", "(none)"}
	case ngboost.Gamma:
		return [2]string{"log alpha", "log beta"}
	}
	return [2]string{"loc", "log scale"}
}

// writeNGBoostImportance prints the features with the largest gain importance
// (ngboost.Model.SplitGains), as shares of each parameter's total gain, and their split
// counts, ordered by the mean of the two shares.
func writeNGBoostImportance(w io.Writer, m *ngboost.Model) {
	gains, counts := m.SplitGains(), m.SplitCounts()
	var share [2][]float64
	for k := range 2 {
		var total float64
		for _, g := range gains[k] {
			total += g
		}
		share[k] = make([]float64, len(gains[k]))
		for j, g := range gains[k] {
			if total > 0 {
				share[k][j] = g / total
			}
		}
	}
	order := make([]int, m.NFeatures())
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(share[0][b]+share[1][b], share[0][a]+share[1][a])
	})
	names := m.FeatureNames()
	lb := ngboostParamLabels(m.Family())
	fmt.Fprintf(w, "top features by gain (share of each parameter's total split gain; splits), parameters %s and %s:\n", lb[0], lb[1])
	fmt.Fprintf(w, "  %-30s %9s %10s %9s %11s\n", "feature", "gain 1st", "gain 2nd", "split 1st", "split 2nd")
	for _, f := range order[:min(len(order), topFeatures)] {
		if counts[0][f]+counts[1][f] > 0 {
			fmt.Fprintf(w, "  %-30s %8.2f%% %9.2f%% %9d %11d\n", names[f], 100*share[0][f], 100*share[1][f], counts[0][f], counts[1][f])
		}
	}
}

func (n ngboostModel) validate(w io.Writer, x *mat.Dense, y []float64) error {
	return writeDistributionMetrics(w, n.m, x, y)
}

// writeDistributionMetrics prints eval's predictive-distribution metrics of m on the
// rows x, y to w.
func writeDistributionMetrics(w io.Writer, m *ngboost.Model, x *mat.Dense, y []float64) error {
	ds := m.PredictDist(x)
	if f := m.Family(); f == ngboost.Exponential || f == ngboost.Gamma {
		return writeDurationMetrics(w, ds, y)
	}
	pred := eval.Predictive{Family: eval.FamilyNormal, Mu: make([]float64, len(ds)), Sigma: make([]float64, len(ds))}
	if m.Family() == ngboost.LogNormal {
		pred.Family = eval.FamilyLogNormal
		for i, yi := range y {
			if !(yi > 0) {
				return fmt.Errorf("validation metrics: target of row %d is %v, outside the LogNormal support", i+1, yi)
			}
		}
	}
	for i, d := range ds {
		pred.Mu[i], pred.Sigma[i] = d.Loc, d.Scale
	}
	r := eval.EvaluateDistribution(pred, y)
	fmt.Fprintf(w, "  rows %d\n", r.Point.N)
	fmt.Fprintf(w, "  nll        %.6g (nats per row)\n", r.NLL)
	fmt.Fprintf(w, "  crps       %.6g\n", r.CRPS)
	fmt.Fprintf(w, "  rmse       %.6g (of the predictive mean)\n", r.Point.RMSE)
	fmt.Fprintf(w, "  mae        %.6g\n", r.Point.MAE)
	fmt.Fprintf(w, "  mape       %.6g%% (%d rows with y != 0)\n", r.Point.MAPE, r.Point.MAPERows)
	for k, level := range eval.CoverageLevels {
		fmt.Fprintf(w, "  coverage   %.0f%% interval holds %.4f of the rows\n", 100*level, r.Coverage[k])
	}
	fmt.Fprint(w, "  pit        ")
	for _, h := range r.PIT {
		fmt.Fprintf(w, " %.3f", h)
	}
	fmt.Fprintf(w, " (%d bins; uniform = %.3f each)\n", eval.PITBins, 1/float64(eval.PITBins))
	return nil
}

// writeDurationMetrics prints the metrics of writeDistributionMetrics that eval does
// not compute for the Exponential and the Gamma (eval knows the Normal and the
// LogNormal): the NLL, the CRPS, the errors of the predictive mean and the coverage
// of the central intervals, from the distributions' own methods.
func writeDurationMetrics(w io.Writer, ds []ngboost.Dist, y []float64) error {
	var nll, crps, se, ae float64
	cover := make([]int, len(eval.CoverageLevels))
	for i, d := range ds {
		if !(y[i] >= 0) {
			return fmt.Errorf("validation metrics: target of row %d is %v, outside the %v support", i+1, y[i], d.Family)
		}
		nll -= d.LogPDF(y[i])
		crps += d.CRPS(y[i])
		e := d.Mean() - y[i]
		se += e * e
		ae += math.Abs(e)
		for k, level := range eval.CoverageLevels {
			if lo, hi := d.Interval(level); y[i] >= lo && y[i] <= hi {
				cover[k]++
			}
		}
	}
	n := float64(len(ds))
	fmt.Fprintf(w, "  rows %d\n", len(ds))
	fmt.Fprintf(w, "  nll        %.6g (nats per row)\n", nll/n)
	fmt.Fprintf(w, "  crps       %.6g\n", crps/n)
	fmt.Fprintf(w, "  rmse       %.6g (of the predictive mean)\n", math.Sqrt(se/n))
	fmt.Fprintf(w, "  mae        %.6g\n", ae/n)
	for k, level := range eval.CoverageLevels {
		fmt.Fprintf(w, "  coverage   %.0f%% interval holds %.4f of the rows\n", 100*level, float64(cover[k])/n)
	}
	return nil
}

func (n ngboostModel) featureNames() []string { return n.m.FeatureNames() }

// outputs are the mean and standard deviation of the target itself, for a LogNormal
// too (not the parameters of log y).
func (n ngboostModel) outputs() []string { return []string{"mu", "sigma"} }

// quantiles returns the ps[k]-quantiles of every row's predicted distribution, in the
// target's units (predict --quantiles, --intervals).
func (n ngboostModel) quantiles(x *mat.Dense, ps []float64) [][]float64 {
	ds := n.m.PredictDist(x)
	out := make([][]float64, len(ps))
	for k, p := range ps {
		out[k] = make([]float64, len(ds))
		for i, d := range ds {
			out[k][i] = d.Quantile(p)
		}
	}
	return out
}

// atIteration returns the model of the first k iterations (predict --iteration).
func (n ngboostModel) atIteration(k int) (predictor, error) {
	m, err := n.m.Truncate(k)
	if err != nil {
		return nil, err
	}
	return ngboostModel{m: m}, nil
}

func (n ngboostModel) predict(x *mat.Dense) ([][]float64, error) {
	p := n.m.Predict(nil, x)
	r := len(p) / 2
	mu, sigma := make([]float64, r), make([]float64, r)
	for i := range r {
		mu[i], sigma[i] = p[2*i], p[2*i+1]
	}
	return [][]float64{mu, sigma}, nil
}
