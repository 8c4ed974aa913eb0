package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// tmpPrefix starts the name of every temporary file and folder the registry writes.
// Readers skip such names and Cleanup removes stale ones. It is atomicfile's prefix, so
// the temporary files of pointer and manifest writes match it too.
const tmpPrefix = atomicfile.TempPrefix

// Permission bits of what the registry writes: readable by its owner only, because a
// bundle holds per-author statistics (issue 14 item 8); the trainer and predictd run as
// the same user. Operators who need another reader grant it on the registry folder's
// parent by ACL or run both under one service account.
const (
	filePerm fs.FileMode = 0o600
	dirPerm  fs.FileMode = 0o700
)

// writeFileAtomic replaces path with data, mode filePerm: it writes a temporary file in
// the same folder, syncs and closes it, renames it over path and syncs the folder, so a
// reader sees either the old content or the new one, and the new one survives a crash
// once this returns.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, filePerm)
}

// mkdirDurable creates dir, mode dirPerm, if it does not exist and syncs its parent, so
// a new folder survives a crash together with what is later renamed into it.
func mkdirDurable(dir string) error {
	err := os.Mkdir(dir, dirPerm)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// Mkdir applies the umask; set the mode exactly.
	if err := os.Chmod(dir, dirPerm); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(dir))
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
