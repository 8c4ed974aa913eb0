package main

import (
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/training"
)

// TestWriteChallengers checks that the train summary prints every challenger's holdout
// loss and skill and warns about the one worse than its section's best baseline only.
func TestWriteChallengers(t *testing.T) {
	e := &training.Evaluation{
		Success:   map[string]eval.ClassifierMetrics{training.ModelLogistic: {LogLoss: 0.4}, training.ModelGBM: {LogLoss: 6.8}, training.BaselinePassRate: {LogLoss: 0.5}},
		BuildTime: map[string]eval.DistributionMetrics{training.ModelNGBoost: {NLL: 6}, training.ModelNGBoostNormal: {NLL: 5.5}, training.BaselineRepoLogNormal: {NLL: 6.5}},
	}
	var b strings.Builder
	writeChallengers(&b, e.Challengers())
	out := b.String()
	for _, want := range []string{
		"challenger gbm of success: holdout log_loss 6.8000, skill -12.6000 over pass-rate",
		"challenger ngboost-normal of buildtime: holdout nll 5.5000, skill 1.0000 over repo-lognormal",
		"WARNING: challenger gbm of success is worse than the best baseline pass-rate",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "WARNING"); n != 1 {
		t.Errorf("%d warnings, want 1 (gbm only):\n%s", n, out)
	}
}
