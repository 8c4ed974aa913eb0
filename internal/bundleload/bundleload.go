package bundleload

import (
	"fmt"
	"time"

	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

// Loader returns a server.LoadFunc that loads versions of repo from reg: registry.Load
// checks the manifest, every checksum and the feature schema hash against
// training.SchemaHash (the code of this binary), training.LoadModels reads every model
// and checks its columns, and scoring.NewScorer checks the models' widths. Any failure
// leaves the server with the model it has.
func Loader(reg *registry.Registry, repo string) server.LoadFunc {
	return func(role registry.Role, version string) (*server.Model, error) {
		b, err := reg.Load(repo, version, training.SchemaHash())
		if err != nil {
			return nil, err
		}
		return FromBundle(b, role)
	}
}

// FromBundle builds the server model of the verified bundle b.
func FromBundle(b *registry.Bundle, role registry.Role) (*server.Model, error) {
	ms, err := training.LoadModels(b)
	if err != nil {
		return nil, err
	}
	sc, err := scoring.NewScorer(ms.Success, ms.Conflict, ms.BuildTime, ms.DevTable)
	if err != nil {
		return nil, fmt.Errorf("bundleload: %s: %w", b.Dir, err)
	}
	return &server.Model{Role: role, Version: b.Manifest.Version, Manifest: b.Manifest, Scorer: sc, LoadedAt: time.Now()}, nil
}
