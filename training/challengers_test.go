package training

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
)

// TestChallengers checks the challenger headlines against skills computed by hand from the
// losses, that only challengers present are listed, and the worse-than-baseline flag.
func TestChallengers(t *testing.T) {
	const tol = 1e-12 // one division or subtraction
	e := &Evaluation{
		Success: map[string]eval.ClassifierMetrics{
			ModelLogistic:       {LogLoss: 0.40},
			ModelGBM:            {LogLoss: 0.60},
			BaselinePassRate:    {LogLoss: 0.50},
			BaselineLastOutcome: {LogLoss: 0.55},
			ModelTruth:          {LogLoss: 0.30},
		},
		Conflict: map[string]eval.ClassifierMetrics{ModelLogistic: {LogLoss: 0.2}, BaselineConstantRate: {LogLoss: 0.25}},
		BuildTime: map[string]eval.DistributionMetrics{
			ModelNGBoost:          {NLL: 6.0},
			ModelNGBoostNormal:    {NLL: 5.5},
			BaselineZuulMean10:    {NLL: 7.0},
			BaselineRepoLogNormal: {NLL: 6.5},
		},
	}
	got := e.Challengers()
	if len(got) != 2 {
		t.Fatalf("Challengers() = %+v, want gbm (success) and ngboost-normal (buildtime) only", got)
	}
	want := []struct {
		section, model, base string
		loss, skill          float64
		worse                bool
	}{
		{"success", ModelGBM, BaselinePassRate, 0.60, 1 - 0.60/0.50, true},
		{"buildtime", ModelNGBoostNormal, BaselineRepoLogNormal, 5.5, 6.5 - 5.5, false},
	}
	for i, w := range want {
		c := got[i]
		if c.Section != w.section || c.Model != w.model || c.Baseline != w.base || c.Loss != w.loss {
			t.Errorf("challenger %d = %+v, want section %s model %s baseline %s loss %v", i, c, w.section, w.model, w.base, w.loss)
		}
		if !scalar.EqualWithinAbsOrRel(c.Skill, w.skill, tol, tol) {
			t.Errorf("%s skill = %v, want %v", c.Model, c.Skill, w.skill)
		}
		if c.WorseThanBaseline() != w.worse {
			t.Errorf("%s WorseThanBaseline = %v, want %v", c.Model, c.WorseThanBaseline(), w.worse)
		}
	}
	// The skill agrees with the metric keys of Metrics.
	m := e.Metrics()
	if !scalar.EqualWithinAbsOrRel(got[0].Skill, m["success.gbm.skill_log_loss"], tol, tol) {
		t.Errorf("success gbm skill %v, Metrics says %v", got[0].Skill, m["success.gbm.skill_log_loss"])
	}
	nan := ChallengerScore{Baseline: BaselinePassRate, Skill: math.NaN()}
	if !nan.WorseThanBaseline() {
		t.Error("a NaN skill must count as worse than the baseline")
	}
	if (&Evaluation{}).Challengers() != nil {
		t.Error("an evaluation without challengers must list none")
	}
}

// TestReportNamesOnlyTrainedChallengers checks that the section notes of report.html
// name a challenger only when the run scored it (the walkthrough's report named
// gbm-success and NGBoost Normal although neither was trained).
func TestReportNamesOnlyTrainedChallengers(t *testing.T) {
	y := []float64{1, 1, 0, 1, 0, 1, 1, 1}
	success := handTable(features.KindSuccess, "", nil, y)
	durations := []float64{60, 75, 90, 80, 120, 65}
	buildtime := handTable(features.KindBuildTime, "", nil, durations)
	conflict := handTable(features.KindConflict, "", nil, nil)
	tb := tables{success: success, conflict: conflict, buildtime: buildtime}
	p := []float64{0.8, 0.7, 0.3, 0.9, 0.4, 0.6, 0.8, 0.7}
	mu, sigma := make([]float64, len(durations)), make([]float64, len(durations))
	for i := range mu {
		mu[i], sigma[i] = 4.4, 0.3
	}
	ln := eval.Predictive{Family: eval.FamilyLogNormal, Mu: mu, Sigma: sigma}
	notes := func(pr *Predictions) map[string]string {
		t.Helper()
		e, err := evaluate(tb, pr, "t", "")
		if err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		out := map[string]string{}
		for _, s := range e.Report.Sections {
			out[s.Name] = s.Note
		}
		return out
	}
	without := notes(&Predictions{Success: p, BuildTime: ln})
	if n := without["success"]; n == "" || strings.Contains(n, "challenger") {
		t.Errorf("success note without a challenger = %q, want no challenger named", n)
	}
	if n := without["build time"]; n == "" || strings.Contains(n, "challenger") {
		t.Errorf("build-time note without a challenger = %q, want no challenger named", n)
	}
	nrm := eval.Predictive{Family: eval.FamilyNormal, Mu: []float64{70, 70, 90, 85, 110, 70}, Sigma: []float64{10, 10, 10, 10, 10, 10}}
	with := notes(&Predictions{Success: p, SuccessGBM: p, BuildTime: ln, BuildTimeChallenger: nrm, BuildTimeChallengerName: ModelNGBoostNormal})
	if n := with["success"]; !strings.Contains(n, "challenger: gradient-boosted trees (gbm-success)") {
		t.Errorf("success note with gbm = %q, want it named", n)
	}
	if n := with["build time"]; !strings.Contains(n, "challenger: NGBoost Normal (ngboost-normal)") {
		t.Errorf("build-time note with the Normal challenger = %q, want it named", n)
	}
}
