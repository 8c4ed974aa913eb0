package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Bundle is a verified bundle folder: its manifest and where its files are. The files
// are only read, never changed, by the registry, so a *Bundle is safe for concurrent
// use. Retain may delete the folder once the version is neither champion nor
// challenger, so a server reads what it needs right after loading.
type Bundle struct {
	// Manifest is the bundle's manifest.
	Manifest Manifest
	// Dir is the bundle folder.
	Dir string
}

// Load reads version of repo and verifies it completely, as LoadDir does, and also
// that its manifest names this repository and version. It returns an error wrapping
// ErrNotFound if the version does not exist.
func (r *Registry) Load(repo, version, wantSchemaHash string) (*Bundle, error) {
	if err := validRepo(repo); err != nil {
		return nil, fmt.Errorf("registry: load: %w", err)
	}
	if _, _, err := parseVersion(version); err != nil {
		return nil, fmt.Errorf("registry: load %s: %w", repo, err)
	}
	dir := r.versionDir(repo, version)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registry: load %s: version %s: %w", repo, version, ErrNotFound)
	}
	b, err := LoadDir(dir, wantSchemaHash)
	if err != nil {
		return nil, err
	}
	if m := b.Manifest; m.Repo != repo || m.Version != version {
		return nil, fmt.Errorf("registry: load %s %s: %w: manifest names repo %q version %q",
			repo, version, ErrInvalidManifest, m.Repo, m.Version)
	}
	return b, nil
}

// LoadDir reads the bundle folder dir and verifies it: the manifest's format version
// (ErrUnknownFormat), its feature schema hash against wantSchemaHash (ErrSchemaMismatch,
// naming both), and the size and sha256 of every file, with no file missing and none
// unlisted (a *ChecksumError naming the first bad file). It is the loader for a bundle
// folder outside a registry, for example one given to "trainer eval". It panics if
// wantSchemaHash is empty: a caller must say which feature code it runs.
func LoadDir(dir, wantSchemaHash string) (*Bundle, error) {
	if wantSchemaHash == "" {
		panic("registry: LoadDir with an empty feature schema hash")
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: load: %w", err)
	}
	if m.FeatureSchemaHash != wantSchemaHash {
		return nil, fmt.Errorf("registry: load %s: %w: bundle has %q, this build has %q",
			dir, ErrSchemaMismatch, m.FeatureSchemaHash, wantSchemaHash)
	}
	if err := verify(dir, m); err != nil {
		return nil, err
	}
	return &Bundle{Manifest: *m, Dir: dir}, nil
}

// verify checks the files of the bundle folder dir against m: first the cheap checks
// (unlisted, missing, wrong size or type), then the sha256 sums in name order.
func verify(dir string, m *Manifest) error {
	var extra error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, ok := m.Files[rel]; !ok && rel != ManifestName {
			extra = &ChecksumError{Dir: dir, File: rel, Problem: ProblemExtra}
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("registry: load %s: %w", dir, err)
	}
	if extra != nil {
		return extra
	}
	names := m.FileNames()
	for _, name := range names {
		want := m.Files[name]
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &ChecksumError{Dir: dir, File: name, Problem: ProblemMissing}
		case err != nil:
			return fmt.Errorf("registry: load %s: %w", dir, err)
		case !fi.Mode().IsRegular():
			return &ChecksumError{Dir: dir, File: name, Problem: ProblemAltered,
				Detail: fmt.Sprintf("not a regular file (%v)", fi.Mode().Type())}
		case fi.Size() != want.Size:
			return &ChecksumError{Dir: dir, File: name, Problem: ProblemAltered,
				Detail: fmt.Sprintf("size %d, want %d", fi.Size(), want.Size)}
		}
	}
	for _, name := range names {
		want := m.Files[name]
		sum, size, err := hashFile(filepath.Join(dir, filepath.FromSlash(name)), false)
		if err != nil {
			return fmt.Errorf("registry: load %s: %w", dir, err)
		}
		if err := checkSum(dir, name, want, sum, size); err != nil {
			return err
		}
	}
	return nil
}

// checkSum compares a file's sha256 and size with the manifest's.
func checkSum(dir, name string, want FileInfo, sum string, size int64) error {
	if size != want.Size {
		return &ChecksumError{Dir: dir, File: name, Problem: ProblemAltered,
			Detail: fmt.Sprintf("size %d, want %d", size, want.Size)}
	}
	if sum != want.SHA256 {
		return &ChecksumError{Dir: dir, File: name, Problem: ProblemAltered,
			Detail: fmt.Sprintf("sha256 %s, want %s", sum, want.SHA256)}
	}
	return nil
}

// Files returns the names of the bundle's files (slash-separated paths relative to
// Dir, without the manifest), sorted.
func (b *Bundle) Files() []string { return b.Manifest.FileNames() }

// Path returns the path on disk of the bundle file name, a slash-separated path as
// listed in the manifest. It returns an error wrapping ErrNotFound for a name the
// manifest does not list.
func (b *Bundle) Path(name string) (string, error) {
	if _, ok := b.Manifest.Files[name]; !ok {
		return "", fmt.Errorf("registry: bundle %s: file %q: %w", b.Dir, name, ErrNotFound)
	}
	return filepath.Join(b.Dir, filepath.FromSlash(name)), nil
}

// Open opens the bundle file name for reading. It does not check the file again; use
// ReadFile for that.
func (b *Bundle) Open(name string) (*os.File, error) {
	path, err := b.Path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("registry: bundle %s: %w", b.Dir, err)
	}
	return f, nil
}

// ReadFile returns the content of the bundle file name after checking it once more
// against the manifest, so the bytes returned are the ones that were published even if
// the file changed after Load.
func (b *Bundle) ReadFile(name string) ([]byte, error) {
	path, err := b.Path(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ChecksumError{Dir: b.Dir, File: name, Problem: ProblemMissing}
	}
	if err != nil {
		return nil, fmt.Errorf("registry: bundle %s: %w", b.Dir, err)
	}
	sum := sha256.Sum256(data)
	err = checkSum(b.Dir, name, b.Manifest.Files[name], hex.EncodeToString(sum[:]), int64(len(data)))
	if err != nil {
		return nil, err
	}
	return data, nil
}
