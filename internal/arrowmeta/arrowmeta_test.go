package arrowmeta

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testSchema has every kind of table the checks follow: nested children (list,
// struct), a timestamp with a time zone, a dictionary, field and schema metadata.
func testSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{"origin"}, []string{"arrowmeta test"})
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String})},
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
	}, &md)
}

// testFile writes a three-row record batch of testSchema as an Arrow IPC file.
func testFile(t *testing.T) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	sc := testSchema()
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0, 2}, []bool{true, false, true})
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"a", "bb", ""}, nil)
	b.Field(3).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{10, 20, 30}, nil)
	lb := b.Field(4).(*array.ListBuilder)
	for i := range 3 {
		lb.Append(true)
		for j := 0; j <= i; j++ {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(j))
		}
	}
	sb := b.Field(5).(*array.StructBuilder)
	for i := range 3 {
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int8Builder).Append(int8(i))
		sb.FieldBuilder(1).(*array.StringBuilder).Append("v")
	}
	db := b.Field(6).(*array.BinaryDictionaryBuilder)
	for _, v := range []string{"p", "q", "p"} {
		if err := db.AppendString(v); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(sc), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readFile reads every record batch of an Arrow IPC file with arrow-go and validates
// its columns, turning a panic into an error: what a reader of a checked file does.
func readFile(data []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	r, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer r.Close()
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return err
		}
		for _, c := range rec.Columns() {
			if v, ok := c.(interface{ ValidateFull() error }); ok {
				if err := v.ValidateFull(); err != nil {
					rec.Release()
					return err
				}
			}
		}
		rec.Release()
	}
	return nil
}

// deserialize reads a stored schema as pqarrow does, turning a panic into an error.
func deserialize(msg []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	_, err = flight.DeserializeSchema(msg, memory.NewGoAllocator())
	return err
}

func TestValidFileAndStoredSchemaPass(t *testing.T) {
	data := testFile(t)
	if _, err := CheckFile(data); err != nil {
		t.Fatalf("CheckFile of a valid file: %v", err)
	}
	if err := readFile(data); err != nil {
		t.Fatalf("arrow-go cannot read the test file: %v", err)
	}
	msg := flight.SerializeSchema(testSchema(), memory.NewGoAllocator())
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if err := CheckStoredSchema(enc.EncodeToString(msg)); err != nil {
			t.Errorf("CheckStoredSchema of a valid schema: %v", err)
		}
	}
}

// fieldsLengthAt returns where the length of the schema's fields vector is stored in
// an encapsulated schema message.
func fieldsLengthAt(t *testing.T, msg []byte) int {
	t.Helper()
	const prefix = 8 // continuation and length
	b := fb{buf: msg[prefix:]}
	root, err := b.root()
	if err != nil {
		t.Fatal(err)
	}
	schema, ok, err := b.subtable(root, 2)
	if err != nil || !ok {
		t.Fatalf("no schema header: %v", err)
	}
	start, n, err := b.vector(schema, 1, 4)
	if err != nil || n != len(testSchema().Fields()) {
		t.Fatalf("fields vector: %d elements, %v", n, err)
	}
	return prefix + start - 4
}

// TestHugeFieldCountRefused: a stored schema claiming 2^31-1 fields made arrow-go v18.8.0
// allocate a slice of that length and die with "runtime: out of memory" (the input
// datasets/columnar/testdata/fuzz/FuzzReadParquet/arrow-schema-fields-count); the
// check refuses it, in a stored schema and in an Arrow file's footer.
func TestHugeFieldCountRefused(t *testing.T) {
	msg := flight.SerializeSchema(testSchema(), memory.NewGoAllocator())
	at := fieldsLengthAt(t, msg)
	binary.LittleEndian.PutUint32(msg[at:], 0x7fffffff)
	if err := CheckStoredSchema(base64.StdEncoding.EncodeToString(msg)); !errors.Is(err, ErrDamaged) {
		t.Errorf("stored schema with 2^31-1 fields: %v, want ErrDamaged", err)
	}

	data := testFile(t)
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-10:]))
	footer := fb{buf: data[len(data)-10-footerLen : len(data)-10]}
	root, err := footer.root()
	if err != nil {
		t.Fatal(err)
	}
	schema, _, err := footer.subtable(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	start, _, err := footer.vector(schema, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(data[len(data)-10-footerLen+start-4:], 0x7fffffff)
	if _, err := CheckFile(data); !errors.Is(err, ErrDamaged) {
		t.Errorf("file whose footer claims 2^31-1 fields: %v, want ErrDamaged", err)
	}
}

// TestEveryDamagedWordRefusedOrHarmless writes large counts (2^31-1, 2^32-1, 2^28) over
// every byte position of a valid Arrow file and of a stored schema, and cuts the file
// at every length. The check must not panic, and whatever it lets through must be read
// by arrow-go without allocating by a damaged count: a regression kills this test
// with "runtime: out of memory". It also refuses most of them.
func TestEveryDamagedWordRefusedOrHarmless(t *testing.T) {
	valid := testFile(t)
	words := []uint32{0x7fffffff, 0xffffffff, 0x10000000}
	var tried, refused int
	for at := 0; at+4 <= len(valid); at++ {
		for _, w := range words {
			data := append([]byte(nil), valid...)
			binary.LittleEndian.PutUint32(data[at:], w)
			tried++
			if _, err := CheckFile(data); err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("word %#x at %d: %v does not wrap ErrDamaged", w, at, err)
				}
				refused++
				continue
			}
			_ = readFile(data)
		}
	}
	for n := 0; n < len(valid); n++ {
		if _, err := CheckFile(valid[:n]); err == nil {
			t.Fatalf("the file cut to %d of %d bytes passes", n, len(valid))
		}
	}
	t.Logf("Arrow file: %d of %d damaged words refused", refused, tried)

	msg := flight.SerializeSchema(testSchema(), memory.NewGoAllocator())
	for at := 0; at+4 <= len(msg); at++ {
		for _, w := range words {
			d := append([]byte(nil), msg...)
			binary.LittleEndian.PutUint32(d[at:], w)
			if err := CheckStoredSchema(base64.StdEncoding.EncodeToString(d)); err != nil {
				continue
			}
			_ = deserialize(d)
		}
	}
}

// TestFileDictionary: CheckFile reports the test file's dictionary-encoded field; the
// same schema without it has none, and a dictionary nested in a struct is found.
func TestFileDictionary(t *testing.T) {
	hasDictionary := func(data []byte) bool {
		f, err := CheckFile(data)
		if err != nil {
			t.Fatal(err)
		}
		return f.Dictionary
	}
	if !hasDictionary(testFile(t)) {
		t.Error("CheckFile misses the dictionary field of the test file")
	}
	write := func(fields ...arrow.Field) []byte {
		var buf bytes.Buffer
		w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(arrow.NewSchema(fields, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	plain := testSchema().Fields()[:6]
	if hasDictionary(write(plain...)) {
		t.Error("CheckFile finds a dictionary in a schema without one")
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	nested := arrow.Field{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "d", Type: dict})}
	if !hasDictionary(write(append(plain, nested)...)) {
		t.Error("CheckFile misses a dictionary inside a struct")
	}
}
