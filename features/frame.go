package features

import "github.com/sqpredict/sqpredict/datasets"

// Frame returns the table as a datasets.Frame: the feature columns in schema order, then
// the label or target (named by Schema.Kind.LabelName), then the truth columns. Row keys
// are not included: the frame is the input of "trainer fit", where every column but the
// label and the truth is a feature.
func (t *Table) Frame() *datasets.Frame {
	n, rows := t.Schema.NFeatures(), t.NRows()
	f := &datasets.Frame{Columns: make([]datasets.Column, 0, n+1+len(t.Truth))}
	for j, name := range t.Schema.Names {
		col := make([]float64, rows)
		for r := range col {
			col[r] = t.X[r*n+j]
		}
		f.Columns = append(f.Columns, datasets.Column{Name: name, Floats: col})
	}
	// Copies made with make, not append to nil, so that a table without rows still has
	// (empty, non-nil) float columns: a history without conflict labels writes an empty
	// conflict table.
	f.Columns = append(f.Columns, datasets.Column{Name: t.Schema.Kind.LabelName(), Floats: clone(t.Y)})
	for _, tr := range t.Truth {
		f.Columns = append(f.Columns, datasets.Column{Name: tr.Name, Floats: clone(tr.Values)})
	}
	return f
}

// clone returns a copy of v that is not nil, even when v is empty.
func clone(v []float64) []float64 {
	out := make([]float64, len(v))
	copy(out, v)
	return out
}
