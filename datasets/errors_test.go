package datasets

import (
	"errors"
	"testing"
)

func TestParseErrorString(t *testing.T) {
	tests := []struct {
		e    *ParseError
		want string
	}{
		{&ParseError{Path: "b.csv", Line: 4, Row: 2, Column: "status", Err: ErrInvalidValue}, "datasets: b.csv: line 4 (row 2), column status: invalid value"},
		{&ParseError{Path: "b.csv", Line: 1, Row: -1, Column: "status", Err: ErrMissingColumn}, "datasets: b.csv: line 1, column status: missing required column"},
		{&ParseError{Path: "b.parquet", Row: 7, Column: "path", Err: ErrUnknownChange}, "datasets: b.parquet: row 7, column path: unknown change"},
		{&ParseError{Path: "b.parquet", Row: -1, Column: "path", Err: ErrUnsupportedType}, "datasets: b.parquet, column path: unsupported column type"},
	}
	for _, tc := range tests {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if !errors.Is(tc.e, tc.e.Err) {
			t.Errorf("errors.Is(%v, %v) = false", tc.e, tc.e.Err)
		}
	}
	pe := &ProblemsError{Problems: []*ParseError{tests[0].e, tests[2].e}}
	if !errors.Is(pe, ErrInvalidValue) || !errors.Is(pe, ErrUnknownChange) || errors.Is(pe, ErrDuplicateID) {
		t.Errorf("ProblemsError does not match exactly its problems' sentinels")
	}
}
