package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Fingerprint returns the SHA-256, in hex, of the table files of the history in dir (the
// changes, builds and, when present, pairs file of the format DetectFormat finds), each
// hashed with its name and length: two folders have the same fingerprint when those
// files are byte-identical. It reads the files without parsing them.
func Fingerprint(dir string) (string, error) {
	format, err := DetectFormat(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, table := range []string{TableChanges, TableBuilds, TablePairs} {
		name := table + format.Ext()
		f, err := os.Open(filepath.Join(dir, name))
		if os.IsNotExist(err) && table == TablePairs {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("datasets: fingerprint: %w", err)
		}
		fi, err := f.Stat()
		if err == nil {
			fmt.Fprintf(h, "%s %d\n", name, fi.Size())
			_, err = io.Copy(h, f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("datasets: fingerprint of %s: %w", name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
