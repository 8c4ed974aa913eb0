package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// Role is the part a version plays for a repository: the champion serves by default,
// the challenger takes a share of requests or runs in shadow.
type Role int

// The roles, each held by a pointer file in the repository folder.
const (
	RoleChampion   Role = iota // pointer file "current"
	RoleChallenger             // pointer file "challenger"
)

// String returns "champion" or "challenger".
func (r Role) String() string {
	switch r {
	case RoleChampion:
		return "champion"
	case RoleChallenger:
		return "challenger"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// file returns the name of the role's pointer file.
func (r Role) file() string {
	switch r {
	case RoleChampion:
		return "current"
	case RoleChallenger:
		return "challenger"
	}
	panic(fmt.Sprintf("registry: unknown role %d", int(r)))
}

// Champion returns the champion version of repo, or an error wrapping ErrNoPointer if
// there is none.
func (r *Registry) Champion(repo string) (string, error) {
	return r.pointer(repo, RoleChampion)
}

// Challenger returns the challenger version of repo, or an error wrapping ErrNoPointer
// if there is none.
func (r *Registry) Challenger(repo string) (string, error) {
	return r.pointer(repo, RoleChallenger)
}

// SetChampion makes version the champion of repo. The version must exist with a
// readable manifest. The pointer is replaced atomically: readers see the old champion
// or the new one, never a mixture or nothing.
func (r *Registry) SetChampion(repo, version string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.setPointerLocked(repo, RoleChampion, version)
}

// SetChallenger makes version the challenger of repo, like SetChampion.
func (r *Registry) SetChallenger(repo, version string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.setPointerLocked(repo, RoleChallenger, version)
}

// ClearChallenger removes the challenger pointer of repo, if any. The version itself
// stays until Retain deletes it.
func (r *Registry) ClearChallenger(repo string) error {
	if err := validRepo(repo); err != nil {
		return fmt.Errorf("registry: clear challenger: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	path := filepath.Join(r.repoDir(repo), RoleChallenger.file())
	if err := ignoreNotExist(os.Remove(path)); err != nil {
		return fmt.Errorf("registry: clear challenger of %s: %w", repo, err)
	}
	if err := atomicfile.SyncDir(r.repoDir(repo)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("registry: clear challenger of %s: %w", repo, err)
	}
	return nil
}

// pointer reads the version a role's pointer file names.
func (r *Registry) pointer(repo string, role Role) (string, error) {
	if err := validRepo(repo); err != nil {
		return "", fmt.Errorf("registry: %s: %w", role, err)
	}
	path := filepath.Join(r.repoDir(repo), role.file())
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("registry: %s of %s: %w", role, repo, ErrNoPointer)
	}
	if err != nil {
		return "", fmt.Errorf("registry: %s of %s: %w", role, repo, err)
	}
	version := strings.TrimSpace(string(data))
	if _, _, err := parseVersion(version); err != nil {
		return "", fmt.Errorf("registry: %s of %s: pointer file %s: %w", role, repo, path, err)
	}
	return version, nil
}

// setPointerLocked points role at version after checking that the version exists and
// belongs to repo. The caller holds r.mu.
func (r *Registry) setPointerLocked(repo string, role Role, version string) error {
	if err := validRepo(repo); err != nil {
		return fmt.Errorf("registry: set %s: %w", role, err)
	}
	if _, _, err := parseVersion(version); err != nil {
		return fmt.Errorf("registry: set %s of %s: %w", role, repo, err)
	}
	dir := r.versionDir(repo, version)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("registry: set %s of %s: version %s: %w", role, repo, version, ErrNotFound)
	}
	m, err := readManifest(dir)
	if err != nil {
		return fmt.Errorf("registry: set %s of %s: %w", role, repo, err)
	}
	if m.Repo != repo || m.Version != version {
		return fmt.Errorf("registry: set %s of %s: %s: %w: manifest names repo %q version %q",
			role, repo, version, ErrInvalidManifest, m.Repo, m.Version)
	}
	path := filepath.Join(r.repoDir(repo), role.file())
	if err := writeFileAtomic(path, []byte(version+"\n")); err != nil {
		return fmt.Errorf("registry: set %s of %s: %w", role, repo, err)
	}
	return nil
}
