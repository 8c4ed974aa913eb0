package datasets

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ImportOptions configure the importers of real CI histories.
type ImportOptions struct {
	// DeriveTimes makes ImportBuildFast fill submitted_at, started_at and finished_at
	// with derived times (see IMPORT.md): BuildFast has no absolute timestamps, only
	// minutes since a previous build. Off, those columns stay missing. Other importers
	// ignore it.
	DeriveTimes bool
	// MaxProblems is how many problems the report keeps as examples; zero means
	// DefaultMaxProblems. Every problem is counted.
	MaxProblems int
	// Progress, when not nil, is called now and then with the number of source rows
	// read so far.
	Progress func(rows int)
}

// ImportReport says what an import read and what it made of it. Every source row is
// either turned into a change and its build, merged (BuildFast duplicates), or skipped
// with a reason.
type ImportReport struct {
	Source   string // "travistorrent" or "buildfast"
	Files    int    // source files read
	RowsRead int    // data rows read
	// Merged counts rows that describe a build already read (BuildFast has one row per
	// pair of a build and a previous build); they add no change.
	Merged  int
	Changes int // changes written
	Builds  int // builds written
	// Skipped counts rows left out, by reason (the text of the sentinel error).
	Skipped map[string]int
	// Problems are the first problems, at most ImportOptions.MaxProblems.
	Problems []*ParseError
	// DerivedTimes is set when times were derived rather than read (DeriveTimes).
	DerivedTimes bool
}

// String summarises the report in a few lines.
func (r *ImportReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d files, %d rows read, %d merged duplicates, %d changes and %d builds written, %d rows skipped\n",
		r.Source, r.Files, r.RowsRead, r.Merged, r.Changes, r.Builds, r.NSkipped())
	for _, k := range sortedKeys(r.Skipped) {
		fmt.Fprintf(&b, "  skipped %d: %s\n", r.Skipped[k], k)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "  %v\n", p)
	}
	if r.DerivedTimes {
		b.WriteString("  times are derived, not recorded (see datasets/IMPORT.md)\n")
	}
	return b.String()
}

// NSkipped returns the number of rows skipped for any reason.
func (r *ImportReport) NSkipped() int {
	n := 0
	for _, v := range r.Skipped {
		n += v
	}
	return n
}

func (r *ImportReport) skip(opt ImportOptions, p *ParseError) {
	r.Skipped[reason(p.Err)]++
	max := opt.MaxProblems
	if max <= 0 {
		max = DefaultMaxProblems
	}
	if len(r.Problems) < max {
		r.Problems = append(r.Problems, p)
	}
}

// sourceRow is one record of a source CSV file, with its position for error messages.
type sourceRow struct {
	path   string
	line   int
	row    int
	index  map[string]int
	fields []string
}

func (s *sourceRow) problem(column string, err error) *ParseError {
	return &ParseError{Path: s.path, Line: s.line, Row: s.row, Column: column, Err: err}
}

func (s *sourceRow) get(column string) string { return s.fields[s.index[column]] }

// count parses a non-negative whole number.
func (s *sourceRow) count(column string) (float64, *ParseError) {
	v, perr := s.number(column)
	if perr != nil {
		return v, perr
	}
	switch {
	case v < 0:
		return v, s.problem(column, fmt.Errorf("%w: %v", ErrNegativeCount, v))
	case v != math.Trunc(v):
		return v, s.problem(column, fmt.Errorf("%w: count %v is not a whole number", ErrInvalidValue, v))
	}
	return v, nil
}

// number parses a finite number; an empty cell is NaN.
func (s *sourceRow) number(column string) (float64, *ParseError) {
	c := s.get(column)
	if c == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(c, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return math.NaN(), s.problem(column, fmt.Errorf("%w: %q is not a finite number", ErrInvalidValue, c))
	}
	return v, nil
}

// scanSource reads a source CSV file with a header row, checks that it has the columns
// named in required and calls fn for each record. A record with the wrong number of
// fields is reported to bad.
func scanSource(ctx context.Context, path string, required []string, fn func(r *sourceRow) error, bad func(p *ParseError)) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer fh.Close()
	cr := csv.NewReader(fh)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return &ParseError{Path: path, Line: 1, Row: -1, Err: fmt.Errorf("%w: empty file, want a header row", ErrInvalidValue)}
		}
		return (&scanner{path: path}).csvError(err, -1)
	}
	index := make(map[string]int, len(header))
	for j, n := range header {
		if j == 0 {
			n = strings.TrimPrefix(n, "\ufeff")
		}
		index[n] = j
	}
	var missing []*ParseError
	for _, n := range required {
		if _, ok := index[n]; !ok {
			missing = append(missing, &ParseError{Path: path, Line: 1, Row: -1, Column: n, Err: ErrMissingColumn})
		}
	}
	if len(missing) > 0 {
		return &ProblemsError{Problems: missing}
	}
	r := &sourceRow{path: path, index: index}
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if line, ok := fieldCountLine(err); ok {
				bad(&ParseError{Path: path, Line: line, Row: row, Err: fmt.Errorf("%w: %d fields, the header has %d", ErrInvalidValue, len(rec), len(header))})
				continue
			}
			return (&scanner{path: path}).csvError(err, row)
		}
		line, _ := cr.FieldPos(0)
		r.line, r.row, r.fields = line, row, rec
		if err := fn(r); err != nil {
			return err
		}
		if row%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}
