package datasets

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

func TestCheckExtraName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		input   string
		wantErr error
	}{
		{"history count", "fail_ratio_pr", nil},
		{"digits", "cmt_add_methodcount2", nil},
		{"one letter", "a", nil},
		{"buildfast label", "now_label", ErrLeakingColumn},
		{"buildfast duration", "now_duration", ErrLeakingColumn},
		{"travis status", "tr_status", ErrLeakingColumn},
		{"travis log", "tr_log_num_tests_failed", ErrLeakingColumn},
		{"schema status", "status", ErrLeakingColumn},
		{"schema duration", "duration_s", ErrLeakingColumn},
		{"empty", "", ErrInvalidValue},
		{"upper case", "Fail", ErrInvalidValue},
		{"leading digit", "1x", ErrInvalidValue},
		{"leading underscore", "_x", ErrInvalidValue},
		{"dot", "a.b", ErrInvalidValue},
		{"too long", strings.Repeat("a", 65), ErrInvalidValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckExtraName(tc.input)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("CheckExtraName(%q) = %v, want %v", tc.input, err, tc.wantErr)
			}
		})
	}
}

func TestExtraName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"fail_ratio_pr": "fail_ratio_pr", "Src-Churn": "src_churn", "9lives": "x9lives", "": "x"} {
		if got := ExtraName(in); got != want {
			t.Errorf("ExtraName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewExtra(t *testing.T) {
	t.Parallel()
	e, err := NewExtra(map[string]float64{"b": 2, "a": -1.5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Names, []string{"a", "b"}) || !slices.Equal(e.Values, []float64{-1.5, 2}) {
		t.Errorf("NewExtra = %+v, want names [a b] values [-1.5 2]", e)
	}
	if got := e.Get("b"); got != 2 {
		t.Errorf("Get(b) = %v, want 2", got)
	}
	if got := e.Get("c"); !math.IsNaN(got) {
		t.Errorf("Get(c) = %v, want NaN", got)
	}
	if e, err := NewExtra(nil); err != nil || e.Len() != 0 || e.Names != nil {
		t.Errorf("NewExtra(nil) = %+v, %v, want the zero Extra", e, err)
	}
	for _, tc := range []struct {
		name    string
		input   map[string]float64
		wantErr error
	}{
		{"leak", map[string]float64{"a": 1, "now_label": 1}, ErrLeakingColumn},
		{"infinite", map[string]float64{"a": math.Inf(1)}, ErrInvalidValue},
		{"nan", map[string]float64{"a": math.NaN()}, ErrInvalidValue},
		{"bad name", map[string]float64{"A": 1}, ErrInvalidValue},
	} {
		if _, err := NewExtra(tc.input); !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: NewExtra(%v) = %v, want %v", tc.name, tc.input, err, tc.wantErr)
		}
	}
}

// extraHistory is testHistory with two extra attributes: the first change has both, the
// second one of them (the other missing), the third none at all.
func extraHistory() *History {
	h := testHistory()
	h.Extra = []string{"fail_ratio_pr", "src_churn"}
	h.Changes[0].Extra = Extra{Names: h.Extra, Values: []float64{0.25, 12}}
	h.Changes[1].Extra = Extra{Names: h.Extra, Values: []float64{nan, -3.5}}
	return h
}

// TestExtraHeader checks where the extra attributes go in a CSV changes table (after
// the schema's columns) and that a read counts them in its summary; TestHistoryRoundTrip
// checks their values in every format.
func TestExtraHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := WriteHistory(context.Background(), dir, extraHistory(), FormatCSV); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, TableChanges+FormatCSV.Ext()))
	if err != nil {
		t.Fatal(err)
	}
	if header := strings.SplitN(string(raw), "\n", 2)[0]; !strings.HasSuffix(header, ",x_fail_ratio_pr,x_src_churn") {
		t.Errorf("changes header %q, want the x_ columns last", header)
	}
	_, rep, err := ReadHistory(context.Background(), dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.String(); !strings.Contains(s, "extra attributes (x_* columns, features of success and build-time rows): 2") {
		t.Errorf("report summary does not count the extra attributes:\n%s", s)
	}
}

func TestHistoryExtraRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Reading: a leaking x_ column fails the read, strict or lenient, naming the column.
	for _, lenient := range []bool{false, true} {
		dir := writeCSVHistory(t,
			"change_id,repo,revision_id,author,submitted_at,decided_at,outcome,x_now_label\nc1,go,r,a,2026-03-02T09:30:00Z,,,1\n",
			"build_id,repo,change_id,path,speculation_height,started_at,finished_at,duration_s,status\nb1,go,c1,,0,,,,succeeded\n", "")
		_, _, err := ReadHistory(ctx, dir, ReadOptions{Lenient: lenient})
		var pe *ParseError
		if !errors.Is(err, ErrLeakingColumn) || !errors.As(err, &pe) || pe.Column != "x_now_label" {
			t.Errorf("lenient=%v: ReadHistory with x_now_label = %v, want ErrLeakingColumn naming the column", lenient, err)
		}
	}
	// A non-finite attribute is a problem of its row.
	dir := writeCSVHistory(t,
		"change_id,repo,revision_id,author,submitted_at,decided_at,outcome,x_churn\nc1,go,r,a,2026-03-02T09:30:00Z,,,Inf\n",
		"build_id,repo,change_id,path,speculation_height,started_at,finished_at,duration_s,status\nb1,go,c1,,0,,,,succeeded\n", "")
	if _, _, err := ReadHistory(ctx, dir, ReadOptions{}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("ReadHistory with x_churn = Inf: %v, want ErrInvalidValue", err)
	}

	// Writing refuses leaking names and changes whose attributes are not the history's.
	for _, tc := range []struct {
		name    string
		edit    func(h *History)
		wantErr error
	}{
		{"leaking name", func(h *History) {
			h.Extra = []string{"now_duration"}
			h.Changes[0].Extra = Extra{Names: h.Extra, Values: []float64{60}}
		}, ErrLeakingColumn},
		{"unsorted names", func(h *History) { h.Extra = []string{"b", "a"} }, ErrInvalidValue},
		{"other names", func(h *History) {
			h.Extra = []string{"a"}
			h.Changes[0].Extra = Extra{Names: []string{"b"}, Values: []float64{1}}
		}, ErrInvalidValue},
		{"short values", func(h *History) {
			h.Extra = []string{"a"}
			h.Changes[0].Extra = Extra{Names: h.Extra}
		}, ErrInvalidValue},
		{"infinite value", func(h *History) {
			h.Extra = []string{"a"}
			h.Changes[0].Extra = Extra{Names: h.Extra, Values: []float64{math.Inf(-1)}}
		}, ErrInvalidValue},
	} {
		h := testHistory()
		tc.edit(h)
		if err := WriteHistory(ctx, t.TempDir(), h, FormatCSV); !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: WriteHistory = %v, want %v", tc.name, err, tc.wantErr)
		}
	}
}

func TestAlignExtra(t *testing.T) {
	t.Parallel()
	h := &History{Changes: []Change{
		{ChangeID: "a", Extra: Extra{Names: []string{"x", "y"}, Values: []float64{1, 2}}},
		{ChangeID: "b"},
		{ChangeID: "c", Extra: Extra{Names: []string{"y", "z"}, Values: []float64{3, 4}}},
	}}
	h.alignExtra()
	if !slices.Equal(h.Extra, []string{"x", "y", "z"}) {
		t.Fatalf("Extra = %v, want [x y z]", h.Extra)
	}
	want := [][]float64{{1, 2, nan}, nil, {nan, 3, 4}}
	for i, c := range h.Changes {
		if !slices.EqualFunc(c.Extra.Values, want[i], scalar.Same) {
			t.Errorf("change %s values = %v, want %v", c.ChangeID, c.Extra.Values, want[i])
		}
	}
	if err := h.CheckExtra(); err != nil {
		t.Errorf("CheckExtra after alignExtra: %v", err)
	}
}
