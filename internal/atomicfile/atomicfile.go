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
	f, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmp := f.Name()
	closed, renamed := false, false
	defer func() {
		if renamed {
			return
		}
		// An error, or a panic of fn: the temporary file is useless.
		if !closed {
			if cerr := f.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("atomicfile: %w", cerr))
			}
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
	closed = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	renamed = true
	return SyncDir(dir)
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
