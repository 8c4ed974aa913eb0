//go:build !unix

package atomicfile

import "os"

// lock takes no lock where flock does not exist.
func lock(*os.File) (ok bool, err error) { return true, nil }

// LocksWork says that TryLock cannot tell a live temporary file from a dead one here.
const LocksWork = false
