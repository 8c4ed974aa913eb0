package registry

import "fmt"

// Manifest returns the manifest of version of repo without verifying the bundle's files,
// for listing and inspection; Load is the way to use a bundle.
func (r *Registry) Manifest(repo, version string) (*Manifest, error) {
	if err := validRepo(repo); err != nil {
		return nil, fmt.Errorf("registry: manifest: %w", err)
	}
	if _, _, err := parseVersion(version); err != nil {
		return nil, fmt.Errorf("registry: manifest of %s: %w", repo, err)
	}
	m, err := ReadManifest(r.versionDir(repo, version))
	if err != nil {
		return nil, fmt.Errorf("registry: manifest of %s %s: %w", repo, version, err)
	}
	return m, nil
}
