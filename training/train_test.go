package training

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
)

// Tolerances.
const (
	// sameTol compares predictions of a model with those of its artifact read back:
	// every artifact stores its numbers with full precision, so only the order of
	// operations may differ.
	sameTol = 1e-12
	// metricTol compares metrics computed twice from the same predictions.
	metricTol = 1e-12
)

// testAsOf is the end of the window of the test history: it covers the 3 days of
// arrivals and the drain after them.
var testAsOf = synth.DefaultStart.Add(4 * 24 * time.Hour)

var (
	historyOnce sync.Once
	historyVal  *datasets.History
	historyErr  error
)

// testHistory returns a small synthetic go history: 3 days at 10 changes per hour,
// about a thousand changes. Callers must not modify it (use cloneHistory).
func testHistory(t *testing.T) *datasets.History {
	t.Helper()
	historyOnce.Do(func() {
		// A stationary world: with synth's default dynamics this small world has no conflict
		// label the builds can show, and the conflict models need both classes.
		historyVal, historyErr = synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 3, Seed: 7, ChangesPerHour: 10, NoDynamics: true})
	})
	if historyErr != nil {
		t.Fatalf("synth.Generate: %v", historyErr)
	}
	return historyVal
}

func cloneHistory(h *datasets.History) *datasets.History {
	return &datasets.History{Changes: slices.Clone(h.Changes), Builds: slices.Clone(h.Builds), Pairs: slices.Clone(h.Pairs)}
}

// testConfig is the training configuration of the tests: the baseline gate off (on the
// 3-day test history the build-time champion's holdout NLL against the repo-lognormal
// baseline, and P-conf's against the constant, depends on the draw, which is not what
// these tests check; TestGateFails turns it on), and DefaultGates less conflict.auc: the
// 3-day holdout may hold no conflict, and a NaN metric fails its gate (TestNaNMetrics).
func testConfig(challengers ...string) Config {
	gates := DefaultGates()
	delete(gates, "conflict.auc")
	return Config{AsOf: testAsOf, Window: Duration(7 * 24 * time.Hour), Challengers: challengers, Seed: 1,
		BuildTime: NGBoostParams{NEstimators: 100, LearningRate: 0.1}, BaselineGate: BaselineGateOff, Gates: gates}
}

func mustTrain(t *testing.T, h *datasets.History, cfg Config) *Result {
	t.Helper()
	res, err := Train(context.Background(), h, cfg)
	if err != nil {
		t.Fatalf("Train: %v", err)
	}
	return res
}

func mustPublish(t *testing.T, reg *registry.Registry, res *Result) string {
	t.Helper()
	v, err := Publish(context.Background(), reg, res)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return v
}

// publishAndLoad publishes res to a new registry and loads the bundle back.
func publishAndLoad(t *testing.T, res *Result) *registry.Bundle {
	t.Helper()
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := mustPublish(t, reg, res)
	b, err := reg.Load(RegistryName(res.Repo), v, SchemaHash())
	if err != nil {
		t.Fatalf("Load(%s, %s): %v", RegistryName(res.Repo), v, err)
	}
	return b
}

// TestTrainPublishLoad trains with both challengers, publishes, loads the bundle back and
// checks that the loaded models predict what the in-memory ones do, and that the
// bundle holds every file and the manifest the metrics.
func TestTrainPublishLoad(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig(ChallengerGBMSuccess, ChallengerGBMConflict, ChallengerNGBoostNormal))
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := mustPublish(t, reg, res)
	if champ, err := reg.Champion(res.Repo); err != nil || champ != v {
		t.Fatalf("Champion(%s) = %q, %v, want %q", res.Repo, champ, err, v)
	}
	b, err := reg.Load(res.Repo, v, SchemaHash())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, f := range []string{FileSuccess, FileConflict, FileBuildTime, FileSuccessGBM, FileConflictGBM, FileBuildTimeLogNormal,
		FileDevTable, FileFeatures, FileMetrics, "report.html"} {
		if !slices.Contains(b.Files(), f) {
			t.Errorf("bundle lacks %s; files %v", f, b.Files())
		}
	}
	for _, k := range []string{"success.auc", "success.log_loss", "success.gbm.auc", "conflict.log_loss", "conflict.gbm.log_loss",
		"success.bayes_skill_log_loss", "success.gbm.bayes_skill_log_loss",
		"buildtime.nll", "buildtime.crps", "buildtime.mape", "buildtime.coverage95", "buildtime.ngboost-normal.nll",
		"success.bayes_gap_log_loss", "buildtime.bayes_gap_nll"} {
		want := res.Metrics()[k]
		if got, ok := b.Manifest.Metrics[k]; !ok || !scalar.EqualWithinAbsOrRel(got, want, metricTol, metricTol) {
			t.Errorf("manifest metric %s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if !b.Manifest.Window.To.Equal(testAsOf) || !b.Manifest.Window.From.Equal(testAsOf.Add(-7*24*time.Hour)) {
		t.Errorf("manifest window = %+v, want 7 days to %v", b.Manifest.Window, testAsOf)
	}

	loaded, err := LoadModels(b)
	if err != nil {
		t.Fatalf("LoadModels: %v", err)
	}
	tb, _, err := historyTables(context.Background(), h, EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := res.Models.Predict(tb.success, tb.conflict, tb.buildtime)
	got := loaded.Predict(tb.success, tb.conflict, tb.buildtime)
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"success", got.Success, want.Success},
		{"success gbm", got.SuccessGBM, want.SuccessGBM},
		{"conflict", got.Conflict, want.Conflict},
		{"conflict gbm", got.ConflictGBM, want.ConflictGBM},
		{"buildtime mu", got.BuildTime.Mu, want.BuildTime.Mu},
		{"buildtime sigma", got.BuildTime.Sigma, want.BuildTime.Sigma},
		{"buildtime normal mu", got.BuildTimeChallenger.Mu, want.BuildTimeChallenger.Mu},
		{"buildtime normal sigma", got.BuildTimeChallenger.Sigma, want.BuildTimeChallenger.Sigma},
	} {
		if len(c.want) == 0 || !floats.EqualApprox(c.got, c.want, sameTol) {
			t.Errorf("%s: loaded predictions differ from in-memory ones (%d rows)", c.name, len(c.want))
		}
	}
	if loaded.DevTable.NAuthors() != res.Models.DevTable.NAuthors() || !loaded.DevTable.AsOf().Equal(testAsOf) {
		t.Errorf("dev table: %d authors as of %v, want %d as of %v", loaded.DevTable.NAuthors(), loaded.DevTable.AsOf(),
			res.Models.DevTable.NAuthors(), testAsOf)
	}
}

// TestHoldoutMatchesEvaluate checks the holdout metrics against an independent path:
// Evaluate of the holdout models on the rows from the cut to the end of the window.
func TestHoldoutMatchesEvaluate(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig())
	ev, err := Evaluate(context.Background(), res.HoldoutModels, h, EvalOptions{From: res.Cut, To: testAsOf})
	if err != nil {
		t.Fatal(err)
	}
	want, got := res.Metrics(), ev.Metrics()
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("Evaluate keys differ from the holdout's")
	}
	for k, w := range want {
		if g := got[k]; !scalar.Same(g, w) && !scalar.EqualWithinAbsOrRel(g, w, metricTol, metricTol) {
			t.Errorf("Evaluate %s = %v, holdout %v", k, g, w)
		}
	}
	if want["success.n"] < minRows/5 || want["buildtime.n"] == 0 || want["conflict.n"] == 0 {
		t.Errorf("holdout too small: %v success, %v conflict, %v build-time rows", want["success.n"], want["conflict.n"], want["buildtime.n"])
	}
}

// TestTimeSplitLeak plants a leak: it rewrites every build that finished at or after the
// holdout cut (succeeded and failed swapped, durations tripled): the labels and targets
// of the holdout rows, of rows submitted before the cut but decided after it, and the
// developer statistics computed from them. Which changes have rows does not change, so
// the cut stays where it is. A time split that lets no
// holdout information into training fits bit-identical holdout models; the refitted
// models, which see those rows, must change.
func TestTimeSplitLeak(t *testing.T) {
	h := testHistory(t)
	cfg := testConfig(ChallengerGBMSuccess, ChallengerNGBoostNormal)
	base := mustTrain(t, h, cfg)

	leak := cloneHistory(h)
	flipped := 0
	for i := range leak.Builds {
		b := &leak.Builds[i]
		if b.FinishedAt.Before(base.Cut) {
			continue
		}
		switch b.Status {
		case datasets.StatusSucceeded:
			b.Status = datasets.StatusFailed
		case datasets.StatusFailed:
			b.Status = datasets.StatusSucceeded
		}
		b.DurationS *= 3
		flipped++
	}
	if flipped == 0 {
		t.Fatal("no build after the cut to plant the leak in")
	}
	got := mustTrain(t, leak, cfg)
	if !got.Cut.Equal(base.Cut) {
		t.Fatalf("cut moved from %v to %v", base.Cut, got.Cut)
	}
	fa, err := base.HoldoutModels.Files()
	if err != nil {
		t.Fatal(err)
	}
	fb, err := got.HoldoutModels.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("holdout model %s changed when only holdout rows changed: a leak", name)
		}
	}
	ra, _ := base.Models.Files()
	rb, _ := got.Models.Files()
	if bytes.Equal(ra[FileSuccess], rb[FileSuccess]) || bytes.Equal(ra[FileBuildTimeLogNormal], rb[FileBuildTimeLogNormal]) {
		t.Error("refitted models did not change: the planted change did not reach the data")
	}
	if scalar.EqualWithinAbsOrRel(base.Metrics()["success.log_loss"], got.Metrics()["success.log_loss"], metricTol, metricTol) {
		t.Error("holdout log loss did not change with the holdout labels")
	}
}

// worseSuccess returns a copy of res whose holdout success log loss is 50% worse, res
// itself unchanged.
func worseSuccess(res *Result) Result {
	worse := *res
	ev := *res.Holdout
	ev.Success = maps.Clone(res.Holdout.Success)
	m := ev.Success[ModelLogistic]
	m.LogLoss *= 1.5
	ev.Success[ModelLogistic] = m
	worse.Holdout = &ev
	return worse
}

// TestGateFails publishes a champion, then a bundle whose success log loss is 50% worse:
// Publish must refuse it naming the metric, and leave the champion and versions alone.
func TestGateFails(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig())
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	champ := mustPublish(t, reg, res)

	worse := worseSuccess(res)
	// With the baseline gate on, the worse champion loses to a baseline first (other
	// sections may lose too on this small history; see testConfig).
	worse.Config.BaselineGate = BaselineGateRefuse
	_, err = Publish(context.Background(), reg, &worse)
	var be *BaselineError
	if !errors.As(err, &be) || !errors.Is(err, ErrGate) {
		t.Fatalf("Publish(worse) = %v, want a *BaselineError", err)
	}
	k := slices.IndexFunc(be.Failures, func(f BaselineFailure) bool { return f.Metric == "success.log_loss" })
	if k < 0 {
		t.Fatalf("Publish(worse) = %v, want a baseline failure on success.log_loss", err)
	}
	if name, loss := res.Holdout.BestBaseline("success"); be.Failures[k].Baseline != name || be.Failures[k].Value != loss ||
		!strings.Contains(err.Error(), name) {
		t.Errorf("baseline failure %+v (%v), want the best baseline %s (%v) named", be.Failures[k], err, name, loss)
	}
	worse.Config.BaselineGate = BaselineGateOff
	_, err = Publish(context.Background(), reg, &worse)
	var ge *GateError
	if !errors.As(err, &ge) || !errors.Is(err, ErrGate) {
		t.Fatalf("Publish(worse) = %v, want a *GateError", err)
	}
	if len(ge.Failures) != 1 || ge.Failures[0].Metric != "success.log_loss" || !strings.Contains(err.Error(), "success.log_loss") {
		t.Fatalf("gate failures = %+v (%v), want success.log_loss only", ge.Failures, err)
	}
	if f := ge.Failures[0]; !scalar.EqualWithinAbsOrRel(f.Worse, 0.5*res.Metrics()["success.log_loss"], metricTol, metricTol) {
		t.Errorf("worse by %v, want %v", f.Worse, 0.5*res.Metrics()["success.log_loss"])
	}
	if c, _ := reg.Champion(res.Repo); c != champ {
		t.Errorf("champion = %s after a failed gate, want %s", c, champ)
	}
	if vs, _ := reg.List(res.Repo); len(vs) != 1 {
		t.Errorf("versions = %v after a failed gate, want only %s", vs, champ)
	}
	// The same bundle with gates switched off is published.
	worse.Config.Gates = map[string]Gate{}
	if _, err := Publish(context.Background(), reg, &worse); err != nil {
		t.Errorf("Publish without gates: %v", err)
	}
}

func TestCheckGates(t *testing.T) {
	champion := map[string]float64{"success.log_loss": 0.5, "success.auc": 0.8, "buildtime.nll": -1, "conflict.log_loss": math.NaN()}
	for _, tc := range []struct {
		name      string
		candidate map[string]float64
		gates     map[string]Gate
		want      []string
	}{
		{"within relative", map[string]float64{"success.log_loss": 0.509}, map[string]Gate{"success.log_loss": {MaxRel: 0.02}}, nil},
		{"over relative", map[string]float64{"success.log_loss": 0.511}, map[string]Gate{"success.log_loss": {MaxRel: 0.02}}, []string{"success.log_loss"}},
		{"better", map[string]float64{"success.log_loss": 0.1}, map[string]Gate{"success.log_loss": {}}, nil},
		{"zero gate, worse", map[string]float64{"success.log_loss": 0.5001}, map[string]Gate{"success.log_loss": {}}, []string{"success.log_loss"}},
		{"higher is better", map[string]float64{"success.auc": 0.77}, map[string]Gate{"success.auc": {MaxAbs: 0.02}}, []string{"success.auc"}},
		{"higher is better, up", map[string]float64{"success.auc": 0.9}, map[string]Gate{"success.auc": {MaxAbs: 0.02}}, nil},
		{"negative old, relative uses |old|", map[string]float64{"buildtime.nll": -0.97}, map[string]Gate{"buildtime.nll": {MaxRel: 0.05}}, nil},
		{"absolute", map[string]float64{"buildtime.nll": -0.9}, map[string]Gate{"buildtime.nll": {MaxAbs: 0.05}}, []string{"buildtime.nll"}},
		{"NaN champion not gated", map[string]float64{"conflict.log_loss": 9}, map[string]Gate{"conflict.log_loss": {}}, nil},
		// Issue 15 item 3: a metric the new bundle cannot compute fails its gate.
		{"NaN candidate fails", map[string]float64{"success.auc": math.NaN()}, map[string]Gate{"success.auc": {MaxAbs: 0.02}}, []string{"success.auc"}},
		{"NaN candidate fails without a champion value", map[string]float64{"conflict.auc": math.NaN()}, map[string]Gate{"conflict.auc": {MaxAbs: 0.02}}, []string{"conflict.auc"}},
		{"NaN ungated metric passes", map[string]float64{"conflict.auc": math.NaN()}, map[string]Gate{"success.auc": {MaxAbs: 0.02}}, nil},
		{"missing not gated", map[string]float64{}, map[string]Gate{"success.log_loss": {}}, nil},
		{"two failures sorted", map[string]float64{"success.log_loss": 1, "success.auc": 0.5},
			map[string]Gate{"success.log_loss": {MaxRel: 0.02}, "success.auc": {MaxAbs: 0.02}}, []string{"success.auc", "success.log_loss"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range CheckGates(champion, tc.candidate, tc.gates) {
				got = append(got, f.Metric)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("CheckGates = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRegistryRefusals checks that a bundle with an altered file or another schema hash
// is refused with an error that says which.
func TestRegistryRefusals(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig())
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := mustPublish(t, reg, res)
	dir := filepath.Join(reg.Dir(), res.Repo, "versions", v)

	// Another schema hash: the same files published under a different hash.
	copyFiles := func(dst string) error {
		for _, f := range bundleFiles(t, dir) {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	other, err := reg.Publish(context.Background(), res.Repo, copyFiles, registry.Manifest{
		TrainedAt: time.Now(), Window: res.Window, FeatureSchemaHash: "0123456789abcdef", FeatureSchemaVersion: 0,
	}, registry.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = registry.LoadDir(filepath.Join(reg.Dir(), res.Repo, "versions", other), SchemaHash())
	if !errors.Is(err, registry.ErrSchemaMismatch) || !strings.Contains(err.Error(), "0123456789abcdef") {
		t.Errorf("LoadDir(other schema) = %v, want ErrSchemaMismatch naming the hash", err)
	}

	// A bad checksum: one byte of the success model changed.
	path := filepath.Join(dir, FileSuccess)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = registry.LoadDir(dir, SchemaHash())
	var ce *registry.ChecksumError
	if !errors.As(err, &ce) || ce.File != FileSuccess || !strings.Contains(err.Error(), FileSuccess) {
		t.Errorf("LoadDir(altered) = %v, want a checksum error naming %s", err, FileSuccess)
	}
}

// files lists the files of the bundle folder dir other than the manifest.
func bundleFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != registry.ManifestName {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestCrashBeforeRename leaves what a trainer killed between writing a bundle and
// renaming it would leave (a temporary version folder with part of the files, and a
// half-written pointer): the registry still serves the old champion, and the next
// Publish works.
func TestCrashBeforeRename(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig())
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	champ := mustPublish(t, reg, res)
	repoDir := filepath.Join(reg.Dir(), res.Repo)
	tmp := filepath.Join(repoDir, "versions", ".tmp-publish-crashed")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, FileSuccess), []byte(`{"format_version": 1, "kind": "logis`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repoDir, ".tmp-current-crashed"), []byte("2026"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := reg.Champion(res.Repo); err != nil || c != champ {
		t.Fatalf("Champion after crash = %q, %v, want %q", c, err, champ)
	}
	if vs, err := reg.List(res.Repo); err != nil || !slices.Equal(vs, []string{champ}) {
		t.Fatalf("List after crash = %v, %v, want [%s]", vs, err, champ)
	}
	b, err := reg.Load(res.Repo, champ, SchemaHash())
	if err != nil {
		t.Fatalf("Load(champion) after crash: %v", err)
	}
	if _, err := LoadModels(b); err != nil {
		t.Fatalf("LoadModels(champion) after crash: %v", err)
	}
	res.Config.Gates = map[string]Gate{}
	if _, err := Publish(context.Background(), reg, res); err != nil {
		t.Fatalf("Publish after crash: %v", err)
	}
}

// TestCompareSame compares a bundle with itself: every difference and interval is 0.
func TestCompareSame(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig())
	c, err := Compare(context.Background(), res.Models, res.Models, h, EvalOptions{From: res.Cut, Bootstrap: eval.BootstrapConfig{Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range c.Report.Sections {
		for _, d := range s.Diffs {
			n++
			if d.Diff != 0 || d.Lo != 0 || d.Hi != 0 || d.Significant() {
				t.Errorf("%s %s: B-A = %v [%v, %v], want 0", s.Name, d.Metric, d.Diff, d.Lo, d.Hi)
			}
		}
	}
	if n < 12 {
		t.Errorf("%d differences, want at least 12 (skipped: %v)", n, c.Skipped)
	}
	if _, err := c.Metrics(); err != nil {
		t.Errorf("Metrics: %v", err)
	}
}

func TestTrainErrors(t *testing.T) {
	h := testHistory(t)
	two := cloneHistory(h)
	two.Changes = append(two.Changes, two.Changes[0])
	two.Changes[len(two.Changes)-1].Repo = "other"
	two.Changes[len(two.Changes)-1].ChangeID = "other-1"
	for _, tc := range []struct {
		name string
		h    *datasets.History
		cfg  Config
		want error
		text string
	}{
		{"two repos", two, Config{AsOf: testAsOf}, ErrRepo, "go, other"},
		{"unknown repo", h, Config{AsOf: testAsOf, Repo: "ios"}, ErrRepo, `"ios"`},
		{"empty window", h, Config{AsOf: synth.DefaultStart}, ErrNoData, "success rows"},
		// Issue 15 item 7: the error names the history's span and the fix.
		{"empty window names the span", h, Config{AsOf: synth.DefaultStart}, ErrNoData, "submitted from " + synth.DefaultStart.Format("2006-01-02")},
		{"empty window names the fix", h, Config{AsOf: synth.DefaultStart.AddDate(0, 2, 0), Window: Duration(7 * 24 * time.Hour)}, ErrNoData, "--as-of latest"},
		{"bad holdout", h, Config{HoldoutFraction: 1}, ErrConfig, "holdout_fraction"},
		{"bad challenger", h, Config{Challengers: []string{"svm"}}, ErrConfig, "svm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(context.Background(), tc.h, tc.cfg)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("Train = %v, want %v mentioning %q", err, tc.want, tc.text)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, h, testConfig()); !errors.Is(err, context.Canceled) {
		t.Errorf("Train(cancelled) = %v, want context.Canceled", err)
	}
}

// TestPartial trains on a history without durations, as real histories may be: without
// AllowPartial Train fails naming the table; with it the bundle lacks the build-time
// model, says so in its manifest, and loads.
func TestPartial(t *testing.T) {
	h := cloneHistory(testHistory(t))
	for i := range h.Builds {
		h.Builds[i].DurationS = math.NaN()
		h.Builds[i].Repo = "org/go"
	}
	for i := range h.Changes {
		h.Changes[i].Repo = "org/go"
	}
	cfg := testConfig()
	if _, err := Train(context.Background(), h, cfg); !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "buildtime") {
		t.Fatalf("Train without durations = %v, want ErrNoData naming the buildtime table", err)
	}
	cfg.AllowPartial = true
	res := mustTrain(t, h, cfg)
	if res.Models.BuildTime != nil || res.Models.Success == nil {
		t.Fatalf("partial models: success %v, buildtime %v", res.Models.Success != nil, res.Models.BuildTime != nil)
	}
	if _, ok := res.Metrics()["buildtime.nll"]; ok {
		t.Error("partial bundle reports build-time metrics")
	}
	b := publishAndLoad(t, res)
	if b.Manifest.Extra[ExtraLeftOut] != FileBuildTimeLogNormal || b.Manifest.Extra[ExtraHistoryRepo] != "org/go" {
		t.Errorf("manifest extra = %v", b.Manifest.Extra)
	}
	if _, err := LoadModels(b); !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), FileBuildTimeLogNormal) {
		t.Errorf("LoadModels(partial) = %v, want ErrBundle naming %s", err, FileBuildTimeLogNormal)
	}
	m, err := LoadPartialModels(b)
	if err != nil || m.BuildTime != nil || m.Success == nil {
		t.Fatalf("LoadPartialModels(partial) = %v, %v", m, err)
	}
}

func TestRegistryName(t *testing.T) {
	for in, want := range map[string]string{"ios": "ios", "gradle/gradle": "gradle_gradle", ".hidden": "_hidden", "a b@c": "a_b_c"} {
		if got := RegistryName(in); got != want {
			t.Errorf("RegistryName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNaNMetrics publishes a result with an undefined metric (issue 15 item 3): with a
// gate on it, Publish refuses it even without a champion, naming the metric; without
// one, the manifest, which holds finite numbers only, leaves it out, and metrics.json
// writes it as null.
func TestNaNMetrics(t *testing.T) {
	res := mustTrain(t, testHistory(t), testConfig())
	ev := *res.Holdout
	ev.Success = maps.Clone(res.Holdout.Success)
	m := ev.Success[ModelLogistic]
	m.ROCAUC = math.NaN()
	ev.Success[ModelLogistic] = m
	res.Holdout = &ev
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Publish(context.Background(), reg, res)
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failures) != 1 || ge.Failures[0].Metric != "success.auc" || !ge.Failures[0].Undefined ||
		!strings.Contains(err.Error(), "success.auc cannot be computed") {
		t.Fatalf("Publish(NaN success.auc) = %v, want a *GateError on the undefined success.auc", err)
	}
	if _, err := reg.Champion(res.Repo); !errors.Is(err, registry.ErrNoPointer) && !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("a champion exists after the refusal: %v", err)
	}
	delete(res.Config.Gates, "success.auc")
	v := mustPublish(t, reg, res)
	b, err := reg.Load(res.Repo, v, SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Manifest.Metrics["success.auc"]; ok {
		t.Error("manifest holds the NaN success.auc")
	}
	if _, ok := b.Manifest.Metrics["success.log_loss"]; !ok {
		t.Error("manifest lacks success.log_loss")
	}
	data, err := b.ReadFile(FileMetrics)
	if err != nil {
		t.Fatal(err)
	}
	var mj map[string]*float64
	if err := json.Unmarshal(data, &mj); err != nil {
		t.Fatalf("metrics.json: %v", err)
	}
	if v, ok := mj["success.auc"]; !ok || v != nil {
		t.Errorf("metrics.json success.auc = %v (present %v), want null", v, ok)
	}
}

// TestUnservableNotPublished checks that a bundle without a model, without holdout rows
// or without one finite metric is never published (issue 15 item 3), whatever the gates.
func TestUnservableNotPublished(t *testing.T) {
	res := mustTrain(t, testHistory(t), testConfig())
	noModel := *res
	noModel.Models = &Models{}
	noRows := *res
	noRows.Holdout = &Evaluation{}
	allNaN := *res
	nan := &Evaluation{Success: map[string]eval.ClassifierMetrics{ModelLogistic: {ROCAUC: math.NaN(), LogLoss: math.NaN(), Accuracy: math.NaN(),
		PRAUC: math.NaN(), Brier: math.NaN(), ECE: math.NaN(), Precision: math.NaN(), Recall: math.NaN(), F1: math.NaN()}}}
	allNaN.Holdout = nan
	for _, tc := range []struct {
		name string
		res  *Result
		text string
	}{
		{"no model", &noModel, "no model"},
		{"no holdout rows", &noRows, "no holdout rows"},
		{"no finite metric", &allNaN, "undefined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := registry.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tc.res.Config.Gates = map[string]Gate{}
			tc.res.Config.BaselineGate = BaselineGateOff
			_, err = Publish(context.Background(), reg, tc.res)
			if !errors.Is(err, ErrGate) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("Publish = %v, want ErrGate saying %q", err, tc.text)
			}
			if vs, _ := reg.List(res.Repo); len(vs) != 0 {
				t.Errorf("versions %v published", vs)
			}
		})
	}
}

// TestAsOfIgnoresFuture trains as of the middle of the history, then again after
// rewriting everything that happened after AsOf (builds finished later flipped and
// slowed, later changes' outcomes swapped): the whole result, refitted models and
// developer table included, must be byte-identical, since none of it was known at AsOf.
func TestAsOfIgnoresFuture(t *testing.T) {
	h := testHistory(t)
	cfg := testConfig()
	cfg.AsOf = synth.DefaultStart.Add(2*24*time.Hour + 14*time.Hour) // a busy hour: builds straddle it
	base := mustTrain(t, h, cfg)

	future := cloneHistory(h)
	for i := range future.Builds {
		b := &future.Builds[i]
		if b.FinishedAt.Before(cfg.AsOf) {
			continue
		}
		switch b.Status {
		case datasets.StatusSucceeded:
			b.Status = datasets.StatusFailed
		case datasets.StatusFailed:
			b.Status = datasets.StatusSucceeded
		}
		b.DurationS *= 3
	}
	for i := range future.Changes {
		c := &future.Changes[i]
		if !c.SubmittedAt.Before(cfg.AsOf) {
			c.Outcome = map[datasets.Outcome]datasets.Outcome{datasets.OutcomeLanded: datasets.OutcomeRejected,
				datasets.OutcomeRejected: datasets.OutcomeLanded}[c.Outcome]
		}
	}
	got := mustTrain(t, future, cfg)
	for _, pair := range [][2]*Models{{base.Models, got.Models}, {base.HoldoutModels, got.HoldoutModels}} {
		fa, err := pair[0].Files()
		if err != nil {
			t.Fatal(err)
		}
		fb, err := pair[1].Files()
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range fa {
			if !bytes.Equal(data, fb[name]) {
				t.Errorf("%s changed when only what happened after AsOf changed", name)
			}
		}
	}
	if !got.Cut.Equal(base.Cut) || !maps.Equal(got.Rows, base.Rows) {
		t.Errorf("cut or rows changed: %v %v, want %v %v", got.Cut, got.Rows, base.Cut, base.Rows)
	}
}

// TestLatestAndStale checks LatestSubmission against a scan of the history, and that a
// window ending more than StaleAfter after the newest change trains with a warning
// (issue 15 item 7).
func TestLatestAndStale(t *testing.T) {
	h := testHistory(t)
	var want time.Time
	for _, c := range h.Changes {
		if c.SubmittedAt.After(want) {
			want = c.SubmittedAt
		}
	}
	got, err := LatestSubmission(h, "")
	if err != nil || !got.Equal(want) {
		t.Fatalf("LatestSubmission = %v, %v, want %v", got, err, want)
	}
	if _, err := LatestSubmission(h, "ios"); !errors.Is(err, ErrRepo) {
		t.Errorf("LatestSubmission(ios) = %v, want ErrRepo", err)
	}
	fresh := testConfig()
	fresh.AsOf = got
	if res := mustTrain(t, h, fresh); len(res.Warnings) != 0 {
		t.Errorf("Train as of the latest submission warns: %q", res.Warnings)
	}
	stale := testConfig()
	stale.AsOf = got.Add(StaleAfter + 24*time.Hour)
	stale.Window = Duration(30 * 24 * time.Hour)
	res := mustTrain(t, h, stale)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], want.UTC().Format(time.RFC3339)) {
		t.Errorf("Train 8 days after the newest change: warnings %q, want one naming %v", res.Warnings, want)
	}
}

// TestMissingFeatures: a history without affected targets in any change trains, with a
// note naming the column and the features it excuses; one whose changes have affected
// targets only after the holdout cut (the column exists, the training rows lack it, as a
// misspelled or newly added column looks) is refused with ErrNoData naming the target
// features and the flag, which lets it train.
func TestMissingFeatures(t *testing.T) {
	h := cloneHistory(testHistory(t))
	for i := range h.Changes {
		h.Changes[i].AffectedTargets = nil
	}
	cfg := testConfig()
	res, err := Train(context.Background(), h, cfg)
	if err != nil {
		t.Fatalf("Train of a history without affected targets = %v, want it to train", err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "affected_targets") || !strings.Contains(res.Notes[0], "success.targets_fail_rate_20") ||
		!strings.Contains(res.Notes[0], "buildtime.conflicts_count") {
		t.Errorf("notes = %q, want one naming affected_targets and its features", res.Notes)
	}

	// The column present only in the holdout: the training rows lack it.
	h = cloneHistory(testHistory(t))
	kept := 0
	for i := range h.Changes {
		if h.Changes[i].SubmittedAt.Before(res.Cut) {
			h.Changes[i].AffectedTargets = nil
		} else if h.Changes[i].AffectedTargets != nil {
			kept++
		}
	}
	if kept == 0 {
		t.Fatal("no change after the cut has affected targets")
	}
	_, err = Train(context.Background(), h, cfg)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "missing in every training row") || !strings.Contains(err.Error(), "--allow-missing-features") {
		t.Fatalf("Train without affected targets in the training rows = %v, want ErrNoData naming the features and the flag", err)
	}
	var named bool
	for _, n := range features.KindSuccess.Schema().Names {
		if strings.Contains(n, "target") && strings.Contains(err.Error(), n) {
			named = true
		}
	}
	if !named {
		t.Errorf("error %v names no target feature", err)
	}
	cfg.AllowMissingFeatures = true
	if _, err := Train(context.Background(), h, cfg); err != nil {
		t.Errorf("Train with AllowMissingFeatures = %v", err)
	}
}

// TestReportNamesVersionAndRejection is issue 15 item 16: a published bundle's report
// names its version, and a refused bundle keeps a report whose head says why.
func TestReportNamesVersionAndRejection(t *testing.T) {
	res := mustTrain(t, testHistory(t), testConfig())
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := mustPublish(t, reg, res)
	page, err := os.ReadFile(filepath.Join(reg.Dir(), "go", "versions", v, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<h1>sqpredict bundle go "+v+"</h1>") {
		t.Errorf("the published report does not name version %s", v)
	}
	if strings.Contains(res.Holdout.Report.Title, v) {
		t.Errorf("Publish changed the caller's Result (report title %q)", res.Holdout.Report.Title)
	}

	worse := worseSuccess(res)
	worse.Config.BaselineGate = BaselineGateOff
	_, err = Publish(context.Background(), reg, &worse)
	var re *RejectedError
	var ge *GateError
	if !errors.As(err, &re) || !errors.As(err, &ge) || !errors.Is(err, ErrGate) {
		t.Fatalf("Publish(worse) = %v, want a *RejectedError around a *GateError", err)
	}
	if filepath.Dir(filepath.Dir(re.Report)) != filepath.Join(reg.Dir(), "go", RejectedDir) {
		t.Errorf("rejected report at %s, want under %s", re.Report, filepath.Join(reg.Dir(), "go", RejectedDir))
	}
	page, err = os.ReadFile(re.Report)
	if err != nil {
		t.Fatalf("the rejected bundle's report: %v", err)
	}
	for _, want := range []string{"REJECTED", "Rejected, not published", "success.log_loss"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the rejected report lacks %q", want)
		}
	}
	if vs, _ := reg.List("go"); len(vs) != 1 {
		t.Errorf("versions %v after a rejection, want only %s", vs, v)
	}
}

// TestCompareChallengers is issue 15 item 16: compare shows each bundle's challengers
// on the same rows, with the values Evaluate gives them.
func TestCompareChallengers(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig(ChallengerGBMSuccess, ChallengerNGBoostNormal))
	c, err := Compare(context.Background(), res.Models, res.Models, h, EvalOptions{From: res.Cut, Bootstrap: eval.BootstrapConfig{Resamples: 50}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	checked := false
	for _, s := range c.Report.Sections {
		names = append(names, s.Name)
		if s.Name != "success challenger (gbm-success)" {
			continue
		}
		for _, m := range s.Metrics {
			if m.Name == "log loss (nats)" {
				checked = true
				want := c.A.Success[ModelGBM].LogLoss
				if m.Values["A"] != want || m.Values["B"] != want {
					t.Errorf("challenger log loss A %v B %v, want %v", m.Values["A"], m.Values["B"], want)
				}
			}
		}
	}
	if !checked {
		t.Error("the success challenger section has no log loss row")
	}
	for _, want := range []string{"success challenger (gbm-success)", "build time challenger (ngboost-normal)"} {
		if !slices.Contains(names, want) {
			t.Errorf("compare sections %q lack %q", names, want)
		}
	}
	if _, err := c.Metrics(); err != nil {
		t.Errorf("Metrics: %v", err)
	}
}
