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

	"github.com/sqpredict/sqpredict/models/logistic"
)

func init() {
	registerFitter(fitter{
		name:    "logistic",
		summary: "binary logistic regression (target 0/1; label 0 = failure), inputs standardised",
		params: []param{
			{key: "C", help: "inverse regularisation strength, > 0 (default 1)"},
			{key: "penalty", help: "l2 (L-BFGS) or l1 (FISTA) (default l2)"},
			{key: "max_iter", help: "optimiser iteration cap (default 100 for l2, 1000 for l1)"},
			{key: "tol", help: "gradient tolerance on the objective / (C·Σweights) (default 1e-4)"},
			{key: "class_weight", help: "none or balanced (default none)"},
			{key: "n_features_to_select", help: "keep this many features by recursive feature elimination (default 0: all)"},
			{key: "step", help: "features removed per RFE round (default 1)"},
		},
		fit: fitLogistic,
	})
	registerLoader(loader{
		name:   "logistic",
		detect: func(_ []byte, kind string) bool { return kind == logistic.Kind },
		load: func(data []byte) (predictor, error) {
			m, err := logistic.ReadJSON(bytes.NewReader(data))
			if err != nil {
				return nil, err
			}
			return logisticModel{m}, nil
		},
	})
}

func fitLogistic(ctx context.Context, in *fitInput) (fitted, error) {
	var cfg logistic.Config
	var err error
	if cfg.C, err = in.params.float("C", 0); err != nil {
		return nil, err
	}
	if cfg.Penalty, err = logistic.ParsePenalty(in.params.str("penalty", "l2")); err != nil {
		return nil, fmt.Errorf("%w: --param penalty: %w", errUsage, err)
	}
	if cfg.MaxIter, err = in.params.int("max_iter", 0); err != nil {
		return nil, err
	}
	if cfg.Tol, err = in.params.float("tol", 0); err != nil {
		return nil, err
	}
	if cfg.ClassWeight, err = logistic.ParseClassWeight(in.params.str("class_weight", "none")); err != nil {
		return nil, fmt.Errorf("%w: --param class_weight: %w", errUsage, err)
	}
	if cfg.NFeaturesToSelect, err = in.params.int("n_features_to_select", 0); err != nil {
		return nil, err
	}
	if cfg.Step, err = in.params.int("step", 0); err != nil {
		return nil, err
	}
	if _, ok := in.params["C"]; ok && !(cfg.C > 0) {
		return nil, fmt.Errorf("%w: --param C=%v: want > 0", errUsage, cfg.C)
	}
	cfg.FeatureNames = in.features
	m, err := logistic.FitContext(ctx, in.x, in.y, nil, cfg)
	if errors.Is(err, logistic.ErrInvalidConfig) {
		return nil, fmt.Errorf("%w: --param: %w", errUsage, err)
	}
	if err != nil {
		return nil, err
	}
	return logisticModel{m}, nil
}

// logisticModel adapts *logistic.Model to fitted and predictor.
type logisticModel struct{ m *logistic.Model }

func (l logisticModel) save(path string) error { return l.m.SaveFile(path) }

// topCoefficients is how many coefficients the fit summary lists.
const topCoefficients = 10

func (l logisticModel) summary(w io.Writer) error {
	st := l.m.Stats()
	cfg := l.m.Config()
	fmt.Fprintf(w, "penalty %s, C %g, class_weight %s; %d iterations", cfg.Penalty, cfg.C, cfg.ClassWeight, st.Iterations)
	if st.Converged {
		fmt.Fprintln(w, ", converged")
	} else {
		fmt.Fprintf(w, ", NOT converged (gradient above tol %g after max_iter %d)\n", cfg.Tol, cfg.MaxIter)
	}
	fmt.Fprintf(w, "train log loss %.6g\n", st.LogLoss)
	cs := l.m.Coefficients()
	var kept []logistic.Coef
	for _, c := range cs {
		if c.Selected {
			kept = append(kept, c)
		}
	}
	if len(kept) < len(cs) {
		fmt.Fprintf(w, "feature elimination kept %d of %d features\n", len(kept), len(cs))
	}
	slices.SortStableFunc(kept, func(a, b logistic.Coef) int {
		return cmp.Compare(math.Abs(b.Standardised), math.Abs(a.Standardised))
	})
	fmt.Fprintf(w, "intercept %.6g; top coefficients by |standardised|:\n", l.m.Intercept())
	fmt.Fprintf(w, "  %-30s %14s %14s\n", "feature", "standardised", "original")
	for _, c := range kept[:min(len(kept), topCoefficients)] {
		fmt.Fprintf(w, "  %-30s %14.6g %14.6g\n", c.Name, c.Standardised, c.Value)
	}
	return nil
}

func (l logisticModel) validate(w io.Writer, x *mat.Dense, y []float64) error {
	return writeClassifierMetrics(w, y, l.m.Predict(nil, x))
}

func (l logisticModel) featureNames() []string { return l.m.FeatureNames() }

func (l logisticModel) outputs() []string { return []string{"p", "raw"} }

func (l logisticModel) predict(x *mat.Dense) ([][]float64, error) {
	return [][]float64{l.m.Predict(nil, x), l.m.PredictRaw(nil, x)}, nil
}
