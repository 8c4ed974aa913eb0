package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Version names are "20261121T094000Z-000001": the UTC second of publication, a dash
// and a six-digit sequence number that grows by one with every version of the
// repository. Publish never lets the time part go backwards (a clock step back reuses
// the latest version's time), so sorting names as strings sorts versions by
// publication, and the sequence number keeps two versions of one second apart.
const (
	versionTimeLayout = "20060102T150405Z"
	seqDigits         = 6
	maxSeq            = 999999
)

// formatVersion returns the version name for time t and sequence number seq.
func formatVersion(t time.Time, seq int) string {
	return fmt.Sprintf("%s-%0*d", t.UTC().Format(versionTimeLayout), seqDigits, seq)
}

// parseVersion splits a version name into its time and sequence number.
func parseVersion(name string) (time.Time, int, error) {
	ts, seqText, ok := strings.Cut(name, "-")
	if !ok || len(seqText) != seqDigits {
		return time.Time{}, 0, fmt.Errorf("%w: version %q: want %s-NNNNNN", ErrInvalidName,
			name, versionTimeLayout)
	}
	t, err := time.Parse(versionTimeLayout, ts)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("%w: version %q: %w", ErrInvalidName, name, err)
	}
	seq, err := strconv.Atoi(seqText)
	// The round trip rejects signs and any other spelling Parse and Atoi forgive.
	if err != nil || formatVersion(t, seq) != name {
		return time.Time{}, 0, fmt.Errorf("%w: version %q: want %s-NNNNNN", ErrInvalidName,
			name, versionTimeLayout)
	}
	return t, seq, nil
}

// validRepo checks a repository name: 1 to 100 letters, digits, '.', '_' or '-', not
// starting with '.' (names starting with '.' are the registry's own temporary files).
func validRepo(name string) error {
	if name == "" || len(name) > 100 || name[0] == '.' {
		return fmt.Errorf("%w: repo %q", ErrInvalidName, name)
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: repo %q: character %q", ErrInvalidName, name, c)
		}
	}
	return nil
}
