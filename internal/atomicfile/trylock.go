package atomicfile

import (
	"fmt"
	"os"
)

// TryLock opens the temporary file path (one of Write's, named TempPrefix…) and locks
// it without waiting. ok is true, with the open file holding the lock until closed,
// when no running Write holds it: the writer died, and the file may be removed. Where
// LocksWork is false it always reports ok.
func TryLock(path string) (f *os.File, ok bool, err error) {
	f, err = os.Open(path)
	if err != nil {
		return nil, false, err
	}
	ok, err = lock(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("atomicfile: locking %s: %w", path, err)
		}
		return nil, false, nil
	}
	return f, true, nil
}
