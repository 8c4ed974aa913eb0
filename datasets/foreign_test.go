package datasets

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeForeignArrow writes an Arrow IPC file with the types another tool (pandas,
// polars) would choose: integer counts, millisecond timestamps, large strings.
func writeForeignArrow(t *testing.T, path string, mem memory.Allocator) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "change_id", Type: arrow.BinaryTypes.LargeString},
		{Name: "repo", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "revision_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "author", Type: arrow.Null, Nullable: true},
		{Name: "submitted_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "decided_at", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, Nullable: true},
		{Name: "outcome", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lines_added", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "hunks", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "author_level", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "revision_has_test_plan", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "affected_targets", Type: arrow.LargeListOf(arrow.BinaryTypes.LargeString), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.LargeStringBuilder).AppendValues([]string{"c1", "c2"}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"go", ""}, []bool{true, false})
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"r1", "r2"}, nil)
	b.Field(3).(*array.NullBuilder).AppendNulls(2)
	b.Field(4).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_700_000_000_123, 0}, []bool{true, false})
	b.Field(5).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_700_000_060, 0}, []bool{true, false})
	b.Field(6).(*array.StringBuilder).AppendValues([]string{"landed", ""}, []bool{true, false})
	b.Field(7).(*array.Int64Builder).AppendValues([]int64{42, 0}, []bool{true, false})
	b.Field(8).(*array.Uint16Builder).AppendValues([]uint16{3, 7}, nil)
	b.Field(9).(*array.Float32Builder).AppendValues([]float32{2.5, 0}, []bool{true, false})
	b.Field(10).(*array.BooleanBuilder).AppendValues([]bool{true, false}, []bool{true, false})
	lb := b.Field(11).(*array.LargeListBuilder)
	vb := lb.ValueBuilder().(*array.LargeStringBuilder)
	lb.Append(true)
	vb.AppendValues([]string{"//a", "//b"}, nil)
	lb.AppendNull()
	writeRecordFile(t, path, schema, b, mem)
}

// writeRecordFile writes the record built in b to an Arrow IPC file.
func writeRecordFile(t *testing.T, path string, schema *arrow.Schema, b *array.RecordBuilder, mem memory.Allocator) {
	t.Helper()
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadForeignTypes reads a changes table and a frame whose columns have other Arrow
// types than this package writes: integers and float32 become numbers, any timestamp
// unit becomes a time, large strings and large lists read like their small forms.
func TestReadForeignTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	writeForeignArrow(t, filepath.Join(dir, "changes.arrow"), mem)
	if err := writeRows(ctx, filepath.Join(dir, "builds.arrow"), FormatArrow, []Build{}, buildFields, mem); err != nil {
		t.Fatal(err)
	}
	h, _, err := readHistory(ctx, dir, ReadOptions{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	c1 := testChange("c1")
	c1.RevisionID, c1.Author = "r1", ""
	c1.SubmittedAt = time.UnixMilli(1_700_000_000_123).UTC()
	c1.DecidedAt = time.Unix(1_700_000_060, 0).UTC()
	c1.Outcome = OutcomeLanded
	c1.LinesAdded, c1.Hunks, c1.AuthorLevel = 42, 3, 2.5
	c1.RevisionHasTestPlan = FlagTrue
	c1.AffectedTargets = []string{"//a", "//b"}
	c2 := blank(changeFields)
	c2.ChangeID, c2.RevisionID, c2.Hunks = "c2", "r2", 7
	checkEqualHistory(t, h, &History{Changes: []Change{c1, c2}, Builds: []Build{}})

}

// TestReadFrameForeignTypes reads a frame whose columns have Arrow types this package
// does not write: integers, float32, bool and null become Floats, large strings Strings.
func TestReadFrameForeignTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "z", Type: arrow.Null, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{-7, 0}, []bool{true, false})
	b.Field(1).(*array.Uint8Builder).AppendValues([]uint8{255, 1}, nil)
	b.Field(2).(*array.Float32Builder).AppendValues([]float32{0.5, 0}, []bool{true, false})
	b.Field(3).(*array.BooleanBuilder).AppendValues([]bool{true, false}, nil)
	b.Field(4).(*array.NullBuilder).AppendNulls(2)
	b.Field(5).(*array.LargeStringBuilder).AppendValues([]string{"x", ""}, []bool{true, false})
	path := filepath.Join(t.TempDir(), "f.arrow")
	writeRecordFile(t, path, schema, b, mem)
	got, err := readFrame(context.Background(), path, mem)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	equalFrames(t, got, &Frame{Columns: []Column{
		{Name: "i", Floats: []float64{-7, nan}},
		{Name: "u", Floats: []float64{255, 1}},
		{Name: "f", Floats: []float64{0.5, nan}},
		{Name: "b", Floats: []float64{1, 0}},
		{Name: "z", Floats: []float64{nan, nan}},
		{Name: "s", Strings: []string{"x", ""}},
	}})
}
