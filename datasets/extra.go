package datasets

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// ExtraPrefix begins the column name of every extra attribute in a changes table: the
// attribute fail_ratio_pr is the column x_fail_ratio_pr. The prefix keeps extra
// attributes apart from the schema's columns and from misspellings of them.
const ExtraPrefix = "x_"

// maxExtraName is the longest name an extra attribute may have.
const maxExtraName = 64

// leakingNames are source columns that record how the build ended, so that a model
// given them as inputs would read its own label or target. CheckExtraName refuses them
// by name, and so do the readers and writers of histories, the feature tables and the
// scorer.
var leakingNames = map[string]string{
	"now_label":        "BuildFast's outcome of the build, the success label",
	"now_duration":     "BuildFast's duration of the build, the build-time target",
	"tr_status":        "TravisTorrent's outcome of the build, the success label",
	"tr_duration":      "TravisTorrent's duration of the build, the build-time target",
	"build_successful": "TravisTorrent's outcome of the build, the success label",
	"status":           "the build's status, the success label",
	"outcome":          "the change's outcome",
	"duration_s":       "the build's duration, the build-time target",
}

// leakingPrefixes begin source columns that describe the build's own run (TravisTorrent's
// tr_log_* test counts and timings, parsed from the log of the build being predicted).
var leakingPrefixes = []string{"tr_log_"}

// CheckExtraName returns nil when name can be an extra attribute: 1 to 64 characters of
// a-z, 0-9 and _, starting with a letter, and not a column that leaks the label (an
// error wrapping ErrLeakingColumn names it: BuildFast's now_label and now_duration,
// TravisTorrent's tr_status, tr_duration, build_successful and tr_log_*, and the
// history's own status, outcome and duration_s). Other bad names wrap ErrInvalidValue.
func CheckExtraName(name string) error {
	if why, ok := leakingNames[name]; ok {
		return fmt.Errorf("%w: %s is %s", ErrLeakingColumn, name, why)
	}
	for _, p := range leakingPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("%w: %s describes the build's own run (%s*)", ErrLeakingColumn, name, p)
		}
	}
	if name == "" || len(name) > maxExtraName {
		return fmt.Errorf("%w: extra attribute name %q must have 1 to %d characters", ErrInvalidValue, name, maxExtraName)
	}
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '_')) {
			return fmt.Errorf("%w: extra attribute name %q: want a-z, 0-9 and _, starting with a letter", ErrInvalidValue, name)
		}
	}
	return nil
}

// ExtraName turns a source column name into the name of an extra attribute: lower
// case, with every character outside a-z, 0-9 and _ replaced by _ (and x prepended when
// it does not start with a letter). The result may still be refused by CheckExtraName
// (a leaking column, or too long).
func ExtraName(column string) string {
	b := []byte(strings.ToLower(column))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] < 'a' || b[0] > 'z' {
		b = append([]byte{'x'}, b...)
	}
	return string(b)
}

// Extra holds a change's extra attributes: numeric source columns outside the schema
// (BuildFast's history and code-structure counts, TravisTorrent's churn), which the
// feature tables append to the success and build-time rows. Names are strictly
// increasing and Values[k] is the value of Names[k], NaN when missing. The changes of a
// history share one Names slice (History.Extra). The zero value has no attributes.
type Extra struct {
	Names  []string
	Values []float64
}

// Get returns the value of the attribute name, NaN when e does not have it.
func (e Extra) Get(name string) float64 {
	if k, ok := slices.BinarySearch(e.Names, name); ok && k < len(e.Values) {
		return e.Values[k]
	}
	return nan
}

// Len returns the number of attributes.
func (e Extra) Len() int { return len(e.Names) }

// NewExtra returns the attributes of values (name -> value) as an Extra, checking every
// name with CheckExtraName and every value: it must be finite (leave an unknown
// attribute out). Errors name the attribute. A nil or empty map gives the zero Extra.
func NewExtra(values map[string]float64) (Extra, error) {
	if len(values) == 0 {
		return Extra{}, nil
	}
	e := Extra{Names: make([]string, 0, len(values)), Values: make([]float64, len(values))}
	for n := range values {
		e.Names = append(e.Names, n)
	}
	sort.Strings(e.Names)
	for k, n := range e.Names {
		if err := CheckExtraName(n); err != nil {
			return Extra{}, fmt.Errorf("datasets: extra attribute %q: %w", n, err)
		}
		v := values[n]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Extra{}, fmt.Errorf("datasets: extra attribute %q: %w: %v is not finite (leave an unknown attribute out)", n, ErrInvalidValue, v)
		}
		e.Values[k] = v
	}
	return e, nil
}

// sameNames reports whether a and b hold the same names, looking at the elements only
// when they are not the same slice.
func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}

// checkExtraNames checks the extra attribute names of a history: valid (CheckExtraName)
// and strictly increasing.
func checkExtraNames(names []string) error {
	for k, n := range names {
		if err := CheckExtraName(n); err != nil {
			return fmt.Errorf("datasets: extra attribute %q: %w", n, err)
		}
		if k > 0 && names[k-1] >= n {
			return fmt.Errorf("datasets: %w: extra attributes %q and %q are not in increasing order", ErrInvalidValue, names[k-1], n)
		}
	}
	return nil
}

// CheckExtra checks the extra attributes of h: valid names in increasing order
// (History.Extra), and every change either without attributes or with exactly those
// names, its values finite or NaN. Errors name the change.
func (h *History) CheckExtra() error {
	if err := checkExtraNames(h.Extra); err != nil {
		return err
	}
	for i := range h.Changes {
		e := &h.Changes[i].Extra
		if len(e.Names) == 0 && len(e.Values) == 0 {
			continue
		}
		if !sameNames(e.Names, h.Extra) || len(e.Values) != len(e.Names) {
			return fmt.Errorf("datasets: change %q (row %d): %w: its extra attributes (%d names, %d values) are not the history's %d (%s)",
				h.Changes[i].ChangeID, i, ErrInvalidValue, len(e.Names), len(e.Values), len(h.Extra), strings.Join(h.Extra, ", "))
		}
		for k, v := range e.Values {
			if math.IsInf(v, 0) {
				return fmt.Errorf("datasets: change %q (row %d), extra attribute %s: %w: %v is not finite", h.Changes[i].ChangeID, i, e.Names[k], ErrInvalidValue, v)
			}
		}
	}
	return nil
}

// alignExtra makes h.Extra the sorted union of the attribute names of h's changes and
// gives every change that has attributes those names, in that order (NaN where it
// lacks one), sharing the slice h.Extra. The importers call it once all rows are read.
func (h *History) alignExtra() {
	var union []string
	var last []string
	for i := range h.Changes {
		n := h.Changes[i].Extra.Names
		if len(n) == 0 || sameNames(n, last) {
			continue
		}
		last = n
		union = append(union, n...)
	}
	slices.Sort(union)
	h.Extra = slices.Compact(union)
	if len(h.Extra) == 0 {
		h.Extra = nil
		return
	}
	for i := range h.Changes {
		e := &h.Changes[i].Extra
		switch {
		case len(e.Names) == 0:
		case slices.Equal(e.Names, h.Extra):
			e.Names = h.Extra
		default:
			v := make([]float64, len(h.Extra))
			for k, n := range h.Extra {
				v[k] = e.Get(n)
			}
			*e = Extra{Names: h.Extra, Values: v}
		}
	}
}

// extraValue returns the value of attribute k (named name) of a history's change: the
// k-th value when the change shares the history's names, a lookup otherwise.
func (e Extra) extraValue(shared []string, k int, name string) float64 {
	if len(e.Names) == len(shared) && len(shared) > 0 && &e.Names[0] == &shared[0] {
		return e.Values[k]
	}
	return e.Get(name)
}

// nanBlock hands out windows of NaN-filled float64 of a fixed width, a block at a time,
// so that reading a changes table with extra attributes allocates once per block of
// rows, not once per row.
type nanBlock struct {
	width int
	buf   []float64
}

const nanBlockRows = 4096

func (b *nanBlock) next() []float64 {
	if len(b.buf) < b.width {
		b.buf = make([]float64, b.width*nanBlockRows)
		for i := range b.buf {
			b.buf[i] = nan
		}
	}
	v := b.buf[:b.width:b.width]
	b.buf = b.buf[b.width:]
	return v
}
