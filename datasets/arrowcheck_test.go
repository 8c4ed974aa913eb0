package datasets

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeArrowHistory writes testHistory as Arrow into a new folder and returns the folder
// and the bytes of its changes table.
func writeArrowHistory(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := WriteHistory(context.Background(), dir, testHistory(), FormatArrow); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, TableChanges+FormatArrow.Ext()))
	if err != nil {
		t.Fatal(err)
	}
	return dir, b
}

// TestReadArrowDamagedString flips one byte of an author name inside changes.arrow so
// that it is no longer UTF-8: the strict read must refuse the file naming the column,
// where it used to return the damaged string.
func TestReadArrowDamagedString(t *testing.T) {
	dir, b := writeArrowHistory(t)
	i := bytes.Index(b, []byte("the builder"))
	if i < 0 {
		t.Fatal("author name not found in the Arrow file")
	}
	b[i] = 0xff
	if err := os.WriteFile(filepath.Join(dir, TableChanges+FormatArrow.Ext()), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("ReadHistory = %v, want a ParseError wrapping ErrInvalidValue", err)
	}
	if pe.Column != "author" || !strings.Contains(err.Error(), "utf8") {
		t.Errorf("error names column %q: %v; want author and the UTF-8 damage", pe.Column, err)
	}
}

// TestReadArrowFrame checks that files which are not Arrow IPC files, or lost their
// end, are refused by the frame check (before the file is read whole), each saying why.
func TestReadArrowFrame(t *testing.T) {
	_, good := writeArrowHistory(t)
	garbage := bytes.Repeat([]byte("garbage!"), 4096)
	badFooter := append([]byte(nil), good...)
	// The footer length sits just before the trailing magic: make it larger than the file.
	copy(badFooter[len(badFooter)-10:], []byte{0xff, 0xff, 0xff, 0x7f})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "fewer than"},
		{"garbage", garbage, "no ARROW1 magic at the start"},
		{"truncated", good[:len(good)-100], "no ARROW1 magic at the end"},
		{"footer too long", badFooter, "does not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := writeArrowHistory(t)
			if err := os.WriteFile(filepath.Join(dir, TableChanges+FormatArrow.Ext()), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadHistory(context.Background(), dir, ReadOptions{Lenient: true})
			if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "changes.arrow") {
				t.Fatalf("ReadHistory = %v, want ErrInvalidValue naming changes.arrow and %q", err, tc.want)
			}
		})
	}
}
