package columnar

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/sqpredict/sqpredict/internal/arrowmeta"
)

// parquetBatch is the number of rows of a record batch.
const parquetBatch = 64 << 10

// maxPrealloc bounds the rows a column is allocated for before any is read.
const maxPrealloc = 1 << 20

// openParquet opens a Parquet file as an arrow file reader.
func openParquet(path string) (*file.Reader, *pqarrow.FileReader, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("columnar: %w", err)
	}
	mem := memory.DefaultAllocator
	pr, err := file.NewParquetReader(fh, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		fh.Close()
		return nil, nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	if err := arrowmeta.CheckParquet(pr.MetaData().KeyValueMetadata()); err != nil {
		pr.Close()
		return nil, nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: parquetBatch}, mem)
	if err != nil {
		pr.Close()
		return nil, nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	return pr, fr, nil
}

// parquetHeader returns the column names of a Parquet file.
func parquetHeader(path string) ([]string, error) {
	pr, fr, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	sc, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = f.Name
	}
	return names, nil
}

// readParquet reads the selected columns of a Parquet file batch by batch.
//
// arrow-go's Parquet reader panics on some corrupt files (a dictionary page without its
// header, found by datasets' FuzzReadHistoryBinary), so columns are decoded on this
// goroutine (no Parallel: a panic on one of the reader's goroutines cannot be recovered)
// and a panic becomes an error naming the file. The row count of the file's metadata is
// not trusted for allocation: columns start at most maxPrealloc rows long and grow.
func readParquet(ctx context.Context, path string, opt Options) (t *Table, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("columnar: reading %s: corrupt Parquet file (%v): %w", path, p, ErrFormat)
		}
	}()
	pr, fr, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	sc, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	header := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		header[i] = f.Name
	}
	sel, err := selection(path, header, opt.Columns)
	if err != nil {
		return nil, err
	}
	n := int(pr.NumRows())
	t = &Table{Path: path, NRows: n}
	var idx []int
	dicts := []map[string]int{}
	for j, s := range sel {
		if s < 0 {
			continue
		}
		f := sc.Field(j)
		if !numericType(f.Type) && !stringType(f.Type) {
			return nil, fmt.Errorf("columnar: %s: column %q has type %s, want a number, bool or string: %w", path, f.Name, f.Type, ErrFormat)
		}
		idx = append(idx, j)
		t.Columns = append(t.Columns, Column{Name: f.Name, Values: make([]float64, 0, min(n, maxPrealloc))})
		var d map[string]int
		if stringType(f.Type) {
			d = map[string]int{}
		}
		dicts = append(dicts, d)
	}
	if len(idx) == 0 {
		return t, nil
	}
	rr, err := fr.GetRecordReader(ctx, idx, nil)
	if err != nil {
		return nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	defer rr.Release()
	row := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		for k := range idx {
			c := &t.Columns[k]
			if err := appendArrow(c, dicts[k], rec.Column(k), row); err != nil {
				return nil, fmt.Errorf("columnar: %s: column %q: %w", path, c.Name, err)
			}
		}
		row += int(rec.NumRows())
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("columnar: reading %s: %w", path, err)
	}
	t.NRows = row
	for k := range t.Columns {
		if dicts[k] != nil {
			sortLevels(&t.Columns[k], dicts[k])
		}
	}
	return t, nil
}

// numericType reports whether columns of type t read as numbers.
func numericType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.NULL:
		return true
	}
	return false
}

// stringType reports whether columns of type t read as text: strings, string views,
// and dictionary-encoded strings (pandas' categorical columns, through pyarrow).
func stringType(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.DictionaryType:
		return stringType(t.ValueType)
	}
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

// textValue returns the function that reads element i of a text array (stringType),
// nil for any other array.
func textValue(arr arrow.Array) func(i int) string {
	type strArr interface{ Value(int) string }
	if dict, ok := arr.(*array.Dictionary); ok {
		values := textValue(dict.Dictionary())
		if values == nil {
			return nil
		}
		return func(i int) string { return values(dict.GetValueIndex(i)) }
	}
	if sa, ok := arr.(strArr); ok {
		return sa.Value
	}
	return nil
}

// appendArrow appends the values of arr to c: numbers, or codes in d for text.
func appendArrow(c *Column, d map[string]int, arr arrow.Array, row0 int) error {
	n := arr.Len()
	if d != nil {
		value := textValue(arr)
		if value == nil {
			return fmt.Errorf("unexpected array %T", arr)
		}
		for i := range n {
			if arr.IsNull(i) {
				c.Values = append(c.Values, math.NaN())
				continue
			}
			s := value(i)
			if c.firstText.text == "" {
				if _, err := strconv.ParseFloat(s, 64); err != nil && s != "" {
					c.firstText.row, c.firstText.text = row0+i, s
				}
			}
			c.Values = append(c.Values, float64(code(d, s)))
		}
		return nil
	}
	get := func(i int) float64 { return math.NaN() }
	switch a := arr.(type) {
	case *array.Float64:
		get = func(i int) float64 { return a.Value(i) }
	case *array.Float32:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Int64:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Int32:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Int16:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Int8:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Uint64:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Uint32:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Uint16:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Uint8:
		get = func(i int) float64 { return float64(a.Value(i)) }
	case *array.Boolean:
		get = func(i int) float64 {
			if a.Value(i) {
				return 1
			}
			return 0
		}
	case *array.Null:
	default:
		return fmt.Errorf("unexpected array %T", arr)
	}
	if a, ok := arr.(*array.Float64); ok && a.NullN() == 0 {
		c.Values = append(c.Values, a.Float64Values()...)
		return nil
	}
	for i := range n {
		if arr.IsNull(i) {
			c.Values = append(c.Values, math.NaN())
		} else {
			c.Values = append(c.Values, get(i))
		}
	}
	return nil
}

// sortLevels sets c.Levels to the sorted keys of d and recodes c.Values.
func sortLevels(c *Column, d map[string]int) {
	c.Levels = make([]string, 0, len(d))
	for s := range d {
		c.Levels = append(c.Levels, s)
	}
	slices.Sort(c.Levels)
	remap := make([]float64, len(d))
	for i, s := range c.Levels {
		remap[d[s]] = float64(i)
	}
	for i, v := range c.Values {
		if v == v {
			c.Values[i] = remap[int(v)]
		}
	}
	if c.firstText.text == "" && len(c.Levels) > 0 {
		// Every value is a number written as text: name the first one.
		for i, v := range c.Values {
			if v == v {
				c.firstText.row, c.firstText.text = i, c.Levels[int(v)]
				break
			}
		}
	}
}
