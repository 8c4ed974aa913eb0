package datasets

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadHistoryBinary writes fuzzed bytes as the changes and builds tables of a
// Parquet and of an Arrow history (seeded with the real files of testHistory, so the
// fuzzer starts from valid footers, schemas and buffers) and reads them strictly and
// leniently. A read must never panic: it returns a history or an error. Whatever a
// lenient read keeps must hold only valid rows: every change id is non-empty and every
// build names a change id.
func FuzzReadHistoryBinary(f *testing.F) {
	for _, format := range []Format{FormatParquet, FormatArrow} {
		dir := f.TempDir()
		if err := WriteHistory(context.Background(), dir, testHistory(), format); err != nil {
			f.Fatal(err)
		}
		changes, err := os.ReadFile(filepath.Join(dir, TableChanges+format.Ext()))
		if err != nil {
			f.Fatal(err)
		}
		builds, err := os.ReadFile(filepath.Join(dir, TableBuilds+format.Ext()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(format == FormatArrow, changes, builds)
		// The same files cut short and with a flipped byte in the middle.
		f.Add(format == FormatArrow, changes[:len(changes)/2], builds)
		flipped := append([]byte(nil), changes...)
		flipped[len(flipped)/2] ^= 0xff
		f.Add(format == FormatArrow, flipped, builds)
	}
	f.Fuzz(func(t *testing.T, arrow bool, changes, builds []byte) {
		format := FormatParquet
		if arrow {
			format = FormatArrow
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, TableChanges+format.Ext()), changes, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, TableBuilds+format.Ext()), builds, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, lenient := range []bool{false, true} {
			h, _, err := ReadHistory(context.Background(), dir, ReadOptions{Lenient: lenient})
			if err != nil {
				continue
			}
			for i, c := range h.Changes {
				if c.ChangeID == "" {
					t.Fatalf("%s lenient=%v: change %d kept with an empty change_id", format, lenient, i)
				}
			}
			for i, b := range h.Builds {
				if b.ChangeID == "" {
					t.Fatalf("%s lenient=%v: build %d kept with an empty change_id", format, lenient, i)
				}
			}
		}
	})
}
