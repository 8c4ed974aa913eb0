package datasets

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// buildFastColumns are the columns of a BuildFast file that the importer reads; the
// file must have all of them.
var buildFastColumns = []string{
	"now_build_id", "build_id", "now_label", "now_duration", "time_interval",
	"commits", "line_added", "line_deleted", "files_added", "files_deleted", "files_modified",
}

// buildFastSkip are the columns of a BuildFast file that are not extra attributes: the
// ids (id, now_build_id, build_id) and the columns mapped one to one onto the schema.
// now_label and now_duration are not listed: they are refused by name as leaking the
// label (CheckExtraName), and the report says so.
var buildFastSkip = map[string]bool{
	"id": true, "now_build_id": true, "build_id": true,
	"commits": true, "line_added": true, "line_deleted": true,
}

// buildFastUndefined are the BuildFast columns in which 9999 means "undefined" (no
// earlier failure): they are read as missing.
var buildFastUndefined = map[string]float64{
	"last_fail_gap_avg": 9999, "last_fail_gap_max": 9999, "last_fail_gap_sum": 9999,
	"consec_fail_builds_avg": 9999, "consec_fail_builds_max": 9999, "consec_fail_builds_sum": 9999,
}

// buildFastOutcomeHistory are the BuildFast columns computed from the outcomes of earlier
// builds, the previous build of the row (build_id) included: its status, label, test
// counts, errors and duration, and the failure ratios, gaps, streaks and file failure
// probabilities over the history up to it. They are missing for a build that started
// before its previous build finished (see previousFinished): a queue could not know
// that outcome at the build's start.
var buildFastOutcomeHistory = map[string]bool{
	"last_label": true, "pr_status": true, "pr_duration": true, "pr_tests_ok": true, "pr_tests_fail": true,
	"pr_depend_error": true, "pr_compile_error": true, "pr_test_exception": true, "pr_test_assert": true, "pr_other_error": true,
	"fail_ratio_pr": true, "fail_ratio_re": true, "fail_ratio_com_pr": true, "fail_ratio_com_re": true,
	"last_fail_gap_avg": true, "last_fail_gap_max": true, "last_fail_gap_sum": true,
	"consec_fail_builds_avg": true, "consec_fail_builds_max": true, "consec_fail_builds_sum": true,
	"file_fail_prob_max": true, "file_fail_prob_avg": true, "file_fail_prob_sum": true, "gaussian": true,
}

// previousFinished reports whether a BuildFast build certainly started after its
// previous build (build_id) finished: time_interval, the whole minutes between the two
// starts, is at least the previous build's pr_duration in seconds. When either is
// missing it cannot say, and reports false.
func previousFinished(intervalMin, prevDurationS float64) bool {
	return intervalMin*60 >= prevDurationS
}

// DerivedTimeOrigin is the time the derived clock of each BuildFast project starts at
// (ImportOptions.DeriveTimes): an arbitrary, obviously artificial date, so that derived
// times are never mistaken for recorded ones.
var DerivedTimeOrigin = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// buildFastRow is a BuildFast row parsed into what the importer keeps of it.
type buildFastRow struct {
	id, prev       int64 // now_build_id, build_id (the previous build of the pair)
	status         Status
	duration       float64
	intervalMin    float64 // time_interval: minutes from the previous build's start
	commits        float64
	added, deleted float64
	files          float64
	extra          []float64 // the file's extra attributes (extraColumns), in order
	prevUnfinished bool      // the outcome-history attributes were made missing
	line, row      int
}

// ImportBuildFast reads BuildFast CSV files (ci-data/buildfast) into a history: path is
// one file or a folder whose *.csv files are read in name order. A BuildFast file has
// one row per pair of a build and a previous build; rows are deduplicated on
// now_build_id, keeping the row of the latest previous build (the change since the
// build just before). Each build is one change with one build on an empty path, in
// now_build_id order per file. IMPORT.md has the column mapping and how
// ImportOptions.DeriveTimes derives times; a build with a derived start but no
// now_duration finishes opt.ImputedDuration after it. Every other column except the ids
// becomes an extra attribute (Change.Extra, History.Extra; 9999 in last_fail_gap_* and
// consec_fail_builds_* is missing), but now_label and now_duration, which leak the label
// and are refused by name (ImportReport.Refused). The attributes computed from earlier
// outcomes (buildFastOutcomeHistory) are missing for a build that started before its
// previous build finished (ImportReport.PreviousUnfinished), as the point-in-time rule
// of the features requires.
func ImportBuildFast(ctx context.Context, path string, opt ImportOptions) (*History, *ImportReport, error) {
	rep := &ImportReport{Source: "buildfast", Skipped: map[string]int{}, DerivedTimes: opt.DeriveTimes}
	if err := opt.check(); err != nil {
		return nil, rep, err
	}
	files, err := buildFastFiles(path)
	if err != nil {
		return nil, rep, err
	}
	h := &History{Changes: []Change{}, Builds: []Build{}}
	global := make(map[int64]string) // now_build_id -> file, across files
	for _, f := range files {
		if err := importBuildFastFile(ctx, f, opt, rep, h, global); err != nil {
			return nil, rep, err
		}
		rep.Files++
	}
	rep.finishExtra(h)
	rep.Changes, rep.Builds = len(h.Changes), len(h.Builds)
	return h, rep, nil
}

func buildFastFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.csv"))
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("datasets: %s: %w: no .csv files", path, ErrNoHistory)
	}
	sort.Strings(files)
	return files, nil
}

// buildFastRepo returns the repository of a BuildFast file named
// "<owner>@<repo>_newmerge.csv" as "owner/repo", or the file's base name without
// extension when it is named otherwise.
func buildFastRepo(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".csv")
	base = strings.TrimSuffix(base, "_newmerge")
	return strings.Replace(base, "@", "/", 1)
}

func importBuildFastFile(ctx context.Context, path string, opt ImportOptions, rep *ImportReport, h *History, global map[int64]string) error {
	repo := buildFastRepo(path)
	kept := make(map[int64]*buildFastRow)
	var extra extraColumns
	var history []int  // the attributes of buildFastOutcomeHistory
	prevDuration := -1 // the attribute pr_duration
	header := func(names []string) (err error) {
		extra, err = sourceExtra(path, names, buildFastSkip, rep)
		for k, c := range extra.cols {
			if buildFastOutcomeHistory[c] {
				history = append(history, k)
			}
			if c == "pr_duration" {
				prevDuration = k
			}
		}
		return err
	}
	err := scanSource(ctx, path, buildFastColumns, header, func(r *sourceRow) error {
		rep.RowsRead++
		if opt.Progress != nil && rep.RowsRead%4096 == 0 {
			opt.Progress(rep.RowsRead)
		}
		row, perr := parseBuildFastRow(r)
		if perr == nil {
			row.extra, perr = extra.values(r, buildFastUndefined)
		}
		if perr != nil {
			rep.skip(opt, perr)
			return nil
		}
		if len(history) > 0 && (prevDuration < 0 || !previousFinished(row.intervalMin, row.extra[prevDuration])) {
			for _, k := range history {
				row.extra[k] = nan
			}
			row.prevUnfinished = true
		}
		if other, ok := global[row.id]; ok && other != path {
			rep.skip(opt, r.problem("now_build_id", fmt.Errorf("%w: now_build_id %d is also in %s", ErrDuplicateID, row.id, other)))
			return nil
		}
		old, dup := kept[row.id]
		if !dup {
			kept[row.id] = row
			global[row.id] = path
			return nil
		}
		// Another pairing of a build already read: the build's own outcome must agree.
		if old.status != row.status || !sameNumber(old.duration, row.duration) {
			rep.skip(opt, r.problem("now_label", fmt.Errorf("%w: now_build_id %d has another now_label or now_duration on line %d", ErrDuplicateID, row.id, old.line)))
			return nil
		}
		rep.Merged++
		if row.prev > old.prev {
			kept[row.id] = row
		}
		return nil
	}, func(p *ParseError) {
		rep.RowsRead++
		rep.skip(opt, p)
	})
	if err != nil {
		return err
	}
	rows := make([]*buildFastRow, 0, len(kept))
	for _, r := range kept {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })

	var start map[int64]time.Time
	if opt.DeriveTimes {
		start = deriveBuildFastTimes(rows)
	}
	changeTemplate, buildTemplate := blank(changeFields), blank(buildFields)
	for _, r := range rows {
		id := strconv.FormatInt(r.id, 10)
		c, b := changeTemplate, buildTemplate
		c.ChangeID, c.Repo = id, repo
		c.Commits, c.LinesAdded, c.LinesRemoved, c.FilesChanged = r.commits, r.added, r.deleted, r.files
		if r.extra != nil {
			c.Extra = Extra{Names: extra.names, Values: r.extra}
		}
		if r.prevUnfinished {
			rep.PreviousUnfinished++
		}
		b.BuildID, b.Repo, b.ChangeID = id, repo, id
		b.SpeculationHeight = 0
		b.DurationS = r.duration
		b.Status = r.status
		if t, ok := start[r.id]; ok {
			c.SubmittedAt = t
			b.StartedAt = t
			if !math.IsNaN(r.duration) {
				b.FinishedAt = t.Add(time.Duration(r.duration * float64(time.Second)))
			}
			rep.imputeFinish(opt, &b)
		}
		h.Changes = append(h.Changes, c)
		h.Builds = append(h.Builds, b)
	}
	return nil
}

// deriveBuildFastTimes gives each build of one file (sorted by id) a derived start: the
// first build starts at DerivedTimeOrigin; a later one time_interval minutes after the
// start of its previous build (the build_id of its row) when that build is in the file,
// otherwise time_interval minutes after the build just before it. A build whose
// time_interval is missing gets no time.
func deriveBuildFastTimes(rows []*buildFastRow) map[int64]time.Time {
	start := make(map[int64]time.Time, len(rows))
	var last time.Time
	for _, r := range rows {
		var t time.Time
		if math.IsNaN(r.intervalMin) {
			continue
		}
		switch prev, ok := start[r.prev]; {
		case last.IsZero():
			t = DerivedTimeOrigin
		case ok:
			t = prev.Add(time.Duration(r.intervalMin * float64(time.Minute)))
		default:
			t = last.Add(time.Duration(r.intervalMin * float64(time.Minute)))
		}
		start[r.id] = t
		last = t
	}
	return start
}

func sameNumber(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

func parseBuildFastRow(r *sourceRow) (*buildFastRow, *ParseError) {
	row := &buildFastRow{line: r.line, row: r.row}
	var err error
	if row.id, err = strconv.ParseInt(r.get("now_build_id"), 10, 64); err != nil {
		return nil, r.problem("now_build_id", fmt.Errorf("%w: %q is not a build id", ErrInvalidValue, r.get("now_build_id")))
	}
	if row.prev, err = strconv.ParseInt(r.get("build_id"), 10, 64); err != nil {
		return nil, r.problem("build_id", fmt.Errorf("%w: %q is not a build id", ErrInvalidValue, r.get("build_id")))
	}
	switch r.get("now_label") {
	case "1":
		row.status = StatusSucceeded
	case "0":
		row.status = StatusFailed
	default:
		return nil, r.problem("now_label", fmt.Errorf("%w: now_label %q (want 1 or 0)", ErrInvalidValue, r.get("now_label")))
	}
	var perr *ParseError
	if row.duration, perr = r.number("now_duration"); perr != nil {
		return nil, perr
	}
	if row.duration < 0 {
		return nil, r.problem("now_duration", fmt.Errorf("%w: duration %v is negative", ErrInvalidValue, row.duration))
	}
	if row.intervalMin, perr = r.number("time_interval"); perr != nil {
		return nil, perr
	}
	if row.intervalMin < 0 {
		return nil, r.problem("time_interval", fmt.Errorf("%w: interval %v is negative", ErrInvalidValue, row.intervalMin))
	}
	if row.commits, perr = r.count("commits"); perr != nil {
		return nil, perr
	}
	if row.added, perr = r.count("line_added"); perr != nil {
		return nil, perr
	}
	if row.deleted, perr = r.count("line_deleted"); perr != nil {
		return nil, perr
	}
	for _, col := range []string{"files_added", "files_deleted", "files_modified"} {
		v, perr := r.count(col)
		if perr != nil {
			return nil, perr
		}
		row.files += v
	}
	return row, nil
}
