package defaultbundle_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

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
