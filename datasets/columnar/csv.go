package columnar

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
)

// block is a run of whole CSV records handed to a parser.
type block struct {
	idx  int    // position in the file, from 0
	data []byte // whole records; the buffer returns to the free list after parsing
	buf  *[]byte
	line int // 1-based line of data[0]
}

// part is what parsing one block produced: per selected column either numbers or,
// for a column that met text in this block, codes into a local dictionary.
type part struct {
	nRows int
	bytes int // the size of the block
	vals  [][]float64
	dict  []map[string]int // nil for a column without text in this block
	first []textCell       // the first text cell of each text column
	err   error
}

// textCell is a cell that is not a number.
type textCell struct {
	row, line int // row within the block (0-based), 1-based line
	text      string
}

// csvHeader reads the header record of a CSV file.
func csvHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("columnar: %w", err)
	}
	defer f.Close()
	h, _, _, err := readHeader(path, f)
	return h, err
}

// readHeader reads the header record from r; it returns the names, the bytes read
// after the header and the number of lines the header took.
func readHeader(path string, r io.Reader) ([]string, []byte, int, error) {
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		data = append(data, buf[:n]...)
		if end, ok := recordEnd(data); ok {
			rec := data[:end]
			lines := bytes.Count(rec, []byte{'\n'})
			names, err := splitHeader(path, rec)
			return names, data[end:], lines, err
		}
		if err == io.EOF {
			if len(data) == 0 {
				return nil, nil, 0, fmt.Errorf("columnar: %s: empty file, want a header row: %w", path, ErrFormat)
			}
			names, err := splitHeader(path, data)
			return names, nil, 1, err
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("columnar: %s: %w", path, err)
		}
	}
}

// recordEnd returns the index after the first record's newline, outside quotes.
func recordEnd(data []byte) (int, bool) {
	in := false
	for i, c := range data {
		switch {
		case c == '"':
			in = !in
		case c == '\n' && !in:
			return i + 1, true
		}
	}
	return 0, false
}

// splitHeader splits the header record into names.
func splitHeader(path string, rec []byte) ([]string, error) {
	var names []string
	p := &parser{data: rec, line: 1}
	for {
		cell, last, err := p.field()
		if err != nil {
			return nil, fmt.Errorf("columnar: %s: line 1: %w", path, err)
		}
		names = append(names, string(cell))
		if last {
			break
		}
	}
	return names, nil
}

// readCSV reads a CSV file: a reader goroutine cuts the file into blocks of whole
// records, threads parse them, and the parts are joined in file order.
func readCSV(ctx context.Context, path string, opt Options) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("columnar: %w", err)
	}
	defer f.Close()
	header, rest, headerLines, err := readHeader(path, f)
	if err != nil {
		return nil, err
	}
	sel, err := selection(path, header, opt.Columns)
	if err != nil {
		return nil, err
	}
	nSel := 0
	for _, s := range sel {
		if s >= 0 {
			nSel++
		}
	}
	threads := opt.threads()
	bs := opt.blockSize()
	free := make(chan *[]byte, threads+2)
	for range threads + 2 {
		b := make([]byte, 0, bs)
		free <- &b
	}
	blocks := make(chan block, threads)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var readErr error
	go func() {
		defer close(blocks)
		readErr = cutBlocks(ctx, f, rest, 1+headerLines, bs, free, blocks)
	}()

	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("columnar: %w", err)
	}
	var mu sync.Mutex // protects mg
	mg := newMerger(nSel, fi.Size())
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range blocks {
				p := parseBlock(b, sel, nSel)
				*b.buf = b.data[:0]
				free <- b.buf
				mu.Lock()
				mg.add(b.idx, p)
				mu.Unlock()
				if p.err != nil {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	if mg.err != nil {
		return nil, fmt.Errorf("columnar: %s: %w", path, mg.err)
	}
	if readErr != nil {
		return nil, fmt.Errorf("columnar: %s: %w", path, readErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(mg.pending) > 0 {
		panic("columnar: a CSV part was not merged") // every block before the last was parsed
	}
	t := &Table{Path: path}
	for j, s := range sel {
		if s >= 0 {
			t.Columns = append(t.Columns, Column{Name: header[j]})
		}
	}
	for _, m := range mg.metas {
		t.NRows += m.nRows
	}
	for k := range t.Columns {
		finishColumn(&t.Columns[k], mg.cols[k], mg.metas, k)
	}
	return t, nil
}

// cutBlocks reads r after the header (rest holds bytes already read, starting at line
// line) and sends blocks of whole records to out, taking buffers from free.
func cutBlocks(ctx context.Context, r io.Reader, rest []byte, line, bs int, free chan *[]byte, out chan<- block) error {
	carry := slices.Clone(rest)
	eof := false
	for idx := 0; ; {
		var bp *[]byte
		select {
		case bp = <-free:
		case <-ctx.Done():
			return nil
		}
		buf := append((*bp)[:0], carry...)
		for !eof && len(buf) < bs {
			if len(buf) == cap(buf) {
				buf = slices.Grow(buf, bs)
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return err
			}
		}
		end := len(buf)
		if !eof {
			for {
				end = lastRecordEnd(buf)
				if end > 0 {
					break
				}
				// One record longer than the block: read more.
				buf = slices.Grow(buf, bs)
				n, err := r.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					eof = true
					end = len(buf)
					break
				} else if err != nil {
					return err
				}
			}
		}
		carry = append(carry[:0], buf[end:]...)
		data := buf[:end]
		*bp = buf
		if len(data) == 0 {
			free <- bp
			if eof {
				return nil
			}
			continue
		}
		out <- block{idx: idx, data: data, buf: bp, line: line}
		idx++
		line += bytes.Count(data, []byte{'\n'})
		if eof {
			return nil
		}
	}
}

// lastRecordEnd returns the index after the last newline of data that is outside
// quotes, 0 when there is none. Without any quote in data it is the last newline; with
// quotes it scans from the start, which is a record boundary.
func lastRecordEnd(data []byte) int {
	if bytes.IndexByte(data, '"') < 0 {
		return bytes.LastIndexByte(data, '\n') + 1
	}
	in, end := false, 0
	for i, c := range data {
		switch {
		case c == '"':
			in = !in
		case c == '\n' && !in:
			end = i + 1
		}
	}
	return end
}

// parser reads the fields of CSV records from data.
type parser struct {
	data    []byte
	pos     int
	line    int    // line of data[pos]
	scratch []byte // unquoted text of the last quoted field
}

// field returns the next field of the current record and whether it was the record's
// last. The returned bytes are valid until the next call.
func (p *parser) field() (cell []byte, last bool, err error) {
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '"' {
		start := p.line
		p.scratch = p.scratch[:0]
		i++
		for {
			q := bytes.IndexByte(d[i:], '"')
			if q < 0 {
				return nil, false, fmt.Errorf("line %d: quoted field not closed: %w", start, ErrFormat)
			}
			seg := d[i : i+q]
			p.line += bytes.Count(seg, []byte{'\n'})
			p.scratch = append(p.scratch, seg...)
			i += q + 1
			if i < len(d) && d[i] == '"' { // "" is a quote
				p.scratch = append(p.scratch, '"')
				i++
				continue
			}
			break
		}
		cell = p.scratch
		switch {
		case i >= len(d):
			p.pos = i
			return cell, true, nil
		case d[i] == ',':
			p.pos = i + 1
			return cell, false, nil
		case d[i] == '\n':
			p.pos = i + 1
			p.line++
			return cell, true, nil
		case d[i] == '\r' && i+1 < len(d) && d[i+1] == '\n':
			p.pos = i + 2
			p.line++
			return cell, true, nil
		}
		return nil, false, fmt.Errorf("line %d: text after a closing quote: %w", start, ErrFormat) // the field's first line, as for an unclosed quote
	}
	j := i
	for j < len(d) && d[j] != ',' && d[j] != '\n' {
		j++
	}
	cell = d[i:j]
	if j >= len(d) {
		p.pos = j
		last = true
	} else {
		p.pos = j + 1
		if d[j] == '\n' {
			last = true
			p.line++
		}
	}
	if last && len(cell) > 0 && cell[len(cell)-1] == '\r' {
		cell = cell[:len(cell)-1]
	}
	return cell, last, nil
}

// parseBlock parses the records of one block into a part.
func parseBlock(b block, sel []int, nSel int) *part {
	pt := &part{vals: make([][]float64, nSel), dict: make([]map[string]int, nSel), first: make([]textCell, nSel)}
	est := bytes.Count(b.data, []byte{'\n'}) + 1
	for k := range pt.vals {
		pt.vals[k] = make([]float64, 0, est)
	}
	p := &parser{data: b.data, line: b.line}
	nCols := len(sel)
	row := 0
	for p.pos < len(p.data) {
		// Skip empty lines, as encoding/csv does.
		if c := p.data[p.pos]; c == '\n' {
			p.pos++
			p.line++
			continue
		} else if c == '\r' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '\n' {
			p.pos += 2
			p.line++
			continue
		}
		recLine := p.line
		j := 0
		for {
			cell, last, err := p.field()
			if err != nil {
				pt.err = err
				return pt
			}
			if j < nCols {
				if k := sel[j]; k >= 0 {
					pt.addCell(k, cell, row, recLine)
				}
			}
			j++
			if last {
				break
			}
		}
		if j != nCols {
			pt.err = fmt.Errorf("line %d: %d fields, the header has %d: %w", recLine, j, nCols, ErrFormat)
			return pt
		}
		row++
	}
	pt.nRows = row
	pt.bytes = len(b.data)
	return pt
}

// addCell adds one cell of selected column k at row row of the block.
func (pt *part) addCell(k int, cell []byte, row, line int) {
	d := pt.dict[k]
	if d == nil {
		if v, ok := parseFloat(cell); ok {
			pt.vals[k] = append(pt.vals[k], v)
			return
		}
		// The first text cell of the column in this block: code the numbers so far.
		pt.first[k] = textCell{row: row, line: line, text: string(cell)}
		d = map[string]int{}
		pt.dict[k] = d
		for i, v := range pt.vals[k] {
			if v == v {
				pt.vals[k][i] = float64(code(d, strconv.FormatFloat(v, 'g', -1, 64)))
			}
		}
	}
	v, ok := parseFloat(cell)
	switch {
	case ok && v != v:
	case ok:
		v = float64(code(d, strconv.FormatFloat(v, 'g', -1, 64)))
	default:
		c, found := d[string(cell)]
		if !found {
			c = len(d)
			d[string(cell)] = c
		}
		v = float64(c)
	}
	pt.vals[k] = append(pt.vals[k], v)
}

// code returns the code of s in d, adding it when new.
func code(d map[string]int, s string) int {
	c, ok := d[s]
	if !ok {
		c = len(d)
		d[s] = c
	}
	return c
}
