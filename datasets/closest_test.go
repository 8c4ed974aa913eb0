package datasets

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestClosestColumn(t *testing.T) {
	t.Parallel()
	cols := []string{"lines_added", "lines_removed", "hunks", "files_changed", "author"}
	for _, tc := range []struct {
		name   string
		input  string
		want   string
		wantOK bool
	}{
		{"one extra letter", "lines_addded", "lines_added", true},
		{"case", "Lines_Added", "lines_added", true},
		{"transposition", "hnuks", "hunks", true},
		{"exact", "author", "author", true},
		{"too far", "tenure_days", "", false},
		{"dropped letter", "fils_changed", "files_changed", true},
		{"one edit in a short name", "hunk2s", "hunks", true},
		{"two edits in three letters", "hnk", "", false},
		{"empty", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ClosestColumn(tc.input, cols)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("ClosestColumn(%q) = %q, %v, want %q, %v", tc.input, got, ok, tc.want, tc.wantOK)
			}
		})
	}
	if _, ok := ClosestColumn("x", nil); ok {
		t.Error("ClosestColumn with no candidates found one")
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"é", "e", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestReadHistoryMisspelledColumn is issue 15 item 4: an unknown column next to an
// absent known one it is a typo of is a problem naming both, not an ignored column; a
// missing required column suggests the unknown one.
func TestReadHistoryMisspelledColumn(t *testing.T) {
	t.Parallel()
	dir := writeCSVHistory(t, strings.Replace(goodChanges, "lines_added", "lines_addded", 1), goodBuilds, "")
	_, rep, err := ReadHistory(context.Background(), dir, ReadOptions{})
	var pe *ParseError
	if !errors.Is(err, ErrUnknownColumn) || !errors.As(err, &pe) || pe.Column != "lines_addded" || pe.Line != 1 ||
		!strings.Contains(err.Error(), "did you mean lines_added?") {
		t.Fatalf("ReadHistory = %v, want ErrUnknownColumn on lines_addded at line 1 suggesting lines_added", err)
	}
	if rep == nil || rep.NProblems != 1 {
		t.Errorf("report = %+v, want 1 problem", rep)
	}
	// A lenient read keeps every row and still counts the problem.
	h, rep, err := ReadHistory(context.Background(), dir, ReadOptions{Lenient: true})
	if err != nil || len(h.Changes) != 2 || rep.NProblems != 1 {
		t.Errorf("lenient ReadHistory = %v, %d problems; want the rows and 1 problem", err, rep.NProblems)
	}
	// An unrelated extra column is still only ignored.
	dir = writeCSVHistory(t, strings.Replace(goodChanges, "lines_added", "reviewer", 1), goodBuilds, "")
	if _, _, err := ReadHistory(context.Background(), dir, ReadOptions{}); err != nil {
		t.Errorf("ReadHistory with an unrelated extra column = %v", err)
	}
	dir = writeCSVHistory(t, strings.Replace(goodChanges, "author,", "authr,", 1), goodBuilds, "")
	if _, _, err := ReadHistory(context.Background(), dir, ReadOptions{}); !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "did you mean authr?") {
		t.Errorf("ReadHistory without author = %v, want ErrMissingColumn suggesting authr", err)
	}
}
