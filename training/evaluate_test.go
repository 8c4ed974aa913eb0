package training

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/features"
)

// TestTruthPredictive checks the moment matching of the true build-time distribution
// against synth.MeanSD, the generator's own map from log-normal parameters to the mean
// and standard deviation it writes as true_mu_s and true_sigma_s.
func TestTruthPredictive(t *testing.T) {
	const tol = 1e-12 // closed forms both ways; only rounding differs
	logMu := []float64{3, 5.5, 7.2, 9}
	logSigma := []float64{0.05, 0.3, 0.8, 1.5}
	mean, sd := make([]float64, len(logMu)), make([]float64, len(logMu))
	for i := range logMu {
		mean[i], sd[i] = synth.MeanSD(logMu[i], logSigma[i])
	}
	tb := &features.Table{Y: make([]float64, len(mean)), Truth: []features.Truth{
		{Name: "true_mu_s", Values: mean}, {Name: "true_sigma_s", Values: sd}}}
	p, ok := truthPredictive(tb)
	if !ok || p.Family != eval.FamilyLogNormal {
		t.Fatalf("truthPredictive: ok %v family %v", ok, p.Family)
	}
	for i := range logMu {
		if !scalar.EqualWithinAbsOrRel(p.Mu[i], logMu[i], tol, tol) || !scalar.EqualWithinAbsOrRel(p.Sigma[i], logSigma[i], tol, tol) {
			t.Errorf("row %d: (mu, sigma) = (%v, %v), want (%v, %v)", i, p.Mu[i], p.Sigma[i], logMu[i], logSigma[i])
		}
	}
	tb.Truth[1].Values = []float64{1, math.NaN(), 1, 1}
	if _, ok := truthPredictive(tb); ok {
		t.Error("truthPredictive with a NaN sigma = ok, want not")
	}
}

// TestMetricsKeys checks the flattening of an Evaluation and the Bayes gaps against
// their definitions.
func TestMetricsKeys(t *testing.T) {
	e := &Evaluation{
		Success: map[string]eval.ClassifierMetrics{ModelLogistic: {N: 10, LogLoss: 0.5, ROCAUC: 0.8},
			ModelGBM: {LogLoss: 0.45}, ModelTruth: {LogLoss: 0.4}, BaselinePassRate: {LogLoss: 0.6}},
		Conflict: map[string]eval.ClassifierMetrics{ModelLogistic: {LogLoss: 0.12}, ModelTruth: {LogLoss: 0.1},
			BaselineConstantRate: {LogLoss: 0.12}},
		BuildTime: map[string]eval.DistributionMetrics{ModelNGBoost: {NLL: 7.5, Coverage: [3]float64{0.5, 0.8, 0.9}},
			ModelTruth: {NLL: 7.25}},
		Selected: map[string]float64{"success.c": 0.01, "success.gbm.num_leaves": 4},
	}
	m := e.Metrics()
	for k, want := range map[string]float64{
		"success.n": 10, "success.log_loss": 0.5, "success.auc": 0.8, "success.gbm.log_loss": 0.45,
		"success.truth.log_loss": 0.4, "success.bayes_gap_log_loss": 0.1, "success.gbm.bayes_gap_log_loss": 0.05,
		"buildtime.nll": 7.5, "buildtime.coverage95": 0.9, "buildtime.bayes_gap_nll": 0.25,
		// (0.6 − 0.5)/(0.6 − 0.4) and (0.6 − 0.45)/(0.6 − 0.4); a champion no better
		// than the constant has skill 0.
		"success.bayes_skill_log_loss": 0.5, "success.gbm.bayes_skill_log_loss": 0.75,
		"conflict.bayes_skill_log_loss": 0,
		// Hyper-parameters chosen on validation are carried as they are.
		"success.c": 0.01, "success.gbm.num_leaves": 4,
	} {
		if got, ok := m[k]; !ok || !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
			t.Errorf("Metrics()[%q] = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if _, ok := m["success.truth.bayes_gap_log_loss"]; ok {
		t.Error("truth has a gap to itself")
	}
	for _, k := range []string{"success.truth.bayes_skill_log_loss", "success.pass-rate.bayes_skill_log_loss", "buildtime.bayes_skill_log_loss"} {
		if _, ok := m[k]; ok {
			t.Errorf("Metrics()[%q] present, want only models' skill", k)
		}
	}
	for k := range m {
		last := k[strings.LastIndexByte(k, '.')+1:]
		if _, ok := metricDirection(k); ok && slices.Contains(paramMetrics, last) {
			t.Errorf("hyper-parameter %q has a direction, so gates would read it", k)
		}
		if _, ok := metricDirection(k); !ok && !slices.Contains(paramMetrics, last) && !map[string]bool{"n": true, "failures": true, "coverage50": true, "coverage80": true, "coverage95": true}[last] {
			t.Errorf("metric %q has no direction", k)
		}
	}
}

// TestEvaluatePartialReport checks that the report of a partial bundle whose success
// and build-time models were left out (a one-class success table, no durations: issue
// 12's real-data run, where `train --allow-partial` crashed in the report with "success:
// reliability": no data: no series) is written, and that its figures draw the
// baselines instead.
func TestEvaluatePartialReport(t *testing.T) {
	nan := math.NaN()
	y := []float64{1, 1, 0, 1, 0, 1, 1, 1}
	last := []float64{nan, 0, 0, 1, 1, 0, 0, 0}
	success := handTable(features.KindSuccess, "repo_last_failed", last, y)
	buildtime := handTable(features.KindBuildTime, "", nil, []float64{60, 75, 90, 80, 120, 65})
	conflict := handTable(features.KindConflict, "", nil, nil)
	m := &Models{Baselines: map[string]*Baseline{}}
	for kind, tb := range map[features.Kind]*features.Table{features.KindSuccess: success, features.KindBuildTime: buildtime} {
		for _, name := range Baselines[kind] {
			b, err := FitBaseline(name, tb)
			if err != nil {
				t.Fatalf("FitBaseline(%s): %v", name, err)
			}
			m.Baselines[name] = b
		}
	}
	tb := tables{success: success, conflict: conflict, buildtime: buildtime}
	e, err := evaluate(tb, m.Predict(success, conflict, buildtime), "partial", "")
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	if err := report.Write(t.TempDir(), e.Report); err != nil {
		t.Fatalf("report.Write of a bundle without success and build-time models: %v", err)
	}
	for _, sec := range e.Report.Sections {
		if len(sec.Plots) == 0 {
			t.Errorf("section %q has no figure, want the baselines' figures", sec.Name)
		}
		if sec.Name == "success" {
			rel, ok := sec.Plots[0].(*report.Reliability)
			if !ok || len(rel.Series) != len(Baselines[features.KindSuccess]) {
				t.Errorf("success reliability = %#v, want one series per success baseline", sec.Plots[0])
			}
		}
	}
	if len(e.Report.Sections) != 2 {
		t.Errorf("report has %d sections, want success and build time", len(e.Report.Sections))
	}
}
