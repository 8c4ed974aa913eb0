package datasets

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
)

func TestImportTravisTorrent(t *testing.T) {
	h, rep, err := ImportTravisTorrent(context.Background(), "testdata/travistorrent.csv", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RowsRead != 5 || rep.Changes != 5 || rep.Builds != 5 || rep.NSkipped() != 0 {
		t.Fatalf("report = %+v, want 5 rows, 5 changes, 5 builds, none skipped", rep)
	}
	if rep.Errored != StatusFailed || rep.ImputedFinish != 5 || rep.ImputedDuration != DefaultImputedDuration {
		t.Errorf("report = %+v, want errored as failed and 5 finish times imputed with the default", rep)
	}
	// The default: errored builds fail.
	wantStatus := []Status{StatusSucceeded, StatusSucceeded, StatusFailed, StatusFailed, StatusAborted}
	for i, b := range h.Builds {
		if b.Status != wantStatus[i] {
			t.Errorf("build %d status = %v, want %v", i, b.Status, wantStatus[i])
		}
		if b.Path != nil || b.SpeculationHeight != 0 || !math.IsNaN(b.DurationS) || b.ChangeID != b.BuildID {
			t.Errorf("build %d = %+v, want an own build with unknown duration", i, b)
		}
		if want := b.StartedAt.Add(time.Hour); !b.FinishedAt.Equal(want) {
			t.Errorf("build %d finished_at = %v, want the imputed %v", i, b.FinishedAt, want)
		}
	}
	c := h.Changes[0]
	want := blank(changeFields)
	want.ChangeID, want.Repo, want.RevisionID, want.Author = "1023923", "BaseXdb/basex", "183d6be1459b5851a089297f99280dc1ba3606b3", "christian.gruen@gmail.com"
	want.SubmittedAt = time.Date(2012, 4, 5, 11, 2, 14, 0, time.UTC)
	want.FilesChanged = 28 // 23 added + 5 modified + 0 deleted
	// The other numeric columns are extra attributes, in name order.
	want.Extra = Extra{Names: h.Extra, Values: []float64{23, 0, 5, 2940}}
	if wantNames := []string{"gh_files_added", "gh_files_deleted", "gh_files_modified", "gh_src_churn"}; !slices.Equal(h.Extra, wantNames) || !slices.Equal(rep.Extra, wantNames) {
		t.Errorf("Extra = %v (report %v), want %v", h.Extra, rep.Extra, wantNames)
	}
	if !equalNaN(reflect.ValueOf(c), reflect.ValueOf(want)) {
		t.Errorf("change 0 =\n%+v, want\n%+v", c, want)
	}
	if !h.Builds[0].StartedAt.Equal(want.SubmittedAt) {
		t.Errorf("build 0 started_at = %v, want %v", h.Builds[0].StartedAt, want.SubmittedAt)
	}
	// The import is a valid history: it survives writing and strict reading.
	dir := t.TempDir()
	if err := WriteHistory(context.Background(), dir, h, FormatParquet); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkEqualHistory(t, got, h)
}

func TestImportBuildFast(t *testing.T) {
	for _, derive := range []bool{false, true} {
		h, rep, err := ImportBuildFast(context.Background(), "testdata/buildfast", ImportOptions{DeriveTimes: derive})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Files != 2 || rep.RowsRead != 7 || rep.Merged != 2 || rep.Changes != 5 || rep.Builds != 5 || rep.NSkipped() != 0 {
			t.Fatalf("report = %+v, want 2 files, 7 rows, 2 merged, 5 changes and builds", rep)
		}
		type want struct {
			id, repo                       string
			status                         Status
			duration, commits, add, del, f float64
			startMin                       float64 // derived start, minutes after the origin
		}
		wants := []want{
			{"4937685", "mybatis/mybatis-3", StatusFailed, 64, 2, 1, 1, 1, 0},
			{"4937831", "mybatis/mybatis-3", StatusFailed, 57, 2, 2, 2, 1, 6},
			{"4937835", "mybatis/mybatis-3", StatusFailed, 49, 2, 2, 2, 1, 18},
			// Two rows; the one paired with the later previous build (5004257) is kept.
			// Its previous build is not in the file: 963 minutes after 4937835.
			{"5015395", "mybatis/mybatis-3", StatusSucceeded, 2353, 2, 1, 1, 1, 18 + 963},
			{"19421513", "relayrides/pushy", StatusSucceeded, 414, 2, 212, 30, 7, 0},
		}
		for i, w := range wants {
			c, b := h.Changes[i], h.Builds[i]
			if c.ChangeID != w.id || c.Repo != w.repo || b.BuildID != w.id || b.ChangeID != w.id || b.Repo != w.repo {
				t.Errorf("row %d ids = %q %q %q %q, want %q in %q", i, c.ChangeID, c.Repo, b.BuildID, b.ChangeID, w.id, w.repo)
			}
			if b.Status != w.status || b.DurationS != w.duration || c.Commits != w.commits || c.LinesAdded != w.add || c.LinesRemoved != w.del || c.FilesChanged != w.f {
				t.Errorf("row %d = %+v / %+v, want %+v", i, c, b, w)
			}
			if c.Author != "" || c.RevisionID != "" || !c.DecidedAt.IsZero() || c.Outcome != OutcomeUnknown || !math.IsNaN(c.Hunks) {
				t.Errorf("row %d: a column BuildFast does not have is filled in: %+v", i, c)
			}
			if !derive {
				if !c.SubmittedAt.IsZero() || !b.StartedAt.IsZero() || !b.FinishedAt.IsZero() {
					t.Errorf("row %d has times without DeriveTimes", i)
				}
				continue
			}
			start := DerivedTimeOrigin.Add(time.Duration(w.startMin * float64(time.Minute)))
			if !c.SubmittedAt.Equal(start) || !b.StartedAt.Equal(start) || !b.FinishedAt.Equal(start.Add(time.Duration(w.duration)*time.Second)) {
				t.Errorf("row %d times = %v %v %v, want start %v", i, c.SubmittedAt, b.StartedAt, b.FinishedAt, start)
			}
		}
		if _, _, err := func() (*History, *Report, error) {
			dir := t.TempDir()
			if err := WriteHistory(context.Background(), dir, h, FormatCSV); err != nil {
				return nil, nil, err
			}
			return ReadHistory(context.Background(), dir, ReadOptions{})
		}(); err != nil {
			t.Errorf("imported history does not validate: %v", err)
		}
	}
}

func TestImportBadRows(t *testing.T) {
	tt, err := os.ReadFile("testdata/travistorrent.csv")
	if err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(string(tt), "\n", 2)[0] + "\n"
	bf, err := os.ReadFile("testdata/buildfast/relayrides@pushy_newmerge.csv")
	if err != nil {
		t.Fatal(err)
	}
	bfLines := strings.Split(strings.TrimSpace(string(bf)), "\n")
	bfHeader := strings.Split(bfLines[0], ",")
	// bfRow returns the first data row with the named columns replaced.
	bfRow := func(set map[string]string) string {
		cells := strings.Split(bfLines[1], ",")
		for j, n := range bfHeader {
			if v, ok := set[n]; ok {
				cells[j] = v
			}
		}
		return strings.Join(cells, ",") + "\n"
	}
	tests := []struct {
		name     string
		source   string
		content  string
		wantErr  error // a file error; nil when the bad row is skipped
		reason   error
		wantLine int
		wantCol  string
	}{
		{name: "tt unknown status", source: "travistorrent", content: header + `1,"started","a","c","p/q","2012-03-01 22:25:44",1,0,1,0` + "\n",
			reason: ErrInvalidValue, wantLine: 2, wantCol: "tr_status"},
		{name: "tt bad time", source: "travistorrent", content: header + `1,"passed","a","c","p/q","yesterday",1,0,1,0` + "\n",
			reason: ErrInvalidValue, wantLine: 2, wantCol: "tr_started_at"},
		{name: "tt negative count", source: "travistorrent", content: header + `1,"passed","a","c","p/q","2012-03-01 22:25:44",1,-2,1,0` + "\n",
			reason: ErrNegativeCount, wantLine: 2, wantCol: "gh_files_added"},
		{name: "tt duplicate", source: "travistorrent", content: header + strings.Repeat(`1,"passed","a","c","p/q","2012-03-01 22:25:44",1,0,1,0`+"\n", 2),
			reason: ErrDuplicateID, wantLine: 3, wantCol: "tr_build_id"},
		{name: "tt field count", source: "travistorrent", content: header + "1,2\n",
			reason: ErrInvalidValue, wantLine: 2},
		// Found by FuzzCSVRoundtrip in the history reader, which shares the bug: a
		// parse error left no fields for FieldPos.
		{name: "tt bare quote", source: "travistorrent", content: header + `1,pass"ed,"a","c","p/q","2012-03-01 22:25:44",1,0,1,0` + "\n",
			wantErr: ErrInvalidValue, wantLine: 2},
		{name: "tt missing column", source: "travistorrent", content: strings.Replace(header, "tr_status", "status", 1),
			wantErr: ErrMissingColumn, wantLine: 1, wantCol: "tr_status"},
		{name: "bf bad label", source: "buildfast", content: bfLines[0] + "\n" + bfRow(map[string]string{"now_label": "2"}),
			reason: ErrInvalidValue, wantLine: 2, wantCol: "now_label"},
		{name: "bf negative duration", source: "buildfast", content: bfLines[0] + "\n" + bfRow(map[string]string{"now_duration": "-1"}),
			reason: ErrInvalidValue, wantLine: 2, wantCol: "now_duration"},
		{name: "bf unparsable lines", source: "buildfast", content: bfLines[0] + "\n" + bfRow(map[string]string{"line_added": "many"}),
			reason: ErrInvalidValue, wantLine: 2, wantCol: "line_added"},
		{name: "bf conflicting duplicate", source: "buildfast", content: bfLines[0] + "\n" + bfRow(nil) + bfRow(map[string]string{"now_label": "0", "build_id": "1"}),
			reason: ErrDuplicateID, wantLine: 3, wantCol: "now_label"},
		{name: "bf missing column", source: "buildfast", content: strings.Replace(bfLines[0], "now_duration", "duration", 1) + "\n",
			wantErr: ErrMissingColumn, wantLine: 1, wantCol: "now_duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x@y_newmerge.csv")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			imp := ImportTravisTorrent
			if tc.source == "buildfast" {
				imp = ImportBuildFast
			}
			_, rep, err := imp(context.Background(), path, ImportOptions{})
			var pe *ParseError
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &pe) {
					t.Fatalf("import = %v, want %v", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("import = %v, want the bad row skipped", err)
				}
				if rep.Skipped[tc.reason.Error()] != 1 || len(rep.Problems) != 1 {
					t.Fatalf("report = %+v, want one row skipped for %v", rep, tc.reason)
				}
				pe = rep.Problems[0]
			}
			if pe.Line != tc.wantLine || pe.Column != tc.wantCol || pe.Path != path {
				t.Errorf("problem %v at line %d column %q, want line %d column %q", pe, pe.Line, pe.Column, tc.wantLine, tc.wantCol)
			}
		})
	}
}

func TestBuildFastRepo(t *testing.T) {
	for in, want := range map[string]string{
		"/x/FasterXML@jackson-databind_newmerge.csv": "FasterXML/jackson-databind",
		"other.csv": "other",
	} {
		if got := buildFastRepo(in); got != want {
			t.Errorf("buildFastRepo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImportTravisTorrentErroredAndImputedFinish(t *testing.T) {
	start := func(hh, mm int) time.Time { return time.Date(2015, 1, 1, hh, mm, 0, 0, time.UTC) }
	starts := []time.Time{start(10, 0), start(10, 10), start(10, 20), start(12, 30), start(12, 31), start(14, 0)}
	tests := []struct {
		name    string
		opt     ImportOptions
		errored Status
		dur     time.Duration
	}{
		{"defaults", ImportOptions{}, StatusFailed, time.Hour},
		{"infra", ImportOptions{Errored: StatusInfraFailed}, StatusInfraFailed, time.Hour},
		{"failed, 5 minutes", ImportOptions{Errored: StatusFailed, ImputedDuration: 5 * time.Minute}, StatusFailed, 5 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, rep, err := ImportTravisTorrent(context.Background(), "testdata/travistorrent_errored.csv", tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Errored != tc.errored || rep.ImputedFinish != 6 || rep.ImputedDuration != tc.dur || rep.NSkipped() != 0 {
				t.Fatalf("report = %+v, want errored as %v, 6 finishes imputed after %v", rep, tc.errored, tc.dur)
			}
			if s := rep.String(); !strings.Contains(s, "errored builds imported as "+tc.errored.String()) || !strings.Contains(s, "6 builds without a finish time") {
				t.Errorf("summary does not say how errored builds and finish times were imported:\n%s", s)
			}
			want := []Status{StatusFailed, tc.errored, StatusSucceeded, StatusSucceeded, StatusAborted, tc.errored}
			for i, b := range h.Builds {
				if b.Status != want[i] {
					t.Errorf("build %s status = %v, want %v", b.BuildID, b.Status, want[i])
				}
				if !b.StartedAt.Equal(starts[i]) || !b.FinishedAt.Equal(starts[i].Add(tc.dur)) || !math.IsNaN(b.DurationS) {
					t.Errorf("build %s times %v..%v (duration %v), want %v..%v and no duration",
						b.BuildID, b.StartedAt, b.FinishedAt, b.DurationS, starts[i], starts[i].Add(tc.dur))
				}
			}
			if h.Changes[5].Author != "" {
				t.Errorf("change 106 author = %q, want unknown", h.Changes[5].Author)
			}
		})
	}
	for _, opt := range []ImportOptions{{Errored: StatusAborted}, {Errored: StatusSucceeded}, {ImputedDuration: -time.Second}} {
		if _, _, err := ImportTravisTorrent(context.Background(), "testdata/travistorrent_errored.csv", opt); err == nil {
			t.Errorf("ImportTravisTorrent with %+v = nil error, want the option refused", opt)
		}
		if _, _, err := ImportBuildFast(context.Background(), "testdata/buildfast", opt); err == nil {
			t.Errorf("ImportBuildFast with %+v = nil error, want the option refused", opt)
		}
	}
}

// TestImportBuildFastImputedFinish checks that a derived start without now_duration
// gets the imputed finish, and that builds with a duration keep theirs.
func TestImportBuildFastImputedFinish(t *testing.T) {
	src, err := os.ReadFile("testdata/buildfast/mybatis@mybatis-3_newmerge.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	header := strings.Split(lines[0], ",")
	col := -1
	for j, n := range header {
		if n == "now_duration" {
			col = j
		}
	}
	cells := strings.Split(lines[1], ",") // the first build, 4937685
	cells[col] = ""
	lines[1] = strings.Join(cells, ",")
	dir := t.TempDir()
	path := filepath.Join(dir, "mybatis@mybatis-3_newmerge.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, rep, err := ImportBuildFast(context.Background(), path, ImportOptions{DeriveTimes: true, ImputedDuration: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ImputedFinish != 1 || rep.ImputedDuration != 30*time.Minute {
		t.Fatalf("report = %+v, want one finish imputed after 30m", rep)
	}
	b := h.Builds[0]
	if b.BuildID != "4937685" || !math.IsNaN(b.DurationS) || !b.FinishedAt.Equal(DerivedTimeOrigin.Add(30*time.Minute)) {
		t.Errorf("build %s: duration %v, finished %v, want no duration and the imputed finish", b.BuildID, b.DurationS, b.FinishedAt)
	}
	if b := h.Builds[1]; !b.FinishedAt.Equal(b.StartedAt.Add(57 * time.Second)) {
		t.Errorf("build %s finished %v, want its start plus its 57 s duration", b.BuildID, b.FinishedAt)
	}
}

// TestImportBuildFastExtra checks the extra attributes of a BuildFast import: every
// column but the ids and the one-to-one mapped ones, from the kept row of each build,
// 9999 read as missing in the columns where it means "undefined", and the two columns
// that leak the label refused by name.
func TestImportBuildFastExtra(t *testing.T) {
	h, rep, err := ImportBuildFast(context.Background(), "testdata/buildfast", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 117 columns: 3 ids, 3 mapped one to one (commits, line_added, line_deleted) and
	// the 2 refused ones are not attributes.
	if len(h.Extra) != 109 || !slices.IsSorted(h.Extra) {
		t.Fatalf("%d extra attributes (sorted: %v), want 109 sorted", len(h.Extra), slices.IsSorted(h.Extra))
	}
	for _, n := range []string{"id", "now_build_id", "build_id", "commits", "line_added", "line_deleted", "now_label", "now_duration"} {
		if slices.Contains(h.Extra, n) {
			t.Errorf("%s is an extra attribute", n)
		}
	}
	if len(rep.Refused) != 2 || !strings.HasPrefix(rep.Refused[0], "now_duration: ") || !strings.HasPrefix(rep.Refused[1], "now_label: ") {
		t.Errorf("Refused = %q, want now_duration and now_label", rep.Refused)
	}
	if s := rep.String(); !strings.Contains(s, "column refused: now_label") || !strings.Contains(s, "109 source columns kept") {
		t.Errorf("report summary does not say what was kept and refused:\n%s", s)
	}
	tests := []struct {
		change, attr string
		want         float64
	}{
		{"4937685", "fail_ratio_pr", 0.112},
		{"4937685", "time_interval", 4195},
		{"4937685", "commiter_exp", -1},
		{"4937685", "files_modified", 1},
		{"4937685", "last_fail_gap_avg", math.NaN()}, // 9999: no earlier failure
		{"4937685", "consec_fail_builds_max", 0},
		{"4937831", "last_fail_gap_max", 1},
		// Build 5015395 keeps its row paired with the later previous build.
		{"5015395", "fail_ratio_re", 0.2},
		{"5015395", "time_interval", 963},
		// 19421513 started 3 minutes after its previous build, which ran 428 s: the
		// attributes computed from earlier outcomes are missing, the others kept.
		{"19421513", "import_gum", 5},
		{"19421513", "time_interval", 3},
		{"19421513", "gaussian", math.NaN()},
		{"19421513", "fail_ratio_pr", math.NaN()},
		{"19421513", "last_label", math.NaN()},
		{"19421513", "pr_duration", math.NaN()},
		{"4937835", "pr_duration", 57}, // 12 minutes after a 57 s build
	}
	if rep.PreviousUnfinished != 1 {
		t.Errorf("PreviousUnfinished = %d, want 1 (19421513)", rep.PreviousUnfinished)
	}
	for _, tc := range tests {
		i := slices.IndexFunc(h.Changes, func(c Change) bool { return c.ChangeID == tc.change })
		if i < 0 {
			t.Fatalf("no change %s", tc.change)
		}
		if got := h.Changes[i].Extra.Get(tc.attr); !scalar.Same(got, tc.want) {
			t.Errorf("change %s %s = %v, want %v", tc.change, tc.attr, got, tc.want)
		}
	}
	if err := h.CheckExtra(); err != nil {
		t.Errorf("CheckExtra: %v", err)
	}
	// The attributes survive writing and strict reading in every format.
	for _, f := range []Format{FormatParquet, FormatArrow, FormatCSV} {
		dir := t.TempDir()
		if err := WriteHistory(context.Background(), dir, h, f); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadHistory(context.Background(), dir, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkEqualHistory(t, got, h)
	}
}
