//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// lock takes an exclusive flock on f without waiting. The kernel releases it when f is
// closed or its process dies (kill -9 included), so a temporary file that another
// process can lock belongs to no running Write: see Locked.
func lock(f *os.File) (ok bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}

// LocksWork says that Write's temporary files are locked while in use, so that
// TryLock tells a live one from one left by a writer that died.
const LocksWork = true
