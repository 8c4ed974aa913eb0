package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFingerprint checks that the fingerprint depends on the table files' bytes only:
// equal for a copy, different when one byte of any table changes.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := writeCSVHistory(t, goodChanges, goodBuilds, "")
	b := writeCSVHistory(t, goodChanges, goodBuilds, "")
	fa, err := Fingerprint(a)
	if err != nil {
		t.Fatal(err)
	}
	if fb, err := Fingerprint(b); err != nil || fb != fa || len(fa) != 64 {
		t.Fatalf("Fingerprint(copy) = %q, %v, want %q", fb, err, fa)
	}
	if err := os.WriteFile(filepath.Join(b, "notes.txt"), []byte("not a table"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fb, _ := Fingerprint(b); fb != fa {
		t.Errorf("a file that is not a table changed the fingerprint")
	}
	c := writeCSVHistory(t, goodChanges, strings.Replace(goodBuilds, ",600,", ",601,", 1), "")
	if fc, _ := Fingerprint(c); fc == fa {
		t.Errorf("a changed duration kept the fingerprint")
	}
	d := writeCSVHistory(t, goodChanges, goodBuilds, "ahead_change_id,behind_change_id\nc1,c2\n")
	if fd, _ := Fingerprint(d); fd == fa {
		t.Errorf("a pairs table kept the fingerprint")
	}
	if _, err := Fingerprint(t.TempDir()); !errors.Is(err, ErrNoHistory) {
		t.Errorf("Fingerprint(empty folder) = %v, want ErrNoHistory", err)
	}
}
