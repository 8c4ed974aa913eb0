package datasets

import (
	"errors"
	"fmt"
	"math"
)

var nan = math.NaN()

// Errors returned by this package. Problems with one cell, row or column of a file are
// reported as a *ParseError that wraps one of these, so callers can match them with
// errors.Is and still learn where the problem is with errors.As.
var (
	// ErrInvalidValue is a cell that does not parse or lies outside its column's domain.
	ErrInvalidValue = errors.New("invalid value")
	// ErrMissingColumn is a required column that a file does not have.
	ErrMissingColumn = errors.New("missing required column")
	// ErrUnknownColumn is a column that is not part of the schema while a column of the
	// schema with a name close to it is absent: most likely a misspelling.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrDuplicateColumn is a column name that appears twice in one file or frame.
	ErrDuplicateColumn = errors.New("duplicate column")
	// ErrUnsupportedType is a Parquet or Arrow column whose type cannot hold the values
	// of its column.
	ErrUnsupportedType = errors.New("unsupported column type")
	// ErrNegativeCount is a count column holding a negative number.
	ErrNegativeCount = errors.New("negative count")
	// ErrDuplicateID is a change_id or build_id that an earlier row already used.
	ErrDuplicateID = errors.New("duplicate id")
	// ErrUnknownChange is a build (or a path entry, or a pair) naming a change_id that
	// the changes table does not have.
	ErrUnknownChange = errors.New("unknown change")
	// ErrTimeOrder is a finished_at before started_at, or a decided_at before
	// submitted_at.
	ErrTimeOrder = errors.New("time order")
	// ErrSkippedChange is a build whose change was skipped in lenient reading.
	ErrSkippedChange = errors.New("change was skipped")
	// ErrUnknownFormat is a file extension or format name this package does not read.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrNoHistory is a folder that holds no changes and builds tables.
	ErrNoHistory = errors.New("no history")
	// ErrLeakingColumn is an extra attribute named after a source column that records
	// how the build ended (see CheckExtraName): as a feature it would leak the label.
	ErrLeakingColumn = errors.New("column leaks the label")
	// ErrTooManyProblems ends strict reading once the problem limit is reached.
	ErrTooManyProblems = errors.New("too many problems")
)

// ParseError is a problem with one place in one file. It has the shape of
// encoding/csv's ParseError, with the column named rather than counted.
type ParseError struct {
	Path string // the file
	// Line is the 1-based line of a CSV file, 0 for Parquet and Arrow files or for a
	// problem that concerns a whole column.
	Line int
	// Row is the 0-based data row (header excluded), -1 for a problem that concerns a
	// whole column or file.
	Row    int
	Column string // the column name; "" when the problem is not about one column
	Err    error  // the underlying problem, wrapping one of the package's sentinel errors
}

// Error describes the problem as "datasets: FILE: line L (row R), column C: problem".
func (e *ParseError) Error() string {
	s := "datasets: " + e.Path
	switch {
	case e.Line > 0 && e.Row >= 0:
		s += fmt.Sprintf(": line %d (row %d)", e.Line, e.Row)
	case e.Line > 0:
		s += fmt.Sprintf(": line %d", e.Line)
	case e.Row >= 0:
		s += fmt.Sprintf(": row %d", e.Row)
	}
	if e.Column != "" {
		s += ", column " + e.Column
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// ProblemsError is the error of a strict read that found problems: it lists each of them
// (at most the read's problem limit). errors.Is matches any sentinel a problem wraps.
type ProblemsError struct {
	Problems  []*ParseError
	Truncated bool // reading stopped at the problem limit; more problems may exist
}

// Error lists the problems, one a line.
func (e *ProblemsError) Error() string {
	s := fmt.Sprintf("datasets: %d problem(s)", len(e.Problems))
	if e.Truncated {
		s = fmt.Sprintf("datasets: at least %d problems (stopped at the limit)", len(e.Problems))
	}
	for _, p := range e.Problems {
		s += "\n\t" + p.Error()
	}
	return s
}

// Unwrap returns the problems so that errors.Is and errors.As see each of them.
func (e *ProblemsError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}
