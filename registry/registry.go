package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// StaleAge is how old a temporary file or folder must be before Cleanup removes it.
// Anything younger may belong to a Publish or pointer swap still running in another
// process; writing a bundle takes seconds, so an hour leaves a wide margin.
const StaleAge = time.Hour

// maxPublishAttempts bounds how often Publish picks a new version name after another
// process took the one it chose.
const maxPublishAttempts = 10

// Registry is a folder of versioned model bundles, one subfolder per repository (see
// the package documentation for the layout). Its methods are safe for concurrent use.
// Any number of processes may read a registry while one process writes it; two writing
// processes do not corrupt it, but a Retain in one may delete a version the other is
// about to make champion.
type Registry struct {
	dir string
	// now is the clock that names versions; time.Now except in tests.
	now func() time.Time
	// revision returns the VCS revision Publish records; VCSRevision except in tests.
	revision func() string

	// mu serializes this process's writers: version naming and renaming in Publish,
	// pointer swaps and Retain, so that Retain never deletes a version another
	// goroutine is making champion or challenger.
	mu sync.Mutex
}

// Open returns the registry in dir, creating the folder if it does not exist.
func Open(dir string) (*Registry, error) {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("registry: opening: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: opening: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("registry: opening %s: not a folder", dir)
	}
	return &Registry{dir: dir, now: time.Now, revision: VCSRevision}, nil
}

// Dir returns the registry's folder.
func (r *Registry) Dir() string { return r.dir }

func (r *Registry) repoDir(repo string) string { return filepath.Join(r.dir, repo) }

func (r *Registry) versionsDir(repo string) string {
	return filepath.Join(r.dir, repo, "versions")
}

func (r *Registry) versionDir(repo, version string) string {
	return filepath.Join(r.dir, repo, "versions", version)
}

// WriteFunc writes the files of a bundle into the empty folder dir. It may create
// subfolders; it must not write ManifestName, symbolic links or other special files.
type WriteFunc func(dir string) error

// CopyFS returns a WriteFunc that copies the regular files and folders of fsys, for
// example os.DirFS of a bundle prepared elsewhere.
func CopyFS(fsys fs.FS) WriteFunc {
	return func(dir string) error { return os.CopyFS(dir, fsys) }
}

// PublishOptions says which pointer, if any, Publish moves to the new version. At most
// one field may be set.
type PublishOptions struct {
	// Champion makes the new version the champion.
	Champion bool
	// Challenger makes the new version the challenger.
	Challenger bool
	// At, when not zero, names the new version by this time instead of the clock's
	// (still never before the newest version of the repository), so that publishing the
	// same bundle into an empty registry gives the same version name every time.
	At time.Time
	// Version, when set, is the new version's name, so that the files written can name
	// it (NextVersion gives one; the clock may have moved on since, which is fine). It
	// must be a valid name after every version of repo;
	// otherwise, or when another publisher took it first, Publish fails with an error
	// wrapping ErrInvalidName or fs.ErrExist.
	Version string
}

// NextVersion returns the name Publish would give the next version of repo now (at, when
// not zero, in place of the clock, as PublishOptions.At), for PublishOptions.Version.
func (r *Registry) NextVersion(repo string, at time.Time) (string, error) {
	if err := validRepo(repo); err != nil {
		return "", fmt.Errorf("registry: next version: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, err := r.nextVersionLocked(repo, at)
	if errors.Is(err, ErrNotFound) {
		return formatVersion(at0(at, r.now), 1), nil
	}
	if err != nil {
		return "", fmt.Errorf("registry: next version of %s: %w", repo, err)
	}
	return v, nil
}

// at0 returns at, or now() when at is zero, truncated to the second in UTC.
func at0(at time.Time, now func() time.Time) time.Time {
	if at.IsZero() {
		at = now()
	}
	return at.UTC().Truncate(time.Second)
}

// Publish adds a version of repo to the registry and returns its name. write fills a
// new temporary folder inside the registry; Publish then makes every file mode 0600
// and every folder 0700 (bundles hold per-author statistics; the scorer runs as the
// same user),
// checksums and fsyncs every file, completes m (FormatVersion, Repo, Version, Files, and Extra[ExtraVCSRevision]
// when unset and known), writes the manifest last, fsyncs the folder, renames it into
// place and fsyncs the parent. A reader therefore never sees part of a version. The
// fields the caller sets must be valid: a non-empty FeatureSchemaHash, a non-zero
// TrainedAt, a window whose To is not before its From and finite metrics.
//
// If opts asks for it, the new version then becomes the champion or challenger. When
// something fails after the rename (the fsync of versions/ or the pointer swap), the
// version stays published and Publish returns its name together with the error.
//
// Publish first removes stale temporary folders (see Cleanup). It panics if opts sets
// both Champion and Challenger.
func (r *Registry) Publish(ctx context.Context, repo string, write WriteFunc, m Manifest,
	opts PublishOptions) (version string, err error) {
	if opts.Champion && opts.Challenger {
		panic("registry: PublishOptions sets both Champion and Challenger")
	}
	if err := validRepo(repo); err != nil {
		return "", fmt.Errorf("registry: publish: %w", err)
	}
	if err := m.validateCaller(); err != nil {
		return "", fmt.Errorf("registry: publish %s: %w", repo, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("registry: publish %s: %w", repo, err)
	}
	for _, dir := range []string{r.repoDir(repo), r.versionsDir(repo)} {
		if err := mkdirDurable(dir); err != nil {
			return "", fmt.Errorf("registry: publish %s: %w", repo, err)
		}
	}
	if _, err := r.Cleanup(repo); err != nil {
		return "", fmt.Errorf("registry: publish %s: %w", repo, err)
	}

	tmp, lock, err := makePublishDir(r.versionsDir(repo))
	if err != nil {
		return "", fmt.Errorf("registry: publish %s: %w", repo, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			err = errors.Join(err, os.RemoveAll(tmp))
		}
		err = errors.Join(err, lock.Close())
	}()
	if err := write(tmp); err != nil {
		return "", fmt.Errorf("registry: publish %s: writing bundle: %w", repo, err)
	}
	files, err := sealFiles(tmp)
	if err != nil {
		return "", fmt.Errorf("registry: publish %s: %w", repo, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("registry: publish %s: %w", repo, err)
	}
	m.FormatVersion = FormatVersion
	m.Repo = repo
	m.Files = files
	m.TrainedAt = m.TrainedAt.UTC()
	m.Window = Window{From: m.Window.From.UTC(), To: m.Window.To.UTC()}
	if rev := r.revision(); rev != "" && m.Extra[ExtraVCSRevision] == "" {
		m.Extra = maps.Clone(m.Extra) // the caller's map stays as it was
		if m.Extra == nil {
			m.Extra = map[string]string{}
		}
		m.Extra[ExtraVCSRevision] = rev
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if version, err = r.nextVersionLocked(repo, opts.At); err != nil {
			return "", fmt.Errorf("registry: publish %s: %w", repo, err)
		}
		if opts.Version != "" {
			if _, _, err := parseVersion(opts.Version); err != nil {
				return "", fmt.Errorf("registry: publish %s: %w", repo, err)
			}
			vs, err := r.List(repo)
			if err != nil {
				return "", fmt.Errorf("registry: publish %s: %w", repo, err)
			}
			if n := len(vs); n > 0 && opts.Version <= vs[n-1] {
				return "", fmt.Errorf("registry: publish %s: %w: version %s is not after the newest version %s", repo, ErrInvalidName, opts.Version, vs[n-1])
			}
			version = opts.Version
		}
		m.Version = version
		data, err := m.encode()
		if err != nil {
			return "", fmt.Errorf("registry: publish %s: encoding manifest: %w", repo, err)
		}
		// writeFileAtomic also fsyncs tmp, making the whole folder durable.
		if err := writeFileAtomic(filepath.Join(tmp, ManifestName), data); err != nil {
			return "", fmt.Errorf("registry: publish %s: writing manifest: %w", repo, err)
		}
		err = os.Rename(tmp, r.versionDir(repo, version))
		if err == nil {
			break
		}
		// Another process published this name first: take the next one, unless the
		// caller chose the name.
		if !errors.Is(err, fs.ErrExist) || attempt+1 == maxPublishAttempts || opts.Version != "" {
			return "", fmt.Errorf("registry: publish %s: %w", repo, err)
		}
	}
	renamed = true
	if err := atomicfile.SyncDir(r.versionsDir(repo)); err != nil {
		return version, fmt.Errorf("registry: publish %s %s: %w", repo, version, err)
	}
	switch {
	case opts.Champion:
		err = r.setPointerLocked(repo, RoleChampion, version)
	case opts.Challenger:
		err = r.setPointerLocked(repo, RoleChallenger, version)
	}
	return version, err
}

// sealFiles makes every file under dir mode filePerm and every folder (dir included)
// dirPerm, fsyncs them and returns the manifest's file table. It refuses a file named ManifestName and anything that is neither a regular
// file nor a folder.
func sealFiles(dir string) (map[string]FileInfo, error) {
	files := map[string]FileInfo{}
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
			// MkdirTemp makes the top folder 0700, and the caller's umask applies
			// to the rest; every mode is set exactly.
			return os.Chmod(path, dirPerm)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ManifestName {
			return fmt.Errorf("%w: bundle file %q is reserved for the manifest",
				ErrInvalidManifest, rel)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%w: bundle file %q is not a regular file (%v)",
				ErrInvalidManifest, rel, d.Type())
		}
		if err := os.Chmod(path, filePerm); err != nil {
			return err
		}
		sum, size, err := hashFile(path, true)
		if err != nil {
			return err
		}
		files[rel] = FileInfo{SHA256: sum, Size: size}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Children before parents, so each folder is synced after its entries exist.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := atomicfile.SyncDir(dirs[i]); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// nextVersionLocked returns the name for the next version of repo. The time part never
// goes below the latest version's, so names sort in publication order.
func (r *Registry) nextVersionLocked(repo string, at time.Time) (string, error) {
	if at.IsZero() {
		at = r.now()
	}
	t := at.UTC().Truncate(time.Second)
	seq := 1
	versions, err := r.List(repo)
	if err != nil {
		return "", err
	}
	if n := len(versions); n > 0 {
		lt, ls, err := parseVersion(versions[n-1])
		if err != nil {
			return "", err
		}
		if t.Before(lt) {
			t = lt
		}
		seq = ls + 1
	}
	if seq > maxSeq {
		return "", fmt.Errorf("sequence number %d exceeds %d", seq, maxSeq)
	}
	return formatVersion(t, seq), nil
}

// Repos returns the names of the repositories in the registry, sorted.
func (r *Registry) Repos() ([]string, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("registry: listing repositories: %w", err)
	}
	var repos []string
	for _, e := range entries {
		if e.IsDir() && validRepo(e.Name()) == nil {
			repos = append(repos, e.Name())
		}
	}
	return repos, nil
}

// List returns the versions of repo, oldest first. Temporary folders are not versions.
// It returns an error wrapping ErrNotFound if the repository does not exist.
func (r *Registry) List(repo string) ([]string, error) {
	if err := validRepo(repo); err != nil {
		return nil, fmt.Errorf("registry: list: %w", err)
	}
	entries, err := os.ReadDir(r.versionsDir(repo))
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(r.repoDir(repo)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("registry: list: repo %s: %w", repo, ErrNotFound)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry: list %s: %w", repo, err)
	}
	var versions []string
	for _, e := range entries { // ReadDir sorts by name.
		if _, _, err := parseVersion(e.Name()); err == nil && e.IsDir() {
			versions = append(versions, e.Name())
		}
	}
	return versions, nil
}

// Retain deletes the versions of repo except the newest n and the champion and
// challenger, and returns the deleted names. Each version is first renamed to a
// temporary name, so a reader never finds a half-deleted version. A reader that has
// just read an old pointer may still find its version gone; Load then fails with
// ErrNotFound and the reader keeps what it has. Retain panics if n < 1, because the
// newest version fixes the next version's sequence number.
func (r *Registry) Retain(repo string, n int) (removed []string, err error) {
	if n < 1 {
		panic(fmt.Sprintf("registry: Retain keeps %d versions, want at least 1", n))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	versions, err := r.List(repo)
	if err != nil {
		return nil, fmt.Errorf("registry: retain: %w", err)
	}
	keep := map[string]bool{}
	for _, role := range []Role{RoleChampion, RoleChallenger} {
		v, err := r.pointer(repo, role)
		if errors.Is(err, ErrNoPointer) {
			continue
		}
		if err != nil {
			// Without knowing what is served, deleting anything is unsafe.
			return nil, fmt.Errorf("registry: retain: %w", err)
		}
		keep[v] = true
	}
	vdir := r.versionsDir(repo)
	for i, v := range versions {
		if i >= len(versions)-n || keep[v] {
			continue
		}
		// The nanoseconds keep the name free even if a crashed Retain left one.
		trash := filepath.Join(vdir, fmt.Sprintf("%sdelete-%s-%d", tmpPrefix, v, time.Now().UnixNano()))
		if err := os.Rename(filepath.Join(vdir, v), trash); err != nil {
			return removed, fmt.Errorf("registry: retain %s: %w", repo, err)
		}
		removed = append(removed, v)
		if err := os.RemoveAll(trash); err != nil {
			return removed, fmt.Errorf("registry: retain %s: %w", repo, err)
		}
	}
	if len(removed) > 0 {
		if err := atomicfile.SyncDir(vdir); err != nil {
			return removed, fmt.Errorf("registry: retain %s: %w", repo, err)
		}
	}
	return removed, nil
}

// publishPrefix starts the names of Publish's temporary folders.
const publishPrefix = tmpPrefix + "publish-"

// makePublishDir creates a temporary publish folder in dir and locks it (atomicfile.TryLock): the
// lock, held until the returned file is closed, tells Cleanup the folder is in use. A
// Cleanup may lock and remove the folder between its creation and the lock; then the
// lock fails, or the path no longer names the locked folder, and another is made.
func makePublishDir(dir string) (tmp string, lock *os.File, err error) {
	for range 8 {
		if tmp, err = os.MkdirTemp(dir, publishPrefix+"*"); err != nil {
			return "", nil, err
		}
		lock, ok, err := atomicfile.TryLock(tmp)
		if err != nil {
			return "", nil, errors.Join(err, os.RemoveAll(tmp))
		}
		if !ok {
			continue // a Cleanup holds it and removes it
		}
		li, lerr := lock.Stat()
		pi, perr := os.Stat(tmp)
		if lerr == nil && perr == nil && os.SameFile(li, pi) {
			return tmp, lock, nil
		}
		if err := lock.Close(); err != nil {
			return "", nil, err
		}
	}
	return "", nil, fmt.Errorf("could not create a publish folder in %s: each was removed by a concurrent cleanup", dir)
}

// Cleanup removes the temporary files and folders of repo left by a Publish, pointer
// swap or Retain that crashed, and returns their paths relative to the registry. A
// publish folder or a pointer swap's file goes as soon as no writer holds its lock (its
// writer died, kill -9 included); other temporary entries (a Retain's), whose writers
// hold no lock, once they are older than StaleAge. Readers ignore them, so Cleanup is
// only housekeeping; Publish calls it.
func (r *Registry) Cleanup(repo string) (removed []string, err error) {
	if err := validRepo(repo); err != nil {
		return nil, fmt.Errorf("registry: cleanup: %w", err)
	}
	cutoff := time.Now().Add(-StaleAge)
	for _, dir := range []string{r.repoDir(repo), r.versionsDir(repo)} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("registry: cleanup %s: %w", repo, err)
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), tmpPrefix) {
				continue
			}
			info, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed by someone else meanwhile
			}
			if err != nil {
				return removed, fmt.Errorf("registry: cleanup %s: %w", repo, err)
			}
			path := filepath.Join(dir, e.Name())
			if atomicfile.LocksWork && (!e.IsDir() || strings.HasPrefix(e.Name(), publishPrefix)) {
				// A publish folder or a file of atomicfile.Write (a pointer swap):
				// both are locked by their writer while in use.
				gone, err := removeDead(path)
				if err != nil {
					return removed, fmt.Errorf("registry: cleanup %s: %w", repo, err)
				}
				if gone {
					rel, _ := filepath.Rel(r.dir, path)
					removed = append(removed, filepath.ToSlash(rel))
				}
				continue
			}
			if !info.ModTime().Before(cutoff) {
				continue
			}
			if err := os.RemoveAll(path); err != nil {
				return removed, fmt.Errorf("registry: cleanup %s: %w", repo, err)
			}
			rel, _ := filepath.Rel(r.dir, path)
			removed = append(removed, filepath.ToSlash(rel))
		}
	}
	return removed, nil
}

// removeDead removes the temporary publish folder or file path when no writer holds
// its lock, holding the lock while it does so that the creator, if it is just starting,
// sees its lock fail and makes another (makePublishDir, atomicfile.Write). It reports
// whether it removed path.
func removeDead(path string) (bool, error) {
	lock, ok, err := atomicfile.TryLock(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !ok {
		return false, nil // gone meanwhile, or in use
	}
	if err != nil {
		return false, err
	}
	err = os.RemoveAll(path)
	return err == nil, errors.Join(err, lock.Close())
}
