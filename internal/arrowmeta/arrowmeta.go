// Package arrowmeta checks the flatbuffer metadata of Arrow IPC files, and the Arrow
// schema a Parquet file may store, before arrow-go reads them.
//
// arrow-go v18 trusts the counts in that metadata: a damaged schema that claims 2^31
// fields or children makes it allocate a slice of that length, which kills the process
// with "runtime: out of memory", a fatal error no recover can catch (found by mutating
// the files of FuzzReadHistoryBinary and FuzzReadParquet). The checks here follow every
// offset of the tables arrow-go reads (footer, message, schema, field, record and
// dictionary batch, key-value metadata) and refuse a vector whose claimed length does
// not fit in the bytes after it, so that nothing arrow-go then allocates from the
// metadata can be larger than the file. They check structure only; arrow-go still
// decides what the metadata means.
package arrowmeta

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// storedSchemaKey is the key of the Parquet key-value metadata that holds the Arrow
// schema of the table written (CheckStoredSchema checks its value).
const storedSchemaKey = "ARROW:schema"

// ErrDamaged is wrapped by every error of this package: the metadata is not a
// well-formed Arrow flatbuffer.
var ErrDamaged = errors.New("damaged Arrow metadata")

// maxDepth bounds the nesting of fields (children of children) followed.
const maxDepth = 64

// maxUncompressed bounds the size a compressed buffer of a record batch may claim once
// decompressed: arrow-go allocates it before it decompresses.
const maxUncompressed = 1 << 32

// Arrow's flatbuffer enums (format/Message.fbs, format/Schema.fbs).
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
	typeTimestamp         = 10
	typeUnion             = 14
)

// magic opens and closes an Arrow IPC file.
var magic = []byte("ARROW1")

// continuation opens an encapsulated IPC message (since Arrow 0.15).
const continuation = 0xFFFFFFFF

func damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

// File is what CheckFile learns of an Arrow IPC file on the way.
type File struct {
	// Dictionary reports a dictionary-encoded field, at any depth, in the footer's
	// schema.
	Dictionary bool
}

// CheckFile checks an Arrow IPC file held in data: its magic bytes, its footer (schema,
// key-value metadata, the blocks of the dictionary and record batches) and every
// block's message, whose body must lie in the file.
func CheckFile(data []byte) (File, error) {
	var f File
	err := checkFile(data, &f)
	return f, err
}

func checkFile(data []byte, f *File) error {
	const tail = 4 + 6
	if len(data) < 8+tail || !bytes.Equal(data[:len(magic)], magic) || !bytes.Equal(data[len(data)-len(magic):], magic) {
		return damaged("not an Arrow IPC file (no ARROW1 magic at both ends)")
	}
	footerLen := int64(int32(binary.LittleEndian.Uint32(data[len(data)-tail:])))
	footerEnd := int64(len(data) - tail)
	if footerLen <= 0 || footerLen > footerEnd-8 {
		return damaged("footer length %d does not fit in %d bytes", footerLen, len(data))
	}
	b := fb{buf: data[footerEnd-footerLen : footerEnd]}
	footer, err := b.root()
	if err != nil {
		return damaged("footer: %v", err)
	}
	// Footer: version 0, schema 1, dictionaries 2, recordBatches 3, custom_metadata 4.
	if s, ok, err := b.subtable(footer, 1); err != nil {
		return damaged("footer schema: %v", err)
	} else if ok {
		if err := checkSchema(b, s, &f.Dictionary); err != nil {
			return damaged("footer schema: %v", err)
		}
	}
	if err := checkKeyValues(b, footer, 4); err != nil {
		return damaged("footer metadata: %v", err)
	}
	for _, k := range []int{2, 3} {
		start, n, err := b.vector(footer, k, 24)
		if err != nil {
			return damaged("footer blocks: %v", err)
		}
		for i := 0; i < n; i++ {
			at := start + 24*i
			offset := int64(binary.LittleEndian.Uint64(b.buf[at:]))
			metaLen := int64(int32(binary.LittleEndian.Uint32(b.buf[at+8:])))
			bodyLen := int64(binary.LittleEndian.Uint64(b.buf[at+16:]))
			end := footerEnd - footerLen
			if offset < 8 || metaLen <= 0 || bodyLen < 0 || offset > end || metaLen > end-offset || bodyLen > end-offset-metaLen {
				return damaged("block %d (offset %d, metadata %d bytes, body %d bytes) outside the %d bytes before the footer", i, offset, metaLen, bodyLen, end)
			}
			if err := checkMessage(data[offset:offset+metaLen], data[offset+metaLen:offset+metaLen+bodyLen]); err != nil {
				return fmt.Errorf("block %d: %w", i, err)
			}
		}
	}
	return nil
}

// CheckParquet checks the Arrow schema a Parquet file's key-value metadata kv stores
// (storedSchemaKey), if any, before pqarrow reads it.
func CheckParquet(kv metadata.KeyValueMetadata) error {
	if v := kv.FindValue(storedSchemaKey); v != nil {
		return CheckStoredSchema(*v)
	}
	return nil
}

// CheckStoredSchema checks the value of a Parquet file's "ARROW:schema" key-value
// metadata: base64 (padded or not, as arrow-go decodes it) of an encapsulated IPC
// message holding the schema.
func CheckStoredSchema(value string) error {
	var decoded []byte
	var err error
	if len(value)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(value)
	}
	if len(decoded) == 0 || err != nil {
		decoded, err = base64.RawStdEncoding.DecodeString(value)
	}
	if err != nil {
		// arrow-go refuses it too, with an error of its own.
		return nil
	}
	return checkMessage(decoded, nil)
}

// checkMessage checks the encapsulated IPC message at the start of m: its length
// prefix, and the message flatbuffer after it. body is the body that
// follows the message in its file, nil when there is none to check against.
func checkMessage(m []byte, body []byte) error {
	if len(m) < 4 {
		return damaged("message of %d bytes", len(m))
	}
	prefix := 4
	n := int64(int32(binary.LittleEndian.Uint32(m)))
	if binary.LittleEndian.Uint32(m) == continuation {
		if len(m) < 8 {
			return damaged("message of %d bytes", len(m))
		}
		prefix = 8
		n = int64(int32(binary.LittleEndian.Uint32(m[4:])))
	}
	if n <= 0 || n > int64(len(m)-prefix) {
		return damaged("message length %d does not fit in %d bytes", n, len(m)-prefix)
	}
	b := fb{buf: m[prefix : int64(prefix)+n]}
	msg, err := b.root()
	if err != nil {
		return damaged("message: %v", err)
	}
	// Message: version 0, header_type 1, header 2, bodyLength 3, custom_metadata 4.
	if err := checkKeyValues(b, msg, 4); err != nil {
		return damaged("message metadata: %v", err)
	}
	if at, err := b.field(msg, 3, 8); err != nil {
		return damaged("message: %v", err)
	} else if at >= 0 && body != nil {
		if claimed := int64(binary.LittleEndian.Uint64(b.buf[at:])); claimed < 0 || claimed > int64(len(body)) {
			return damaged("message body of %d bytes in a block of %d", claimed, len(body))
		}
	}
	kind, err := b.u8(msg, 1)
	if err != nil {
		return damaged("message: %v", err)
	}
	header, ok, err := b.subtable(msg, 2)
	if err != nil {
		return damaged("message header: %v", err)
	}
	if !ok {
		return nil
	}
	switch kind {
	case headerSchema:
		var dict bool
		err = checkSchema(b, header, &dict)
	case headerRecordBatch:
		err = checkRecordBatch(b, header, body)
	case headerDictionaryBatch:
		// DictionaryBatch: id 0, data 1, isDelta 2.
		var data table
		data, ok, err = b.subtable(header, 1)
		if err == nil && ok {
			err = checkRecordBatch(b, data, body)
		}
	}
	if err != nil {
		return damaged("message header: %v", err)
	}
	return nil
}

// checkSchema checks a Schema table: fields 1, custom_metadata 2, features 3, and sets
// *dict when a field is dictionary-encoded.
func checkSchema(b fb, s table, dict *bool) error {
	if err := b.tables(s, 1, func(f table) error { return checkField(b, f, 0, dict) }); err != nil {
		return fmt.Errorf("fields: %w", err)
	}
	if err := checkKeyValues(b, s, 2); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if _, _, err := b.vector(s, 3, 8); err != nil {
		return fmt.Errorf("features: %w", err)
	}
	return nil
}

// checkField checks a Field table: name 0, nullable 1, type_type 2, type 3, dictionary
// 4, children 5, custom_metadata 6. It sets *dict when the field or a child is
// dictionary-encoded.
func checkField(b fb, f table, depth int, dict *bool) error {
	if depth > maxDepth {
		return fmt.Errorf("fields nested deeper than %d", maxDepth)
	}
	if _, _, err := b.vector(f, 0, 1); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	kind, err := b.u8(f, 2)
	if err != nil {
		return err
	}
	typ, ok, err := b.subtable(f, 3)
	if err != nil {
		return fmt.Errorf("type: %w", err)
	}
	if ok {
		switch kind {
		case typeTimestamp: // unit 0, timezone 1
			_, _, err = b.vector(typ, 1, 1)
		case typeUnion: // mode 0, typeIds 1
			_, _, err = b.vector(typ, 1, 4)
		}
		if err != nil {
			return fmt.Errorf("type: %w", err)
		}
	}
	// DictionaryEncoding: id 0, indexType 1 (an Int table), isOrdered 2, kind 3.
	if enc, ok, err := b.subtable(f, 4); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	} else if ok {
		if _, _, err := b.subtable(enc, 1); err != nil {
			return fmt.Errorf("dictionary index type: %w", err)
		}
		*dict = true
	}
	if err := b.tables(f, 5, func(c table) error { return checkField(b, c, depth+1, dict) }); err != nil {
		return fmt.Errorf("children: %w", err)
	}
	return checkKeyValues(b, f, 6)
}

// checkKeyValues checks the vector of KeyValue tables (key 0, value 1) in field k of t.
func checkKeyValues(b fb, t table, k int) error {
	return b.tables(t, k, func(kv table) error {
		for j := 0; j < 2; j++ {
			if _, _, err := b.vector(kv, j, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkRecordBatch checks a RecordBatch table: length 0, nodes 1 (16-byte structs),
// buffers 2 (16-byte structs: offset, length), compression 3, variadicBufferCounts 4.
// When the body is known every buffer must lie in it, and a compressed buffer's
// uncompressed length (the int64 it starts with, -1 when stored uncompressed) is
// bounded: arrow-go allocates it before it decompresses.
func checkRecordBatch(b fb, r table, body []byte) error {
	if _, _, err := b.vector(r, 1, 16); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	start, n, err := b.vector(r, 2, 16)
	if err != nil {
		return fmt.Errorf("buffers: %w", err)
	}
	if _, _, err := b.vector(r, 4, 8); err != nil {
		return fmt.Errorf("variadic buffer counts: %w", err)
	}
	_, compressed, err := b.subtable(r, 3)
	if err != nil {
		return fmt.Errorf("compression: %w", err)
	}
	if body == nil {
		return nil
	}
	size := int64(len(body))
	for i := 0; i < n; i++ {
		off := int64(binary.LittleEndian.Uint64(b.buf[start+16*i:]))
		length := int64(binary.LittleEndian.Uint64(b.buf[start+16*i+8:]))
		if off < 0 || length < 0 || off > size || length > size-off {
			return fmt.Errorf("buffer %d (offset %d, %d bytes) outside the body of %d bytes", i, off, length, size)
		}
		if !compressed || length == 0 {
			continue
		}
		if length < 8 {
			return fmt.Errorf("compressed buffer %d of %d bytes", i, length)
		}
		if u := int64(binary.LittleEndian.Uint64(body[off:])); u < -1 || u > maxUncompressed {
			return fmt.Errorf("compressed buffer %d claims %d bytes uncompressed", i, u)
		}
	}
	return nil
}
