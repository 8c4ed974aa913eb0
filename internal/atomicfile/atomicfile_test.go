package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// checkFile fails unless path holds want with permission bits perm.
func checkFile(t *testing.T, path string, want []byte, perm fs.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != perm {
		t.Errorf("%s has mode %v, want %v", path, info.Mode().Perm(), perm)
	}
}

func TestWriteFile(t *testing.T) {
	// A restrictive umask must not change the mode: CreateTemp makes 0600 files and the
	// umask would mask 0644 to 0600, yet another user (predictd) has to read them.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)

	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		old  []byte // nil: the file does not exist yet
		data []byte
		perm fs.FileMode
	}{
		{name: "new", data: []byte("hello\n"), perm: 0o644},
		{name: "replace", old: []byte("a longer old content\n"), data: []byte("new\n"), perm: 0o644},
		{name: "empty", old: []byte("x"), data: nil, perm: 0o644},
		{name: "private", data: []byte("secret"), perm: 0o600},
		{name: "group", old: []byte("x"), data: []byte("y"), perm: 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".txt")
			if tc.old != nil {
				if err := os.WriteFile(path, tc.old, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, tc.data, tc.perm); err != nil {
				t.Fatalf("WriteFile(%s) = %v", path, err)
			}
			checkFile(t, path, tc.data, tc.perm)
		})
	}
	for _, name := range entries(t, dir) {
		if strings.HasPrefix(name, TempPrefix) {
			t.Errorf("temporary file %s left behind", name)
		}
	}
}

// TestWriteAtomic checks that the target keeps its old content while fn writes and that
// a reader holding the old file keeps reading the old content after the rename.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	oldData := []byte(`{"v":1}`)
	if err := os.WriteFile(path, oldData, 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	newData := []byte(`{"v":2,"w":[1,2,3]}`)
	err = Write(path, 0o644, func(w io.Writer) error {
		if _, err := w.Write(newData[:5]); err != nil {
			return err
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, oldData) {
			t.Errorf("during Write, %s holds %q, %v; want the old %q", path, got, err, oldData)
		}
		if n := len(entries(t, dir)); n != 2 {
			t.Errorf("during Write, %s holds %d entries, want the target and one temporary file", dir, n)
		}
		_, err := w.Write(newData[5:])
		return err
	})
	if err != nil {
		t.Fatalf("Write = %v", err)
	}
	checkFile(t, path, newData, 0o644)
	got, err := io.ReadAll(reader)
	if err != nil || !bytes.Equal(got, oldData) {
		t.Errorf("reader opened before Write read %q, %v; want the old %q", got, err, oldData)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "model.json" {
		t.Errorf("%s holds %v, want only model.json", dir, names)
	}
}

func TestWriteFailure(t *testing.T) {
	errWrite := errors.New("encoder failed")
	dir := t.TempDir()
	path := filepath.Join(dir, "data.csv")
	oldData := []byte("a,b\n1,2\n")
	if err := os.WriteFile(path, oldData, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		path    string
		fn      func(io.Writer) error
		wantErr error
	}{
		{
			name: "fn fails after writing",
			path: path,
			fn: func(w io.Writer) error {
				if _, err := w.Write([]byte("partial")); err != nil {
					return err
				}
				return errWrite
			},
			wantErr: errWrite,
		},
		{
			name:    "fn fails at once",
			path:    path,
			fn:      func(io.Writer) error { return errWrite },
			wantErr: errWrite,
		},
		{
			name:    "missing folder",
			path:    filepath.Join(dir, "missing", "data.csv"),
			fn:      func(io.Writer) error { return nil },
			wantErr: fs.ErrNotExist,
		},
		{
			name:    "target is a folder",
			path:    dir,
			fn:      func(io.Writer) error { return nil },
			wantErr: syscall.EEXIST, // rename of a file over a non-empty folder
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(tc.path, 0o644, tc.fn)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Write(%s) = %v, want %v", tc.path, err, tc.wantErr)
			}
			if err != nil && !errors.Is(tc.wantErr, errWrite) && !strings.HasPrefix(err.Error(), "atomicfile: ") {
				t.Errorf("Write(%s) = %q, want the atomicfile: prefix", tc.path, err)
			}
			checkFile(t, path, oldData, 0o644)
			for _, d := range []string{dir, filepath.Dir(dir)} {
				for _, name := range entries(t, d) {
					if strings.HasPrefix(name, TempPrefix) {
						t.Errorf("temporary file %s left in %s", name, d)
					}
				}
			}
		})
	}
}

func TestWritePanic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "encoder bug" {
				t.Errorf("recovered %v, want the panic of fn", r)
			}
		}()
		_ = Write(path, 0o644, func(w io.Writer) error {
			if _, err := w.Write([]byte("partial")); err != nil {
				return err
			}
			panic("encoder bug")
		})
	}()
	checkFile(t, path, []byte("old"), 0o644)
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("%s holds %v after a panic, want only report.html", dir, names)
	}
}

func TestWriteRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := WriteFile("rel.txt", []byte("r"), 0o644); err != nil {
		t.Fatalf("WriteFile(rel.txt) = %v", err)
	}
	checkFile(t, filepath.Join(dir, "rel.txt"), []byte("r"), 0o644)
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Errorf("SyncDir = %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if err := SyncDir(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir(%s) = %v, want fs.ErrNotExist", missing, err)
	}
}

// TestTryLockTellsLiveFromDead checks the lock a Write holds on its temporary file:
// TryLock fails on it while fn runs, and succeeds on a temporary file nobody holds (as
// left by a writer killed mid-write).
func TestTryLockTellsLiveFromDead(t *testing.T) {
	if !LocksWork {
		t.Skip("no flock on this platform: cleanups keep to their age rule")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pointer")
	err := Write(path, 0o600, func(w io.Writer) error {
		tmps, err := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
		if err != nil || len(tmps) != 1 {
			t.Fatalf("temporary files while writing: %v, %v; want one", tmps, err)
		}
		f, ok, err := TryLock(tmps[0])
		if err != nil || ok {
			f.Close()
			t.Errorf("TryLock of a live temporary file = %v, %v; want false, nil", ok, err)
		}
		_, err = w.Write([]byte("v1\n"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, TempPrefix+"pointer-dead")
	if err := os.WriteFile(dead, []byte("v0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, ok, err := TryLock(dead)
	if err != nil || !ok {
		t.Fatalf("TryLock of a dead temporary file = %v, %v; want true, nil", ok, err)
	}
	f.Close()
}
