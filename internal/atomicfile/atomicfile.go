package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temporary file Write creates.
const TempPrefix = ".tmp-"

// bufSize is the size of the buffer between the caller's writes and the file; 64 KiB
// turns many small writes (CSV rows, JSON tokens) into few system calls.
const bufSize = 64 << 10

// Write replaces the file at path with what fn writes, atomically, and gives it the
// permission bits perm (exactly: the process umask does not apply). fn must not keep w
// after it returns; w is buffered and flushed by Write.
//
// An error of fn is returned as it is (joined with any error of the cleanup), so the
// caller can match it with errors.Is; other errors are prefixed "atomicfile:" and wrap
// the error of the file system. If only the final sync of the folder fails, the new
// content is in place but may not survive a crash. If fn panics, the temporary file is
// removed before the panic goes on.
func Write(path string, perm fs.FileMode, fn func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createLocked(dir, TempPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if renamed {
			return
		}
		// An error, or a panic of fn: the temporary file is useless.
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("atomicfile: %w", cerr))
		}
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("atomicfile: %w", rerr))
		}
	}()
	bw := bufio.NewWriterSize(f, bufSize)
	if err := fn(bw); err != nil {
		return err
	}
	for _, step := range []func() error{
		bw.Flush,
		// CreateTemp makes the file 0600; Chmod is not subject to the umask.
		func() error { return f.Chmod(perm) },
		f.Sync,
	} {
		if err := step(); err != nil {
			return fmt.Errorf("atomicfile: writing %s: %w", path, err)
		}
	}
	// Renamed while still open, so that the lock covers the file until it has its
	// final name: a cleanup never removes a temporary file its writer still needs.
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	renamed = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return SyncDir(dir)
}

// createLocked creates a temporary file in dir, like os.CreateTemp, and locks it
// (lock): the lock, held until the file is closed, tells a cleanup (TryLock) that the
// file is in use. A cleanup may lock and remove the file between its creation and the
// lock; then the lock fails, or the name no longer names the locked file, and another
// is made.
func createLocked(dir, pattern string) (*os.File, error) {
	for range 8 {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		ok, err := lock(f)
		if err == nil && ok {
			fi, ferr := f.Stat()
			pi, perr := os.Stat(f.Name())
			if ferr == nil && perr == nil && os.SameFile(fi, pi) {
				return f, nil
			}
		}
		f.Close()
		if err != nil {
			os.Remove(f.Name())
			return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
	}
	return nil, fmt.Errorf("could not create a temporary file in %s: each was removed by a concurrent cleanup", dir)
}

// WriteFile replaces the file at path with data, atomically, like Write, and gives it
// the permission bits perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs the folder dir ("" is the working folder), so that the entries
// created, renamed or removed in it are durable.
func SyncDir(dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := errors.Join(d.Sync(), d.Close()); err != nil {
		return fmt.Errorf("atomicfile: syncing folder %s: %w", dir, err)
	}
	return nil
}
