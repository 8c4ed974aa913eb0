package bundleload_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/training"
)

// TestRelativeChampion publishes a bundle whose LogNormal champion is relative to the
// recent mean (issue 12 item 1) and serves it: the scorer predictd builds must answer
// what the loaded model predicts, reference included, and not what the same trees
// predict without it.
func TestRelativeChampion(t *testing.T) {
	h := goHistory(t, 2, 6)
	cfg := training.Config{AsOf: lastSubmission(h).Add(time.Hour), Window: training.Duration(30 * 24 * time.Hour), Seed: 1,
		BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 20, Relative: training.RelativeOn}}
	res, err := training.Train(context.Background(), h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, b := publishAndLoad(t, res)
	champ, err := bundleload.FromBundle(b, registry.RoleChampion)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	if ms.BuildTime.Relative == nil {
		t.Fatal("the loaded champion is not relative")
	}
	abs := *ms.BuildTime
	abs.Relative = nil
	scorerOf := func(bt scoring.DistPredictor) *scoring.Scorer {
		s, err := scoring.NewScorer(ms.Success, ms.Conflict, bt, ms.DevTable)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	in := []scoring.BuildInput{{Change: &h.Changes[0]}, {Change: &h.Changes[len(h.Changes)-1]}}
	want, without := scorerOf(ms.BuildTime).PredictBuildTime(nil, in), scorerOf(&abs).PredictBuildTime(nil, in)
	got := champ.Scorer.PredictBuildTime(nil, in)
	if !slices.Equal(got, want) {
		t.Errorf("served relative champion predicts %v, want the loaded model's %v", got, want)
	}
	if slices.Equal(got, without) {
		t.Errorf("served relative champion predicts %v, what its trees predict without the reference", got)
	}
}
