package bundleload_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/training"
)

// TestConflictChallenger serves the gbm-conflict challenger that train --challengers
// trains (the walkthrough's predictd refused it): its scorer answers P-conf with the
// bundle's conflict GBM, the other sections keep the champions, and a bundle trained
// without it is refused naming the file.
func TestConflictChallenger(t *testing.T) {
	h := goHistory(t, 4, 12)
	asOf := lastSubmission(h).Add(time.Hour)
	cfg := training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
		Seed: 1, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 20},
		Challengers: []string{training.ChallengerGBMConflict}, Gates: map[string]training.Gate{}}
	res, err := training.Train(context.Background(), h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	version, err := training.Publish(context.Background(), reg, res)
	if err != nil {
		t.Fatal(err)
	}
	if training.ChallengerGBMConflict != modelset.ChallengerGBMConflict {
		t.Error("gbm-conflict is spelled differently in training and modelset")
	}
	repo := training.RegistryName(res.Repo)
	b := mustLoad(t, reg, repo, version)
	m, err := bundleload.FromBundleChallengers(b, registry.RoleChallenger, []string{modelset.ChallengerGBMConflict})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"success": modelset.ModelLogistic, "conflict": modelset.ModelGBM, "buildtime": modelset.ModelNGBoostLogNormal}
	if !maps.Equal(m.Served, want) {
		t.Errorf("served %v, want %v", m.Served, want)
	}
	ms, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	// The served P-conf is the bundle's conflict GBM on the scorer's own pair rows: the
	// same model on the same rows reproduces exactly, and differs from the logistic.
	var pairs []scoring.PairInput
	for i := 1; i < len(h.Changes) && len(pairs) < 20; i += 7 {
		pairs = append(pairs, scoring.PairInput{Ahead: &h.Changes[i-1], Behind: &h.Changes[i]})
	}
	got := m.Scorer.PredictConflict(nil, pairs)
	x := mat.NewDense(len(pairs), features.NConflict, m.Scorer.ConflictRows(nil, pairs))
	wantGBM, logistic := ms.ConflictGBM.Predict(nil, x), ms.Conflict.Predict(nil, x)
	differ := false
	for i := range got {
		if got[i] != wantGBM[i] {
			t.Errorf("pair %d: served P-conf %v, the conflict GBM %v", i, got[i], wantGBM[i])
		}
		differ = differ || wantGBM[i] != logistic[i]
	}
	if !differ {
		t.Error("the conflict GBM and the logistic agree on every pair: the test cannot tell them apart")
	}

	// A bundle without the challenger is refused, naming the model file.
	cfg.Challengers = nil
	res, err = training.Train(context.Background(), h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := training.Publish(context.Background(), reg, res)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bundleload.FromBundleChallengers(mustLoad(t, reg, repo, v2), registry.RoleChallenger, []string{modelset.ChallengerGBMConflict})
	if !errors.Is(err, scoring.ErrNoModel) {
		t.Errorf("a bundle without gbm-conflict = %v, want ErrNoModel", err)
	}
}
