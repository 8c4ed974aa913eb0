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
	line, row      int
}

// ImportBuildFast reads BuildFast CSV files (ci-data/buildfast) into a history: path is
// one file or a folder whose *.csv files are read in name order. A BuildFast file has
// one row per pair of a build and a previous build; rows are deduplicated on
// now_build_id, keeping the row of the latest previous build (the change since the
// build just before). Each build is one change with one build on an empty path, in
// now_build_id order per file. IMPORT.md has the column mapping and how
// ImportOptions.DeriveTimes derives times; a build with a derived start but no
// now_duration finishes opt.ImputedDuration after it.
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
	err := scanSource(ctx, path, buildFastColumns, func(r *sourceRow) error {
		rep.RowsRead++
		if opt.Progress != nil && rep.RowsRead%4096 == 0 {
			opt.Progress(rep.RowsRead)
		}
		row, perr := parseBuildFastRow(r)
		if perr != nil {
			rep.skip(opt, perr)
			return nil
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
