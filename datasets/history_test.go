package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"gonum.org/v1/gonum/floats/scalar"
)

var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

func testChange(id string) Change {
	c := blank(changeFields)
	c.ChangeID = id
	c.Repo = "go"
	c.RevisionID = "r-" + id
	c.Author = "alice"
	c.SubmittedAt = t0
	return c
}

// testHistory has every kind of value: missing and present numbers, sub-second times,
// known-empty and unknown lists, flags in all states, outcomes and statuses, truth.
func testHistory() *History {
	c1 := testChange("c1")
	c1.DecidedAt = t0.Add(90*time.Minute + 123456*time.Microsecond)
	c1.Outcome = OutcomeLanded
	c1.TargetsChanged, c1.LinesAdded, c1.LinesRemoved, c1.Commits = 3, 120, 7, 2
	c1.AffectedTargets = []string{"//a:lib", "//b:test"}
	c1.RevisionSubmissions = 1
	c1.RevisionHasRevertPlan, c1.RevisionHasTestPlan = FlagTrue, FlagFalse
	c1.AuthorTenureDays, c1.AuthorLevel = 412.5, 3
	c1.TrueProbSuccess = 0.8125

	c2 := testChange("c2")
	c2.Author = "bob, \"the builder\""
	c2.SubmittedAt = t0.Add(time.Second)
	c2.Outcome = OutcomeRejected
	c2.DecidedAt = t0.Add(time.Hour)
	c2.AffectedTargets = []string{}
	c2.TrueProbSuccess = 0.25

	c3 := testChange("c3") // pending, almost everything unknown
	c3.Repo, c3.RevisionID, c3.Author = "", "", ""
	c3.SubmittedAt = time.Time{}
	c3.TrueProbSuccess = 0.5

	b1 := blank(buildFields)
	b1.BuildID, b1.Repo, b1.ChangeID = "b1", "go", "c1"
	b1.StartedAt, b1.FinishedAt = t0.Add(time.Minute), t0.Add(20*time.Minute+time.Microsecond)
	b1.DurationS, b1.SpeculationHeight, b1.Status = 1140.000001, 0, StatusSucceeded
	b1.TrueMuS, b1.TrueSigmaS = 1100, 300

	b2 := blank(buildFields)
	b2.BuildID, b2.Repo, b2.ChangeID = "b2", "go", "c2"
	b2.Path = []string{"c1"}
	b2.SpeculationHeight, b2.Status = 1, StatusAborted
	b2.StartedAt = t0.Add(2 * time.Minute)
	b2.TrueMuS, b2.TrueSigmaS = 900, 10

	b3 := blank(buildFields)
	b3.BuildID, b3.ChangeID, b3.Status = "b3", "c2", StatusInfraFailed
	b3.Path = []string{"c1", "c3"}
	b3.TrueMuS = 5

	return &History{
		Changes: []Change{c1, c2, c3},
		Builds:  []Build{b1, b2, b3},
		Pairs: []Pair{
			{AheadChangeID: "c1", BehindChangeID: "c2", TrueProbConflict: 0.05, Conflicted: true},
			{AheadChangeID: "c2", BehindChangeID: "c3", TrueProbConflict: math.NaN()},
		},
	}
}

// equalNaN reports whether a and b are deeply equal, NaN equal to NaN (round trips must
// be exact: no tolerance).
func equalNaN(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Float64:
		return scalar.Same(a.Float(), b.Float())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalNaN(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == reflect.TypeFor[time.Time]() {
			ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
			return ta.Equal(tb) && ta.Location() == tb.Location()
		}
		for i := range a.NumField() {
			if !equalNaN(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		return equalNaN(a.Elem(), b.Elem())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

func checkEqualHistory(t *testing.T, got, want *History) {
	t.Helper()
	for i := range max(len(got.Changes), len(want.Changes)) {
		if i >= len(got.Changes) || i >= len(want.Changes) || !equalNaN(reflect.ValueOf(got.Changes[i]), reflect.ValueOf(want.Changes[i])) {
			t.Errorf("change %d differs:\n got %+v\nwant %+v", i, at(got.Changes, i), at(want.Changes, i))
		}
	}
	for i := range max(len(got.Builds), len(want.Builds)) {
		if i >= len(got.Builds) || i >= len(want.Builds) || !equalNaN(reflect.ValueOf(got.Builds[i]), reflect.ValueOf(want.Builds[i])) {
			t.Errorf("build %d differs:\n got %+v\nwant %+v", i, at(got.Builds, i), at(want.Builds, i))
		}
	}
	if !equalNaN(reflect.ValueOf(got.Pairs), reflect.ValueOf(want.Pairs)) {
		t.Errorf("pairs differ:\n got %+v\nwant %+v", got.Pairs, want.Pairs)
	}
	if !equalNaN(reflect.ValueOf(got.Extra), reflect.ValueOf(want.Extra)) {
		t.Errorf("extra attributes differ: got %v, want %v", got.Extra, want.Extra)
	}
}

func at[T any](s []T, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

func TestHistoryRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		h    func() *History
		// read gives what reading h back returns, when it is not h.
		read func(h *History)
	}{
		{"plain", testHistory, nil},
		// Issue 12 item 3: extra attributes; a change without them reads back with every
		// one missing.
		{"extra attributes", extraHistory, func(h *History) {
			h.Changes[2].Extra = Extra{Names: h.Extra, Values: []float64{nan, nan}}
		}},
	}
	for _, tc := range cases {
		for _, format := range []Format{FormatParquet, FormatArrow, FormatCSV} {
			t.Run(tc.name+"/"+format.String(), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				dir := t.TempDir()
				want := tc.h()
				if err := writeHistory(ctx, dir, want, format, mem); err != nil {
					t.Fatal(err)
				}
				if f, err := DetectFormat(dir); err != nil || f != format {
					t.Fatalf("DetectFormat = %v, %v, want %v", f, err, format)
				}
				got, rep, err := readHistory(ctx, dir, ReadOptions{}, mem)
				if err != nil {
					t.Fatal(err)
				}
				if tc.read != nil {
					tc.read(want)
				}
				checkEqualHistory(t, got, want)
				if rep.NProblems != 0 || len(rep.Tables) != 3 || rep.Tables[1].Rows != 3 || rep.Tables[1].Kept != 3 {
					t.Errorf("report = %+v, want 3 clean tables", rep)
				}
				if ig := rep.Tables[0].Ignored; len(ig) != 0 || !slices.Equal(rep.Tables[0].Extra, want.Extra) {
					t.Errorf("report: ignored columns %v, extra %v, want the x_ columns read as %v", ig, rep.Tables[0].Extra, want.Extra)
				}
				for i := range got.Changes {
					if e := got.Changes[i].Extra; len(want.Extra) > 0 && &e.Names[0] != &got.Extra[0] {
						t.Errorf("change %d does not share the history's names", i)
					}
				}

				// Deterministic: writing again gives the same bytes.
				dir2 := t.TempDir()
				if err := writeHistory(ctx, dir2, got, format, mem); err != nil {
					t.Fatal(err)
				}
				for _, table := range []string{TableChanges, TableBuilds, TablePairs} {
					a, err1 := os.ReadFile(filepath.Join(dir, table+format.Ext()))
					b, err2 := os.ReadFile(filepath.Join(dir2, table+format.Ext()))
					if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
						t.Errorf("%s%s: second write differs from the first (%v, %v)", table, format.Ext(), err1, err2)
					}
				}
			})
		}
	}
}

// TestHistoryTimePrecision checks the documented precision: times are kept to the
// microsecond in every format, and returned in UTC.
func TestHistoryTimePrecision(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	in := testChange("c1")
	in.SubmittedAt = time.Date(2026, 1, 2, 3, 4, 5, 123456789, loc)
	want := time.Date(2026, 1, 2, 1, 4, 5, 123456000, time.UTC)
	for _, format := range []Format{FormatParquet, FormatArrow, FormatCSV} {
		dir := t.TempDir()
		if err := WriteHistory(context.Background(), dir, &History{Changes: []Change{in}}, format); err != nil {
			t.Fatal(err)
		}
		h, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Changes[0].SubmittedAt; !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%v: submitted_at = %v, want %v", format, got, want)
		}
	}
}

func TestHistoryEmptyAndNoPairs(t *testing.T) {
	for _, format := range []Format{FormatParquet, FormatArrow, FormatCSV} {
		dir := t.TempDir()
		want := &History{Changes: []Change{}, Builds: []Build{}}
		// A stale pairs file of an earlier synthetic history is removed.
		if err := WriteHistory(context.Background(), dir, &History{Changes: []Change{}, Builds: []Build{}, Pairs: []Pair{}}, format); err != nil {
			t.Fatal(err)
		}
		if err := WriteHistory(context.Background(), dir, want, format); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Changes) != 0 || len(got.Builds) != 0 || got.Pairs != nil {
			t.Errorf("%v: got %+v, want an empty history without pairs", format, got)
		}
	}
}

func TestDetectFormatErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := DetectFormat(dir); !errors.Is(err, ErrNoHistory) {
		t.Errorf("DetectFormat(empty) = %v, want ErrNoHistory", err)
	}
	for _, f := range []string{"changes.csv", "changes.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := DetectFormat(dir); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("DetectFormat(two formats) = %v, want ErrUnknownFormat", err)
	}
}

const (
	changesHeader = "change_id,repo,revision_id,author,submitted_at,decided_at,outcome,lines_added,affected_targets,revision_has_test_plan,true_p_success\n"
	goodChanges   = changesHeader +
		"c1,go,r1,alice,2026-03-02T09:30:00Z,2026-03-02T10:00:00Z,landed,10,//a;//b,true,0.5\n" +
		"c2,go,r2,bob,2026-03-02T09:31:00.5Z,,,,,,\n"
	buildsHeader = "build_id,repo,change_id,path,speculation_height,started_at,finished_at,duration_s,status\n"
	goodBuilds   = buildsHeader +
		"b1,go,c1,,0,2026-03-02T09:35:00Z,2026-03-02T09:45:00Z,600,succeeded\n" +
		"b2,go,c2,c1,1,2026-03-02T09:35:00Z,,,aborted\n"
)

func writeCSVHistory(t *testing.T, changes, builds, pairs string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"changes.csv": changes, "builds.csv": builds, "pairs.csv": pairs} {
		if content == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadHistoryProblems(t *testing.T) {
	tests := []struct {
		name     string
		changes  string
		builds   string
		pairs    string
		wantErr  error
		file     string
		wantLine int
		wantCol  string
		// kept is the number of changes and builds a lenient read keeps.
		keptChanges, keptBuilds int
	}{
		{name: "good", changes: goodChanges, builds: goodBuilds, keptChanges: 2, keptBuilds: 2},
		{name: "missing column", changes: strings.Replace(goodChanges, "author,", "writer,", 1), builds: goodBuilds,
			wantErr: ErrMissingColumn, file: "changes.csv", wantLine: 1, wantCol: "author", keptChanges: -1},
		{name: "unparsable number", changes: goodChanges + "c3,go,r3,a,2026-03-02T09:30:00Z,,,ten,,,\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "lines_added", keptChanges: 2, keptBuilds: 2},
		{name: "unparsable time", changes: goodChanges + "c3,go,r3,a,yesterday,,,,,,\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "submitted_at", keptChanges: 2, keptBuilds: 2},
		{name: "unparsable flag", changes: goodChanges + "c3,go,r3,a,,,,,,maybe,\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "revision_has_test_plan", keptChanges: 2, keptBuilds: 2},
		{name: "probability out of range", changes: goodChanges + "c3,go,r3,a,,,,,,,1.5\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "true_p_success", keptChanges: 2, keptBuilds: 2},
		{name: "empty list element", changes: goodChanges + "c3,go,r3,a,,,,,//a;;//b,,\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "affected_targets", keptChanges: 2, keptBuilds: 2},
		{name: "negative count", changes: goodChanges + "c3,go,r3,a,,,,-4,,,\n", builds: goodBuilds,
			wantErr: ErrNegativeCount, file: "changes.csv", wantLine: 4, wantCol: "lines_added", keptChanges: 2, keptBuilds: 2},
		{name: "unknown outcome", changes: goodChanges + "c3,go,r3,a,,,merged,,,,\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "outcome", keptChanges: 2, keptBuilds: 2},
		{name: "missing change id", changes: goodChanges + ",go,r3,a,,,,,,,\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, wantCol: "change_id", keptChanges: 2, keptBuilds: 2},
		{name: "duplicate change id", changes: goodChanges + "c1,go,r3,a,,,,,,,\n", builds: goodBuilds,
			wantErr: ErrDuplicateID, file: "changes.csv", wantLine: 4, wantCol: "change_id", keptChanges: 2, keptBuilds: 2},
		{name: "decided before submitted", changes: goodChanges + "c3,go,r3,a,2026-03-02T09:30:00Z,2026-03-02T09:00:00Z,rejected,,,,\n", builds: goodBuilds,
			wantErr: ErrTimeOrder, file: "changes.csv", wantLine: 4, wantCol: "decided_at", keptChanges: 2, keptBuilds: 2},
		{name: "field count", changes: goodChanges + "c3,go\n", builds: goodBuilds,
			wantErr: ErrInvalidValue, file: "changes.csv", wantLine: 4, keptChanges: 2, keptBuilds: 2},
		{name: "unknown status", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,0,,,,passed\n",
			wantErr: ErrInvalidValue, file: "builds.csv", wantLine: 4, wantCol: "status", keptChanges: 2, keptBuilds: 2},
		{name: "missing status", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,0,,,,\n",
			wantErr: ErrInvalidValue, file: "builds.csv", wantLine: 4, wantCol: "status", keptChanges: 2, keptBuilds: 2},
		{name: "negative height", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,-1,,,,failed\n",
			wantErr: ErrNegativeCount, file: "builds.csv", wantLine: 4, wantCol: "speculation_height", keptChanges: 2, keptBuilds: 2},
		{name: "negative duration", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,0,,,-3,failed\n",
			wantErr: ErrInvalidValue, file: "builds.csv", wantLine: 4, wantCol: "duration_s", keptChanges: 2, keptBuilds: 2},
		{name: "duplicate build id", changes: goodChanges, builds: goodBuilds + "b1,go,c1,,0,,,,failed\n",
			wantErr: ErrDuplicateID, file: "builds.csv", wantLine: 4, wantCol: "build_id", keptChanges: 2, keptBuilds: 2},
		{name: "duplicate build id in order", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,0,,,,failed\nb3,go,c1,,0,,,,failed\n",
			wantErr: ErrDuplicateID, file: "builds.csv", wantLine: 5, wantCol: "build_id", keptChanges: 2, keptBuilds: 3},
		{name: "duplicate of a bad build out of order", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,-1,,,,failed\nb0,go,c1,,0,,,,failed\nb3,go,c1,,0,,,,failed\n",
			wantErr: ErrNegativeCount, file: "builds.csv", wantLine: 4, wantCol: "speculation_height", keptChanges: 2, keptBuilds: 3},
		{name: "build of unknown change", changes: goodChanges, builds: goodBuilds + "b3,go,c9,,0,,,,failed\n",
			wantErr: ErrUnknownChange, file: "builds.csv", wantLine: 4, wantCol: "change_id", keptChanges: 2, keptBuilds: 2},
		{name: "path entry not a change", changes: goodChanges, builds: goodBuilds + "b3,go,c2,c1;c9,2,,,,failed\n",
			wantErr: ErrUnknownChange, file: "builds.csv", wantLine: 4, wantCol: "path", keptChanges: 2, keptBuilds: 2},
		{name: "finished before started", changes: goodChanges, builds: goodBuilds + "b3,go,c1,,0,2026-03-02T09:35:00Z,2026-03-02T09:34:59.999Z,,failed\n",
			wantErr: ErrTimeOrder, file: "builds.csv", wantLine: 4, wantCol: "finished_at", keptChanges: 2, keptBuilds: 2},
		{name: "build of a skipped change", changes: goodChanges + "c3,go,r3,a,,,,-4,,,\n", builds: goodBuilds + "b3,go,c3,,0,,,,failed\n",
			wantErr: ErrNegativeCount, file: "changes.csv", wantLine: 4, wantCol: "lines_added", keptChanges: 2, keptBuilds: 2},
		{name: "missing builds column", changes: goodChanges, builds: strings.Replace(goodBuilds, "status", "state", 1),
			wantErr: ErrMissingColumn, file: "builds.csv", wantLine: 1, wantCol: "status", keptChanges: -1},
		{name: "pair of unknown change", changes: goodChanges, builds: goodBuilds, pairs: "ahead_change_id,behind_change_id,true_p_conflict,conflicted\nc1,c2,0.1,false\nc1,c7,0.2,true\n",
			wantErr: ErrUnknownChange, file: "pairs.csv", wantLine: 3, wantCol: "behind_change_id", keptChanges: 2, keptBuilds: 2},
		{name: "pair conflicted missing", changes: goodChanges, builds: goodBuilds, pairs: "ahead_change_id,behind_change_id,true_p_conflict,conflicted\nc1,c2,0.1,\n",
			wantErr: ErrInvalidValue, file: "pairs.csv", wantLine: 2, wantCol: "conflicted", keptChanges: 2, keptBuilds: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeCSVHistory(t, tc.changes, tc.builds, tc.pairs)
			h, rep, err := ReadHistory(context.Background(), dir, ReadOptions{})
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("ReadHistory = %v, want no error", err)
				}
				if len(h.Changes) != tc.keptChanges || len(h.Builds) != tc.keptBuilds {
					t.Errorf("read %d changes, %d builds, want %d, %d", len(h.Changes), len(h.Builds), tc.keptChanges, tc.keptBuilds)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("ReadHistory = %v, want %v", err, tc.wantErr)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ReadHistory = %v, want a *ParseError inside", err)
			}
			if filepath.Base(pe.Path) != tc.file || pe.Line != tc.wantLine || pe.Column != tc.wantCol {
				t.Errorf("problem at %s line %d column %q, want %s line %d column %q (%v)", filepath.Base(pe.Path), pe.Line, pe.Column, tc.file, tc.wantLine, tc.wantCol, pe)
			}
			if tc.wantLine > 0 && pe.Row != tc.wantLine-2 {
				t.Errorf("problem row = %d, want %d", pe.Row, tc.wantLine-2)
			}
			if rep == nil || rep.NProblems == 0 {
				t.Errorf("report = %+v, want problems counted", rep)
			}

			// Lenient: the bad rows are skipped and counted, the rest is kept.
			h, rep, err = ReadHistory(context.Background(), dir, ReadOptions{Lenient: true})
			if tc.keptChanges < 0 {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("lenient ReadHistory = %v, want %v (a file problem)", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("lenient ReadHistory = %v", err)
			}
			if len(h.Changes) != tc.keptChanges || len(h.Builds) != tc.keptBuilds {
				t.Errorf("lenient read kept %d changes, %d builds, want %d, %d", len(h.Changes), len(h.Builds), tc.keptChanges, tc.keptBuilds)
			}
			skipped := 0
			for _, tr := range rep.Tables {
				skipped += tr.NSkipped()
				if tr.Rows != tr.Kept+tr.NSkipped() {
					t.Errorf("%s: %d rows != %d kept + %d skipped", tr.Table, tr.Rows, tr.Kept, tr.NSkipped())
				}
			}
			if skipped == 0 {
				t.Errorf("lenient report %v counts no skipped row", rep)
			}
		})
	}
}

func TestReadHistoryLenientReasons(t *testing.T) {
	changes := goodChanges +
		"c3,go,r3,a,,,,-4,,,\n" + // negative count
		"c4,go,r4,a,,,,x,,,\n" + // invalid value
		"c1,go,r5,a,,,,,,,\n" // duplicate
	builds := goodBuilds +
		"b3,go,c3,,0,,,,failed\n" + // change skipped
		"b4,go,c2,c3,1,,,,failed\n" + // path entry skipped
		"b5,go,c9,,0,,,,failed\n" // unknown change
	dir := writeCSVHistory(t, changes, builds, "")
	h, rep, err := ReadHistory(context.Background(), dir, ReadOptions{Lenient: true, MaxProblems: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Changes) != 2 || len(h.Builds) != 2 {
		t.Fatalf("kept %d changes, %d builds, want 2, 2", len(h.Changes), len(h.Builds))
	}
	want := []map[string]int{
		{ErrNegativeCount.Error(): 1, ErrInvalidValue.Error(): 1, ErrDuplicateID.Error(): 1},
		{ErrSkippedChange.Error(): 2, ErrUnknownChange.Error(): 1},
	}
	for i, w := range want {
		if !reflect.DeepEqual(rep.Tables[i].Skipped, w) {
			t.Errorf("%s skipped = %v, want %v", rep.Tables[i].Table, rep.Tables[i].Skipped, w)
		}
	}
	if rep.NProblems != 6 || len(rep.Problems) != 2 {
		t.Errorf("report has %d problems, %d listed, want 6, 2", rep.NProblems, len(rep.Problems))
	}
	s := rep.String()
	for _, sub := range []string{"changes: 5 rows read, 2 kept, 3 skipped", "skipped 2: change was skipped", "problems: 6"} {
		if !strings.Contains(s, sub) {
			t.Errorf("report %q does not contain %q", s, sub)
		}
	}
}

func TestReadHistoryStrictLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(goodChanges)
	for i := range 150 {
		b.WriteString("x" + string(rune('a'+i%26)) + ",go,r,a,,,,-1,,,\n")
	}
	dir := writeCSVHistory(t, b.String(), goodBuilds, "")
	_, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
	var pe *ProblemsError
	if !errors.As(err, &pe) || len(pe.Problems) != DefaultMaxProblems || !pe.Truncated {
		t.Fatalf("ReadHistory = %v, want a truncated *ProblemsError with %d problems", err, DefaultMaxProblems)
	}
	if !strings.Contains(err.Error(), "line 4 (row 2), column lines_added: negative count") {
		t.Errorf("error does not name the first problem:\n%.300s", err)
	}
}

func TestReadHistoryIgnoredAndAbsentColumns(t *testing.T) {
	changes := "change_id,repo,revision_id,author,submitted_at,decided_at,outcome,extra\nc1,go,r1,a,,,,zzz\n"
	builds := buildsHeader + "b1,go,c1,,0,,,,succeeded\n"
	dir := writeCSVHistory(t, changes, builds, "")
	h, rep, err := ReadHistory(context.Background(), dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Tables[0].Ignored; !reflect.DeepEqual(got, []string{"extra"}) {
		t.Errorf("ignored = %v, want [extra]", got)
	}
	if got := len(rep.Tables[0].Absent); got != len(changeFields)-7 {
		t.Errorf("%d absent columns, want %d", got, len(changeFields)-7)
	}
	if !math.IsNaN(h.Changes[0].LinesAdded) || h.Changes[0].AffectedTargets != nil {
		t.Errorf("absent columns read as %v, %v, want NaN, nil", h.Changes[0].LinesAdded, h.Changes[0].AffectedTargets)
	}
}

// TestReadHistoryWrongType reads a Parquet history whose column has a type that cannot
// hold its values: the error names the file and column.
func TestReadHistoryWrongType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	// A changes table whose submitted_at is a float column.
	f := &Frame{Columns: []Column{
		{Name: "change_id", Strings: []string{"c1"}}, {Name: "repo", Strings: []string{"go"}},
		{Name: "revision_id", Strings: []string{"r"}}, {Name: "author", Strings: []string{"a"}},
		{Name: "submitted_at", Floats: []float64{1}}, {Name: "decided_at", Floats: []float64{math.NaN()}},
		{Name: "outcome", Strings: []string{""}},
	}}
	if err := writeFrame(context.Background(), filepath.Join(dir, "changes.parquet"), f, mem); err != nil {
		t.Fatal(err)
	}
	if err := writeRows(context.Background(), filepath.Join(dir, "builds.parquet"), FormatParquet, []Build{}, buildFields, mem); err != nil {
		t.Fatal(err)
	}
	_, _, err := readHistory(context.Background(), dir, ReadOptions{Lenient: true}, mem)
	var pe *ParseError
	if !errors.Is(err, ErrUnsupportedType) || !errors.As(err, &pe) || pe.Column != "submitted_at" {
		t.Fatalf("readHistory = %v, want ErrUnsupportedType naming submitted_at", err)
	}
}

func TestWriteHistoryCSVListError(t *testing.T) {
	c := testChange("c1")
	c.AffectedTargets = []string{"a;b"}
	err := WriteHistory(context.Background(), t.TempDir(), &History{Changes: []Change{c}}, FormatCSV)
	var pe *ParseError
	if !errors.Is(err, ErrInvalidValue) || !errors.As(err, &pe) || pe.Column != "affected_targets" {
		t.Fatalf("WriteHistory = %v, want ErrInvalidValue naming affected_targets", err)
	}
}

func TestEnumStrings(t *testing.T) {
	for f := range Format(len(formatNames)) {
		if g, err := ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if s := Format(9).String(); s != "Format(9)" {
		t.Errorf("Format(9).String() = %q", s)
	}
	if _, err := ParseFormat("xlsx"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("ParseFormat(xlsx) = %v, want ErrUnknownFormat", err)
	}
	for o := range Outcome(len(outcomeNames)) {
		if g, err := ParseOutcome(o.String()); err != nil || g != o {
			t.Errorf("ParseOutcome(%q) = %v, %v", o.String(), g, err)
		}
	}
	for s := StatusSucceeded; s <= StatusAborted; s++ {
		if g, err := ParseStatus(s.String()); err != nil || g != s {
			t.Errorf("ParseStatus(%q) = %v, %v", s.String(), g, err)
		}
	}
	if _, err := ParseStatus(""); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("ParseStatus(\"\") = %v, want ErrInvalidValue", err)
	}
	for _, tc := range []struct {
		f    Flag
		s    string
		want float64
	}{{FlagUnknown, "", math.NaN()}, {FlagFalse, "false", 0}, {FlagTrue, "true", 1}} {
		if tc.f.String() != tc.s || !scalar.Same(tc.f.Float(), tc.want) {
			t.Errorf("Flag %d: %q, %v, want %q, %v", tc.f, tc.f.String(), tc.f.Float(), tc.s, tc.want)
		}
	}
}

// FuzzCSVRoundtrip reads fuzzed CSV changes and builds tables (the rows under the full
// headers), writes what the lenient read kept and reads it again: the two reads must
// agree. Seeded with the rows of testHistory written as CSV.
func FuzzCSVRoundtrip(f *testing.F) {
	header := func(names []string) string { return strings.Join(names, ",") + "\n" }
	var changeNames, buildNames []string
	for _, fd := range changeFields {
		changeNames = append(changeNames, fd.name)
	}
	for _, fd := range buildFields {
		buildNames = append(buildNames, fd.name)
	}
	seed := f.TempDir()
	if err := WriteHistory(context.Background(), seed, testHistory(), FormatCSV); err != nil {
		f.Fatal(err)
	}
	bodies := make([]string, 2)
	for i, table := range []string{"changes.csv", "builds.csv"} {
		b, err := os.ReadFile(filepath.Join(seed, table))
		if err != nil {
			f.Fatal(err)
		}
		bodies[i] = strings.SplitN(string(b), "\n", 2)[1]
	}
	f.Add(bodies[0], bodies[1])
	f.Add("c1,,,,2026-01-01T00:00:00+05:30,,,1e3,,,,,,,,,,,,[],,false,,,,0\n", "b1,,c1,c1;c1,0,,,0.5,failed,,\n")
	f.Add("\"c,1\",\"x\"\"y\"\n", "")
	f.Fuzz(func(t *testing.T, changes, builds string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "changes.csv"), []byte(header(changeNames)+changes), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "builds.csv"), []byte(header(buildNames)+builds), 0o644); err != nil {
			t.Fatal(err)
		}
		h1, _, err := ReadHistory(context.Background(), dir, ReadOptions{Lenient: true})
		if err != nil {
			t.Skip("fuzz input is not a readable history even leniently; only readable ones round-trip")
		}
		dir2 := t.TempDir()
		if err := WriteHistory(context.Background(), dir2, h1, FormatCSV); err != nil {
			// Only lists that CSV cannot write may fail.
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("WriteHistory = %v", err)
			}
			t.Skip("fuzz input holds a list CSV cannot write; WriteHistory refused it as it should")
		}
		h2, rep, err := ReadHistory(context.Background(), dir2, ReadOptions{})
		if err != nil {
			t.Fatalf("reading what was written: %v", err)
		}
		if rep.NProblems != 0 {
			t.Fatalf("reading what was written: %d problems", rep.NProblems)
		}
		checkEqualHistory(t, h2, h1)
	})
}

// TestReadHistoryLeaksNothing reads Parquet and Arrow histories that fail in the middle
// (strict problems, a wrong column type) and checks that every Arrow buffer is released.
func TestReadHistoryLeaksNothing(t *testing.T) {
	for _, format := range []Format{FormatParquet, FormatArrow} {
		t.Run(format.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			dir := t.TempDir()
			h := testHistory()
			h.Changes[1].LinesAdded = -3
			h.Builds[2].ChangeID = "c404"
			if err := writeHistory(ctx, dir, h, format, mem); err != nil {
				t.Fatal(err)
			}
			_, rep, err := readHistory(ctx, dir, ReadOptions{}, mem)
			if !errors.Is(err, ErrNegativeCount) || !errors.Is(err, ErrUnknownChange) {
				t.Fatalf("readHistory = %v, want a negative count and an unknown change", err)
			}
			if rep.NProblems != 2 {
				t.Errorf("%d problems, want 2", rep.NProblems)
			}
			// Stop at the first problem.
			if _, _, err := readHistory(ctx, dir, ReadOptions{MaxProblems: 1}, mem); !errors.Is(err, ErrNegativeCount) {
				t.Fatalf("readHistory(MaxProblems 1) = %v, want the negative count", err)
			}
			h2, rep, err := readHistory(ctx, dir, ReadOptions{Lenient: true}, mem)
			if err != nil || len(h2.Changes) != 2 || len(h2.Builds) != 1 || len(h2.Pairs) != 0 || rep.NProblems != 5 {
				// c2 is skipped, so are b2 (its build), b3 (of c404) and both pairs,
				// which name c2.
				t.Fatalf("lenient readHistory = %d changes, %d builds, %d pairs, %d problems, %v; want 2, 1, 0, 5",
					len(h2.Changes), len(h2.Builds), len(h2.Pairs), rep.NProblems, err)
			}
		})
	}
}

// TestReadHistoryCSVErrorLine is issue 15 item 15: an unbalanced quote is reported at
// the line where its record starts, not at the end of the file where the CSV reader
// stopped; a row-level error names its data row too.
func TestReadHistoryCSVErrorLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(changesHeader) // line 1
	for i := range 200 {
		line := i + 2
		if line == 12 {
			fmt.Fprintf(&b, "c%d,go,r,a,,,,\"10,,,\n", i)
			continue
		}
		fmt.Fprintf(&b, "c%d,go,r,a,,,,10,,,\n", i)
	}
	dir := writeCSVHistory(t, b.String(), buildsHeader, "")
	_, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("ReadHistory = %v, want a *ParseError", err)
	}
	if pe.Line != 12 || pe.Row != 10 || !strings.Contains(err.Error(), "changes.csv: line 12 (row 10)") {
		t.Errorf("unbalanced quote reported at line %d row %d (%v), want line 12 row 10", pe.Line, pe.Row, err)
	}
	if !strings.Contains(err.Error(), "the reader stopped at line 201") {
		t.Errorf("error %v does not say where the reader stopped", err)
	}
}
