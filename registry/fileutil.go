package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// tmpPrefix starts the name of every temporary file and folder the registry writes.
// Readers skip such names and Cleanup removes stale ones.
const tmpPrefix = ".tmp-"

// writeFileAtomic replaces path with data: it writes a temporary file in the same
// folder, syncs and closes it, renames it over path and syncs the folder, so a reader
// sees either the old content or the new one, and the new one survives a crash once
// this returns. This is writeMetaFile in Prometheus tsdb/block.go.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, tmpPrefix+base+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			// The temporary file is useless after a failure; Cleanup would remove
			// it later, but there is no reason to leave it.
			err = errors.Join(err, ignoreNotExist(os.Remove(tmp)))
		}
	}()
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a folder so that the entries created, renamed or removed in it are
// durable.
func syncDir(dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// mkdirDurable creates dir if it does not exist and syncs its parent, so a new folder
// survives a crash together with what is later renamed into it.
func mkdirDurable(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// hashFile returns the hex sha256 and the size of the file at path. With sync set it
// also fsyncs the file, which Publish needs before the rename.
func hashFile(path string, sync bool) (sum string, size int64, err error) {
	flag := os.O_RDONLY
	if sync {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return "", 0, err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	h := sha256.New()
	size, err = io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return "", 0, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}

// ignoreNotExist returns nil for an error saying the file is already gone.
func ignoreNotExist(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
