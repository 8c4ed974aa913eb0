package datasets

import (
	"context"
	"fmt"
	"time"
)

// travisTorrentColumns are the columns of the TravisTorrent subset that the importer
// reads; the file must have all of them.
var travisTorrentColumns = []string{
	"tr_build_id", "tr_status", "author_mail", "git_commit", "gh_project_name", "tr_started_at",
	"gh_files_added", "gh_files_deleted", "gh_files_modified",
}

// travisTorrentSkip are the columns of the TravisTorrent subset that are not extra
// attributes: ids and strings. Its other columns (gh_src_churn and the three
// gh_files_* counts) are kept as extra attributes; tr_status is mapped onto the status.
var travisTorrentSkip = map[string]bool{
	"tr_build_id": true, "tr_status": true, "author_mail": true, "git_commit": true,
	"gh_project_name": true, "tr_started_at": true,
}

// travisTimeLayout is how TravisTorrent writes tr_started_at, in UTC.
const travisTimeLayout = "2006-01-02 15:04:05"

// travisStatus maps tr_status to a build status. Travis "errored" means a command of
// the install phase failed, before the tests ran: ImportOptions.Errored decides
// (StatusUnknown here stands for it). "canceled" builds were stopped, like aborted ones.
var travisStatus = map[string]Status{
	"passed":   StatusSucceeded,
	"failed":   StatusFailed,
	"errored":  StatusUnknown,
	"canceled": StatusAborted,
}

// ImportTravisTorrent reads the TravisTorrent subset CSV at path (builds.csv of
// ci-data/travistorrent-mmse) into a history: each Travis build is one change with one
// build on an empty path. IMPORT.md has the column mapping. "errored" builds get
// opt.Errored, and every build finishes opt.ImputedDuration after its start (the source
// records no finish). The numeric columns that are not ids (gh_src_churn and the
// gh_files_* counts) are kept as extra attributes (Change.Extra, History.Extra). Rows
// with problems are skipped and counted by reason in the report; a missing column, a
// malformed file or invalid options are an error.
func ImportTravisTorrent(ctx context.Context, path string, opt ImportOptions) (*History, *ImportReport, error) {
	rep := &ImportReport{Source: "travistorrent", Files: 1, Skipped: map[string]int{}, Errored: opt.errored()}
	if err := opt.check(); err != nil {
		return nil, rep, err
	}
	h := &History{Changes: []Change{}, Builds: []Build{}}
	seen := make(map[string]bool)
	changeTemplate, buildTemplate := blank(changeFields), blank(buildFields)
	var extra extraColumns
	header := func(names []string) (err error) {
		extra, err = sourceExtra(path, names, travisTorrentSkip, rep)
		return err
	}
	err := scanSource(ctx, path, travisTorrentColumns, header, func(r *sourceRow) error {
		rep.RowsRead++
		if opt.Progress != nil && rep.RowsRead%4096 == 0 {
			opt.Progress(rep.RowsRead)
		}
		c, b := changeTemplate, buildTemplate
		id := r.get("tr_build_id")
		if id == "" {
			rep.skip(opt, r.problem("tr_build_id", fmt.Errorf("%w: missing id", ErrInvalidValue)))
			return nil
		}
		if seen[id] {
			rep.skip(opt, r.problem("tr_build_id", fmt.Errorf("%w: tr_build_id %q", ErrDuplicateID, id)))
			return nil
		}
		st, ok := travisStatus[r.get("tr_status")]
		if !ok {
			rep.skip(opt, r.problem("tr_status", fmt.Errorf("%w: tr_status %q (want passed, failed, errored or canceled)", ErrInvalidValue, r.get("tr_status"))))
			return nil
		}
		if st == StatusUnknown {
			st = opt.errored()
		}
		var started time.Time
		if s := r.get("tr_started_at"); s != "" {
			t, err := time.Parse(travisTimeLayout, s)
			if err != nil {
				rep.skip(opt, r.problem("tr_started_at", fmt.Errorf("%w: %q is not a time like 2012-03-01 22:25:44", ErrInvalidValue, s)))
				return nil
			}
			started = t.UTC()
		}
		var files float64
		for _, col := range []string{"gh_files_added", "gh_files_deleted", "gh_files_modified"} {
			v, perr := r.count(col)
			if perr != nil {
				rep.skip(opt, perr)
				return nil
			}
			files += v // NaN when any part is missing
		}
		ev, perr := extra.values(r, nil)
		if perr != nil {
			rep.skip(opt, perr)
			return nil
		}
		if ev != nil {
			c.Extra = Extra{Names: extra.names, Values: ev}
		}
		seen[id] = true
		c.ChangeID = id
		c.Repo = r.get("gh_project_name")
		c.RevisionID = r.get("git_commit")
		c.Author = r.get("author_mail")
		c.SubmittedAt = started
		c.FilesChanged = files
		b.BuildID = id
		b.Repo = c.Repo
		b.ChangeID = id
		b.SpeculationHeight = 0
		b.StartedAt = started
		b.Status = st
		rep.imputeFinish(opt, &b)
		h.Changes = append(h.Changes, c)
		h.Builds = append(h.Builds, b)
		return nil
	}, func(p *ParseError) {
		rep.RowsRead++
		rep.skip(opt, p)
	})
	if err != nil {
		return nil, rep, err
	}
	rep.finishExtra(h)
	rep.Changes, rep.Builds = len(h.Changes), len(h.Builds)
	return h, rep, nil
}
