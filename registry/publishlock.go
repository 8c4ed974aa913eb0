//go:build unix

package registry

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir opens the folder dir and takes an exclusive flock on it without waiting. It
// returns the open folder, which holds the lock until closed, and ok false (and no
// file) when another open file holds the lock. The kernel releases a lock when its
// holder dies, kill -9 included, so a publish folder that can be locked belongs to no
// running Publish.
func lockDir(dir string) (f *os.File, ok bool, err error) {
	f, err = os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		cerr := f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, cerr
		}
		return nil, false, errors.Join(fmt.Errorf("locking %s: %w", dir, err), cerr)
	}
	return f, true, nil
}

// locksWork says that lockDir tells a live publish folder from a dead one here.
const locksWork = true
