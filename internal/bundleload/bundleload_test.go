package bundleload_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/training"
)

func TestLoader(t *testing.T) {
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, version, err := defaultbundle.Install(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	load := bundleload.Loader(reg, repo)
	m, err := load(registry.RoleChallenger, version)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != version || m.Role != registry.RoleChallenger || m.Scorer == nil || m.Manifest.Repo != repo {
		t.Errorf("Loader = %+v, want challenger %s of %s with a scorer", m, version, repo)
	}
	if _, err := load(registry.RoleChampion, "20990101T000000Z-000001"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Loader(missing version) = %v, want ErrNotFound", err)
	}
}

// TestServedBaseline marks the default bundle's conflict section as served by its
// constant-rate baseline (what Publish records with --baseline-gate serve when the
// champion loses to it, as this bundle's conflict champion does): its scorer must answer
// P-conf with the baseline, and the success model stays the champion.
func TestServedBaseline(t *testing.T) {
	dir := t.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, registry.ManifestName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	man["extra"].(map[string]any)[training.ExtraServedBaselines] = "conflict=" + training.BaselineConstantRate
	if raw, err = json.Marshal(man); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	m, err := bundleload.FromBundle(b, registry.RoleChampion)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	a := datasets.Change{ChangeID: "a", Author: "x", LinesAdded: 10, AffectedTargets: []string{"t"}}
	c := datasets.Change{ChangeID: "c", Author: "y", LinesAdded: 500, AffectedTargets: []string{"t", "u"}}
	pairs := []scoring.PairInput{{Ahead: &a, Behind: &c}, {Ahead: &c, Behind: &a}}
	got := m.Scorer.PredictConflict(nil, pairs)
	want := ms.Baselines[training.BaselineConstantRate].Probability(nil)
	if got[0] != want || got[1] != want {
		t.Errorf("served constant-rate: P-conf = %v, want %v for both pairs", got, want)
	}
	full, err := scoring.NewScorer(ms.Success, ms.Conflict, ms.BuildTime, ms.DevTable)
	if err != nil {
		t.Fatal(err)
	}
	in := []scoring.SuccessInput{{Change: &a}, {Change: &c}}
	if x, y := m.Scorer.PredictSuccess(nil, in), full.PredictSuccess(nil, in); x[0] != y[0] || x[1] != y[1] {
		t.Errorf("P-succ = %v, want the champion's %v", x, y)
	}
	// A served baseline the bundle lacks, or of the wrong section, is refused.
	for _, bad := range []string{"conflict=pass-rate", "conflict=median"} {
		if _, err := training.ServedBaselines(map[string]string{training.ExtraServedBaselines: bad}); err == nil {
			t.Errorf("ServedBaselines(%q): no error", bad)
		}
	}
}

// TestNoConflictModel trains on a history without conflict labels (no affected targets),
// which publishes a bundle without a P-conf model, and checks that it is served: P-conf
// questions are refused with ErrNoConflictModel, pairs get the stated prior.
func TestNoConflictModel(t *testing.T) {
	h, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 2, Seed: 4, ChangesPerHour: 6})
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Changes {
		h.Changes[i].AffectedTargets = nil
	}
	h.Pairs = nil
	asOf := h.Changes[len(h.Changes)-1].SubmittedAt.Add(time.Hour)
	res, err := training.Train(context.Background(), h, training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
		Seed: 1, ConflictPrior: 0.07, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 30},
		AllowMissingFeatures: true}) // the affected-target features are missing in every row, as in imports
	if err != nil {
		t.Fatalf("Train without conflict labels: %v", err)
	}
	if res.Models.Conflict != nil || res.Models.LeftOut[training.FileConflict] == "" {
		t.Fatalf("conflict model %v, left out %v: want it left out with a reason", res.Models.Conflict, res.Models.LeftOut)
	}
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	version, err := training.Publish(context.Background(), reg, res)
	if err != nil {
		t.Fatal(err)
	}
	repo := training.RegistryName(res.Repo)
	m, err := bundleload.Loader(reg, repo)(registry.RoleChampion, version)
	if err != nil {
		t.Fatalf("loading a bundle without P-conf: %v", err)
	}
	if err := m.Scorer.ConflictModel(); !errors.Is(err, scoring.ErrNoConflictModel) || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("ConflictModel = %v, want ErrNoConflictModel saying why", err)
	}
	a, c := h.Changes[0], h.Changes[1]
	if got := m.Scorer.PredictConflict(nil, []scoring.PairInput{{Ahead: &a, Behind: &c}}); got[0] != 0.07 {
		t.Errorf("P-conf without a model = %v, want the prior 0.07", got)
	}
	if p := m.Scorer.PredictSuccess(nil, []scoring.SuccessInput{{Change: &c}}); !(p[0] > 0 && p[0] < 1) {
		t.Errorf("P-succ = %v", p)
	}
}
