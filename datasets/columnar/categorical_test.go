package columnar

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestReadParquetCategorical: a dictionary-encoded string column (pandas' categorical,
// as pyarrow writes it with its Arrow schema stored) reads as text levels, nulls as NaN,
// like a plain string column. Before, it was refused as an unsupported type.
func TestReadParquetCategorical(t *testing.T) {
	mem := memory.NewGoAllocator()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "team", Type: dt, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	teams := []string{"infra", "ios", "", "android", "ios", "infra"} // "" is a null
	for i, s := range teams {
		b.Field(0).(*array.Float64Builder).Append(float64(i))
		db := b.Field(1).(*array.BinaryDictionaryBuilder)
		if s == "" {
			db.AppendNull()
		} else if err := db.AppendString(s); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "cat.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tb, err := Read(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := tb.Columns[1]
	if !slices.Equal(c.Levels, []string{"android", "infra", "ios"}) {
		t.Fatalf("levels %v, want android, infra, ios", c.Levels)
	}
	for i, s := range teams {
		want := math.NaN()
		if s != "" {
			want = float64(slices.Index(c.Levels, s))
		}
		if !sameFloat(c.Values[i], want) {
			t.Errorf("row %d (%q): %v, want %v", i, s, c.Values[i], want)
		}
	}
}
