package training

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/modelset"
)

// Build time relative to the recent mean (issue 12 item 1). On the real histories the
// build times of several repositories shift level between the training window and the
// holdout (the holdout median 2.4–13× the training one), which trees cannot follow:
// they predict within the range of the durations they saw, while Zuul's mean of the
// last 10 succeeded builds follows the level. A relative LogNormal champion models
// log(y / ref), ref the recent mean (modelset.Relative), so that the trees learn the
// ratio and the level comes from the recent builds.
//
// The champion has one of three forms (FormAbsolute, FormRelative, FormReference).
// The reference form is the relative one without trees: Zuul's estimate with a fitted
// shift and scale. On BuildFast's histories the trees on top of the reference fit the
// training window's failures and level, not the holdout's: the relative NGBoost's
// pooled holdout NLL was 7.93 nats against the reference form's 7.53 (Zuul as a
// LogNormal 7.58), worst where its inner validation rows were unlike the holdout
// (checkstyle/checkstyle 16.3 against 11.4). Which form fits a repository depends on
// the repository, so unless NGBoostParams.Relative forces one, each fit chooses on its
// own rows, like the logistic C (select.go): every form is fitted on the earlier rows
// and scored on the latest ones, and the form with the lowest NLL replaces the
// reference form, the absolute one only with a median APE no higher (SelectRelative). Relative forms are recentred
// (recentre): their location moves to the median of their training residuals
// (modelset.Relative.Shift).

// The forms of the LogNormal build-time champion, as RelativeSelection.Form names them.
const (
	// FormAbsolute is the NGBoost of the durations on the features.
	FormAbsolute = "absolute"
	// FormRelative is the NGBoost of the durations relative to the recent mean.
	FormRelative = "relative"
	// FormReference is the recent mean itself: the relative form without trees, one
	// location shift and scale for every row (RelativeReference).
	FormReference = "reference"
)

// buildTimeForms are the forms SelectRelative compares.
var buildTimeForms = []string{FormAbsolute, FormRelative, FormReference}

// RelativeSelection is the outcome of choosing the LogNormal champion's form on
// validation.
type RelativeSelection struct {
	// Form is the chosen form: FormAbsolute, FormRelative or FormReference.
	Form string
	// Relative reports that a relative form (FormRelative or FormReference) won.
	Relative bool
	// Scores are the forms' scores on the inner validation rows, in buildTimeForms
	// order; nil when the table was too small for an inner split or a fit failed, and
	// the reference form is kept.
	Scores []FormScore
	// Rows is the number of validation rows.
	Rows int
}

// FormScore is a form's score on SelectRelative's inner validation rows.
type FormScore struct {
	Form string
	// NLL is the mean negative log-likelihood, in nats.
	NLL float64
	// MdAPE is the median absolute percentage error of the predictive medians.
	MdAPE float64
}

// Score returns the score of form, and false when sel has none.
func (sel RelativeSelection) Score(form string) (FormScore, bool) {
	i := slices.IndexFunc(sel.Scores, func(s FormScore) bool { return s.Form == form })
	if i < 0 {
		return FormScore{}, false
	}
	return sel.Scores[i], true
}

// SelectRelative chooses the form of the LogNormal champion of the build-time table t
// (with the aborted builds a as censored rows) on the forward-chaining inner folds of
// t's rows (innerFoldCuts, as the logistic C): every form of buildTimeForms is fitted on
// the rows before each validation block (by submission time, with the aborted builds
// submitted before its first row) and scored on the block, and each form's NLL and
// median APE are those of all its validation rows together. The reference form is the
// default, being what a queue has for free (Zuul's estimate), and the form with the
// lowest NLL replaces it; the absolute form only when its median APE is also no higher
// than the reference form's. The relative forms' medians are anchored at the reference
// (recentre), the absolute form's is not and cannot follow a level shift: on BuildFast
// it won the inner NLL where its holdout median APE was 2-3 times Zuul's. Of the rules
// tried on pseudo-holdouts carved from the training rows only (the latest fifth of
// each repository's training rows, the selection on the rest), this one had the lowest
// pooled NLL of the rules that keep the absolute form, which the synthetic worlds
// need (ios: absolute 7.575, relative 7.579, reference 7.909 nats on the inner rows).
// A table too small for one inner block of
// minInnerRows keeps the reference form, and so does a fit that fails on the smaller
// rows (logged: the fit on all rows decides whether the champion can be fitted at all).
// It is deterministic: the fits are.
func SelectRelative(ctx context.Context, t, a *features.Table, cfg *Config) (RelativeSelection, error) {
	sel := RelativeSelection{Form: FormReference, Relative: true}
	t = timeOrdered(t)
	cuts := innerFoldCuts(t.NRows(), innerFolds)
	if cuts == nil {
		return sel, nil
	}
	if a != nil && a.NRows() > 0 {
		a = timeOrdered(a)
	}
	sel.Rows = cuts[len(cuts)-1][1] - cuts[0][0]
	y := t.Y[cuts[0][0]:cuts[len(cuts)-1][1]]
	// Each inner fold's tables and validation design, shared by the forms.
	type fold struct {
		fitT, validT, fitA *features.Table
		xv                 *mat.Dense
	}
	folds := make([]fold, len(cuts))
	for j, c := range cuts {
		f := &folds[j]
		f.fitT, f.validT = t.Slice(0, c[0]), t.Slice(c[0], c[1])
		if a != nil && a.NRows() > 0 {
			f.fitA = a.Slice(0, a.Cut(f.validT.SubmittedAt[0]))
		}
		var err error
		if f.xv, err = design(f.validT); err != nil {
			return sel, err
		}
	}
	scores := make([]FormScore, len(buildTimeForms))
	for k, form := range buildTimeForms {
		scores[k].Form = form
		med := make([]float64, 0, len(y))
		for _, f := range folds {
			fitT, validT, fitA, xv := f.fitT, f.validT, f.fitA, f.xv
			m, err := fitForm(ctx, fitT, fitA, cfg, form)
			if err != nil {
				if ctx.Err() != nil {
					return sel, err
				}
				cfg.log().Warn("build-time form not chosen: a validation fit failed; the champion is the reference form", "form", form, "err", err)
				return RelativeSelection{Form: FormReference, Relative: true, Rows: sel.Rows}, nil
			}
			for i, d := range m.PredictDist(xv) {
				scores[k].NLL -= d.LogPDF(validT.Y[i])
				med = append(med, d.Quantile(0.5))
			}
		}
		scores[k].NLL /= float64(len(y))
		scores[k].MdAPE = eval.MdAPE(y, med)
	}
	sel.Scores = scores
	ref, _ := sel.Score(FormReference)
	best := ref
	for _, s := range scores {
		if s.NLL < best.NLL && (s.Form != FormAbsolute || s.MdAPE <= ref.MdAPE) {
			best = s
		}
	}
	sel.Form = best.Form
	sel.Relative = sel.Form != FormAbsolute
	return sel, nil
}

// fitBuildTimeChampion fits the LogNormal champion on t with the aborted builds a, in
// the form cfg.BuildTime.Relative says or, by default, the one SelectRelative chooses.
func fitBuildTimeChampion(ctx context.Context, t, a *features.Table, cfg *Config) (*modelset.BuildTimeModel, error) {
	form := FormAbsolute
	switch cfg.BuildTime.Relative {
	case RelativeOn:
		form = FormRelative
	case RelativeReference:
		form = FormReference
	}
	switch cfg.BuildTime.Relative {
	default:
		cfg.log().Info("build-time form set by the configuration", "form", form)
	case RelativeAuto:
		sel, err := SelectRelative(ctx, t, a, cfg)
		if err != nil {
			return nil, fmt.Errorf("training: choosing the build-time form: %w", err)
		}
		form = sel.Form
		args := []any{"form", sel.Form, "validation_rows", sel.Rows}
		for _, s := range sel.Scores {
			args = append(args, "nll_"+s.Form, s.NLL, "mdape_"+s.Form, s.MdAPE)
		}
		cfg.log().Info("build-time form chosen on validation", args...)
	}
	return fitForm(ctx, t, a, cfg, form)
}

// fitForm fits the LogNormal champion of the given form on t with the aborted builds a.
// The reference form is the relative NGBoost's marginal fit (its iteration 0, the
// maximum-likelihood location and scale of the log-ratios, censored rows included),
// bounded to that one point; both relative forms are recentred on t.
func fitForm(ctx context.Context, t, a *features.Table, cfg *Config, form string) (*modelset.BuildTimeModel, error) {
	if form == FormAbsolute {
		return fitNGBoost(ctx, t, a, ngboost.LogNormal, cfg, false)
	}
	c := *cfg
	if form == FormReference {
		// One iteration, then none: the marginal fit is all the reference form keeps.
		c.BuildTime.NEstimators, c.BuildTime.EarlyStoppingRounds = 1, -1
	}
	m, err := fitNGBoost(ctx, t, a, ngboost.LogNormal, &c, true)
	if err != nil {
		return nil, err
	}
	if form == FormReference {
		if m, err = marginalOf(m, t); err != nil {
			return nil, err
		}
	}
	if err := recentre(m, t); err != nil {
		return nil, err
	}
	return m, nil
}

// marginalOf returns the relative model m without its trees (ngboost.Model.Truncate(0)),
// bounded to its one predicted (location, log scale) on t's rows.
func marginalOf(m *modelset.BuildTimeModel, t *features.Table) (*modelset.BuildTimeModel, error) {
	m0, err := m.Model.Truncate(0)
	if err != nil {
		return nil, fmt.Errorf("training: build-time reference form: %w", err)
	}
	x, err := design(t)
	if err != nil {
		return nil, err
	}
	b, ok := modelset.BoundsOf(m0.PredictParams(nil, x))
	if !ok {
		return nil, fmt.Errorf("training: build-time reference form: no finite marginal parameters")
	}
	out, err := modelset.NewBuildTimeModel(m0, &b)
	if err != nil {
		return nil, fmt.Errorf("training: build-time reference form: %w", err)
	}
	if out.Relative, err = modelset.NewRelative(m0, m.Relative.FallbackS); err != nil {
		return nil, fmt.Errorf("training: build-time reference form: %w", err)
	}
	return out, nil
}

// recentre sets the Shift of the relative model m to the median, over t's rows (the
// finished builds it was fitted on), of log y minus m's location (see
// modelset.Relative): the predictive median then sits where most of the builds are
// instead of below them, where the early-ending failed builds pull the fitted
// location. The scale is unchanged.
func recentre(m *modelset.BuildTimeModel, t *features.Table) error {
	x, err := design(t)
	if err != nil {
		return err
	}
	m.Relative.Shift = 0
	p := m.PredictParams(nil, x)
	res := make([]float64, t.NRows())
	for i := range res {
		res[i] = math.Log(max(t.Y[i], MinDuration)) - p[2*i]
	}
	shift := median(res)
	if math.IsNaN(shift) || math.IsInf(shift, 0) {
		return fmt.Errorf("training: recentring the relative build-time model: median residual %v", shift)
	}
	m.Relative.Shift = shift
	return nil
}

// median returns the median of v (the mean of the middle two for an even length),
// sorting a copy; NaN for no values.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	w := slices.Clone(v)
	slices.Sort(w)
	n := len(w)
	if n%2 == 1 {
		return w[n/2]
	}
	return (w[n/2-1] + w[n/2]) / 2
}

// relativeTargets divides the targets y of the rows x (t's schema) by each row's
// reference and returns the Relative whose ReferenceOf gave it: its fallback is the
// geometric mean of t's durations.
func relativeTargets(t *features.Table, x *mat.Dense, y []float64) (*modelset.Relative, error) {
	col := slices.Index(t.Schema.Names, modelset.RelativeColumn)
	if col < 0 {
		return nil, fmt.Errorf("%w: the %s schema has no column %s for a relative build-time model", ErrConfig, t.Schema.Kind, modelset.RelativeColumn)
	}
	var sumLog float64
	for _, v := range t.Y {
		sumLog += math.Log(max(v, MinDuration))
	}
	rel := &modelset.Relative{Column: modelset.RelativeColumn, FallbackS: max(math.Exp(sumLog/float64(t.NRows())), modelset.MinReference)}
	for i := range y {
		y[i] /= rel.ReferenceOf(x.At(i, col))
	}
	return rel, nil
}
