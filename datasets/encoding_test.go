package datasets

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// reencodeStrings rewrites every string column of an Arrow record as a
// dictionary-encoded (dict) or a string-view column: what pandas' categorical columns
// and newer writers produce.
func reencodeStrings(t *testing.T, rec arrow.RecordBatch, dict bool) arrow.RecordBatch {
	t.Helper()
	mem := memory.NewGoAllocator()
	fields := rec.Schema().Fields()
	cols := make([]arrow.Array, len(fields))
	for j, f := range fields {
		col := rec.Column(j)
		s, ok := col.(*array.String)
		if !ok {
			col.Retain()
			cols[j] = col
			continue
		}
		if dict {
			dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			b := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
			for i := range s.Len() {
				if s.IsNull(i) {
					b.AppendNull()
				} else if err := b.AppendString(s.Value(i)); err != nil {
					t.Fatal(err)
				}
			}
			cols[j] = b.NewArray()
			b.Release()
			fields[j] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable}
			continue
		}
		b := array.NewStringViewBuilder(mem)
		for i := range s.Len() {
			if s.IsNull(i) {
				b.AppendNull()
			} else {
				b.Append(s.Value(i))
			}
		}
		cols[j] = b.NewArray()
		b.Release()
		fields[j] = arrow.Field{Name: f.Name, Type: arrow.BinaryTypes.StringView, Nullable: f.Nullable}
	}
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}

// readArrowRecord reads the one record batch of an Arrow file written by WriteHistory.
func readArrowRecord(t *testing.T, path string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRecords() != 1 {
		t.Fatalf("%s: %d record batches, want 1", path, r.NumRecords())
	}
	rec, err := r.RecordBatchAt(0)
	if err != nil {
		t.Fatal(err)
	}
	rec.Retain()
	return rec
}

// TestReadReencodedStrings: a history whose string columns are dictionary-encoded
// (Arrow and Parquet, as pyarrow writes pandas categoricals) or string views (Arrow)
// reads as the same history. Before, such columns were refused as an unsupported type,
// and an Arrow file with a dictionary made arrow-go's mapped reader panic.
func TestReadReencodedStrings(t *testing.T) {
	ctx := context.Background()
	plain := t.TempDir()
	if err := WriteHistory(ctx, plain, testHistory(), FormatArrow); err != nil {
		t.Fatal(err)
	}
	want, _, err := ReadHistory(ctx, plain, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		format Format
		dict   bool
	}{
		{"arrow dictionary", FormatArrow, true},
		{"arrow string view", FormatArrow, false},
		{"parquet dictionary", FormatParquet, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, table := range []string{TableChanges, TableBuilds, TablePairs} {
				rec := readArrowRecord(t, filepath.Join(plain, table+FormatArrow.Ext()))
				re := reencodeStrings(t, rec, tc.dict)
				rec.Release()
				out, err := os.Create(filepath.Join(dir, table+tc.format.Ext()))
				if err != nil {
					t.Fatal(err)
				}
				if tc.format == FormatArrow {
					w, err := ipc.NewFileWriter(out, ipc.WithSchema(re.Schema()))
					if err != nil {
						t.Fatal(err)
					}
					if err := w.Write(re); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
				} else {
					w, err := pqarrow.NewFileWriter(re.Schema(), out, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
					if err != nil {
						t.Fatal(err)
					}
					if err := w.Write(re); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
				}
				re.Release()
				out.Close()
			}
			got, _, err := ReadHistory(ctx, dir, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkEqualHistory(t, got, want)
		})
	}
}
