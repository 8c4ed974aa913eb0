package columnar

import (
	"slices"
	"strconv"
)

// merger joins the parsed parts of a CSV file into its columns in file order as they
// arrive: each part is appended and freed as soon as the parts before it are in, so
// that a read holds the columns and a few parts, not a second copy of the table (at
// 1M rows × 50 columns, 400 MB). The columns are allocated once, from the row count
// that the first part's rows per byte predict for the whole file.
type merger struct {
	size    int64 // the file's size in bytes, for the first estimate
	cols    [][]float64
	metas   []partMeta
	pending map[int]*part // parsed parts waiting for an earlier one
	// errIdx and err are the first part (in file order) that failed to parse.
	errIdx int
	err    error
}

// partMeta is what the end of a read needs of a part once its numbers are in the
// columns: its rows and, per column, its dictionary of text and first text cell.
type partMeta struct {
	nRows int
	dict  []map[string]int
	first []textCell
}

// estimateSlack is the share of rows added to the estimate of the file's rows, for
// rows longer than the first block's: a short estimate costs an append that copies
// the column, a long one only unused capacity.
const estimateSlack = 0.05

func newMerger(nSel int, size int64) *merger {
	return &merger{size: size, cols: make([][]float64, nSel), pending: map[int]*part{}, errIdx: -1}
}

// add takes part idx of the file and appends every part that can now go in. Calls
// must not overlap.
func (m *merger) add(idx int, p *part) {
	if p.err != nil {
		if m.err == nil || idx < m.errIdx {
			m.errIdx, m.err = idx, p.err
		}
		return
	}
	m.pending[idx] = p
	for {
		p, ok := m.pending[len(m.metas)]
		if !ok {
			return
		}
		delete(m.pending, len(m.metas))
		if len(m.metas) == 0 && p.bytes > 0 {
			est := int(float64(p.nRows)*float64(m.size)/float64(p.bytes)*(1+estimateSlack)) + 16
			for k := range m.cols {
				m.cols[k] = make([]float64, 0, est)
			}
		}
		for k := range m.cols {
			m.cols[k] = append(m.cols[k], p.vals[k]...)
			p.vals[k] = nil
		}
		m.metas = append(m.metas, partMeta{nRows: p.nRows, dict: p.dict, first: p.first})
	}
}

// finishColumn sets column c (selected column k) from the merged values vals. A
// column with text in any part becomes a text column with sorted levels: its values,
// codes of each part's dictionary or numbers, are rewritten in place as codes of the
// levels.
func finishColumn(c *Column, vals []float64, metas []partMeta, k int) {
	c.Values = vals
	text := false
	row0 := 0
	for _, m := range metas {
		if m.dict[k] != nil && !text {
			text = true
			f := m.first[k]
			c.firstText.row, c.firstText.line, c.firstText.text = row0+f.row, f.line, f.text
		}
		row0 += m.nRows
	}
	if !text {
		return
	}
	// Levels: the union of every part's dictionary and of the numbers of parts
	// without text, formatted.
	all := map[string]int{}
	row0 = 0
	for _, m := range metas {
		seg := vals[row0 : row0+m.nRows]
		row0 += m.nRows
		if m.dict[k] != nil {
			for s := range m.dict[k] {
				all[s] = 0
			}
			continue
		}
		for _, v := range seg {
			if v == v {
				all[strconv.FormatFloat(v, 'g', -1, 64)] = 0
			}
		}
	}
	c.Levels = make([]string, 0, len(all))
	for s := range all {
		c.Levels = append(c.Levels, s)
	}
	slices.Sort(c.Levels)
	for i, s := range c.Levels {
		all[s] = i
	}
	row0 = 0
	for _, m := range metas {
		seg := vals[row0 : row0+m.nRows]
		row0 += m.nRows
		var remap []float64
		if d := m.dict[k]; d != nil {
			remap = make([]float64, len(d))
			for s, i := range d {
				remap[i] = float64(all[s])
			}
		}
		for i, v := range seg {
			switch {
			case v != v:
			case remap != nil:
				seg[i] = remap[int(v)]
			default:
				seg[i] = float64(all[strconv.FormatFloat(v, 'g', -1, 64)])
			}
		}
	}
}
