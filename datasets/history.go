package datasets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The table names of a history; the file of a table is <name>.<format>.
const (
	TableChanges = "changes"
	TableBuilds  = "builds"
	TablePairs   = "pairs"
)

// DefaultMaxProblems is the number of problems a read collects when
// ReadOptions.MaxProblems is zero.
const DefaultMaxProblems = 100

// ReadOptions configure ReadHistory. The zero value is a strict read.
type ReadOptions struct {
	// Lenient skips every row with a problem (and every build or pair naming a skipped
	// change) and counts it by reason in the Report, instead of failing. A problem
	// with the file itself (a missing required column, a column of the wrong type, a
	// malformed CSV file) fails the read in both modes.
	Lenient bool
	// MaxProblems is how many problems are collected: a strict read stops at this
	// many; a lenient read keeps this many as examples in the Report and counts the
	// rest. Zero means DefaultMaxProblems.
	MaxProblems int
	// Progress, when not nil, is called after each batch of rows with the table and
	// the number of its rows read so far.
	Progress func(table string, rows int)
}

// Report says what a read found: rows per table, skipped rows by reason, problems.
type Report struct {
	Format Format
	Tables []TableReport // changes, builds and, when present, pairs
	// Problems are the first problems found, at most ReadOptions.MaxProblems.
	Problems []*ParseError
	// NProblems is the number of problems found, including those not in Problems.
	NProblems int
}

// TableReport is what a read found in one table file.
type TableReport struct {
	Table string // TableChanges, TableBuilds or TablePairs
	Path  string
	Rows  int // data rows in the file
	Kept  int // rows returned
	// Skipped counts the rows a lenient read skipped, by reason: the text of the
	// sentinel error of the row's first problem (for example "negative count").
	Skipped map[string]int
	// Absent lists the optional columns the file does not have; their values are
	// missing in every row.
	Absent []string
	// Ignored lists the columns of the file that are not part of the schema.
	Ignored []string
	// Extra lists the extra attributes the file holds (its x_* columns, without the
	// prefix; History.Extra); only a changes table has them.
	Extra []string
}

// NSkipped returns the number of rows skipped for any reason.
func (t *TableReport) NSkipped() int {
	n := 0
	for _, v := range t.Skipped {
		n += v
	}
	return n
}

// String summarises the report in a few lines: rows per table, skipped rows by reason,
// absent and ignored columns, and the number of problems.
func (r *Report) String() string {
	var b strings.Builder
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "%s: %d rows read, %d kept, %d skipped (%s)\n", t.Table, t.Rows, t.Kept, t.NSkipped(), t.Path)
		for _, reason := range sortedKeys(t.Skipped) {
			fmt.Fprintf(&b, "  skipped %d: %s\n", t.Skipped[reason], reason)
		}
		if len(t.Absent) > 0 {
			fmt.Fprintf(&b, "  absent columns (all values missing): %s\n", strings.Join(t.Absent, ", "))
		}
		if len(t.Ignored) > 0 {
			fmt.Fprintf(&b, "  ignored columns: %s\n", strings.Join(t.Ignored, ", "))
		}
		if len(t.Extra) > 0 {
			fmt.Fprintf(&b, "  extra attributes (x_* columns, features of success and build-time rows): %d\n", len(t.Extra))
		}
	}
	fmt.Fprintf(&b, "problems: %d\n", r.NProblems)
	return b.String()
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// reasons are the sentinels a problem is counted under, most specific first.
var reasons = []error{ErrLeakingColumn, ErrMissingColumn, ErrUnknownColumn, ErrDuplicateColumn, ErrUnsupportedType, ErrDuplicateID, ErrSkippedChange, ErrUnknownChange, ErrNegativeCount, ErrTimeOrder, ErrInvalidValue}

// reason returns the text of the sentinel err wraps, for counting problems.
func reason(err error) string {
	for _, s := range reasons {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return err.Error()
}

// DetectFormat returns the format of the history in dir: the one format for which
// dir holds a changes file.
func DetectFormat(dir string) (Format, error) {
	var found []Format
	for f := range Format(len(formatNames)) {
		if _, err := os.Stat(filepath.Join(dir, TableChanges+f.Ext())); err == nil {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("datasets: %s: %w: no changes.parquet, changes.arrow or changes.csv", dir, ErrNoHistory)
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("datasets: %s: %w: changes tables in %d formats (%v, %v)", dir, ErrUnknownFormat, len(found), found[0], found[1])
}

// ReadHistory reads the history in dir, in the format DetectFormat finds, and validates
// it. A strict read (the default) returns a *ProblemsError listing up to MaxProblems
// problems if there is any; a lenient read skips the rows with problems and counts them
// in the Report. Each problem is a *ParseError naming the file, row (and CSV line) and
// column. The Report is returned whenever the files could be read, also with a
// *ProblemsError.
//
// The checks: required columns present; every cell parses as its column's type (a
// number, an RFC 3339 time in CSV, true or false); counts are whole and not negative,
// durations, tenure and truth sigma not negative, probabilities in [0, 1], numbers
// finite; outcome and status are known names (status must not be missing); change,
// build and pair ids are present and change and build ids unique; a build's change and
// every entry of its path, and both changes of a pair, are in the changes table;
// finished_at is not before started_at and decided_at not before submitted_at; the
// extra attribute columns (ExtraPrefix) have valid names that do not leak the label (a
// problem wrapping ErrLeakingColumn names such a column) and finite numbers. Their
// names, without the prefix, become History.Extra and their values each change's
// Extra.
func ReadHistory(ctx context.Context, dir string, opt ReadOptions) (*History, *Report, error) {
	return readHistory(ctx, dir, opt, memory.DefaultAllocator)
}

func readHistory(ctx context.Context, dir string, opt ReadOptions, mem memory.Allocator) (*History, *Report, error) {
	format, err := DetectFormat(dir)
	if err != nil {
		return nil, nil, err
	}
	if opt.MaxProblems <= 0 {
		opt.MaxProblems = DefaultMaxProblems
	}
	hr := &historyReader{opt: opt, mem: mem, rep: &Report{Format: format}}
	h := &History{}

	changes := newTableReader(hr, TableChanges, filepath.Join(dir, TableChanges+format.Ext()), changeFields)
	// ids holds every change id read: idKept, or idSkipped for an id whose rows were
	// all skipped.
	ids := make(map[string]idState)
	changes.sizeHint = func(n int) { ids = make(map[string]idState, n) }
	changes.check = func(r *Change, problem func(string, error)) {
		if _, dup := ids[r.ChangeID]; dup {
			problem("change_id", fmt.Errorf("%w: change_id %q", ErrDuplicateID, r.ChangeID))
		}
		if !r.DecidedAt.IsZero() && !r.SubmittedAt.IsZero() && r.DecidedAt.Before(r.SubmittedAt) {
			problem("decided_at", fmt.Errorf("%w: decided_at %s before submitted_at %s", ErrTimeOrder, formatTime(r.DecidedAt), formatTime(r.SubmittedAt)))
		}
	}
	changes.done = func(r *Change, ok bool) {
		switch {
		case r.ChangeID == "":
		case ok || !opt.Lenient:
			// A strict read skips nothing: a change with a problem is still there
			// for the builds that name it.
			ids[r.ChangeID] = idKept
		case ids[r.ChangeID] != idKept:
			ids[r.ChangeID] = idSkipped
		}
	}
	var block nanBlock
	changes.extra = func(names []string) (map[int]field[Change], *ParseError) {
		fields, perr := extraFields(names, &h.Extra)
		block.width = len(h.Extra)
		return fields, perr
	}
	changes.newRow = func(r *Change) {
		if len(h.Extra) > 0 {
			r.Extra = Extra{Names: h.Extra, Values: block.next()}
		}
	}
	if h.Changes, err = changes.read(ctx); err != nil {
		return nil, hr.report(), err
	}
	hr.rep.Tables[len(hr.rep.Tables)-1].Extra = h.Extra
	if hr.truncated {
		return nil, hr.report(), hr.problems()
	}

	// refErr says what is wrong with a reference to change id, nil when nothing is.
	// what names the reference; entry >= 0 is its index in a path.
	var recent recentIDs
	refErr := func(what string, entry int, id string) error {
		if recent.has(id) {
			return nil
		}
		state := ids[id]
		if state == idKept {
			recent.add(id)
			return nil
		}
		if entry >= 0 {
			what = fmt.Sprintf("%s entry %d", what, entry)
		}
		if state == idSkipped {
			return fmt.Errorf("%w: %s %q", ErrSkippedChange, what, id)
		}
		return fmt.Errorf("%w: %s %q is not in the changes table", ErrUnknownChange, what, id)
	}
	builds := newTableReader(hr, TableBuilds, filepath.Join(dir, TableBuilds+format.Ext()), buildFields)
	dups := newIDSet(func() []string {
		// The ids before the row being checked (the last of builds.rows).
		prev := builds.rows[:len(builds.rows)-1]
		ids := make([]string, len(prev))
		for i := range prev {
			ids[i] = prev[i].BuildID
		}
		return ids
	})
	builds.sizeHint = func(n int) { dups.sizeHint = n }
	builds.done = func(r *Build, ok bool) {
		if !ok {
			dups.dropped = append(dups.dropped, r.BuildID)
		}
	}
	builds.check = func(r *Build, problem func(string, error)) {
		if dups.seen(r.BuildID) {
			problem("build_id", fmt.Errorf("%w: build_id %q", ErrDuplicateID, r.BuildID))
		}
		if r.ChangeID != "" {
			if err := refErr("change_id", -1, r.ChangeID); err != nil {
				problem("change_id", err)
			}
		}
		for k, id := range r.Path {
			if err := refErr("path", k, id); err != nil {
				problem("path", err)
				break
			}
		}
		if !r.FinishedAt.IsZero() && !r.StartedAt.IsZero() && r.FinishedAt.Before(r.StartedAt) {
			problem("finished_at", fmt.Errorf("%w: finished_at %s before started_at %s", ErrTimeOrder, formatTime(r.FinishedAt), formatTime(r.StartedAt)))
		}
	}
	if h.Builds, err = builds.read(ctx); err != nil {
		return nil, hr.report(), err
	}
	if hr.truncated {
		return nil, hr.report(), hr.problems()
	}

	pairsPath := filepath.Join(dir, TablePairs+format.Ext())
	if _, err := os.Stat(pairsPath); err == nil {
		pairs := newTableReader(hr, TablePairs, pairsPath, pairFields)
		pairs.check = func(r *Pair, problem func(string, error)) {
			if r.AheadChangeID != "" {
				if err := refErr("ahead_change_id", -1, r.AheadChangeID); err != nil {
					problem("ahead_change_id", err)
				}
			}
			if r.BehindChangeID != "" {
				if err := refErr("behind_change_id", -1, r.BehindChangeID); err != nil {
					problem("behind_change_id", err)
				}
			}
		}
		if h.Pairs, err = pairs.read(ctx); err != nil {
			return nil, hr.report(), err
		}
	}
	if !opt.Lenient && hr.rep.NProblems > 0 {
		return nil, hr.report(), hr.problems()
	}
	return h, hr.report(), nil
}

// extraFields returns the fields of the extra attribute columns (ExtraPrefix) among a
// changes file's column names, by column index, and sets *extra to their names in
// increasing order; a column whose name CheckExtraName refuses is a problem.
func extraFields(names []string, extra *[]string) (map[int]field[Change], *ParseError) {
	col := map[string]int{}
	for j, n := range names {
		if a, ok := strings.CutPrefix(n, ExtraPrefix); ok {
			if err := CheckExtraName(a); err != nil {
				return nil, &ParseError{Column: n, Err: fmt.Errorf("extra attribute: %w", err)}
			}
			col[a] = j
			*extra = append(*extra, a)
		}
	}
	sort.Strings(*extra)
	out := make(map[int]field[Change], len(col))
	for k, a := range *extra {
		out[col[a]] = numField(ExtraPrefix+a, func(r *Change) *float64 { return &r.Extra.Values[k] })
	}
	return out, nil
}

// idSet finds repeated ids. While the ids come in increasing order (synthetic and
// most exported histories) a repeat can only be the id just before, so no set is
// needed; at the first id out of order it builds a map from the ids read so far (the
// rows kept, from kept, and the rows dropped) and uses it from then on. This halves the
// cost of reading a large builds table.
type idSet struct {
	last     string
	started  bool
	m        map[string]struct{}
	kept     func() []string
	dropped  []string // ids of rows with problems, which kept does not return
	sizeHint int
}

func newIDSet(kept func() []string) *idSet { return &idSet{kept: kept} }

// seen records id and reports whether it was seen before.
func (s *idSet) seen(id string) bool {
	if s.m == nil {
		switch {
		case !s.started || id > s.last:
			s.started, s.last = true, id
			return false
		case id == s.last:
			return true
		}
		s.m = make(map[string]struct{}, max(s.sizeHint, 1024))
		for _, k := range s.kept() {
			s.m[k] = struct{}{}
		}
		for _, k := range s.dropped {
			s.m[k] = struct{}{}
		}
	}
	// One map operation: the id is new when the insert grows the map.
	n := len(s.m)
	s.m[id] = struct{}{}
	return len(s.m) == n
}

// idState is what a read knows of a change id.
type idState uint8

const (
	idUnknown idState = iota // not in the changes table
	idKept
	idSkipped // all of its rows were skipped (lenient reading)
)

// recentIDs remembers the last few change ids found in the changes table. Builds name
// the same few recent changes over and over (a change's builds are adjacent, and paths
// hold the changes just ahead), so most references are checked without a map lookup.
type recentIDs struct {
	ids  [16]string
	next int
}

func (r *recentIDs) has(id string) bool {
	for i := range r.ids {
		if r.ids[i] == id && id != "" {
			return true
		}
	}
	return false
}

func (r *recentIDs) add(id string) {
	r.ids[r.next] = id
	r.next = (r.next + 1) % len(r.ids)
}

// historyReader holds the state shared by the tables of one read.
type historyReader struct {
	opt       ReadOptions
	mem       memory.Allocator
	rep       *Report
	truncated bool
}

func (hr *historyReader) report() *Report { return hr.rep }

func (hr *historyReader) problems() error {
	return &ProblemsError{Problems: hr.rep.Problems, Truncated: hr.truncated}
}

// errStop ends a strict scan at the problem limit.
var errStop = errors.New("problem limit reached")

// add records a problem; it returns errStop when a strict read must stop.
func (hr *historyReader) add(p *ParseError) error {
	hr.rep.NProblems++
	if len(hr.rep.Problems) < hr.opt.MaxProblems {
		hr.rep.Problems = append(hr.rep.Problems, p)
	}
	if !hr.opt.Lenient && hr.rep.NProblems >= hr.opt.MaxProblems {
		hr.truncated = true
		return errStop
	}
	return nil
}

// rowState collects the problems of the row being read.
type rowState struct {
	path  string
	b     *batch
	hr    *historyReader
	i     int    // the batch row
	first error  // the row's first problem
	stop  *error // set to errStop when a strict read must stop
}

func (rs *rowState) problem(column string, err error) {
	if rs.first == nil {
		rs.first = err
	}
	if *rs.stop == nil {
		*rs.stop = rs.hr.add(&ParseError{Path: rs.path, Line: rs.b.line(rs.i), Row: rs.b.row(rs.i), Column: column, Err: err})
	}
}

// tableReader reads one table file into rows of type T.
type tableReader[T any] struct {
	hr     *historyReader
	table  string
	path   string
	fields []field[T]
	// check runs the row-level checks of a decoded row, reporting each problem.
	check func(r *T, problem func(column string, err error))
	// done is told whether a row had no problem (after check).
	done func(r *T, ok bool)
	// sizeHint, when not nil, is told the number of rows when the file says it.
	sizeHint func(rows int)
	// rows are the rows kept so far; while check runs, the last one is the row being
	// checked.
	rows []T
	// extra, when not nil, takes columns of the file that are not in fields as extra
	// fields: it is called once with the file's column names and returns a field for
	// each column it takes, by column index, or the problem of a column it refuses.
	extra func(names []string) (map[int]field[T], *ParseError)
	// newRow, when not nil, prepares each row appended from the template before its
	// cells are decoded (the extra fields decode into storage it sets).
	newRow func(r *T)
}

func newTableReader[T any](hr *historyReader, table, path string, fields []field[T]) *tableReader[T] {
	return &tableReader[T]{hr: hr, table: table, path: path, fields: fields}
}

func (tr *tableReader[T]) read(ctx context.Context) ([]T, error) {
	hr := tr.hr
	rep := TableReport{Table: tr.table, Path: tr.path, Skipped: map[string]int{}}
	defer func() { hr.rep.Tables = append(hr.rep.Tables, rep) }()
	if _, err := os.Stat(tr.path); err != nil {
		return nil, fmt.Errorf("datasets: %w: %w", ErrNoHistory, err)
	}
	colOf := make([]int, len(tr.fields)) // file column of each field, -1 when absent
	var names []string
	template := blank(tr.fields)
	tr.rows = []T{}
	skip := func(err error) {
		rep.Skipped[reason(err)]++
	}
	headerLine := 0 // the line of header problems: 1 in CSV files
	if f, err := formatOf(tr.path); err == nil && f == FormatCSV {
		headerLine = 1
	}
	sc := &scanner{path: tr.path, mem: hr.mem}
	sc.sizeHint = func(n int) {
		tr.rows = make([]T, 0, n)
		if tr.sizeHint != nil {
			tr.sizeHint(n)
		}
	}
	sc.header = func(fileNames []string, _ []arrow.DataType) error {
		names = fileNames
		index := make(map[string]int, len(names))
		for j, n := range names {
			if _, dup := index[n]; dup {
				return &ParseError{Path: tr.path, Line: headerLine, Row: -1, Column: n, Err: ErrDuplicateColumn}
			}
			index[n] = j
		}
		var missing []*ParseError
		known := make(map[string]bool, len(tr.fields))
		for k := range tr.fields {
			known[tr.fields[k].name] = true
		}
		var taken map[int]field[T]
		if tr.extra != nil {
			var perr *ParseError
			if taken, perr = tr.extra(names); perr != nil {
				perr.Path, perr.Line, perr.Row = tr.path, headerLine, -1
				hr.add(perr)
				return &ProblemsError{Problems: []*ParseError{perr}}
			}
		}
		for j, n := range names {
			if _, ok := taken[j]; !known[n] && !ok {
				rep.Ignored = append(rep.Ignored, n)
			}
		}
		for k := range tr.fields {
			f := &tr.fields[k]
			j, ok := index[f.name]
			if !ok {
				j = -1
				if f.required {
					err := ErrMissingColumn
					if hint := didYouMean(f.name, rep.Ignored); hint != "" {
						err = fmt.Errorf("%w%s", ErrMissingColumn, hint)
					}
					missing = append(missing, &ParseError{Path: tr.path, Line: headerLine, Row: -1, Column: f.name, Err: err})
				} else {
					rep.Absent = append(rep.Absent, f.name)
				}
			}
			colOf[k] = j
		}
		// A copy: fields is the package's schema, shared by every read.
		tr.fields = slices.Clip(tr.fields)
		for j := range names {
			if f, ok := taken[j]; ok {
				tr.fields = append(tr.fields, f)
				colOf = append(colOf, j)
			}
		}
		// An unknown column next to an absent one it is a typo of is a problem (issue
		// 15): otherwise the feature reads as missing in every row without a word.
		for _, n := range rep.Ignored {
			if c, ok := ClosestColumn(n, rep.Absent); ok {
				if err := hr.add(&ParseError{Path: tr.path, Line: headerLine, Row: -1, Column: n,
					Err: fmt.Errorf("%w: not in the %s schema, and %s is absent (did you mean %s?)", ErrUnknownColumn, tr.table, c, c)}); err != nil {
					return err
				}
			}
		}
		if len(missing) > 0 {
			for _, p := range missing {
				hr.add(p)
			}
			return &ProblemsError{Problems: missing}
		}
		return nil
	}
	var stop error
	sc.batch = func(b *batch) error {
		for k := range tr.fields {
			if j := colOf[k]; j >= 0 {
				if err := b.cols[j].prepare(tr.fields[k].kind); err != nil {
					return &ParseError{Path: tr.path, Row: -1, Column: tr.fields[k].name, Err: err}
				}
			}
		}
		rs := &rowState{path: tr.path, b: b, hr: hr, stop: &stop}
		problem := rs.problem // one func value per batch, not per row
		if cap(tr.rows)-len(tr.rows) < b.n {
			// Double, rather than append's 1.25 for large slices: a CSV or Arrow
			// table of unknown length is copied fewer times.
			tr.rows = slices.Grow(tr.rows, max(cap(tr.rows), b.n))
		}
		for i := range b.n {
			// Decode in place at the end of tr.rows, so that no row is allocated alone.
			tr.rows = append(tr.rows, template)
			r := &tr.rows[len(tr.rows)-1]
			if tr.newRow != nil {
				tr.newRow(r)
			}
			rs.i, rs.first = i, nil
			for k := range tr.fields {
				if j := colOf[k]; j >= 0 {
					if err := tr.fields[k].decode(b.cols[j], i, r); err != nil {
						problem(tr.fields[k].name, err)
					}
				}
			}
			if tr.check != nil {
				tr.check(r, problem)
			}
			rep.Rows++
			if tr.done != nil {
				tr.done(r, rs.first == nil)
			}
			if rs.first != nil {
				skip(rs.first)
				tr.rows = tr.rows[:len(tr.rows)-1]
			}
			if stop != nil {
				return stop
			}
		}
		if hr.opt.Progress != nil {
			hr.opt.Progress(tr.table, rep.Rows)
		}
		return nil
	}
	sc.badRow = func(row, line int, err error) error {
		rep.Rows++
		skip(err)
		return hr.add(&ParseError{Path: tr.path, Line: line, Row: row, Err: err})
	}
	err := sc.scan(ctx)
	rep.Kept = len(tr.rows)
	if !hr.opt.Lenient {
		// A strict read returns no rows, so none are skipped.
		rep.Skipped = map[string]int{}
	}
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return tr.rows, nil
}

// WriteHistory writes h to dir (created if needed) as changes.<ext>, builds.<ext> and,
// when h.Pairs is not nil, pairs.<ext> (an existing pairs file of that format is removed
// when h.Pairs is nil). Each file is written atomically. The output is deterministic:
// the same History gives byte-identical files. Columns are written in the schema order,
// the truth columns (true_p_success, true_mu_s, true_sigma_s) only when some row has a
// value, and the extra attributes (History.Extra) last, as x_<name> columns: their names
// must pass CheckExtraName and every change must have those attributes or none (see
// History.CheckExtra). Times are written to the microsecond.
func WriteHistory(ctx context.Context, dir string, h *History, format Format) error {
	return writeHistory(ctx, dir, h, format, memory.DefaultAllocator)
}

func writeHistory(ctx context.Context, dir string, h *History, format Format, mem memory.Allocator) error {
	if int(format) >= len(formatNames) {
		return fmt.Errorf("datasets: %w %v", ErrUnknownFormat, format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err := h.CheckExtra(); err != nil {
		return err
	}
	if err := writeRows(ctx, filepath.Join(dir, TableChanges+format.Ext()), format, h.Changes, changeFields, mem, extraCols(h)...); err != nil {
		return err
	}
	if err := writeRows(ctx, filepath.Join(dir, TableBuilds+format.Ext()), format, h.Builds, buildFields, mem); err != nil {
		return err
	}
	pairsPath := filepath.Join(dir, TablePairs+format.Ext())
	if h.Pairs == nil {
		if err := os.Remove(pairsPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("datasets: %w", err)
		}
		return nil
	}
	return writeRows(ctx, pairsPath, format, h.Pairs, pairFields, mem)
}

func writeRows[T any](ctx context.Context, path string, format Format, rows []T, fields []field[T], mem memory.Allocator, extra ...wcol) error {
	cols := make([]wcol, 0, len(fields)+len(extra))
	for k := range fields {
		if fields[k].truth && !fields[k].present(rows) {
			continue
		}
		cols = append(cols, fields[k].wcol(rows))
	}
	cols = append(cols, extra...)
	return writeTable(ctx, path, format, len(rows), cols, mem)
}

// extraCols returns the columns that write the extra attributes of h's changes, after
// the schema's columns, in the order of h.Extra.
func extraCols(h *History) []wcol {
	cols := make([]wcol, len(h.Extra))
	for k, name := range h.Extra {
		cols[k] = wcol{name: ExtraPrefix + name, kind: kFloat, float: func(i int) float64 {
			return h.Changes[i].Extra.extraValue(h.Extra, k, name)
		}}
	}
	return cols
}
