package datasets

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Frame is a plain table of named columns, the form of feature tables and of the tables
// `trainer fit` / `trainer predict` read.
type Frame struct{ Columns []Column }

// Column is one named column: exactly one of Floats (numeric, NaN = missing) and Strings
// is non-nil.
type Column struct {
	Name    string
	Floats  []float64
	Strings []string
}

// NRows returns the number of rows: the length of the first column, 0 without columns.
func (f *Frame) NRows() int {
	if len(f.Columns) == 0 {
		return 0
	}
	c := &f.Columns[0]
	if c.Floats != nil {
		return len(c.Floats)
	}
	return len(c.Strings)
}

// Index returns the index of the column called name, -1 when there is none.
func (f *Frame) Index(name string) int {
	for i := range f.Columns {
		if f.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

// check returns an error unless every column has a unique name, exactly one of Floats
// and Strings, and NRows values.
func (f *Frame) check() error {
	n := f.NRows()
	seen := make(map[string]bool, len(f.Columns))
	for i := range f.Columns {
		c := &f.Columns[i]
		if seen[c.Name] {
			return fmt.Errorf("datasets: frame column %d: %w %q", i, ErrDuplicateColumn, c.Name)
		}
		seen[c.Name] = true
		if (c.Floats == nil) == (c.Strings == nil) {
			return fmt.Errorf("datasets: frame column %q: %w: want exactly one of Floats and Strings", c.Name, ErrInvalidValue)
		}
		if l := max(len(c.Floats), len(c.Strings)); l != n {
			return fmt.Errorf("datasets: frame column %q: %w: %d rows, the first column has %d", c.Name, ErrInvalidValue, l, n)
		}
	}
	return nil
}

// ReadFrame reads a table file; the format comes from the extension: .csv, .parquet or
// .arrow.
//
// In a CSV file (a header row, then one record per row) a column is numeric when every
// non-empty cell parses with strconv.ParseFloat ("NaN" included) and an empty cell is
// NaN; otherwise it is a string column, cells kept as written. In Parquet and Arrow
// files integer, float and bool columns become Floats (bool as 0 or 1, null as NaN) and
// string columns Strings (null as ""); other types are an error. Errors name the file,
// the line (CSV) and the column.
func ReadFrame(ctx context.Context, path string) (*Frame, error) {
	return readFrame(ctx, path, memory.DefaultAllocator)
}

func readFrame(ctx context.Context, path string, mem memory.Allocator) (*Frame, error) {
	fr := &Frame{}
	format, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	isCSV := format == FormatCSV
	headerLine := 0
	if isCSV {
		headerLine = 1
	}
	var text [][]string // CSV columns as text, typed at the end
	sc := &scanner{path: path, mem: mem}
	sc.header = func(names []string, types []arrow.DataType) error {
		seen := make(map[string]bool, len(names))
		for _, n := range names {
			if seen[n] {
				return &ParseError{Path: path, Line: headerLine, Row: -1, Column: n, Err: ErrDuplicateColumn}
			}
			seen[n] = true
		}
		fr.Columns = make([]Column, len(names))
		for j, n := range names {
			col := &fr.Columns[j]
			col.Name = n
			if types == nil {
				continue // CSV: typed from the cells at the end
			}
			// The type of a Parquet or Arrow column is fixed by the schema.
			switch {
			case isNumericType(types[j]):
				col.Floats = []float64{}
			case types[j].ID() == arrow.STRING || types[j].ID() == arrow.LARGE_STRING:
				col.Strings = []string{}
			default:
				return &ParseError{Path: path, Row: -1, Column: n, Err: fmt.Errorf("%w: %s, want a number, bool or string", ErrUnsupportedType, types[j])}
			}
		}
		text = make([][]string, len(names))
		return nil
	}
	sc.batch = func(b *batch) error {
		for j, cc := range b.cols {
			col := &fr.Columns[j]
			if c, ok := cc.(csvCells); ok {
				text[j] = append(text[j], c...)
				continue
			}
			if col.Floats != nil {
				if err := cc.prepare(kFloat); err != nil {
					return &ParseError{Path: path, Row: b.row(0), Column: col.Name, Err: err}
				}
				for i := range b.n {
					v, _ := cc.float(i)
					col.Floats = append(col.Floats, v)
				}
				continue
			}
			if err := cc.prepare(kString); err != nil {
				return &ParseError{Path: path, Row: b.row(0), Column: col.Name, Err: err}
			}
			for i := range b.n {
				s, _ := cc.str(i)
				col.Strings = append(col.Strings, s)
			}
		}
		return nil
	}
	sc.badRow = func(row, line int, err error) error {
		return &ParseError{Path: path, Line: line, Row: row, Err: err}
	}
	if err := sc.scan(ctx); err != nil {
		return nil, err
	}
	for j := range fr.Columns {
		if isCSV {
			col := &fr.Columns[j]
			col.Floats, col.Strings = inferCSV(text[j])
		}
	}
	return fr, nil
}

// isNumericType reports whether a column of type t reads as Floats: integers, floats,
// bools and the null type.
func isNumericType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.NULL:
		return true
	}
	return false
}

// inferCSV types a CSV column: numeric when every non-empty cell parses as a float.
func inferCSV(cells []string) ([]float64, []string) {
	fs := make([]float64, len(cells))
	for i, s := range cells {
		if s == "" {
			fs[i] = math.NaN()
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, cells
		}
		fs[i] = v
	}
	return fs, nil
}

// WriteFrame writes f to path in the format of its extension (.csv, .parquet or
// .arrow), atomically: to a temporary file, synced, then renamed. Floats are written as
// float64 (NaN as null, or an empty CSV cell, in the shortest form that parses back to the
// same value), Strings as strings ("" as null in Parquet and Arrow). A string column
// whose every value parses as a number reads back from CSV as a numeric column.
func WriteFrame(ctx context.Context, path string, f *Frame) error {
	return writeFrame(ctx, path, f, memory.DefaultAllocator)
}

func writeFrame(ctx context.Context, path string, f *Frame, mem memory.Allocator) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return fmt.Errorf("datasets: writing %s: %w", path, err)
	}
	cols := make([]wcol, len(f.Columns))
	for j := range f.Columns {
		c := &f.Columns[j]
		cols[j].name = c.Name
		if c.Floats != nil {
			fs := c.Floats
			cols[j].kind = kFloat
			cols[j].float = func(i int) float64 { return fs[i] }
		} else {
			ss := c.Strings
			cols[j].kind = kString
			cols[j].str = func(i int) string { return ss[i] }
		}
	}
	return writeTable(ctx, path, format, f.NRows(), cols, mem)
}
