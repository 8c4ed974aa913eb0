package training

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/features"
)

// Evaluation holds the metrics of a bundle's models on a set of rows, by model name
// (ModelLogistic, ModelGBM, ModelNGBoost, the build-time challenger under its own name —
// ModelNGBoostNormal, or ModelNGBoostLogNormal in bundles whose champion is Normal —,
// ModelTruth and the baselines). A section whose table has no rows is nil.
type Evaluation struct {
	Success   map[string]eval.ClassifierMetrics
	Conflict  map[string]eval.ClassifierMetrics
	BuildTime map[string]eval.DistributionMetrics
	// Report is the content of report.html for these metrics.
	Report report.Input
	// Selected holds the hyper-parameters of the published models that were chosen on
	// validation inside the training window (selectedParams), by metric key such as
	// "success.c"; Metrics adds them to its keys. Nil when none were.
	Selected map[string]float64
}

// BestBaseline returns the baseline with the lowest holdout loss of a section
// ("success", "conflict": log loss; "buildtime": NLL) and that loss; "" and NaN when the
// section has no baseline.
func (e *Evaluation) BestBaseline(section string) (name string, loss float64) {
	switch section {
	case "success":
		name, loss = bestOf(e.Success, func(c eval.ClassifierMetrics) float64 { return c.LogLoss })
	case "conflict":
		name, loss = bestOf(e.Conflict, func(c eval.ClassifierMetrics) float64 { return c.LogLoss })
	case "buildtime":
		name, loss = bestOf(e.BuildTime, func(d eval.DistributionMetrics) float64 { return d.NLL })
	}
	if name == "" {
		return "", math.NaN()
	}
	return name, loss
}

// Metrics flattens e into the keys of the package documentation: "<section>.<metric>"
// for the champions, "<section>.<model>.<metric>" for the other models, and the Bayes
// gaps. Values may be NaN.
func (e *Evaluation) Metrics() map[string]float64 {
	out := map[string]float64{}
	for k, v := range e.Selected {
		out[k] = v
	}
	key := func(section, model, metric string) string {
		if model == ModelLogistic || model == ModelNGBoost {
			return section + "." + metric
		}
		return section + "." + model + "." + metric
	}
	for _, s := range []struct {
		name string
		m    map[string]eval.ClassifierMetrics
	}{{"success", e.Success}, {"conflict", e.Conflict}} {
		for model, c := range s.m {
			for k, v := range classifierValues(c) {
				out[key(s.name, model, k)] = v
			}
			if t, ok := s.m[ModelTruth]; ok && model != ModelTruth {
				out[key(s.name, model, "bayes_gap_log_loss")] = c.LogLoss - t.LogLoss
			}
		}
	}
	for model, d := range e.BuildTime {
		for k, v := range distributionValues(d) {
			out[key("buildtime", model, k)] = v
		}
		if t, ok := e.BuildTime[ModelTruth]; ok && model != ModelTruth {
			out[key("buildtime", model, "bayes_gap_nll")] = d.NLL - t.NLL
		}
	}
	// Skill over the best baseline: 1 − LL/LL_best for the classifiers, the NLL gained
	// over the best baseline (nats) for build time; positive when the model beats it.
	for _, sec := range []string{"success", "conflict"} {
		m := e.Success
		if sec == "conflict" {
			m = e.Conflict
		}
		if _, best := e.BestBaseline(sec); !math.IsNaN(best) {
			for model, c := range m {
				if isModel(model) {
					out[key(sec, model, "skill_log_loss")] = 1 - c.LogLoss/best
				}
			}
		}
	}
	// Skill over the constant towards the truth (synthetic histories):
	// (LL_constant − LL_model) / (LL_constant − LL_truth), eval.Skill.
	for _, sec := range []string{"success", "conflict"} {
		m := e.Success
		if sec == "conflict" {
			m = e.Conflict
		}
		c, okC := m[constantBaseline[sec]]
		t, okT := m[ModelTruth]
		if !okC || !okT {
			continue
		}
		for model, v := range m {
			if isModel(model) {
				out[key(sec, model, "bayes_skill_log_loss")] = eval.Skill(v.LogLoss, c.LogLoss, t.LogLoss)
			}
		}
	}
	if _, best := e.BestBaseline("buildtime"); !math.IsNaN(best) {
		for model, d := range e.BuildTime {
			if isModel(model) {
				out[key("buildtime", model, "skill_nll")] = best - d.NLL
			}
		}
	}
	return out
}

// constantBaseline names the baseline that predicts the constant training rate of each
// classifier section: the reference of the skill towards the truth.
var constantBaseline = map[string]string{"success": BaselinePassRate, "conflict": BaselineConstantRate}

// isModel reports whether model is a champion or a challenger: neither a baseline nor
// the truth.
func isModel(model string) bool {
	_, baseline := baselineKind[model]
	return !baseline && model != ModelTruth
}

func classifierValues(c eval.ClassifierMetrics) map[string]float64 {
	return map[string]float64{
		"n": float64(c.N), "failures": float64(c.Failures), "accuracy": c.Accuracy,
		"auc": c.ROCAUC, "pr_auc": c.PRAUC, "log_loss": c.LogLoss, "brier": c.Brier,
		"ece": c.ECE, "failure_precision": c.Precision, "failure_recall": c.Recall,
		"failure_f1": c.F1,
	}
}

func distributionValues(d eval.DistributionMetrics) map[string]float64 {
	return map[string]float64{
		"n": float64(d.Point.N), "mape": d.Point.MAPE, "rmse": d.Point.RMSE, "mae": d.Point.MAE,
		"nll": d.NLL, "crps": d.CRPS, "mdape": d.Point.MdAPE,
		"coverage50": d.Coverage[0], "coverage80": d.Coverage[1], "coverage95": d.Coverage[2],
	}
}

// metricDirection returns the direction of the metric named by the last part of key,
// and false for a metric without one (counts, coverage) or an unknown one.
func metricDirection(key string) (eval.Direction, bool) {
	name := key[strings.LastIndexByte(key, '.')+1:]
	switch name {
	case "accuracy", "auc", "pr_auc", "failure_precision", "failure_recall", "failure_f1", "skill_log_loss", "skill_nll", "bayes_skill_log_loss":
		return eval.HigherIsBetter, true
	case "log_loss", "brier", "ece", "mape", "mdape", "rmse", "mae", "nll", "crps", "bayes_gap_log_loss", "bayes_gap_nll":
		return eval.LowerIsBetter, true
	}
	return 0, false
}

// truthColumn returns the named truth column of t when every row has a value.
func truthColumn(t *features.Table, name string) []float64 {
	for _, c := range t.Truth {
		if c.Name != name {
			continue
		}
		for _, v := range c.Values {
			if math.IsNaN(v) {
				return nil
			}
		}
		return c.Values
	}
	return nil
}

// truthPredictive returns the true log-normal build-time distributions of t's rows,
// moment-matched from true_mu_s and true_sigma_s (the mean m and standard deviation s of
// the duration in seconds): σ² = log(1 + s²/m²), μ = log m − σ²/2.
func truthPredictive(t *features.Table) (eval.Predictive, bool) {
	mean, sd := truthColumn(t, "true_mu_s"), truthColumn(t, "true_sigma_s")
	if mean == nil || sd == nil {
		return eval.Predictive{}, false
	}
	p := eval.Predictive{Family: eval.FamilyLogNormal, Mu: make([]float64, len(mean)), Sigma: make([]float64, len(mean))}
	for i, m := range mean {
		if !(m > 0 && sd[i] > 0) {
			return eval.Predictive{}, false
		}
		v := math.Log1p(sd[i] * sd[i] / (m * m))
		p.Mu[i] = math.Log(m) - v/2
		p.Sigma[i] = math.Sqrt(v)
	}
	return p, true
}

// evaluate scores the models m on the rows of t (predictions pr of m on t) and builds
// the report. title and subtitle head the report page.
func evaluate(t tables, pr *Predictions, title, subtitle string) (*Evaluation, error) {
	e := &Evaluation{Report: report.Input{Title: title, Subtitle: subtitle}}
	var challenger, truth bool
	baselines := map[string]bool{}
	classify := func(name string, tb *features.Table, trueCol string, preds map[string][]float64) (map[string]eval.ClassifierMetrics, *report.Section, error) {
		some := false
		for _, p := range preds {
			some = some || p != nil
		}
		if tb.NRows() == 0 || !some {
			return nil, nil, nil
		}
		if p := truthColumn(tb, trueCol); p != nil {
			if tb.Schema.Kind == features.KindConflict {
				p = complement(p)
			}
			preds[ModelTruth] = p
		}
		out := map[string]eval.ClassifierMetrics{}
		byRole := map[string]eval.ClassifierMetrics{}
		rel := &report.Reliability{Title: name + ": reliability"}
		for model, p := range preds {
			if p == nil {
				continue
			}
			c, err := eval.EvaluateClassifier(tb.Y, p)
			if err != nil {
				return nil, nil, fmt.Errorf("training: evaluating %s %s: %w", name, model, err)
			}
			out[model] = c
			role := roleOf(model)
			byRole[role] = c
			challenger = challenger || role == roleChallenger
			truth = truth || role == roleTruth
			baselines[role] = baselines[role] || !isModel(model) && model != ModelTruth
		}
		for _, role := range plotRoles(byRole) {
			rel.Series = append(rel.Series, report.ReliabilitySeries{Model: role, Bins: byRole[role].Calibration})
		}
		sec := &report.Section{
			Name:    name,
			Note:    sectionNote(tb.NRows(), modelsNote(name, has(byRole, roleChallenger))),
			Metrics: report.ClassifierRows(byRole),
		}
		if len(rel.Series) > 0 {
			sec.Plots = append(sec.Plots, rel)
		}
		if best, bl := bestOf(out, func(c eval.ClassifierMetrics) float64 { return c.LogLoss }); best != "" {
			skill := report.Metric{Name: "log loss skill over best baseline (1 − LL/LL of " + best + ")", Better: "higher", Values: map[string]float64{}}
			for model, c := range out {
				if isModel(model) {
					skill.Values[roleOf(model)] = 1 - c.LogLoss/bl
				}
			}
			sec.Metrics = append(sec.Metrics, skill)
			sec.Note += " Best baseline on log loss: " + best + "."
		}
		if c, ok := out[constantBaseline[name]]; ok {
			if t, ok := byRole[roleTruth]; ok {
				skill := report.Metric{Name: "log loss skill over the constant towards truth ((LL of " + constantBaseline[name] + " − LL)/(LL of " + constantBaseline[name] + " − LL of truth))", Better: "higher", Values: map[string]float64{}}
				for model, v := range out {
					if isModel(model) {
						skill.Values[roleOf(model)] = eval.Skill(v.LogLoss, c.LogLoss, t.LogLoss)
					}
				}
				sec.Metrics = append(sec.Metrics, skill)
			}
		}
		if t, ok := byRole[roleTruth]; ok {
			gap := report.Metric{Name: "log loss gap to truth (nats)", Better: "lower", Values: map[string]float64{}}
			for role, c := range byRole {
				if role != roleTruth {
					gap.Values[role] = c.LogLoss - t.LogLoss
				}
			}
			sec.Metrics = append(sec.Metrics, gap)
		}
		return out, sec, nil
	}
	var err error
	var sec *report.Section
	successPreds := map[string][]float64{ModelLogistic: pr.Success, ModelGBM: pr.SuccessGBM}
	conflictPreds := map[string][]float64{ModelLogistic: complement(pr.Conflict), ModelGBM: complement(pr.ConflictGBM)}
	for name, p := range pr.Baselines {
		switch baselineKind[name] {
		case features.KindSuccess:
			successPreds[name] = p
		case features.KindConflict:
			conflictPreds[name] = complement(p)
		}
	}
	if e.Success, sec, err = classify("success", t.success, "true_p_success", successPreds); err != nil {
		return nil, err
	} else if sec != nil {
		e.Report.Sections = append(e.Report.Sections, *sec)
	}
	if e.Conflict, sec, err = classify("conflict", noConflict(t.conflict), "true_p_conflict", conflictPreds); err != nil {
		return nil, err
	} else if sec != nil {
		e.Report.Sections = append(e.Report.Sections, *sec)
	}
	if tb := t.buildtime; tb.NRows() > 0 && (pr.BuildTime.Len() > 0 || pr.BuildTimeChallenger.Len() > 0 || len(pr.BaselineBuildTime) > 0) {
		preds := map[string]eval.Predictive{}
		for name, p := range pr.BaselineBuildTime {
			preds[name] = p
		}
		if pr.BuildTime.Len() > 0 {
			preds[ModelNGBoost] = pr.BuildTime
		}
		if pr.BuildTimeChallenger.Len() > 0 {
			preds[pr.BuildTimeChallengerName] = pr.BuildTimeChallenger
		}
		if p, ok := truthPredictive(tb); ok {
			preds[ModelTruth] = p
		}
		e.BuildTime = map[string]eval.DistributionMetrics{}
		byRole := map[string]eval.DistributionMetrics{}
		for model, p := range preds {
			d := eval.EvaluateDistribution(p, tb.Y)
			e.BuildTime[model] = d
			byRole[roleOf(model)] = d
			challenger = challenger || roleOf(model) == roleChallenger
			truth = truth || roleOf(model) == roleTruth
			baselines[roleOf(model)] = baselines[roleOf(model)] || !isModel(model) && model != ModelTruth
		}
		sec := report.Section{
			Name:    "build time",
			Note:    sectionNote(tb.NRows(), buildTimeNote(pr.BuildTime.Len() > 0 && pr.BuildTime.Family == eval.FamilyNormal, has(byRole, roleChallenger))),
			Metrics: report.DistributionRows("s", byRole),
		}
		if best, bl := bestOf(e.BuildTime, func(d eval.DistributionMetrics) float64 { return d.NLL }); best != "" {
			skill := report.Metric{Name: "NLL gain over best baseline (nats, vs " + best + ")", Better: "higher", Values: map[string]float64{}}
			for model, d := range e.BuildTime {
				if isModel(model) {
					skill.Values[roleOf(model)] = bl - d.NLL
				}
			}
			sec.Metrics = append(sec.Metrics, skill)
			sec.Note += " Best baseline on NLL: " + best + "."
		}
		if t, ok := byRole[roleTruth]; ok {
			gap := report.Metric{Name: "NLL gap to truth (nats)", Better: "lower", Values: map[string]float64{}}
			for role, d := range byRole {
				if role != roleTruth {
					gap.Values[role] = d.NLL - t.NLL
				}
			}
			sec.Metrics = append(sec.Metrics, gap)
		}
		pit := &report.PITHistogram{Title: "build time: PIT"}
		cov := &report.Coverage{Title: "build time: interval coverage"}
		for _, role := range plotRoles(byRole) {
			d := byRole[role]
			pit.Series = append(pit.Series, report.PITSeries{Model: role, Fractions: d.PIT})
			cov.Series = append(cov.Series, report.CoverageSeries{Model: role, Nominal: eval.CoverageLevels[:], Empirical: d.Coverage[:]})
		}
		for _, model := range []string{ModelNGBoost, pr.BuildTimeChallengerName} {
			p, ok := preds[model]
			if !ok {
				continue
			}
			point := make([]float64, p.Len())
			for i := range point {
				point[i] = p.Point(i)
			}
			sec.Plots = append(sec.Plots, &report.PredictedActual{
				Title: "build time: " + roleOf(model), Model: roleOf(model), Label: "build time (s)",
				Predicted: point, Actual: tb.Y, Log: allPositive(point) && allPositive(tb.Y),
			})
		}
		sec.Metrics = append(sec.Metrics, sizeBucketMetrics(tb, preds)...)
		if len(pit.Series) > 0 {
			sec.Plots = append(sec.Plots, pit, cov)
		}
		sec.Plots = append(sec.Plots, buildTimeScatters(tb, preds, pr.BuildTimeChallengerName)...)
		e.Report.Sections = append(e.Report.Sections, sec)
	}
	e.Report.Models = []string{roleChampion}
	if challenger {
		e.Report.Models = append(e.Report.Models, roleChallenger)
	}
	for _, kind := range []features.Kind{features.KindSuccess, features.KindConflict, features.KindBuildTime} {
		for _, name := range Baselines[kind] {
			if baselines[name] {
				e.Report.Models = append(e.Report.Models, name)
			}
		}
	}
	if truth {
		e.Report.Models = append(e.Report.Models, roleTruth)
	}
	return e, nil
}

// sizeFeature is the build-time feature that measures a build's size: the number of
// targets the change affects, which the build runs.
const sizeFeature = "affected_targets"

// featureColumn returns the values of t's feature name, nil when t has no such feature.
func featureColumn(t *features.Table, name string) []float64 {
	j := slices.Index(t.Schema.Names, name)
	if j < 0 {
		return nil
	}
	nf := t.Schema.NFeatures()
	out := make([]float64, t.NRows())
	for r := range out {
		out[r] = t.X[r*nf+j]
	}
	return out
}

// sizeBuckets splits the rows with a known size into up to four buckets at the
// quartiles of the size (equal sizes stay in one bucket), and returns each bucket's
// rows and a label such as "3–7 targets".
func sizeBuckets(size []float64) (rows [][]int, labels []string) {
	var known []float64
	for _, v := range size {
		if !math.IsNaN(v) {
			known = append(known, v)
		}
	}
	if len(known) == 0 {
		return nil, nil
	}
	slices.Sort(known)
	var edges []float64 // upper bounds, inclusive
	for _, q := range []float64{0.25, 0.5, 0.75, 1} {
		v := known[min(len(known)-1, int(math.Ceil(q*float64(len(known))))-1)]
		if len(edges) == 0 || v > edges[len(edges)-1] {
			edges = append(edges, v)
		}
	}
	rows = make([][]int, len(edges))
	for r, v := range size {
		if math.IsNaN(v) {
			continue
		}
		k, _ := slices.BinarySearch(edges, v)
		rows[k] = append(rows[k], r)
	}
	lo := known[0]
	for k, hi := range edges {
		if k > 0 {
			lo = edges[k-1] + 1 // sizes are counts
		}
		if lo >= hi {
			unit := "targets"
			if hi == 1 {
				unit = "target"
			}
			labels = append(labels, fmt.Sprintf("%g %s", hi, unit))
		} else {
			labels = append(labels, fmt.Sprintf("%g–%g targets", lo, hi))
		}
	}
	return rows, labels
}

// sizeBucketMetrics returns, for each build-size bucket (sizeBuckets of sizeFeature),
// the MAPE of the mean and the 80% and 95% interval coverage of the champion, the
// challenger and the truth: a model good on average can be poor on the large builds
// that cost the most. None when the rows have no size.
func sizeBucketMetrics(tb *features.Table, preds map[string]eval.Predictive) []report.Metric {
	size := featureColumn(tb, sizeFeature)
	if size == nil {
		return nil
	}
	buckets, labels := sizeBuckets(size)
	var out []report.Metric
	for k, rows := range buckets {
		if len(rows) == 0 {
			continue
		}
		name := fmt.Sprintf("%s (%d rows)", labels[k], len(rows))
		mape := report.Metric{Name: "MAPE of point forecast (%), " + name, Better: "lower", Values: map[string]float64{}}
		c80 := report.Metric{Name: "80% interval coverage, " + name, Values: map[string]float64{}}
		c95 := report.Metric{Name: "95% interval coverage, " + name, Values: map[string]float64{}}
		for model, p := range preds {
			role := roleOf(model)
			if role != roleChampion && role != roleChallenger && role != roleTruth {
				continue
			}
			var ape float64
			var nAPE, in80, in95 int
			for _, r := range rows {
				y := tb.Y[r]
				if y != 0 {
					ape += 100 * math.Abs(p.Point(r)-y) / math.Abs(y)
					nAPE++
				}
				if y >= p.Quantile(r, 0.1) && y <= p.Quantile(r, 0.9) {
					in80++
				}
				if y >= p.Quantile(r, 0.025) && y <= p.Quantile(r, 0.975) {
					in95++
				}
			}
			mape.Values[role] = math.NaN()
			if nAPE > 0 {
				mape.Values[role] = ape / float64(nAPE)
			}
			c80.Values[role] = float64(in80) / float64(len(rows))
			c95.Values[role] = float64(in95) / float64(len(rows))
		}
		out = append(out, mape, c80, c95)
	}
	return out
}

// buildTimeScatters returns the diagnostic scatters of the build-time models: the
// residual (actual − point forecast) against the speculation height, where a model that
// ignores the height shows a trend, and the predicted standard deviation against the
// build size. The champion's predictions are preds[ModelNGBoost], the challenger's
// preds[challenger] (the challenger's own name, ModelNGBoostNormal since LogNormal became
// the champion; "" for none). A plot whose feature is missing in every row is left out.
func buildTimeScatters(tb *features.Table, preds map[string]eval.Predictive, challenger string) []report.Plot {
	var out []report.Plot
	models := []string{ModelNGBoost}
	if challenger != "" {
		models = append(models, challenger)
	}
	scatter := func(xs []float64, y func(p eval.Predictive, r int) float64) []report.ScatterSeries {
		var series []report.ScatterSeries
		for _, model := range models {
			p, ok := preds[model]
			if !ok {
				continue
			}
			s := report.ScatterSeries{Model: roleOf(model)}
			for r, x := range xs {
				if v := y(p, r); !math.IsNaN(x) && !math.IsNaN(v) && !math.IsInf(v, 0) {
					s.X, s.Y = append(s.X, x), append(s.Y, v)
				}
			}
			if len(s.X) > 0 {
				series = append(series, s)
			}
		}
		return series
	}
	if h := featureColumn(tb, "speculation_height"); h != nil {
		if s := scatter(h, func(p eval.Predictive, r int) float64 { return tb.Y[r] - p.Point(r) }); len(s) > 0 {
			out = append(out, &report.Scatter{
				Title: "build time: residual against speculation height", XLabel: "speculation height (changes ahead on the build's path)",
				YLabel: "actual − point forecast (s)", Series: s, HasRefY: true, JitterX: 0.15,
				Note: "Each point is a holdout build. Points above the dashed line took longer than predicted; a trend with the height means the model misses how the path's length changes build time.",
			})
		}
	}
	if size := featureColumn(tb, sizeFeature); size != nil {
		// Sizes are skewed counts that may be 0: 1 + size on a log axis.
		one := make([]float64, len(size))
		for i, v := range size {
			one[i] = 1 + v
		}
		if s := scatter(one, func(p eval.Predictive, r int) float64 { return p.StdDev(r) }); len(s) > 0 {
			out = append(out, &report.Scatter{
				Title: "build time: predicted sigma against size", XLabel: "1 + affected targets (log scale)", YLabel: "predicted standard deviation (s)",
				Series: s, LogX: true,
				Note: "Each point is a holdout build: the standard deviation of its predicted build-time distribution against the number of targets the change affects. Larger builds should be less certain.",
			})
		}
	}
	return out
}

// Report columns: the models of a section by the part they play, so that the success and
// build-time tables share three columns.
const (
	roleChampion   = "champion"
	roleChallenger = "challenger"
	roleTruth      = "truth"
)

var roles = []string{roleChampion, roleChallenger, roleTruth}

// plotRoles returns the columns of byRole a section's figures draw: the champion, the
// challenger and the truth, or, when a partial bundle (Config.AllowPartial) left the
// section's models out, its baselines, so that the figures still have a series.
func plotRoles[M any](byRole map[string]M) []string {
	var out []string
	for _, role := range roles {
		if _, ok := byRole[role]; ok {
			out = append(out, role)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, name := range baselineNames() {
		if _, ok := byRole[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// bestOf returns the baseline of m with the lowest loss, and the loss; "" when m has no
// baseline.
func bestOf[M any](m map[string]M, loss func(M) float64) (string, float64) {
	best, bl := "", math.Inf(1)
	for _, name := range baselineNames() {
		if v, ok := m[name]; ok && (best == "" || loss(v) < bl) {
			best, bl = name, loss(v)
		}
	}
	return best, bl
}

// roleOf returns the report column of a model: champion, challenger or truth, or the
// baseline's own name.
func roleOf(model string) string {
	if _, ok := baselineKind[model]; ok {
		return model
	}
	switch model {
	case ModelLogistic, ModelNGBoost:
		return roleChampion
	case ModelTruth:
		return roleTruth
	}
	return roleChallenger
}

// modelsNote describes the models of a classifier section; challenger says the run
// trained the section's challenger, which the note names only then.
func modelsNote(section string, challenger bool) string {
	switch section {
	case "success":
		return "champion: logistic regression; " + challengerNote(challenger, "gradient-boosted trees (gbm-success)") + "baselines: pass-rate (the training pass rate), last-outcome (the training pass rate after the repository's latest success, after its latest failure, and before any); truth: true_p_success."
	case "conflict":
		return "Scored as P(no conflict) = 1 − P-conf, so that the failure class is the conflicts. champion: logistic regression; " + challengerNote(challenger, "gradient-boosted trees (gbm-conflict)") + "baseline: constant-rate (the training conflict rate); truth: true_p_conflict, the probability of a conflict by the overlap, sizes and blast radius of the two changes (on synthetic histories the label's precision and recall against the drawn conflicts are 1; see package features)."
	}
	return ""
}

// buildTimeNote describes the models of the build-time section; normal says the
// champion is a Normal NGBoost, challenger that the run trained the other family.
func buildTimeNote(normal, challenger bool) string {
	models := "champion: NGBoost LogNormal; " + challengerNote(challenger, "NGBoost Normal (ngboost-normal)")
	if normal {
		models = "champion: NGBoost Normal (a bundle published before LogNormal became the champion); " + challengerNote(challenger, "NGBoost LogNormal (ngboost-lognormal)")
	}
	return models + "each with parameters clipped to the range of their predictions on the training rows. Durations below 1 s count as 1 s. " +
		"Baselines: zuul-mean10 (a LogNormal whose mean is the mean of the latest 10 succeeded builds, Zuul's estimate), repo-lognormal (a LogNormal of the latest 100 training builds); truth: the log-normal moment-matched from true_mu_s and true_sigma_s."
}

func sectionNote(n int, models string) string {
	return fmt.Sprintf("%d rows. %s", n, models)
}

// noConflict returns t with the label flipped to 1 = no conflict, so that the failure
// class of eval's classifier metrics (label 0) is the conflicts. Only Y changes; the
// truth columns keep P(conflict).
func noConflict(t *features.Table) *features.Table {
	c := *t
	c.Y = complement(t.Y)
	return &c
}

// complement returns 1 - v elementwise; nil for nil.
func complement(v []float64) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = 1 - x
	}
	return out
}

func allPositive(v []float64) bool {
	for _, x := range v {
		if !(x > 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return len(v) > 0
}
