package features

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
)

// extraTinyHistory is tinyHistory with two extra attributes: c4 has none and c2 lacks
// fail_ratio.
func extraTinyHistory() *datasets.History {
	h := tinyHistory()
	h.Extra = []string{"churn", "fail_ratio"}
	vals := map[string][]float64{"c1": {12, 0.25}, "c2": {40, math.NaN()}, "c3": {3, 0.5}, "c5": {7, 1}}
	for i := range h.Changes {
		if v, ok := vals[h.Changes[i].ChangeID]; ok {
			h.Changes[i].Extra = datasets.Extra{Names: h.Extra, Values: v}
		}
	}
	return h
}

// TestExtraFeatures checks that the success and build-time rows end with the history's
// extra attributes (NaN where a change lacks one), that they change nothing else, that
// conflict rows take none, and that the schema's hash covers them.
func TestExtraFeatures(t *testing.T) {
	t.Parallel()
	h := extraTinyHistory()
	want := map[string][2]float64{"c1": {12, 0.25}, "c2": {40, math.NaN()}, "c3": {3, 0.5}, "c4": {math.NaN(), math.NaN()}, "c5": {7, 1}}
	for _, kind := range []Kind{KindSuccess, KindBuildTime, KindConflict} {
		ix, tb := tableOf(t, h, kind)
		_, plain := tableOf(t, tinyHistory(), kind)
		nb := kind.Schema().NFeatures()
		wantNames := kind.Schema().Names
		if kind.TakesExtra() {
			wantNames = append(wantNames, "x_churn", "x_fail_ratio")
		}
		if !slices.Equal(tb.Schema.Names, wantNames) || ix.Schema(kind).Hash() != tb.Schema.Hash() {
			t.Fatalf("%v schema = %v, want %v", kind, tb.Schema.Names, wantNames)
		}
		if kind.TakesExtra() == (tb.Schema.Hash() == kind.Schema().Hash()) {
			t.Errorf("%v: the schema hash with extra attributes is %s, without %s", kind, tb.Schema.Hash(), kind.Schema().Hash())
		}
		if tb.NRows() != plain.NRows() || tb.NRows() == 0 {
			t.Fatalf("%v: %d rows, %d without extra attributes", kind, tb.NRows(), plain.NRows())
		}
		for r := range tb.NRows() {
			row := tb.Row(r)
			if !sameBits(row[:nb], plain.Row(r)) {
				t.Errorf("%v row %d: the extra attributes changed other features", kind, r)
			}
			if !kind.TakesExtra() {
				continue
			}
			w := want[tb.ChangeID[r]]
			if !sameBits(row[nb:], w[:]) {
				t.Errorf("%v row %d (%s) extra = %v, want %v", kind, r, tb.ChangeID[r], row[nb:], w)
			}
		}
	}
	// Another history's names: SchemaWithExtra in that order.
	a, b := KindSuccess.SchemaWithExtra([]string{"churn"}).Hash(), KindSuccess.SchemaWithExtra([]string{"fail_ratio"}).Hash()
	if a == b {
		t.Errorf("schemas with different extra attributes have the same hash %s", a)
	}
}

// TestExtraServing checks the scorer's path: a change whose attributes come from a
// request (its own names, some the model does not take, some missing) gives the model
// its attributes by name.
func TestExtraServing(t *testing.T) {
	t.Parallel()
	names := []string{"churn", "fail_ratio", "gaussian"}
	e, err := datasets.NewExtra(map[string]float64{"fail_ratio": 0.3, "churn": 9, "unused": 1})
	if err != nil {
		t.Fatal(err)
	}
	c := &datasets.Change{Extra: e}
	got := Extra(make([]float64, 3), c, names)
	if want := []float64{9, 0.3, math.NaN()}; !sameBits(got, want) {
		t.Errorf("Extra(request change) = %v, want %v", got, want)
	}
	if got := Extra(make([]float64, 3), &datasets.Change{}, names); !sameBits(got, []float64{math.NaN(), math.NaN(), math.NaN()}) {
		t.Errorf("Extra(change without attributes) = %v, want NaN", got)
	}
	// The history's path (shared names) gives the same as a lookup by name.
	h := extraTinyHistory()
	c1 := h.Changes[0]
	byName := &datasets.Change{Extra: datasets.Extra{Names: slices.Clone(h.Extra), Values: c1.Extra.Values}}
	if a, b := Extra(make([]float64, 2), &c1, h.Extra), Extra(make([]float64, 2), byName, h.Extra); !sameBits(a, b) {
		t.Errorf("Extra with shared names = %v, by name %v", a, b)
	}
	defer func() {
		if recover() == nil {
			t.Error("Extra with a dst of the wrong length did not panic")
		}
	}()
	Extra(make([]float64, 2), c, names)
}

func TestExtraOf(t *testing.T) {
	t.Parallel()
	base := KindSuccess.Schema().Names
	cases := []struct {
		name    string
		kind    Kind
		input   []string
		want    []string
		wantErr error
	}{
		{"none", KindSuccess, base, nil, nil},
		{"two", KindSuccess, append(slices.Clone(base), "x_a", "x_b"), []string{"a", "b"}, nil},
		{"build time", KindBuildTime, append(KindBuildTime.Schema().Names, "x_a"), []string{"a"}, nil},
		{"leaking", KindSuccess, append(slices.Clone(base), "x_now_label"), nil, datasets.ErrLeakingColumn},
		{"no prefix", KindSuccess, append(slices.Clone(base), "a"), nil, errAny},
		{"conflict takes none", KindConflict, append(KindConflict.Schema().Names, "x_a"), nil, errAny},
		{"other base", KindSuccess, base[1:], nil, errAny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtraOf(tc.kind, tc.input)
			switch {
			case tc.wantErr == nil && err != nil, tc.wantErr != nil && err == nil:
				t.Fatalf("ExtraOf = %v, %v, want error %v", got, err, tc.wantErr)
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("ExtraOf error = %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ExtraOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// errAny stands for any error in a test table.
var errAny = errors.New("any error")

// TestExtraRefused checks that an index refuses a history whose extra attributes leak
// the label, or whose changes do not have the history's attributes.
func TestExtraRefused(t *testing.T) {
	t.Parallel()
	h := tinyHistory()
	h.Extra = []string{"now_label"}
	h.Changes[0].Extra = datasets.Extra{Names: h.Extra, Values: []float64{1}}
	if _, err := NewIndex(context.Background(), h); !errors.Is(err, ErrInvalidHistory) || !errors.Is(err, datasets.ErrLeakingColumn) {
		t.Errorf("NewIndex with now_label = %v, want ErrInvalidHistory and datasets.ErrLeakingColumn", err)
	}
	h = tinyHistory()
	h.Changes[0].Extra = datasets.Extra{Names: []string{"churn"}, Values: []float64{1}}
	if _, err := NewIndex(context.Background(), h); !errors.Is(err, ErrInvalidHistory) {
		t.Errorf("NewIndex with a change's attributes not in History.Extra = %v, want ErrInvalidHistory", err)
	}
}

// TestTableWithExtra checks the projection of a table onto another list of extra
// attributes: kept ones keep their values, new ones are NaN, the rest is unchanged.
func TestTableWithExtra(t *testing.T) {
	t.Parallel()
	_, tb := tableOf(t, extraTinyHistory(), KindSuccess)
	if tb.WithExtra([]string{"churn", "fail_ratio"}) != tb {
		t.Error("WithExtra of the table's own attributes is not the table")
	}
	p := tb.WithExtra([]string{"fail_ratio", "gaussian"})
	if want := KindSuccess.SchemaWithExtra([]string{"fail_ratio", "gaussian"}); !slices.Equal(p.Schema.Names, want.Names) {
		t.Fatalf("projected schema %v, want %v", p.Schema.Names, want.Names)
	}
	for r := range tb.NRows() {
		old, row := tb.Row(r), p.Row(r)
		if !sameBits(row[:NSuccess], old[:NSuccess]) || !sameBits(row[NSuccess:], []float64{old[NSuccess+1], math.NaN()}) {
			t.Errorf("row %d: projected %v from %v", r, row[NSuccess:], old[NSuccess:])
		}
	}
	if !slices.Equal(p.ChangeID, tb.ChangeID) || !sameBits(p.Y, tb.Y) {
		t.Error("WithExtra changed the row keys or labels")
	}
	if q := p.WithExtra(nil); q.Schema.NFeatures() != NSuccess {
		t.Errorf("WithExtra(nil) has %d features, want %d", q.Schema.NFeatures(), NSuccess)
	}
}
