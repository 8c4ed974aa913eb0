package training

import (
	"context"
	"fmt"
	"maps"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/gbm"
	"github.com/sqpredict/sqpredict/models/logistic"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/modelset"
)

// tables are the three feature tables of one set of rows, and the aborted builds whose
// durations the NGBoost models fit as right-censored (censored.go; nil when not built,
// as for an evaluation).
type tables struct {
	success, conflict, buildtime *features.Table
	aborted                      *features.Table
}

// fitAll fits the champions, the requested challengers and the baselines on t. A model
// whose table cannot be fitted (no rows, one class) is left nil with the reason in
// Models.LeftOut when it is the conflict model (real CI histories have no conflict
// labels) or when cfg.AllowPartial is set, and is otherwise an error wrapping ErrNoData.
// A challenger that cannot be fitted is dropped with a warning and its reason in
// Models.LeftOut, never failing the champions. stage, when not nil, is called after each
// model with its bundle file name.
func fitAll(ctx context.Context, t tables, cfg *Config, stage func(name string)) (*Models, error) {
	m := &Models{Baselines: map[string]*Baseline{}, LeftOut: map[string]string{}}
	// The success and build-time tables end with the history's extra attributes.
	extra, xerr := features.ExtraOf(features.KindSuccess, t.success.Schema.Names)
	if xerr != nil {
		return nil, fmt.Errorf("training: %w", xerr)
	}
	m.Extra = extra
	for kind, tb := range map[features.Kind]*features.Table{features.KindSuccess: t.success, features.KindConflict: t.conflict, features.KindBuildTime: t.buildtime} {
		if tb.NRows() == 0 {
			continue
		}
		for _, name := range Baselines[kind] {
			b, err := FitBaseline(name, tb)
			if err != nil {
				return nil, err
			}
			m.Baselines[name] = b
		}
	}
	fit := func(name string, tb *features.Table, classes bool, f func() error) error {
		if reason := unusable(tb, classes); reason != "" {
			if !cfg.AllowPartial && tb.Schema.Kind != features.KindConflict {
				return fmt.Errorf("%w: %s: the %s table has %s (allow_partial leaves the model out)", ErrNoData, name, tb.Schema.Kind, reason)
			}
			why := fmt.Sprintf("the %s table has %s", tb.Schema.Kind, reason)
			if tb.Schema.Kind == features.KindConflict && tb.NRows() == 0 {
				why += " (no labelled pair: the history has no queue builds that show conflicts)"
			}
			m.LeftOut[name] = why
			cfg.log().Warn("model left out", "model", name, "reason", why)
			return nil
		}
		if err := f(); err != nil {
			return err
		}
		if stage != nil {
			stage(name)
		}
		return nil
	}
	var err error
	steps := []struct {
		name       string
		tb         *features.Table
		classes    bool
		want       bool
		challenger bool
		fit        func() error
		drop       func()
	}{
		{FileSuccess, t.success, true, true, false, func() error { m.Success, err = fitLogistic(ctx, t.success, cfg.Success); return err }, nil},
		{FileConflict, t.conflict, true, true, false, func() error { m.Conflict, err = fitLogistic(ctx, t.conflict, cfg.Conflict); return err }, nil},
		{FileBuildTimeLogNormal, t.buildtime, false, true, false, func() error {
			m.BuildTime, err = fitBuildTimeChampion(ctx, t.buildtime, t.aborted, cfg)
			return err
		}, nil},
		{FileSuccessGBM, t.success, true, cfg.has(ChallengerGBMSuccess), true, func() error { m.SuccessGBM, err = fitGBM(ctx, t.success, cfg); return err },
			func() { m.SuccessGBM = nil }},
		{FileConflictGBM, t.conflict, true, cfg.has(ChallengerGBMConflict), true, func() error {
			m.ConflictGBM, err = fitConflictGBM(ctx, t.conflict, cfg)
			return err
		}, func() { m.ConflictGBM = nil }},
		{FileBuildTime, t.buildtime, false, cfg.has(ChallengerNGBoostNormal), true, func() error {
			m.BuildTimeChallenger, err = fitNGBoost(ctx, t.buildtime, t.aborted, ngboost.Normal, cfg, false)
			return err
		}, func() { m.BuildTimeChallenger = nil }},
	}
	for _, s := range steps {
		if !s.want {
			continue
		}
		err := fit(s.name, s.tb, s.classes, s.fit)
		if err != nil && s.challenger && ctx.Err() == nil {
			// A challenger only informs: its failure must never cost the champions.
			s.drop()
			m.LeftOut[s.name] = "fit failed: " + err.Error()
			cfg.log().Warn("challenger dropped", "model", s.name, "err", err)
			continue
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// unusable says why t cannot be fitted, or "" when it can: no rows, or for a classifier
// (classes) a single class.
func unusable(t *features.Table, classes bool) string {
	if t.NRows() == 0 {
		return "no rows"
	}
	if classes {
		var ones int
		for _, y := range t.Y {
			if y == 1 {
				ones++
			}
		}
		if ones == 0 || ones == len(t.Y) {
			return fmt.Sprintf("one class only (%d rows)", len(t.Y))
		}
	}
	return ""
}

// design returns the matrix of t's rows, or an error wrapping ErrNoData when it has none.
func design(t *features.Table) (*mat.Dense, error) {
	x := t.Dense()
	if x == nil {
		return nil, fmt.Errorf("%w: no %s rows to fit on", ErrNoData, t.Schema.Kind)
	}
	return x, nil
}

func fitLogistic(ctx context.Context, t *features.Table, p LogisticParams) (*logistic.Model, error) {
	p, form, err := withSelectedC(ctx, t, p) // C = 0: C, clipping and anchor chosen on validation (select.go)
	if err != nil {
		return nil, err
	}
	return fitLogisticC(ctx, t, p, form)
}

// fitLogisticC fits a logistic model of t with p in the form f: clipping its inputs to
// their training range when f.Clip is set, without a penalty on the columns f.Unpenalized.
func fitLogisticC(ctx context.Context, t *features.Table, p LogisticParams, f logisticForm) (*logistic.Model, error) {
	x, err := design(t)
	if err != nil {
		return nil, err
	}
	cw, err := logistic.ParseClassWeight(p.ClassWeight)
	if p.ClassWeight == "" {
		cw, err = logistic.Unweighted, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s.class_weight: %w", ErrConfig, t.Schema.Kind, err)
	}
	cfg := logistic.Config{C: p.C, MaxIter: p.MaxIter, ClassWeight: cw, FeatureNames: t.Schema.Names,
		ClipToTrainingRange: f.Clip, Unpenalized: f.Unpenalized}
	m, err := logistic.FitContext(ctx, x, t.Y, nil, cfg)
	if err != nil {
		return nil, fmt.Errorf("training: fitting %s logistic on %d rows: %w", t.Schema.Kind, t.NRows(), err)
	}
	return m, nil
}

// fitNGBoost fits an NGBoost of family fam on the build-time table t, with the aborted
// builds a as right-censored rows (nil, or cfg.BuildTime.DropAborted, for none), and
// bounds its parameters to the range its predictions span on those rows, without the
// most extreme modelset.BoundsTrim of them (modelset.BoundsOf). With relative (a LogNormal only) it fits the durations
// divided by each row's recent mean (modelset.Relative, with the geometric mean of t's
// durations as the fallback), and the bounds are those of the relative location.
func fitNGBoost(ctx context.Context, t, a *features.Table, fam ngboost.Family, cfg *Config, relative bool) (*modelset.BuildTimeModel, error) {
	if cfg.BuildTime.DropAborted {
		a = nil
	}
	x, y, cens, err := censoredDesign(t, a)
	if err != nil {
		return nil, err
	}
	var rel *modelset.Relative
	if relative {
		if rel, err = relativeTargets(t, x, y); err != nil {
			return nil, err
		}
	}
	p := cfg.BuildTime
	c := ngboost.Config{
		Dist:                fam,
		NEstimators:         p.NEstimators,
		LearningRate:        p.LearningRate,
		MaxDepth:            p.MaxDepth,
		MinibatchFrac:       p.MinibatchFrac,
		RandomState:         cfg.Seed,
		EarlyStoppingRounds: p.EarlyStoppingRounds,
		ValidationFraction:  p.ValidationFraction,
		Refit:               true,
		FeatureNames:        t.Schema.Names,
	}
	if c.NEstimators == 0 {
		c.NEstimators = DefaultNEstimators
	}
	if c.LearningRate == 0 {
		c.LearningRate = DefaultLearningRate
	}
	switch c.EarlyStoppingRounds {
	case 0:
		c.EarlyStoppingRounds = DefaultEarlyStoppingRounds
	case -1:
		c.EarlyStoppingRounds, c.Refit = 0, false
	}
	if c.ValidationFraction == 0 {
		c.ValidationFraction = DefaultValidationFraction
	}
	m, err := ngboost.FitCensored(ctx, x, y, nil, cens, c)
	if err != nil {
		return nil, fmt.Errorf("training: fitting build-time ngboost %s on %d rows (%d aborted): %w", fam, len(y), len(y)-t.NRows(), err)
	}
	b, ok := modelset.BoundsOf(m.PredictParams(nil, x))
	if !ok {
		return nil, fmt.Errorf("training: build-time ngboost %s predicts no finite parameters on its %d training rows", fam, len(y))
	}
	bt, err := modelset.NewBuildTimeModel(m, &b)
	if err != nil {
		return nil, fmt.Errorf("training: build-time ngboost %s: %w", fam, err)
	}
	if rel != nil {
		if bt.Relative, err = modelset.NewRelative(m, rel.FallbackS); err != nil {
			return nil, fmt.Errorf("training: build-time ngboost %s: %w", fam, err)
		}
	}
	return bt, nil
}

func fitGBM(ctx context.Context, t *features.Table, cfg *Config) (*gbm.Model, error) {
	if len(cfg.GBM) == 0 { // no parameters configured: chosen on validation (smalltable.go)
		return fitSmallGBM(ctx, t, cfg.Seed)
	}
	x, err := design(t)
	if err != nil {
		return nil, err
	}
	params := maps.Clone(cfg.GBM)
	if params == nil {
		params = map[string]string{}
	}
	seeded := false
	for k := range params {
		switch gbm.CanonicalParam(k) {
		case "objective":
			delete(params, k) // always binary
		case "seed":
			seeded = true
		}
	}
	c, err := gbm.ParseParams(params)
	if err != nil {
		return nil, fmt.Errorf("%w: gbm: %w", ErrConfig, err)
	}
	c.Objective = gbm.ObjectiveBinary
	c.FeatureNames = t.Schema.Names
	if !seeded {
		c.Seed = cfg.Seed
	}
	m, err := gbm.FitContext(ctx, x, t.Y, nil, c, nil)
	if err != nil {
		return nil, fmt.Errorf("training: fitting success gbm on %d rows: %w", t.NRows(), err)
	}
	return m, nil
}

// conflictGBM are the parameters of the gbm-conflict challenger. Conflicts are rare (a
// few percent of candidate pairs), so the trees are small, leaves need many rows and
// the steps are short; training stops when the log loss of the latest
// conflictGBMValidation of the training rows (by submission time) stops improving, which
// keeps the probabilities calibrated: LightGBM's defaults (31 leaves of 20 rows, 100
// rounds of 0.1) overfit the rare class, and on a synthetic go history (28 days, seed 1)
// scored a log-loss skill over the constant of 0.21 against 0.92 with these, ECE 0.015
// against 0.002 (the truth's 0.005).
var conflictGBM = gbm.Config{
	Objective:          gbm.ObjectiveBinary,
	NumIterations:      800,
	LearningRate:       0.03,
	NumLeaves:          7,
	MinDataInLeaf:      100,
	LambdaL2:           1,
	EarlyStoppingRound: 50,
}

// conflictGBMValidation is the share of the latest training rows gbm-conflict stops
// early on.
const conflictGBMValidation = 0.2

// fitConflictGBM fits the gbm-conflict challenger on t with the conflictGBM parameters:
// on the earlier rows, stopping early on the latest ones (rows are in submission order).
// When either part lacks a class (a short history), it fits every row for
// gbm.DefaultNumIterations rounds without early stopping.
func fitConflictGBM(ctx context.Context, t *features.Table, cfg *Config) (*gbm.Model, error) {
	x, err := design(t)
	if err != nil {
		return nil, err
	}
	c := conflictGBM
	c.FeatureNames = t.Schema.Names
	c.Seed = cfg.Seed
	n, nf := x.Dims()
	cut := n - int(conflictGBMValidation*float64(n))
	var valid *gbm.Validation
	xFit, yFit := mat.Matrix(x), t.Y
	if cut > 0 && cut < n && unusable(t.Slice(0, cut), true) == "" && unusable(t.Slice(cut, n), true) == "" {
		xFit, yFit = x.Slice(0, cut, 0, nf), t.Y[:cut]
		valid = &gbm.Validation{X: x.Slice(cut, n, 0, nf), Y: t.Y[cut:]}
	} else {
		c.NumIterations, c.EarlyStoppingRound = gbm.DefaultNumIterations, 0
	}
	m, err := gbm.FitContext(ctx, xFit, yFit, nil, c, valid)
	if err != nil {
		return nil, fmt.Errorf("training: fitting conflict gbm on %d rows: %w", t.NRows(), err)
	}
	return m, nil
}
