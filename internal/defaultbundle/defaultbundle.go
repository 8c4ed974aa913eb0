package defaultbundle

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/sqpredict/sqpredict/registry"
)

//go:generate bash generate.sh

//go:embed bundle
var files embed.FS

// root is the folder of files that holds the bundle.
const root = "bundle"

// FS returns the files of the bundle folder, manifest.json included.
func FS() fs.FS {
	sub, err := fs.Sub(files, root)
	if err != nil {
		panic("defaultbundle: " + err.Error()) // root is a constant that go:embed checked
	}
	return sub
}

// Manifest returns the bundle's manifest as it was published.
func Manifest() (registry.Manifest, error) {
	var m registry.Manifest
	b, err := fs.ReadFile(FS(), registry.ManifestName)
	if err != nil {
		return m, fmt.Errorf("defaultbundle: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("defaultbundle: %s: %w", registry.ManifestName, err)
	}
	return m, nil
}

// WriteDir writes the bundle folder, manifest included, into dir, which must exist.
// registry.LoadDir verifies the result like any other bundle folder.
func WriteDir(dir string) error {
	return copyFiles(dir, true)
}

// Install publishes the bundle into reg as the champion of the repository its manifest
// names, and returns that repository and the new version. The registry names the version
// by the bundle's trained_at (registry.PublishOptions.At), so that installing into an
// empty registry, as predictd does at every start without --registry, gives the same
// version every time; everything else in the manifest is kept.
func Install(ctx context.Context, reg *registry.Registry) (repo, version string, err error) {
	m, err := Manifest()
	if err != nil {
		return "", "", err
	}
	repo = m.Repo
	m.Version, m.Files, m.FormatVersion = "", nil, 0
	write := func(dir string) error { return copyFiles(dir, false) }
	version, err = reg.Publish(ctx, repo, write, m, registry.PublishOptions{Champion: true, At: m.TrainedAt})
	if err != nil {
		return "", "", fmt.Errorf("defaultbundle: installing into %s: %w", reg.Dir(), err)
	}
	return repo, version, nil
}

// copyFiles writes the bundle's files into dir, the manifest only when withManifest.
func copyFiles(dir string, withManifest bool) error {
	fsys := FS()
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			if p == "." {
				return nil
			}
			return os.MkdirAll(dst, 0o755)
		case !withManifest && path.Clean(p) == registry.ManifestName:
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("defaultbundle: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("defaultbundle: %w", err)
		}
		return nil
	})
}
