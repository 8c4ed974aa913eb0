//go:build !unix

package registry

import "os"

// lockDir takes no lock where flock does not exist: it opens dir and reports it
// lockable, and Cleanup, seeing locksWork false, keeps to the StaleAge rule.
func lockDir(dir string) (f *os.File, ok bool, err error) {
	f, err = os.Open(dir)
	return f, err == nil, err
}

// locksWork says that lockDir cannot tell a live publish folder from a dead one here.
const locksWork = false
