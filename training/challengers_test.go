package training

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/eval"
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
