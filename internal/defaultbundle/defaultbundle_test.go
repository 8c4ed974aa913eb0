package defaultbundle_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

// Inputs of generate.sh, which the staleness check retrains from.
const (
	sampleHistory = "testdata/sample-history"
	sampleConfig  = "testdata/trainer.json"
)

// freshTol is the relative and absolute tolerance between the embedded models and a
// retrain: the same code on the same data with the same seed reproduces the models (the
// JSON round trip of float64 is exact), so only a different floating-point contraction
// on another architecture can move them, by a few ulps per operation.
const freshTol = 1e-9

// TestEmbeddedBundle checks that the embedded bundle verifies (checksums, format) and
// was trained with the current feature code, and that its models load.
func TestEmbeddedBundle(t *testing.T) {
	dir := t.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if errors.Is(err, registry.ErrSchemaMismatch) {
		t.Fatalf("the embedded default bundle is stale (%v): run go generate ./internal/defaultbundle and commit the result", err)
	}
	if err != nil {
		t.Fatalf("LoadDir(embedded bundle) = %v", err)
	}
	if _, err := training.LoadModels(b); err != nil {
		t.Fatalf("LoadModels(embedded bundle) = %v", err)
	}
}

// TestEmbeddedBundleFresh is issue 15 item 5: it retrains the bundle from generate.sh's
// inputs and compares what a scorer would notice, not only the schema hash: every
// model's predictions on every row of the sample history, the holdout metrics, the
// holdout cut and the developer table. A change to the training code or to what a
// feature means makes it fail until go generate ./internal/defaultbundle is run.
func TestEmbeddedBundleFresh(t *testing.T) {
	ctx := context.Background()
	cfg, err := training.LoadConfig(sampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := datasets.ReadHistory(ctx, sampleHistory, datasets.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := training.Train(ctx, h, cfg)
	if err != nil {
		t.Fatalf("retraining the default bundle: %v", err)
	}
	dir := t.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if err != nil {
		t.Fatalf("the embedded default bundle does not load (%v): run go generate ./internal/defaultbundle", err)
	}
	embedded, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	stale := func(format string, args ...any) {
		t.Helper()
		t.Errorf("the embedded default bundle is stale: "+format+"; run go generate ./internal/defaultbundle and commit the result", args...)
	}
	if got := b.Manifest.Extra["holdout_cut"]; got != res.Cut.Format("2006-01-02T15:04:05.999999999Z07:00") {
		stale("holdout cut %s, a retrain cuts at %s", got, res.Cut)
	}

	ix, err := features.NewIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	var tb [3]*features.Table
	for i, k := range []features.Kind{features.KindSuccess, features.KindConflict, features.KindBuildTime} {
		if tb[i], err = ix.Table(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	want := res.Models.Predict(tb[0], tb[1], tb[2])
	got := embedded.Predict(tb[0], tb[1], tb[2])
	same := func(name string, a, b []float64) {
		t.Helper()
		if len(a) != len(b) || len(a) == 0 {
			stale("%s: %d predictions, a retrain gives %d", name, len(a), len(b))
			return
		}
		for i := range a {
			if !scalar.EqualWithinAbsOrRel(a[i], b[i], freshTol, freshTol) {
				stale("%s row %d predicts %v, a retrain %v", name, i, a[i], b[i])
				return
			}
		}
	}
	same("success", got.Success, want.Success)
	same("conflict", got.Conflict, want.Conflict)
	same("build time mu", got.BuildTime.Mu, want.BuildTime.Mu)
	same("build time sigma", got.BuildTime.Sigma, want.BuildTime.Sigma)

	for k, w := range res.Metrics() {
		g, ok := b.Manifest.Metrics[k]
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if ok {
				stale("metric %s is %v, a retrain cannot compute it", k, g)
			}
		case !ok:
			stale("metric %s missing, a retrain gives %v", k, w)
		case !scalar.EqualWithinAbsOrRel(g, w, freshTol, freshTol):
			stale("metric %s is %v, a retrain gives %v", k, g, w)
		}
	}

	fresh := t.TempDir()
	if err := res.WriteFiles(fresh); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{training.FileDevTable, training.FileFeatures} {
		a, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(fresh, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			stale("%s differs from a retrain's", name)
		}
	}
}

// TestEmbeddedBundleDeterministic is issue 15 item 5: the manifest carries nothing that
// changes from one go generate to the next (trained_at comes from the config, no VCS
// revision), and installing it names the same version every time.
func TestEmbeddedBundleDeterministic(t *testing.T) {
	cfg, err := training.LoadConfig(sampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := defaultbundle.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TrainedAt.IsZero() || !m.TrainedAt.Equal(cfg.TrainedAt) {
		t.Errorf("trained_at %v, want the config's %v", m.TrainedAt, cfg.TrainedAt)
	}
	if rev, ok := m.Extra[registry.ExtraVCSRevision]; ok {
		t.Errorf("manifest records the VCS revision %q, which changes with every commit", rev)
	}
	var versions []string
	for range 2 {
		reg, err := registry.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, v, err := defaultbundle.Install(context.Background(), reg)
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if versions[0] != versions[1] || versions[0] != m.Version {
		t.Errorf("Install into empty registries named versions %v, want the embedded %s both times", versions, m.Version)
	}
}

func TestInstall(t *testing.T) {
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, version, err := defaultbundle.Install(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := defaultbundle.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if repo != m.Repo {
		t.Errorf("Install repo = %q, want %q", repo, m.Repo)
	}
	if got, err := reg.Champion(repo); err != nil || got != version {
		t.Errorf("Champion(%q) = %q, %v, want %q", repo, got, err, version)
	}
	b, err := reg.Load(repo, version, training.SchemaHash())
	if err != nil {
		t.Fatalf("Load(installed) = %v", err)
	}
	if !b.Manifest.TrainedAt.Equal(m.TrainedAt) || b.Manifest.FeatureSchemaHash != m.FeatureSchemaHash {
		t.Errorf("installed manifest = %+v, want trained_at and schema of %+v", b.Manifest, m)
	}
}
