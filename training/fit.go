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
)

// tables are the three feature tables of one set of rows.
type tables struct {
	success, conflict, buildtime *features.Table
}

// fitAll fits the champions and the requested challengers on t.
func fitAll(ctx context.Context, t tables, cfg *Config) (*Models, error) {
	m := &Models{}
	var err error
	if m.Success, err = fitLogistic(ctx, t.success, cfg.Success); err != nil {
		return nil, err
	}
	if m.Conflict, err = fitLogistic(ctx, t.conflict, cfg.Conflict); err != nil {
		return nil, err
	}
	if m.BuildTime, err = fitNGBoost(ctx, t.buildtime, ngboost.Normal, cfg); err != nil {
		return nil, err
	}
	if cfg.has(ChallengerGBMSuccess) {
		if m.SuccessGBM, err = fitGBM(ctx, t.success, cfg); err != nil {
			return nil, err
		}
	}
	if cfg.has(ChallengerNGBoostLogNormal) {
		if m.BuildTimeLogNormal, err = fitNGBoost(ctx, t.buildtime, ngboost.LogNormal, cfg); err != nil {
			return nil, err
		}
	}
	return m, nil
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
	cfg := logistic.Config{C: p.C, MaxIter: p.MaxIter, ClassWeight: cw, FeatureNames: t.Schema.Names}
	m, err := logistic.FitContext(ctx, x, t.Y, nil, cfg)
	if err != nil {
		return nil, fmt.Errorf("training: fitting %s logistic on %d rows: %w", t.Schema.Kind, t.NRows(), err)
	}
	return m, nil
}

func fitNGBoost(ctx context.Context, t *features.Table, fam ngboost.Family, cfg *Config) (*ngboost.Model, error) {
	x, err := design(t)
	if err != nil {
		return nil, err
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
	m, err := ngboost.Fit(ctx, x, t.Y, nil, c)
	if err != nil {
		return nil, fmt.Errorf("training: fitting build-time ngboost %s on %d rows: %w", fam, t.NRows(), err)
	}
	return m, nil
}

func fitGBM(ctx context.Context, t *features.Table, cfg *Config) (*gbm.Model, error) {
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
