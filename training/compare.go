package training

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/features"
)

// farFuture bounds "every row" from above.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// EvalOptions choose the rows Evaluate and Compare score.
type EvalOptions struct {
	// Repo is the repository whose rows are scored; "" means the only one of the history.
	Repo string
	// From and To keep the rows whose change was submitted in [From, To); zero values
	// mean no bound.
	From, To time.Time
	// Bootstrap configures Compare's paired bootstrap (1000 resamples, 95% by default).
	Bootstrap eval.BootstrapConfig
	// Log receives progress; nil means none.
	Log *slog.Logger
	// MinRows, when positive, is the fewest success rows Evaluate and Compare score:
	// fewer, or no conflict row, fail with ErrFewRows, since metrics of a handful of rows
	// say nothing (the walkthrough's eval scored one row and exited 0). Zero means no
	// minimum beyond one row.
	MinRows int
}

// ErrFewRows wraps ErrNoData: the rows chosen by EvalOptions are fewer than MinRows,
// or none is a conflict row. The message names the counts and the window.
var ErrFewRows = fmt.Errorf("%w: too few rows to score", ErrNoData)

// historyTables builds the feature tables of the rows of h chosen by opt. The features
// are point-in-time features of h itself: every developer statistic is computed from
// h's changes decided before the row, not from a bundle's frozen developer table, so
// that rows later than a bundle's window are scored as the scorer would have scored them
// with a bundle trained just before each row (the scorer's developer table is older).
func historyTables(ctx context.Context, h *datasets.History, opt EvalOptions) (tables, string, error) {
	repo, err := resolveRepo(h, opt.Repo)
	if err != nil {
		return tables{}, "", err
	}
	to := opt.To
	if to.IsZero() {
		to = farFuture
	}
	k := knownBefore(h, repo, to)
	ix, err := features.NewIndex(ctx, k.h)
	if err != nil {
		return tables{}, "", err
	}
	t, err := windowTables(ctx, ix, k, opt.From, to)
	if err != nil {
		return tables{}, "", err
	}
	if t.success.NRows()+t.conflict.NRows()+t.buildtime.NRows() == 0 {
		first, last, _ := Span(h, repo)
		return tables{}, "", fmt.Errorf("%w: no rows of %s submitted from %s to %s with a known label to evaluate on (its changes span %s to %s); "+
			"evaluate a bundle trained on an earlier window, or score in-sample rows", ErrNoData, repo,
			timeOrOpen(opt.From), timeOrOpen(opt.To), first.Format(time.RFC3339), last.Format(time.RFC3339))
	}
	if ns, nc := t.success.NRows(), t.conflict.NRows(); opt.MinRows > 0 && (ns < opt.MinRows || nc == 0) {
		first, last, _ := Span(h, repo)
		return tables{}, "", fmt.Errorf("%w: %d success and %d conflict rows of %s submitted from %s to %s (want at least %d success rows and a conflict row; "+
			"its changes span %s to %s)", ErrFewRows, ns, nc, repo, timeOrOpen(opt.From), timeOrOpen(opt.To), opt.MinRows,
			first.Format(time.RFC3339), last.Format(time.RFC3339))
	}
	return t, repo, nil
}

// timeOrOpen formats t, or "(open)" when it is zero.
func timeOrOpen(t time.Time) string {
	if t.IsZero() {
		return "(open)"
	}
	return t.UTC().Format(time.RFC3339)
}

// Evaluate scores the models m on the rows of h chosen by opt, with the metrics and
// report of a bundle's holdout evaluation.
func Evaluate(ctx context.Context, m *Models, h *datasets.History, opt EvalOptions) (*Evaluation, error) {
	t, repo, err := historyTables(ctx, h, opt)
	if err != nil {
		return nil, err
	}
	sub := fmt.Sprintf("%s: %d success, %d conflict, %d build-time rows", repo, t.success.NRows(), t.conflict.NRows(), t.buildtime.NRows())
	return evaluateModels(t, m, "sqpredict evaluation", sub)
}

// Comparison is the paired comparison of the champion models of two bundles, A and B, on
// the same rows.
type Comparison struct {
	// A and B are the metrics of each bundle's models on the rows.
	A, B *Evaluation
	// Report is the content of the comparison report: per section, the metrics of A and
	// B and the differences B − A with their paired-bootstrap intervals.
	Report report.Input
	// Skipped lists the differences that could not be bootstrapped (for example AUC
	// when a resample holds one class), with the reason.
	Skipped []string
}

// Metrics flattens the comparison as report.MetricsMap does.
func (c *Comparison) Metrics() (map[string]float64, error) { return report.MetricsMap(c.Report) }

// Compare scores the champion models of a and b on the same rows of h (chosen by opt, as
// for Evaluate) and computes each metric's difference B − A with a paired-bootstrap
// interval (eval.PairedBootstrap and its variants): success and conflict log loss,
// Brier, accuracy, ROC AUC, ECE and failure recall; build-time NLL, CRPS, MAPE of the
// mean and 95% interval coverage.
func Compare(ctx context.Context, a, b *Models, h *datasets.History, opt EvalOptions) (*Comparison, error) {
	t, repo, err := historyTables(ctx, h, opt)
	if err != nil {
		return nil, err
	}
	pa, pb := a.Predict(t.success, t.conflict, t.buildtime), b.Predict(t.success, t.conflict, t.buildtime)
	c := &Comparison{}
	if c.A, err = evaluate(t, pa, "", ""); err != nil {
		return nil, err
	}
	if c.B, err = evaluate(t, pb, "", ""); err != nil {
		return nil, err
	}
	c.Report = report.Input{
		Title:    "sqpredict comparison: B − A",
		Subtitle: fmt.Sprintf("%s: %d success, %d conflict, %d build-time rows", repo, t.success.NRows(), t.conflict.NRows(), t.buildtime.NRows()),
		Models:   []string{"A", "B"}, A: "A", B: "B",
	}
	bc := opt.Bootstrap
	if s := t.success; s.NRows() > 0 && pa.Success != nil && pb.Success != nil {
		sec, skipped := classifierComparison("success", s.Y, pa.Success, pb.Success, c.A.Success[ModelLogistic], c.B.Success[ModelLogistic], bc)
		c.Report.Sections = append(c.Report.Sections, sec)
		c.Skipped = append(c.Skipped, skipped...)
	}
	if s := t.conflict; s.NRows() > 0 && pa.Conflict != nil && pb.Conflict != nil {
		y := complement(s.Y)
		sec, skipped := classifierComparison("conflict", y, complement(pa.Conflict), complement(pb.Conflict), c.A.Conflict[ModelLogistic], c.B.Conflict[ModelLogistic], bc)
		sec.Note = "Scored as P(no conflict), so that the failure class is the conflicts. " + sec.Note
		c.Report.Sections = append(c.Report.Sections, sec)
		c.Skipped = append(c.Skipped, skipped...)
	}
	if s := t.buildtime; s.NRows() > 0 && pa.BuildTime.Len() > 0 && pb.BuildTime.Len() > 0 {
		sec, skipped := distributionComparison(s.Y, pa.BuildTime, pb.BuildTime, c.A.BuildTime[ModelNGBoost], c.B.BuildTime[ModelNGBoost], bc)
		c.Report.Sections = append(c.Report.Sections, sec)
		c.Skipped = append(c.Skipped, skipped...)
	}
	c.Report.Sections = append(c.Report.Sections, challengerSections(c.A, c.B)...)
	for _, s := range c.Skipped {
		opt.log().Warn("difference not bootstrapped", "reason", s)
	}
	return c, nil
}

// challengerSections returns a metrics section for each challenger model that bundle A
// or B has, on the same rows as the champions (issue 15: compare showed the champions
// only). The differences are not bootstrapped: a challenger is not what either bundle
// serves by default.
func challengerSections(a, b *Evaluation) []report.Section {
	var out []report.Section
	note := func(model string) string {
		return "Challenger " + model + " of each bundle on the same rows (a bundle without it has no value); not served unless routed."
	}
	classifier := func(section, challenger string, ma, mb map[string]eval.ClassifierMetrics) {
		cls := map[string]eval.ClassifierMetrics{}
		if m, ok := ma[ModelGBM]; ok {
			cls["A"] = m
		}
		if m, ok := mb[ModelGBM]; ok {
			cls["B"] = m
		}
		if len(cls) > 0 {
			out = append(out, report.Section{Name: section + " challenger (" + challenger + ")", Note: note(challenger),
				Metrics: report.ClassifierRows(cls)})
		}
	}
	classifier("success", ChallengerGBMSuccess, a.Success, b.Success)
	classifier("conflict", ChallengerGBMConflict, a.Conflict, b.Conflict)
	// The build-time challenger is the family that is not the champion's: ngboost-normal
	// since LogNormal became the champion, ngboost-lognormal in older bundles.
	for _, model := range []string{ModelNGBoostNormal, ModelNGBoostLogNormal} {
		dist := map[string]eval.DistributionMetrics{}
		if m, ok := a.BuildTime[model]; ok {
			dist["A"] = m
		}
		if m, ok := b.BuildTime[model]; ok {
			dist["B"] = m
		}
		if len(dist) > 0 {
			out = append(out, report.Section{Name: "build time challenger (" + model + ")", Note: note(model),
				Metrics: report.DistributionRows("s", dist)})
		}
	}
	return out
}

func (o EvalOptions) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// diffAdder collects paired differences and the ones that failed.
type diffAdder struct {
	section string
	diffs   []report.Difference
	skipped []string
}

func (d *diffAdder) add(metric string, better eval.Direction, pd eval.PairedDiff, err error) {
	if err != nil {
		d.skipped = append(d.skipped, fmt.Sprintf("%s %s: %v", d.section, metric, err))
		return
	}
	d.diffs = append(d.diffs, report.Difference{Metric: metric, Better: better, PairedDiff: pd})
}

func classifierComparison(name string, y, pa, pb []float64, ma, mb eval.ClassifierMetrics, bc eval.BootstrapConfig) (report.Section, []string) {
	d := &diffAdder{section: name}
	rowLoss := func(p []float64, f func(y, p float64) float64) []float64 {
		out := make([]float64, len(y))
		for i := range y {
			out[i] = f(y[i], p[i])
		}
		return out
	}
	logLoss := func(y, p float64) float64 {
		p = min(max(p, eval.LogLossEpsilon), 1-eval.LogLossEpsilon)
		if y == 1 {
			return -math.Log(p)
		}
		return -math.Log1p(-p)
	}
	brier := func(y, p float64) float64 { return (p - y) * (p - y) }
	correct := func(y, p float64) float64 {
		if (p >= eval.DecisionThreshold) == (y == 1) {
			return 1
		}
		return 0
	}
	pd, err := eval.PairedBootstrapMean(rowLoss(pa, logLoss), rowLoss(pb, logLoss), eval.LowerIsBetter, bc)
	d.add("log loss", eval.LowerIsBetter, pd, err)
	pd, err = eval.PairedBootstrapMean(rowLoss(pa, brier), rowLoss(pb, brier), eval.LowerIsBetter, bc)
	d.add("Brier", eval.LowerIsBetter, pd, err)
	pd, err = eval.PairedBootstrapMean(rowLoss(pa, correct), rowLoss(pb, correct), eval.HigherIsBetter, bc)
	d.add("accuracy", eval.HigherIsBetter, pd, err)
	pd, err = eval.PairedBootstrapAUC(y, pa, pb, bc)
	d.add("ROC AUC", eval.HigherIsBetter, pd, err)
	pd, err = eval.PairedBootstrap(y, pa, pb, func(y, p []float64) float64 {
		_, ece := eval.Calibration(y, p, eval.CalibrationBins)
		return ece
	}, eval.LowerIsBetter, bc)
	d.add("ECE", eval.LowerIsBetter, pd, err)
	pd, err = eval.PairedBootstrap(y, pa, pb, func(y, p []float64) float64 {
		_, recall, _ := eval.FailureScores(y, p)
		return recall
	}, eval.HigherIsBetter, bc)
	d.add("failure recall", eval.HigherIsBetter, pd, err)
	sec := report.Section{
		Name:    name,
		Note:    fmt.Sprintf("%d rows; champion models of each bundle.", len(y)),
		Metrics: report.ClassifierRows(map[string]eval.ClassifierMetrics{"A": ma, "B": mb}),
		Diffs:   d.diffs,
		Plots: []report.Plot{&report.Reliability{Title: name + ": reliability", Series: []report.ReliabilitySeries{
			{Model: "A", Bins: ma.Calibration}, {Model: "B", Bins: mb.Calibration}}}},
	}
	return sec, d.skipped
}

func distributionComparison(y []float64, pa, pb eval.Predictive, ma, mb eval.DistributionMetrics, bc eval.BootstrapConfig) (report.Section, []string) {
	d := &diffAdder{section: "build time"}
	perRow := func(p eval.Predictive, f func(i int) float64) []float64 {
		out := make([]float64, len(y))
		for i := range y {
			out[i] = f(i)
		}
		return out
	}
	nll := func(p eval.Predictive) []float64 {
		return perRow(p, func(i int) float64 { return -p.LogPDF(i, y[i]) })
	}
	crps := func(p eval.Predictive) []float64 { return perRow(p, func(i int) float64 { return p.CRPS(i, y[i]) }) }
	cover := func(p eval.Predictive) []float64 {
		return perRow(p, func(i int) float64 {
			lo, hi := p.Quantile(i, (1-0.95)/2), p.Quantile(i, (1+0.95)/2)
			if y[i] >= lo && y[i] <= hi {
				return 1
			}
			return 0
		})
	}
	pd, err := eval.PairedBootstrapMean(nll(pa), nll(pb), eval.LowerIsBetter, bc)
	d.add("NLL", eval.LowerIsBetter, pd, err)
	pd, err = eval.PairedBootstrapMean(crps(pa), crps(pb), eval.LowerIsBetter, bc)
	d.add("CRPS (s)", eval.LowerIsBetter, pd, err)
	// MAPE of the point forecasts (eval.Predictive.Point) over the rows with y != 0, as
	// eval.MAPE.
	var apeA, apeB []float64
	for i := range y {
		if y[i] != 0 {
			apeA = append(apeA, 100*math.Abs(pa.Point(i)-y[i])/math.Abs(y[i]))
			apeB = append(apeB, 100*math.Abs(pb.Point(i)-y[i])/math.Abs(y[i]))
		}
	}
	pd, err = eval.PairedBootstrapMean(apeA, apeB, eval.LowerIsBetter, bc)
	d.add("MAPE of point forecast (%)", eval.LowerIsBetter, pd, err)
	// Coverage is best at its nominal level, not at 1: compare the distance to it.
	ca, cb := cover(pa), cover(pb)
	pd, err = eval.PairedBootstrapFunc(len(y), func(rows []int) (a, b float64) {
		var sa, sb float64
		for _, r := range rows {
			sa += ca[r]
			sb += cb[r]
		}
		n := float64(len(rows))
		return math.Abs(sa/n - 0.95), math.Abs(sb/n - 0.95)
	}, eval.LowerIsBetter, bc)
	d.add("|95% coverage − 0.95|", eval.LowerIsBetter, pd, err)
	sec := report.Section{
		Name:    "build time",
		Note:    fmt.Sprintf("%d rows; champion models of each bundle.", len(y)),
		Metrics: report.DistributionRows("s", map[string]eval.DistributionMetrics{"A": ma, "B": mb}),
		Diffs:   d.diffs,
		Plots: []report.Plot{
			&report.PITHistogram{Title: "build time: PIT", Series: []report.PITSeries{{Model: "A", Fractions: ma.PIT}, {Model: "B", Fractions: mb.PIT}}},
			&report.Coverage{Title: "build time: interval coverage", Series: []report.CoverageSeries{
				{Model: "A", Nominal: eval.CoverageLevels[:], Empirical: ma.Coverage[:]},
				{Model: "B", Nominal: eval.CoverageLevels[:], Empirical: mb.Coverage[:]}}},
		},
	}
	return sec, d.skipped
}
