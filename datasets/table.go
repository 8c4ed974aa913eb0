package datasets

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sqpredict/sqpredict/internal/arrowmeta"
	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// This file holds the format-independent table layer under Frame and History: a file
// is scanned in batches of rows whose columns are cells (CSV text or Arrow arrays), and
// written from columns of Go values.

// batchRows is the number of rows per batch when reading CSV and per record batch (and
// Parquet row group) when writing.
const batchRows = 1 << 16

// kind is the logical type of a column.
type kind uint8

const (
	kFloat   kind = iota // float64, NaN = missing; Parquet/Arrow float64 (any number type read)
	kString              // string, "" = missing; utf8
	kTime                // time.Time, zero = missing; timestamp[us, UTC]
	kList                // []string, nil = missing; list<utf8>
	kFlag                // Flag; bool
	kBool                // bool, never missing; bool
	kOutcome             // Outcome stored as a string
	kStatus              // Status stored as a string
)

var kindNames = [...]string{kFloat: "number", kString: "string", kTime: "timestamp", kList: "list of strings", kFlag: "bool", kBool: "bool", kOutcome: "string", kStatus: "string"}

// cells is one column of one batch of rows as read from a file, before it is decoded.
// The getters return the missing value of their type for an empty CSV cell or a null.
type cells interface {
	// prepare checks once per batch that the column can be read as kind k.
	prepare(k kind) error
	float(i int) (float64, error)
	str(i int) (string, error)
	time(i int) (time.Time, error)
	list(i int) ([]string, error)
	flag(i int) (Flag, error)
}

// batch is a run of rows of one file.
type batch struct {
	n     int
	cols  []cells // in the order of the file's columns
	rows  []int   // file row of each batch row; nil = start+i
	lines []int   // CSV line of each batch row; nil for Parquet and Arrow
	start int
}

func (b *batch) row(i int) int {
	if b.rows != nil {
		return b.rows[i]
	}
	return b.start + i
}

func (b *batch) line(i int) int {
	if b.lines != nil {
		return b.lines[i]
	}
	return 0
}

// scanner reads a table file. header is called once with the column names, before the
// first batch; badRow is called for a CSV record that cannot be split into the header's
// columns (the row is then not in any batch).
type scanner struct {
	path string
	mem  memory.Allocator
	// types are the Arrow types of the columns, nil for CSV files.
	header func(names []string, types []arrow.DataType) error
	batch  func(b *batch) error
	badRow func(row, line int, err error) error
	// sizeHint, when not nil, is told the number of rows when the file says it
	// (Parquet, Arrow) before the first batch, at most maxSizeHint: a damaged file
	// may claim any count.
	sizeHint func(rows int)
}

// maxSizeHint bounds the rows a scanner's sizeHint is told of: what is allocated
// before any row is read.
const maxSizeHint = 1 << 20

func (s *scanner) scan(ctx context.Context) error {
	f, err := formatOf(s.path)
	if err != nil {
		return err
	}
	switch f {
	case FormatCSV:
		return s.scanCSV(ctx)
	case FormatArrow:
		return s.scanArrow(ctx)
	default:
		return s.scanParquet(ctx)
	}
}

func (s *scanner) scanCSV(ctx context.Context) error {
	fh, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer fh.Close()
	r := csv.NewReader(fh)
	header, err := r.Read()
	if err == io.EOF {
		return &ParseError{Path: s.path, Line: 1, Row: -1, Err: fmt.Errorf("%w: empty file, want a header row", ErrInvalidValue)}
	}
	if err != nil {
		return s.csvError(err, -1)
	}
	header = append([]string(nil), header...)
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	if err := s.header(header, nil); err != nil {
		return err
	}
	cols := make([]csvCells, len(header))
	b := &batch{cols: make([]cells, len(header))}
	flush := func() error {
		if b.n == 0 {
			return nil
		}
		for j := range cols {
			b.cols[j] = cols[j]
		}
		if err := s.batch(b); err != nil {
			return err
		}
		for j := range cols {
			cols[j] = nil
		}
		b.n, b.rows, b.lines = 0, nil, nil
		return ctx.Err()
	}
	for row := 0; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Issue found by FuzzCSVRoundtrip: after a parse error the record may
			// have no fields, so the line comes from the error, not FieldPos.
			if line, ok := fieldCountLine(err); ok {
				if err := s.badRow(row, line, fmt.Errorf("%w: %d fields, the header has %d", ErrInvalidValue, len(rec), len(header))); err != nil {
					return err
				}
				continue
			}
			return s.csvError(err, row)
		}
		line, _ := r.FieldPos(0)
		for j := range cols {
			cols[j] = append(cols[j], rec[j])
		}
		b.rows = append(b.rows, row)
		b.lines = append(b.lines, line)
		b.n++
		if b.n == batchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// fieldCountLine returns the line of a record with the wrong number of fields, and
// false for any other error.
func fieldCountLine(err error) (int, bool) {
	var pe *csv.ParseError
	if errors.As(err, &pe) && errors.Is(err, csv.ErrFieldCount) {
		return pe.StartLine, true
	}
	return 0, false
}

// csvError turns an error of encoding/csv reading data row row (-1 for the header) into
// a *ParseError at the line where the bad record starts: csv.ParseError.Line is where
// the reader gave up, which for an unbalanced quote is the end of the file (issue 15:
// a quote opened on line 12 was reported at line 6107). The message also gives that
// line when it differs.
func (s *scanner) csvError(err error, row int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		line := pe.StartLine
		if line <= 0 {
			line = pe.Line
		}
		inner := fmt.Errorf("%w: %w", ErrInvalidValue, pe.Err)
		if pe.Line != line {
			inner = fmt.Errorf("%w: %w (in the record that starts here; the reader stopped at line %d, column %d)", ErrInvalidValue, pe.Err, pe.Line, pe.Column)
		}
		return &ParseError{Path: s.path, Line: line, Row: row, Err: inner}
	}
	return fmt.Errorf("datasets: reading %s: %w", s.path, err)
}

func (s *scanner) arrowHeader(sc *arrow.Schema) error {
	names := make([]string, sc.NumFields())
	types := make([]arrow.DataType, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i], types[i] = f.Name, f.Type
	}
	return s.header(names, types)
}

// record hands one record batch to s.batch.
func (s *scanner) record(rec arrow.RecordBatch, start int) error {
	b := &batch{n: int(rec.NumRows()), start: start, cols: make([]cells, rec.NumCols())}
	for j := range b.cols {
		b.cols[j] = &arrowCells{arr: rec.Column(j)}
	}
	return s.batch(b)
}

// scanArrow reads an Arrow IPC file. The file's frame (magic bytes at both ends, a
// footer that fits) is checked before the file is read, so garbage is refused without
// reading it; arrow-go's IPC reader panics on some damaged footers (found by
// FuzzReadHistoryBinary), and such a panic becomes an error naming the file; the
// footer's and messages' flatbuffers are checked before arrow-go reads them
// (internal/arrowmeta: it allocates by their counts, and running out of memory is
// fatal); every column's buffers are validated (offsets, UTF-8) before a value is read.
func (s *scanner) scanArrow(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("datasets: reading %s: %w: corrupt Arrow file (%v)", s.path, ErrInvalidValue, p)
		}
	}()
	if err := checkArrowFrame(s.path); err != nil {
		return err
	}
	// One read of the whole file, then record batches that point into it: cheaper
	// than a read and a copy per buffer.
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	meta, err := arrowmeta.CheckFile(data)
	if err != nil {
		return fmt.Errorf("datasets: reading %s: %w: %w", s.path, ErrInvalidValue, err)
	}
	// arrow-go v18.8.0's mapped reader has no dictionary memo and panics on a
	// dictionary ("assignment to entry in nil map"): its plain reader, which copies
	// each buffer, reads such files.
	var r *ipc.FileReader
	if meta.Dictionary {
		r, err = ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(s.mem))
	} else {
		r, err = ipc.NewMappedFileReader(data, ipc.WithAllocator(s.mem))
	}
	if err != nil {
		return fmt.Errorf("datasets: reading %s: %w", s.path, err)
	}
	defer r.Close()
	if err := s.arrowHeader(r.Schema()); err != nil {
		return err
	}
	if s.sizeHint != nil {
		// The footer does not hold row counts, but the batches of a mapped file
		// are cheap to open: count them first so that the rows are allocated once.
		n := 0
		for i := range r.NumRecords() {
			rec, err := r.RecordBatchAt(i)
			if err != nil {
				return fmt.Errorf("datasets: reading %s: record batch %d: %w", s.path, i, err)
			}
			n += int(rec.NumRows())
			rec.Release()
		}
		s.sizeHint(min(n, maxSizeHint))
	}
	start := 0
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return fmt.Errorf("datasets: reading %s: record batch %d: %w", s.path, i, err)
		}
		err = s.record(rec, start)
		start += int(rec.NumRows())
		rec.Release()
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// scanParquet reads a Parquet file record by record. arrow-go's Parquet reader panics
// on some corrupt files (a dictionary page without its header, found by
// FuzzReadHistoryBinary), so the columns are decoded on this goroutine (Parallel off: a
// panic on one of the reader's own goroutines could not be recovered) and a panic
// becomes an error naming the file, as any other damage does. The Arrow schema the file
// stores is checked first (internal/arrowmeta): a damaged one makes arrow-go allocate
// by its counts, a fatal error.
func (s *scanner) scanParquet(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("datasets: reading %s: %w: corrupt Parquet file (%v)", s.path, ErrInvalidValue, p)
		}
	}()
	fh, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	pr, err := file.NewParquetReader(fh, file.WithReadProps(parquet.NewReaderProperties(s.mem)))
	if err != nil {
		fh.Close()
		return fmt.Errorf("datasets: reading %s: %w", s.path, err)
	}
	defer pr.Close()
	if err := arrowmeta.CheckParquet(pr.MetaData().KeyValueMetadata()); err != nil {
		return fmt.Errorf("datasets: reading %s: %w: %w", s.path, ErrInvalidValue, err)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: batchRows, PreAllocBinaryData: true}, s.mem)
	if err != nil {
		return fmt.Errorf("datasets: reading %s: %w", s.path, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("datasets: reading %s: %w", s.path, err)
	}
	if err := s.arrowHeader(sc); err != nil {
		return err
	}
	if s.sizeHint != nil {
		s.sizeHint(int(min(pr.NumRows(), maxSizeHint)))
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("datasets: reading %s: %w", s.path, err)
	}
	defer rr.Release()
	start := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		if err := s.record(rec, start); err != nil {
			return err
		}
		start += int(rec.NumRows())
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("datasets: reading %s: %w", s.path, err)
	}
	return ctx.Err()
}

// csvCells is a column of CSV text.
type csvCells []string

func (c csvCells) prepare(kind) error { return nil }

func (c csvCells) float(i int) (float64, error) {
	s := c[i]
	if s == "" {
		return nan, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nan, fmt.Errorf("%w: %q is not a number", ErrInvalidValue, s)
	}
	return v, nil
}

func (c csvCells) str(i int) (string, error) { return c[i], nil }

func (c csvCells) time(i int) (time.Time, error) {
	s := c[i]
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q is not an RFC 3339 time", ErrInvalidValue, s)
	}
	return normTime(t), nil
}

func (c csvCells) list(i int) ([]string, error) {
	return parseList(c[i])
}

func (c csvCells) flag(i int) (Flag, error) {
	s := c[i]
	if s == "" {
		return FlagUnknown, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return FlagUnknown, fmt.Errorf("%w: %q is not true or false", ErrInvalidValue, s)
	}
	if v {
		return FlagTrue, nil
	}
	return FlagFalse, nil
}

// emptyList is how a CSV cell writes a list that is known to be empty, as opposed to an
// empty cell, which is a missing list.
const emptyList = "[]"

// listSep separates the elements of a list in a CSV cell.
const listSep = ";"

func parseList(s string) ([]string, error) {
	switch s {
	case "":
		return nil, nil
	case emptyList:
		return []string{}, nil
	}
	l := strings.Split(s, listSep)
	for _, e := range l {
		if e == "" {
			return nil, fmt.Errorf("%w: list %q has an empty element", ErrInvalidValue, s)
		}
	}
	return l, nil
}

func formatList(l []string) (string, error) {
	if l == nil {
		return "", nil
	}
	if len(l) == 0 {
		return emptyList, nil
	}
	for _, e := range l {
		if e == "" || e == emptyList || strings.Contains(e, listSep) {
			return "", fmt.Errorf("%w: list element %q cannot be written to CSV (empty, %q or containing %q)", ErrInvalidValue, e, emptyList, listSep)
		}
	}
	return strings.Join(l, listSep), nil
}

// normTime returns t in UTC, truncated to the microsecond: the precision of every format.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Microsecond).UTC()
}

// arrowCells is a column of a record batch. prepare sets up the getter for the kind.
type arrowCells struct {
	arr  arrow.Array
	num  func(i int) float64
	strs []string // copies of the values of a string column
	ts   *array.Timestamp
	unit arrow.TimeUnit
	lst  interface {
		ValueOffsets(i int) (int64, int64)
	}
	bools *array.Boolean
}

func typeError(a arrow.Array, k kind) error {
	return fmt.Errorf("%w: %s, want %s", ErrUnsupportedType, a.DataType(), kindNames[k])
}

func (c *arrowCells) prepare(k kind) error {
	if err := validateArray(c.arr); err != nil {
		return err
	}
	switch k {
	case kFloat:
		c.num = numGetter(c.arr)
		if c.num == nil {
			return typeError(c.arr, k)
		}
	case kString, kOutcome, kStatus:
		if _, ok := c.arr.(*array.Null); ok {
			return nil
		}
		if !isStringType(c.arr) {
			return typeError(c.arr, k)
		}
		c.strs = stringValues(c.arr)
	case kTime:
		ts, ok := c.arr.(*array.Timestamp)
		if !ok {
			return typeError(c.arr, k)
		}
		c.ts, c.unit = ts, ts.DataType().(*arrow.TimestampType).Unit
	case kList:
		var child arrow.Array
		switch l := c.arr.(type) {
		case *array.List:
			c.lst, child = l, l.ListValues()
		case *array.LargeList:
			c.lst, child = l, l.ListValues()
		default:
			return typeError(c.arr, k)
		}
		if !isStringType(child) {
			return typeError(c.arr, k)
		}
		c.strs = stringValues(child)
	case kFlag, kBool:
		b, ok := c.arr.(*array.Boolean)
		if !ok {
			return typeError(c.arr, k)
		}
		c.bools = b
	}
	return nil
}

func isStringType(a arrow.Array) bool {
	switch a := a.(type) {
	case *array.String, *array.LargeString, *array.StringView:
		return true
	case *array.Dictionary:
		// pandas' categorical columns, through pyarrow.
		return isStringType(a.Dictionary())
	}
	return false
}

// stringValues copies the values of a string array into Go strings, all sharing one
// allocation where the array's layout allows; nil when a is not a string array. A null
// reads as "". A dictionary-encoded column reads as its values.
func stringValues(a arrow.Array) []string {
	switch s := a.(type) {
	case *array.String:
		return substrings(string(s.ValueBytes()), s.ValueOffsets())
	case *array.LargeString:
		return substrings(string(s.ValueBytes()), s.ValueOffsets())
	case *array.StringView:
		out := make([]string, s.Len())
		for i := range out {
			if s.IsValid(i) {
				out[i] = strings.Clone(s.Value(i))
			}
		}
		return out
	case *array.Dictionary:
		dict := stringValues(s.Dictionary())
		out := make([]string, s.Len())
		for i := range out {
			if s.IsValid(i) {
				out[i] = dict[s.GetValueIndex(i)]
			}
		}
		return out
	}
	return nil
}

func substrings[O int32 | int64](big string, offs []O) []string {
	out := make([]string, len(offs)-1)
	if len(offs) == 0 {
		return out
	}
	base := offs[0]
	for i := range out {
		out[i] = big[offs[i]-base : offs[i+1]-base]
	}
	return out
}

type valuer[T any] interface {
	Value(i int) T
}

func numOf[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](a interface {
	valuer[T]
	IsNull(int) bool
}) func(int) float64 {
	return func(i int) float64 {
		if a.IsNull(i) {
			return nan
		}
		return float64(a.Value(i))
	}
}

// numGetter returns a getter of the values of a numeric or bool array as float64 (bool
// as 0 or 1, null as NaN), or nil for other types.
func numGetter(a arrow.Array) func(int) float64 {
	switch v := a.(type) {
	case *array.Float64:
		vals := v.Float64Values()
		if v.NullN() == 0 {
			return func(i int) float64 { return vals[i] }
		}
		return func(i int) float64 {
			if v.IsNull(i) {
				return nan
			}
			return vals[i]
		}
	case *array.Float32:
		return numOf[float32](v)
	case *array.Int8:
		return numOf[int8](v)
	case *array.Int16:
		return numOf[int16](v)
	case *array.Int32:
		return numOf[int32](v)
	case *array.Int64:
		return numOf[int64](v)
	case *array.Uint8:
		return numOf[uint8](v)
	case *array.Uint16:
		return numOf[uint16](v)
	case *array.Uint32:
		return numOf[uint32](v)
	case *array.Uint64:
		return numOf[uint64](v)
	case *array.Boolean:
		return func(i int) float64 {
			switch {
			case v.IsNull(i):
				return nan
			case v.Value(i):
				return 1
			}
			return 0
		}
	case *array.Null:
		return func(int) float64 { return nan }
	}
	return nil
}

func (c *arrowCells) float(i int) (float64, error) { return c.num(i), nil }

func (c *arrowCells) str(i int) (string, error) {
	if c.strs == nil || c.arr.IsNull(i) {
		return "", nil
	}
	return c.strs[i], nil
}

func (c *arrowCells) time(i int) (time.Time, error) {
	if c.ts.IsNull(i) {
		return time.Time{}, nil
	}
	return normTime(c.ts.Value(i).ToTime(c.unit)), nil
}

func (c *arrowCells) list(i int) ([]string, error) {
	if c.arr.IsNull(i) {
		return nil, nil
	}
	lo, hi := c.lst.ValueOffsets(i)
	if lo == hi {
		return []string{}, nil
	}
	l := c.strs[lo:hi:hi]
	for _, e := range l {
		if e == "" {
			return nil, fmt.Errorf("%w: list has an empty or null element", ErrInvalidValue)
		}
	}
	return l, nil
}

func (c *arrowCells) flag(i int) (Flag, error) {
	switch {
	case c.bools.IsNull(i):
		return FlagUnknown, nil
	case c.bools.Value(i):
		return FlagTrue, nil
	}
	return FlagFalse, nil
}

// wcol is a column to write: n values read through the getter of its kind.
type wcol struct {
	name  string
	kind  kind // kFloat, kString, kTime, kList, kFlag or kBool
	dict  bool // few distinct values: dictionary-encode in Parquet
	float func(i int) float64
	str   func(i int) string
	time  func(i int) time.Time
	list  func(i int) []string
	flag  func(i int) Flag
}

func (c *wcol) arrowType() arrow.DataType {
	switch c.kind {
	case kFloat:
		return arrow.PrimitiveTypes.Float64
	case kTime:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case kList:
		return arrow.ListOf(arrow.BinaryTypes.String)
	case kFlag, kBool:
		return arrow.FixedWidthTypes.Boolean
	}
	return arrow.BinaryTypes.String
}

// writeTable writes n rows of cols to path in format f, atomically (a reader sees the
// old file or the whole new one), mode 0644.
func writeTable(ctx context.Context, path string, f Format, n int, cols []wcol, mem memory.Allocator) error {
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		if f == FormatCSV {
			return writeCSV(ctx, w, path, n, cols)
		}
		return writeArrow(ctx, w, f, n, cols, mem)
	})
	if err != nil {
		return fmt.Errorf("datasets: writing %s: %w", path, err)
	}
	return nil
}

func writeCSV(ctx context.Context, w io.Writer, path string, n int, cols []wcol) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(cols))
	for j, c := range cols {
		rec[j] = c.name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for i := range n {
		if i%batchRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for j := range cols {
			c := &cols[j]
			switch c.kind {
			case kFloat:
				rec[j] = formatFloat(c.float(i))
			case kTime:
				rec[j] = formatTime(c.time(i))
			case kList:
				s, err := formatList(c.list(i))
				if err != nil {
					return &ParseError{Path: path, Row: i, Line: i + 2, Column: c.name, Err: err}
				}
				rec[j] = s
			case kFlag, kBool:
				rec[j] = c.flag(i).String()
			default:
				rec[j] = c.str(i)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// formatFloat writes v in the shortest form that parses back to v; NaN as an empty cell.
func formatFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return normTime(t).Format(time.RFC3339Nano)
}

func writeArrow(ctx context.Context, w io.Writer, f Format, n int, cols []wcol, mem memory.Allocator) error {
	fields := make([]arrow.Field, len(cols))
	for j := range cols {
		fields[j] = arrow.Field{Name: cols[j].name, Type: cols[j].arrowType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	var (
		write func(arrow.RecordBatch) error
		done  func() error
	)
	if f == FormatArrow {
		fw, err := ipc.NewFileWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		if err != nil {
			return err
		}
		write, done = fw.Write, fw.Close
	} else {
		opts := []parquet.WriterProperty{
			parquet.WithAllocator(mem),
			parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithMaxRowGroupLength(batchRows),
			parquet.WithCreatedBy("sqpredict datasets"),
			// Ids, times and measures are mostly distinct: plain encoding reads
			// faster than a dictionary that overflows. Columns with few values
			// (repo, author, status, outcome) keep one.
			parquet.WithDictionaryDefault(false),
		}
		for _, c := range cols {
			if c.dict {
				opts = append(opts, parquet.WithDictionaryFor(c.name, true))
			}
		}
		props := parquet.NewWriterProperties(opts...)
		fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema()))
		if err != nil {
			return err
		}
		write, done = fw.Write, fw.Close
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for lo := 0; lo < n; lo += batchRows {
		if err := ctx.Err(); err != nil {
			done()
			return err
		}
		hi := min(lo+batchRows, n)
		for j := range cols {
			appendColumn(b.Field(j), &cols[j], lo, hi)
		}
		rec := b.NewRecordBatch()
		err := write(rec)
		rec.Release()
		if err != nil {
			done()
			return err
		}
	}
	return done()
}

func appendColumn(fb array.Builder, c *wcol, lo, hi int) {
	fb.Reserve(hi - lo)
	switch c.kind {
	case kFloat:
		b := fb.(*array.Float64Builder)
		for i := lo; i < hi; i++ {
			if v := c.float(i); math.IsNaN(v) {
				b.AppendNull()
			} else {
				b.UnsafeAppend(v)
			}
		}
	case kTime:
		b := fb.(*array.TimestampBuilder)
		for i := lo; i < hi; i++ {
			if t := c.time(i); t.IsZero() {
				b.AppendNull()
			} else {
				b.UnsafeAppend(arrow.Timestamp(t.UnixMicro()))
			}
		}
	case kList:
		b := fb.(*array.ListBuilder)
		vb := b.ValueBuilder().(*array.StringBuilder)
		for i := lo; i < hi; i++ {
			l := c.list(i)
			if l == nil {
				b.AppendNull()
				continue
			}
			b.Append(true)
			for _, e := range l {
				vb.Append(e)
			}
		}
	case kFlag, kBool:
		b := fb.(*array.BooleanBuilder)
		for i := lo; i < hi; i++ {
			switch c.flag(i) {
			case FlagTrue:
				b.UnsafeAppend(true)
			case FlagFalse:
				b.UnsafeAppend(false)
			default:
				b.AppendNull()
			}
		}
	default:
		b := fb.(*array.StringBuilder)
		for i := lo; i < hi; i++ {
			if s := c.str(i); s == "" {
				b.AppendNull()
			} else {
				b.Append(s)
			}
		}
	}
}
