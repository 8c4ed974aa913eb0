package arrowmeta

import (
	"encoding/binary"
	"fmt"
)

// fb is a flatbuffer whose offsets are checked before they are followed. Every method
// returns an error instead of reading outside buf, and every vector's claimed length
// must fit in the bytes that follow it, so nothing read through a checked position can
// make arrow-go allocate more than the buffer could describe.
type fb struct {
	buf []byte
}

// table is a checked flatbuffer table: pos is where it starts (its soffset to the
// vtable), vt its vtable's position, vtLen the vtable's length in bytes and size the
// table's inline size.
type table struct {
	pos, vt, vtLen, size int
}

func (b fb) u16(at int) (int, error) {
	if at < 0 || at+2 > len(b.buf) {
		return 0, fmt.Errorf("offset %d outside the %d bytes", at, len(b.buf))
	}
	return int(binary.LittleEndian.Uint16(b.buf[at:])), nil
}

func (b fb) u32(at int) (uint32, error) {
	if at < 0 || at+4 > len(b.buf) {
		return 0, fmt.Errorf("offset %d outside the %d bytes", at, len(b.buf))
	}
	return binary.LittleEndian.Uint32(b.buf[at:]), nil
}

// root returns the table the buffer's first offset points at.
func (b fb) root() (table, error) {
	off, err := b.u32(0)
	if err != nil {
		return table{}, fmt.Errorf("root offset: %w", err)
	}
	return b.table(int64(off))
}

// table checks the table at pos: its vtable and its inline fields lie in the buffer.
func (b fb) table(pos int64) (table, error) {
	if pos < 0 || pos+4 > int64(len(b.buf)) {
		return table{}, fmt.Errorf("table at %d outside the %d bytes", pos, len(b.buf))
	}
	p := int(pos)
	soff := int64(int32(binary.LittleEndian.Uint32(b.buf[p:])))
	vt := pos - soff
	if vt < 0 || vt+4 > int64(len(b.buf)) {
		return table{}, fmt.Errorf("vtable of the table at %d outside the %d bytes", p, len(b.buf))
	}
	vtLen, _ := b.u16(int(vt))
	size, _ := b.u16(int(vt) + 2)
	if vtLen < 4 || vtLen%2 != 0 || int(vt)+vtLen > len(b.buf) {
		return table{}, fmt.Errorf("vtable of %d bytes at %d does not fit in the %d bytes", vtLen, vt, len(b.buf))
	}
	if size < 4 || p+size > len(b.buf) {
		return table{}, fmt.Errorf("table of %d bytes at %d does not fit in the %d bytes", size, p, len(b.buf))
	}
	return table{pos: p, vt: int(vt), vtLen: vtLen, size: size}, nil
}

// field returns the position of field k of t, or -1 when t does not hold it; width is
// the field's inline size, which must fit in the table.
func (b fb) field(t table, k, width int) (int, error) {
	slot := 4 + 2*k
	if slot+2 > t.vtLen {
		return -1, nil
	}
	off, _ := b.u16(t.vt + slot)
	if off == 0 {
		return -1, nil
	}
	if off+width > t.size {
		return -1, fmt.Errorf("field %d of the table at %d (%d bytes at +%d) overruns its %d bytes", k, t.pos, width, off, t.size)
	}
	return t.pos + off, nil
}

// target follows the offset stored at pos.
func (b fb) target(pos int) (int64, error) {
	off, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	return int64(pos) + int64(off), nil
}

// vector checks the vector field k of t, elements of elem bytes each, and returns the
// position of its first element and its length; n < 0 when t does not hold it.
func (b fb) vector(t table, k, elem int) (start int, n int, err error) {
	at, err := b.field(t, k, 4)
	if err != nil || at < 0 {
		return 0, -1, err
	}
	v, err := b.target(at)
	if err != nil {
		return 0, -1, fmt.Errorf("field %d: %w", k, err)
	}
	if v < 0 || v+4 > int64(len(b.buf)) {
		return 0, -1, fmt.Errorf("field %d: vector at %d outside the %d bytes", k, v, len(b.buf))
	}
	count := int64(binary.LittleEndian.Uint32(b.buf[v:]))
	if end := v + 4 + count*int64(elem); end > int64(len(b.buf)) {
		return 0, -1, fmt.Errorf("field %d: vector of %d elements of %d bytes at %d overruns the %d bytes", k, count, elem, v, len(b.buf))
	}
	return int(v) + 4, int(count), nil
}

// subtable checks the table field k of t points at; ok is false when t does not hold
// it.
func (b fb) subtable(t table, k int) (table, bool, error) {
	at, err := b.field(t, k, 4)
	if err != nil || at < 0 {
		return table{}, false, err
	}
	p, err := b.target(at)
	if err != nil {
		return table{}, false, fmt.Errorf("field %d: %w", k, err)
	}
	s, err := b.table(p)
	if err != nil {
		return table{}, false, fmt.Errorf("field %d: %w", k, err)
	}
	return s, true, nil
}

// tables checks the vector of tables in field k of t and calls each on every element.
func (b fb) tables(t table, k int, each func(table) error) error {
	start, n, err := b.vector(t, k, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		p, err := b.target(start + 4*i)
		if err != nil {
			return fmt.Errorf("field %d element %d: %w", k, i, err)
		}
		e, err := b.table(p)
		if err != nil {
			return fmt.Errorf("field %d element %d: %w", k, i, err)
		}
		if err := each(e); err != nil {
			return fmt.Errorf("field %d element %d: %w", k, i, err)
		}
	}
	return nil
}

// u8 returns the one-byte scalar field k of t, 0 when absent.
func (b fb) u8(t table, k int) (int, error) {
	at, err := b.field(t, k, 1)
	if err != nil || at < 0 {
		return 0, err
	}
	return int(b.buf[at]), nil
}
