package columnar

import (
	"errors"
	"fmt"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// ErrNotNumber is wrapped by the error for a text cell where a number is needed.
var ErrNotNumber = errors.New("not a number")

// ErrFormat is wrapped by errors for malformed files: a record with the wrong number of
// fields, an unterminated quote, a duplicate or missing column.
var ErrFormat = errors.New("malformed table")

// Table is a table read by Read: named columns of equal length.
type Table struct {
	Path    string
	Columns []Column
	NRows   int
}

// Column is one column of a Table. Values holds a number per row (NaN for missing) in
// a numeric column, and the index into Levels of each row's value (NaN for missing) in
// a text column.
type Column struct {
	Name   string
	Values []float64
	// Levels is nil for a numeric column and the sorted distinct values of a text
	// column.
	Levels []string
	// firstText is the first cell of a text column that is not a number, for the error
	// of using it as a number: its 0-based row, 1-based CSV line (0 for Parquet) and
	// text.
	firstText struct {
		row, line int
		text      string
	}
}

// IsText reports whether c is a text column (Levels set).
func (c *Column) IsText() bool { return c.Levels != nil }

// NumberError returns nil for a numeric column and, for a text column, an error naming
// its first cell that is not a number (line and row), for callers that need numbers.
func (c *Column) NumberError(path string) error {
	if !c.IsText() {
		return nil
	}
	ft := c.firstText
	where := "row " + strconv.Itoa(ft.row+1)
	if ft.line > 0 {
		where += " (line " + strconv.Itoa(ft.line) + ")"
	}
	return fmt.Errorf("%s: column %q, %s: %q is %w", path, c.Name, where, ft.text, ErrNotNumber)
}

// Level returns the text of row i of a text column and whether the cell is present;
// for a numeric column, the number formatted with strconv.FormatFloat(v, 'g', -1, 64).
func (c *Column) Level(i int) (string, bool) {
	v := c.Values[i]
	if v != v {
		return "", false
	}
	if c.Levels != nil {
		return c.Levels[int(v)], true
	}
	return strconv.FormatFloat(v, 'g', -1, 64), true
}

// Index returns the index of the column called name, -1 when there is none.
func (t *Table) Index(name string) int {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

// Names returns the column names in table order.
func (t *Table) Names() []string {
	names := make([]string, len(t.Columns))
	for i := range t.Columns {
		names[i] = t.Columns[i].Name
	}
	return names
}

// Matrix is a column-major matrix over float64 columns, without copying them: it
// implements mat.Matrix and RawColView (gonum's mat.RawColViewer), which model fitting
// reads column by column.
type Matrix struct {
	cols  [][]float64
	nRows int
}

// NewMatrix returns the matrix whose column j is cols[j]; every column must have nRows
// values.
func NewMatrix(cols [][]float64, nRows int) (*Matrix, error) {
	for j, c := range cols {
		if len(c) != nRows {
			return nil, fmt.Errorf("columnar: column %d has %d values, want %d", j, len(c), nRows)
		}
	}
	return &Matrix{cols: cols, nRows: nRows}, nil
}

// Dims returns the number of rows and columns.
func (m *Matrix) Dims() (int, int) { return m.nRows, len(m.cols) }

// At returns the element at row i, column j.
func (m *Matrix) At(i, j int) float64 {
	if uint(i) >= uint(m.nRows) {
		panic(mat.ErrRowAccess)
	}
	return m.cols[j][i]
}

// T returns the transpose of m (a view).
func (m *Matrix) T() mat.Matrix { return mat.Transpose{Matrix: m} }

// RawColView returns column j itself, not a copy.
func (m *Matrix) RawColView(j int) []float64 { return m.cols[j] }
