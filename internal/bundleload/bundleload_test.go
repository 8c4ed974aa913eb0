package bundleload_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/modelset"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
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
	h := goHistory(t, 2, 6)
	for i := range h.Changes {
		h.Changes[i].AffectedTargets = nil
	}
	h.Pairs = nil
	asOf := lastSubmission(h).Add(time.Hour)
	res, err := training.Train(context.Background(), h, training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
		Seed: 1, ConflictPrior: 0.07, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 30},
		AllowMissingFeatures: true}) // the affected-target features are missing in every row, as in imports
	if err != nil {
		t.Fatalf("Train without conflict labels: %v", err)
	}
	if res.Models.Conflict != nil || res.Models.LeftOut[training.FileConflict] == "" {
		t.Fatalf("conflict model %v, left out %v: want it left out with a reason", res.Models.Conflict, res.Models.LeftOut)
	}
	reg, b := publishAndLoad(t, res)
	m, err := bundleload.Loader(reg, b.Manifest.Repo)(registry.RoleChampion, b.Manifest.Version)
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

// editManifest rewrites the extra keys of the manifest of the bundle folder dir.
func editManifest(t *testing.T, dir string, extra map[string]string) {
	t.Helper()
	path := filepath.Join(dir, registry.ManifestName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	ex, _ := man["extra"].(map[string]any)
	if ex == nil {
		ex = map[string]any{}
		man["extra"] = ex
	}
	for k, v := range extra {
		ex[k] = v
	}
	if raw, err = json.Marshal(man); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLogNormalChampion trains the LogNormal NGBoost champion and the Normal challenger,
// and checks that the loaded model serves the LogNormal (BuildFamily, Served) and
// predicts its moments; that the same bundle with the manifest of a bundle published
// before LogNormal became the champion (build-time champion ngboost-normal, or none
// named) serves its Normal NGBoost; that a build-time baseline served in its place is
// LogNormal too; and that a champion the bundle lacks or does not know is refused.
func TestLogNormalChampion(t *testing.T) {
	h := goHistory(t, 2, 6)
	asOf := lastSubmission(h).Add(time.Hour)
	cfg := training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
		Seed: 1, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 20}}
	publish := func(challengers ...string) *registry.Bundle {
		t.Helper()
		cfg.Challengers = challengers
		res, err := training.Train(context.Background(), h, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, b := publishAndLoad(t, res)
		return b
	}
	b := publish(training.ChallengerNGBoostNormal)
	champ, err := bundleload.FromBundle(b, registry.RoleChampion)
	if err != nil {
		t.Fatal(err)
	}
	if champ.BuildFamily != scoring.BuildLogNormal || champ.Served["buildtime"] != modelset.ModelNGBoostLogNormal {
		t.Errorf("trained champion: family %v, served %v; want LogNormal, %s", champ.BuildFamily, champ.Served, modelset.ModelNGBoostLogNormal)
	}

	load := func(b *registry.Bundle, extra map[string]string) (*server.Model, error) {
		t.Helper()
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(b.Dir)); err != nil {
			t.Fatal(err)
		}
		editManifest(t, dir, extra)
		lb, err := registry.LoadDir(dir, training.SchemaHash())
		if err != nil {
			t.Fatal(err)
		}
		return bundleload.FromBundle(lb, registry.RoleChampion)
	}
	ms, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	if ms.BuildTime.Family() != ngboost.LogNormal || ms.BuildTimeChallenger == nil || ms.BuildTimeChallenger.Family() != ngboost.Normal {
		t.Fatalf("loaded build-time models: champion %v, challenger %v", ms.BuildTime.Family(), ms.BuildTimeChallenger)
	}
	in := []scoring.BuildInput{{Change: &h.Changes[0]}, {Change: &h.Changes[1]}}
	scorerOf := func(bt scoring.DistPredictor) *scoring.Scorer {
		s, err := scoring.NewScorer(ms.Success, ms.Conflict, bt, ms.DevTable)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	wantLN, wantN := scorerOf(ms.BuildTime).PredictBuildTime(nil, in), scorerOf(ms.BuildTimeChallenger).PredictBuildTime(nil, in)
	// Same model files, same rows: the outputs reproduce exactly.
	if got := champ.Scorer.PredictBuildTime(nil, in); !slices.Equal(got, wantLN) {
		t.Errorf("LogNormal champion predicts %v, want the LogNormal NGBoost's %v", got, wantLN)
	}
	if slices.Equal(wantLN, wantN) {
		t.Errorf("the Normal challenger predicts what the LogNormal champion does (%v)", wantN)
	}
	for _, old := range []string{"success=logistic conflict=logistic buildtime=ngboost-normal", "success=logistic conflict=logistic"} {
		m, err := load(b, map[string]string{modelset.ExtraChampions: old})
		if err != nil {
			t.Fatalf("champions %q: %v", old, err)
		}
		if m.BuildFamily != scoring.BuildNormal || m.Served["buildtime"] != modelset.ModelNGBoostNormal {
			t.Errorf("champions %q: family %v, served %v; want Normal, %s", old, m.BuildFamily, m.Served, modelset.ModelNGBoostNormal)
		}
		if got := m.Scorer.PredictBuildTime(nil, in); !slices.Equal(got, wantN) {
			t.Errorf("champions %q: predicts %v, want the Normal NGBoost's %v", old, got, wantN)
		}
	}

	m, err := load(b, map[string]string{training.ExtraServedBaselines: "buildtime=" + training.BaselineZuulMean10})
	if err != nil {
		t.Fatal(err)
	}
	if m.BuildFamily != scoring.BuildLogNormal || m.Served["buildtime"] != "baseline:"+training.BaselineZuulMean10 {
		t.Errorf("served build-time baseline: family %v, served %v; want LogNormal, baseline:%s", m.BuildFamily, m.Served, training.BaselineZuulMean10)
	}

	for _, bad := range []string{"buildtime=gbm", "buildtime"} {
		if _, err := load(b, map[string]string{modelset.ExtraChampions: bad}); err == nil {
			t.Errorf("champions %q: no error", bad)
		}
	}
	// A bundle trained without the Normal challenger: naming the Normal the champion is
	// refused, naming its file.
	only := publish()
	if slices.Contains(only.Files(), training.FileBuildTime) {
		t.Fatalf("a bundle without challengers holds %s", training.FileBuildTime)
	}
	if _, err := load(only, map[string]string{modelset.ExtraChampions: "buildtime=ngboost-normal"}); err == nil || !strings.Contains(err.Error(), training.FileBuildTime) {
		t.Errorf("Normal champion without its file: %v, want an error naming %s", err, training.FileBuildTime)
	}
}

// memLog keeps the prediction records it is given.
type memLog struct{ recs []server.PredictionRecord }

func (l *memLog) LogPredictions(recs []server.PredictionRecord) error {
	l.recs = append(l.recs, recs...)
	return nil
}

// TestChallengerModels serves a bundle's own challenger models (issue 15 item 11): with
// ChallengerLoader and ChallengerFollowsChampion, loading the champion loads its
// gbm-success and ngboost-normal models as the challenger of the same version, which
// answers the share of changes routed to it, or runs in shadow and is only logged.
func TestChallengerModels(t *testing.T) {
	h := goHistory(t, 2, 6)
	asOf := lastSubmission(h).Add(time.Hour)
	res, err := training.Train(context.Background(), h, training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
		Seed: 1, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 20},
		Challengers: []string{training.ChallengerGBMSuccess, training.ChallengerNGBoostNormal}})
	if err != nil {
		t.Fatal(err)
	}
	reg, b := publishAndLoad(t, res)
	repo, version := b.Manifest.Repo, b.Manifest.Version
	names, err := bundleload.ParseChallengerModels("gbm-success, ngboost-normal,gbm-success")
	if err != nil || !slices.Equal(names, []string{modelset.ChallengerGBMSuccess, modelset.ChallengerNGBoostNormal}) {
		t.Fatalf("ParseChallengerModels = %v, %v", names, err)
	}
	if _, err := bundleload.ParseChallengerModels("gbm"); err == nil {
		t.Error("ParseChallengerModels(gbm): no error")
	}
	// The trainer's names are the same.
	if training.ChallengerGBMSuccess != modelset.ChallengerGBMSuccess || training.ChallengerNGBoostLogNormal != modelset.ChallengerNGBoostLogNormal ||
		training.ChallengerNGBoostNormal != modelset.ChallengerNGBoostNormal {
		t.Error("challenger names differ between training and modelset")
	}

	models := &server.Models{}
	rl := &server.Reloader{Models: models, Load: bundleload.ChallengerLoader(reg, repo, names), ChallengerFollowsChampion: true}
	if err := rl.Reload(registry.RoleChampion, version); err != nil {
		t.Fatal(err)
	}
	ch := models.Challenger()
	if ch == nil || ch.Version != version || ch.Role != registry.RoleChallenger {
		t.Fatalf("challenger = %+v, want the challenger models of %s", ch, version)
	}
	want := map[string]string{"success": modelset.ModelGBM, "conflict": modelset.ModelLogistic, "buildtime": modelset.ModelNGBoostNormal}
	if !maps.Equal(ch.Served, want) || ch.BuildFamily != scoring.BuildNormal {
		t.Errorf("challenger serves %v (%v), want %v (Normal)", ch.Served, ch.BuildFamily, want)
	}
	// A challenger pointer event changes nothing.
	events := make(chan registry.Event, 1)
	events <- registry.Event{Role: registry.RoleChallenger}
	close(events)
	rl.Follow(events)
	if models.Challenger() != ch {
		t.Error("a challenger pointer event replaced the challenger models")
	}

	ms, err := training.LoadModels(mustLoad(t, reg, repo, version))
	if err != nil {
		t.Fatal(err)
	}
	c := h.Changes[len(h.Changes)-1]
	x := mat.NewDense(1, features.NSuccess, nil)
	features.Success(x.RawRowView(0), &c, features.Speculation{}, ms.DevTable.Lookup(c.Author), ms.DevTable.Recent(ms.DevTable.Repos()[0], &c))
	wantGBM, wantLogistic := ms.SuccessGBM.Predict(nil, x)[0], ms.Success.Predict(nil, x)[0]
	req := &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{
		Change:      server.ChangeToProto(&c),
		Speculation: &pb.SpeculationCounts{Succeeded: new(float64), Failed: new(float64), Height: new(float64), ConflictsCount: new(float64), QueueAhead: new(float64), PathChanges: new(float64), PathLinesChanged: new(float64)},
	}}}
	for _, tc := range []struct {
		name   string
		cfg    server.Config
		role   pb.ModelRole
		want   float64
		logged int
	}{
		{"routed", server.Config{ChallengerShare: 1}, pb.ModelRole_MODEL_ROLE_CHALLENGER, wantGBM, 1},
		{"shadow", server.Config{ChallengerShare: 1, Shadow: true}, pb.ModelRole_MODEL_ROLE_CHAMPION, wantLogistic, 2},
	} {
		var lg memLog
		tc.cfg.Repo, tc.cfg.PredictionLog = c.Repo, &lg
		svc, err := server.NewPredictor(tc.cfg, models)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := svc.PredictSuccess(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.GetPredictions()[0]
		// Same model, same row: the outputs reproduce exactly.
		if p.GetModel().GetRole() != tc.role || p.GetModel().GetVersion() != version || p.GetPSucc() != tc.want {
			t.Errorf("%s: p_succ %v by %v, want %v by %v %s", tc.name, p.GetPSucc(), p.GetModel(), tc.want, tc.role, version)
		}
		if len(lg.recs) != tc.logged {
			t.Errorf("%s: %d prediction records, want %d", tc.name, len(lg.recs), tc.logged)
		}
		if tc.name == "shadow" && (lg.recs[1].Role != "challenger" || lg.recs[1].Served || *lg.recs[1].PSucc != wantGBM) {
			t.Errorf("shadow record = %+v, want the challenger's unserved %v", lg.recs[1], wantGBM)
		}
	}
	if wantGBM == wantLogistic {
		t.Errorf("the GBM and logistic predict the same %v: the test cannot tell them apart", wantGBM)
	}
}

// publishAndLoad publishes res to a new registry and loads the bundle back.
func publishAndLoad(t *testing.T, res *training.Result) (*registry.Registry, *registry.Bundle) {
	t.Helper()
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	version, err := training.Publish(context.Background(), reg, res)
	if err != nil {
		t.Fatal(err)
	}
	return reg, mustLoad(t, reg, training.RegistryName(res.Repo), version)
}

// mustLoad loads version of repo from reg.
func mustLoad(t *testing.T, reg *registry.Registry, repo, version string) *registry.Bundle {
	t.Helper()
	b, err := reg.Load(repo, version, modelset.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goHistory generates the synthetic go-profile history of the training tests: days days
// at perHour changes an hour, seed 6 (since synth's queue moved onto the queue engine and
// gained dynamics, seed 4's 2-day world has no conflict label in its holdout, and the
// bundles need a conflict model).
func goHistory(t *testing.T, days float64, perHour float64) *datasets.History {
	t.Helper()
	h, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: days, Seed: 6, ChangesPerHour: perHour})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// lastSubmission returns the submission time of h's last change.
func lastSubmission(h *datasets.History) time.Time { return h.Changes[len(h.Changes)-1].SubmittedAt }
