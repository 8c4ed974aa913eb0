package bundleload_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
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
