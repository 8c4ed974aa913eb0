package features

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sqpredict/sqpredict/datasets"
)

// Extra attributes (source columns outside the schema, datasets.Extra) are features of
// the success and build-time rows when a history has them: after the kind's own
// features, one column per attribute, named with datasets.ExtraPrefix (x_fail_ratio_pr)
// in the order of the history's names (datasets.History.Extra), each the change's value
// or NaN when it lacks it. Conflict rows take none. They are part of the schema's names,
// so of its hash: a model trained on them records them, and a scorer gives them to it by
// name.

// TakesExtra reports whether rows of the kind carry the extra attributes: success and
// build-time rows do, conflict rows do not.
func (k Kind) TakesExtra() bool { return k == KindSuccess || k == KindBuildTime }

// SchemaWithExtra returns the kind's schema with the extra attributes named in extra
// (without the prefix) appended, for the kinds that take them (TakesExtra); the schema
// of the other kinds is Schema(). It panics for an invalid kind.
func (k Kind) SchemaWithExtra(extra []string) Schema {
	s := k.Schema()
	if k.TakesExtra() {
		for _, n := range extra {
			s.Names = append(s.Names, datasets.ExtraPrefix+n)
		}
	}
	return s
}

// ExtraOf returns the extra attributes of a model's input columns names for rows of kind
// k: names must be the kind's own feature names followed by extra attribute columns
// (datasets.ExtraPrefix and a name datasets.CheckExtraName accepts; none for a kind
// that does not take them). It returns nil when there are none, and an error naming
// the first column that does not fit.
func ExtraOf(k Kind, names []string) ([]string, error) {
	base := k.Schema().Names
	if len(names) < len(base) || !slices.Equal(names[:len(base)], base) {
		return nil, fmt.Errorf("features: columns do not match the %s feature schema (%d columns, schema has %d)", k, len(names), len(base))
	}
	rest := names[len(base):]
	if len(rest) == 0 {
		return nil, nil
	}
	if !k.TakesExtra() {
		return nil, fmt.Errorf("features: %s rows take no extra attributes, got %d more columns (%s, ...)", k, len(rest), rest[0])
	}
	out := make([]string, len(rest))
	for i, c := range rest {
		n, ok := strings.CutPrefix(c, datasets.ExtraPrefix)
		if !ok {
			return nil, fmt.Errorf("features: %s column %d (%s) is not an extra attribute (%s*)", k, len(base)+i, c, datasets.ExtraPrefix)
		}
		if err := datasets.CheckExtraName(n); err != nil {
			return nil, fmt.Errorf("features: %s column %d (%s): %w", k, len(base)+i, c, err)
		}
		out[i] = n
	}
	return out, nil
}

// Extra writes the values of the extra attributes names of change c into dst and
// returns dst: dst[k] is c's value of names[k], NaN when c does not have it. It is the
// tail of a success or build-time row whose schema has those attributes
// (SchemaWithExtra). It panics if len(dst) != len(names).
func Extra(dst []float64, c *datasets.Change, names []string) []float64 {
	if len(dst) != len(names) {
		panic("features: dst length mismatch")
	}
	e := &c.Extra
	if len(names) > 0 && len(e.Names) == len(names) && &e.Names[0] == &names[0] {
		copy(dst, e.Values) // a history's change: the history's names
		return dst
	}
	for k, n := range names {
		dst[k] = e.Get(n)
	}
	return dst
}

// WithExtra returns t with the extra attribute columns extra in place of its own, for a
// model that takes other attributes than the history has (a bundle scored on another
// history): an attribute t lacks is NaN in every row, one extra lacks is dropped. It
// returns t itself when its attributes already are extra; otherwise a table with a new
// X sharing t's other slices, and nil for a nil t. It panics if t's schema is not its
// kind's with extra attributes.
func (t *Table) WithExtra(extra []string) *Table {
	if t == nil {
		return nil
	}
	kind := t.Schema.Kind
	cur, err := ExtraOf(kind, t.Schema.Names)
	if err != nil {
		panic(err.Error())
	}
	if !kind.TakesExtra() || slices.Equal(cur, extra) {
		return t
	}
	s := *t
	s.Schema = kind.SchemaWithExtra(extra)
	nb, nOld, nNew := len(t.Schema.Names)-len(cur), t.Schema.NFeatures(), s.Schema.NFeatures()
	from := make([]int, len(extra)) // t's column of each new attribute, -1 when none
	for k, n := range extra {
		from[k] = -1
		if j := slices.Index(cur, n); j >= 0 {
			from[k] = nb + j
		}
	}
	s.X = make([]float64, t.NRows()*nNew)
	for r := range t.NRows() {
		old, row := t.X[r*nOld:(r+1)*nOld], s.X[r*nNew:(r+1)*nNew]
		copy(row, old[:nb])
		for k, j := range from {
			row[nb+k] = nan
			if j >= 0 {
				row[nb+k] = old[j]
			}
		}
	}
	return &s
}
