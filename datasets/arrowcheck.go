package datasets

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
)

// arrowMagic opens and closes every Arrow IPC file; the file ends with the footer's
// length (int32, little-endian) and the magic.
var arrowMagic = []byte("ARROW1")

// checkArrowFrame reads the first and last bytes of an Arrow IPC file and refuses it
// unless it starts and ends with the magic and its footer fits between them: a cheap
// check that keeps a damaged or foreign file from being read whole into memory.
func checkArrowFrame(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	size := fi.Size()
	// Leading magic padded to 8 bytes, a footer of at least one byte, its length and
	// the trailing magic.
	const minSize = 8 + 1 + 4 + 6
	bad := func(what string) error {
		return fmt.Errorf("datasets: reading %s: %w: not an Arrow IPC file (%s)", path, ErrInvalidValue, what)
	}
	if size < minSize {
		return bad(fmt.Sprintf("%d bytes, fewer than the %d of the smallest one", size, minSize))
	}
	head := make([]byte, len(arrowMagic))
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("datasets: reading %s: %w", path, err)
	}
	if !bytes.Equal(head, arrowMagic) {
		return bad("no ARROW1 magic at the start")
	}
	tail := make([]byte, 4+len(arrowMagic))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return fmt.Errorf("datasets: reading %s: %w", path, err)
	}
	if !bytes.Equal(tail[4:], arrowMagic) {
		return bad("no ARROW1 magic at the end")
	}
	footer := int64(int32(binary.LittleEndian.Uint32(tail[:4])))
	if footer <= 0 || footer > size-minSize+1 {
		return bad(fmt.Sprintf("footer length %d does not fit in %d bytes", footer, size))
	}
	return nil
}

// validator is an Arrow array that can check its own buffers (offsets in bounds and
// non-decreasing, strings valid UTF-8, list children).
type validator interface {
	ValidateFull() error
}

// validateArray checks an array read from a file before any of its values is read: a
// damaged Parquet or Arrow file must be refused, not read as wrong strings.
func validateArray(a arrow.Array) error {
	v, ok := a.(validator)
	if !ok {
		return nil
	}
	if err := v.ValidateFull(); err != nil {
		msg := err.Error()
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		return fmt.Errorf("%w: damaged column data: %s", ErrInvalidValue, bytes.ToValidUTF8([]byte(msg), []byte("?")))
	}
	return nil
}
