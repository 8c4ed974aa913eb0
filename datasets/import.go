package datasets

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultImputedDuration is the build time an importer assumes for a build with a start
// but no finish time (ImportOptions.ImputedDuration): one hour, longer than 94% of
// BuildFast's Travis builds (p95 4,186 s, median 466 s over its 31,927 builds) and than
// all 1,797 TravisTorrent builds BuildFast also records (their p95 is 860 s). A long
// guess errs on the safe side: an outcome counted as known too late only hides a result
// from the next builds' features, one counted too early leaks it into them.
const DefaultImputedDuration = time.Hour

// ImportOptions configure the importers of real CI histories.
type ImportOptions struct {
	// DeriveTimes makes ImportBuildFast fill submitted_at, started_at and finished_at
	// with derived times (see IMPORT.md): BuildFast has no absolute timestamps, only
	// minutes since a previous build. Off, those columns stay missing. Other importers
	// ignore it.
	DeriveTimes bool
	// MaxProblems is how many problems the report keeps as examples; zero means
	// DefaultMaxProblems. Every problem is counted.
	MaxProblems int
	// Progress, when not nil, is called now and then with the number of source rows
	// read so far.
	Progress func(rows int)
	// Errored is the status TravisTorrent's "errored" builds get: StatusFailed (also
	// what the zero value StatusUnknown means) or StatusInfraFailed. IMPORT.md says why
	// failed is the default. Other importers ignore it (BuildFast's now_label already
	// counts errored builds as failed).
	Errored Status
	// ImputedDuration is how long after its start a build without a finish time is
	// taken to have finished: such a build gets finished_at = started_at +
	// ImputedDuration (duration_s stays missing), so that its outcome counts as known
	// then, not at its start. Zero means DefaultImputedDuration; it must not be
	// negative.
	ImputedDuration time.Duration
}

// check reports options no importer can follow.
func (o ImportOptions) check() error {
	switch o.Errored {
	case StatusUnknown, StatusFailed, StatusInfraFailed:
	default:
		return fmt.Errorf("datasets: import option Errored = %v (want failed or infra_failed)", o.Errored)
	}
	if o.ImputedDuration < 0 {
		return fmt.Errorf("datasets: import option ImputedDuration = %v is negative", o.ImputedDuration)
	}
	return nil
}

// errored returns the status of a Travis "errored" build under o.
func (o ImportOptions) errored() Status {
	if o.Errored == StatusUnknown {
		return StatusFailed
	}
	return o.Errored
}

// imputedDuration returns o.ImputedDuration or its default.
func (o ImportOptions) imputedDuration() time.Duration {
	if o.ImputedDuration == 0 {
		return DefaultImputedDuration
	}
	return o.ImputedDuration
}

// imputeFinish gives a build that started but has no finish time the finish
// started_at + opt.ImputedDuration and counts it in the report.
func (r *ImportReport) imputeFinish(opt ImportOptions, b *Build) {
	if !b.FinishedAt.IsZero() || b.StartedAt.IsZero() {
		return
	}
	d := opt.imputedDuration()
	b.FinishedAt = b.StartedAt.Add(d)
	r.ImputedFinish++
	r.ImputedDuration = d
}

// ImportReport says what an import read and what it made of it. Every source row is
// either turned into a change and its build, merged (BuildFast duplicates), or skipped
// with a reason.
type ImportReport struct {
	Source   string // "travistorrent" or "buildfast"
	Files    int    // source files read
	RowsRead int    // data rows read
	// Merged counts rows that describe a build already read (BuildFast has one row per
	// pair of a build and a previous build); they add no change.
	Merged  int
	Changes int // changes written
	Builds  int // builds written
	// Skipped counts rows left out, by reason (the text of the sentinel error).
	Skipped map[string]int
	// Problems are the first problems, at most ImportOptions.MaxProblems.
	Problems []*ParseError
	// DerivedTimes is set when times were derived rather than read (DeriveTimes).
	DerivedTimes bool
	// Errored is the status Travis "errored" builds were given (TravisTorrent only;
	// StatusUnknown for other sources).
	Errored Status
	// ImputedFinish counts builds whose finished_at was imputed as started_at +
	// ImputedDuration (ImportOptions.ImputedDuration).
	ImputedFinish   int
	ImputedDuration time.Duration // the imputed build time; zero when none was imputed
	// Extra names the source columns kept as extra attributes (History.Extra), and
	// Refused the source columns not kept because they leak the label (see
	// CheckExtraName), each with the reason.
	Extra   []string
	Refused []string
	// PreviousUnfinished counts the BuildFast builds that started before their previous
	// build finished, whose attributes computed from earlier outcomes are missing.
	PreviousUnfinished int
}

// String summarises the report in a few lines.
func (r *ImportReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d files, %d rows read, %d merged duplicates, %d changes and %d builds written, %d rows skipped\n",
		r.Source, r.Files, r.RowsRead, r.Merged, r.Changes, r.Builds, r.NSkipped())
	for _, k := range sortedKeys(r.Skipped) {
		fmt.Fprintf(&b, "  skipped %d: %s\n", r.Skipped[k], k)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "  %v\n", p)
	}
	if r.DerivedTimes {
		b.WriteString("  times are derived, not recorded (see datasets/IMPORT.md)\n")
	}
	if r.Errored != StatusUnknown {
		fmt.Fprintf(&b, "  errored builds imported as %v\n", r.Errored)
	}
	if len(r.Extra) > 0 {
		fmt.Fprintf(&b, "  %d source columns kept as extra attributes (x_*): %s\n", len(r.Extra), strings.Join(r.Extra, ", "))
	}
	for _, c := range r.Refused {
		fmt.Fprintf(&b, "  column refused: %s\n", c)
	}
	if r.PreviousUnfinished > 0 {
		fmt.Fprintf(&b, "  %d builds started before their previous build finished: their attributes computed from earlier outcomes are missing (point in time)\n", r.PreviousUnfinished)
	}
	if r.ImputedFinish > 0 {
		fmt.Fprintf(&b, "  %d builds without a finish time finish %v after their start (imputed, see datasets/IMPORT.md)\n",
			r.ImputedFinish, r.ImputedDuration)
	}
	return b.String()
}

// NSkipped returns the number of rows skipped for any reason.
func (r *ImportReport) NSkipped() int {
	n := 0
	for _, v := range r.Skipped {
		n += v
	}
	return n
}

func (r *ImportReport) skip(opt ImportOptions, p *ParseError) {
	r.Skipped[reason(p.Err)]++
	max := opt.MaxProblems
	if max <= 0 {
		max = DefaultMaxProblems
	}
	if len(r.Problems) < max {
		r.Problems = append(r.Problems, p)
	}
}

// sourceRow is one record of a source CSV file, with its position for error messages.
type sourceRow struct {
	path   string
	line   int
	row    int
	index  map[string]int
	fields []string
}

func (s *sourceRow) problem(column string, err error) *ParseError {
	return &ParseError{Path: s.path, Line: s.line, Row: s.row, Column: column, Err: err}
}

func (s *sourceRow) get(column string) string { return s.fields[s.index[column]] }

// count parses a non-negative whole number.
func (s *sourceRow) count(column string) (float64, *ParseError) {
	v, perr := s.number(column)
	if perr != nil {
		return v, perr
	}
	switch {
	case v < 0:
		return v, s.problem(column, fmt.Errorf("%w: %v", ErrNegativeCount, v))
	case v != math.Trunc(v):
		return v, s.problem(column, fmt.Errorf("%w: count %v is not a whole number", ErrInvalidValue, v))
	}
	return v, nil
}

// number parses a finite number; an empty cell is NaN.
func (s *sourceRow) number(column string) (float64, *ParseError) {
	c := s.get(column)
	if c == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(c, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return math.NaN(), s.problem(column, fmt.Errorf("%w: %q is not a finite number", ErrInvalidValue, c))
	}
	return v, nil
}

// scanSource reads a source CSV file with a header row, checks that it has the columns
// named in required, tells extra the column names (before the first record) and calls
// fn for each record. A record with the wrong number of fields is reported to bad.
func scanSource(ctx context.Context, path string, required []string, extra func(header []string) error, fn func(r *sourceRow) error, bad func(p *ParseError)) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer fh.Close()
	cr := csv.NewReader(fh)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return &ParseError{Path: path, Line: 1, Row: -1, Err: fmt.Errorf("%w: empty file, want a header row", ErrInvalidValue)}
		}
		return (&scanner{path: path}).csvError(err, -1)
	}
	index := make(map[string]int, len(header))
	for j, n := range header {
		if j == 0 {
			n = strings.TrimPrefix(n, "\ufeff")
		}
		index[n] = j
	}
	var missing []*ParseError
	for _, n := range required {
		if _, ok := index[n]; !ok {
			missing = append(missing, &ParseError{Path: path, Line: 1, Row: -1, Column: n, Err: ErrMissingColumn})
		}
	}
	if len(missing) > 0 {
		return &ProblemsError{Problems: missing}
	}
	names := slices.Clone(header)
	names[0] = strings.TrimPrefix(names[0], "\ufeff")
	if err := extra(names); err != nil {
		return err
	}
	r := &sourceRow{path: path, index: index}
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if line, ok := fieldCountLine(err); ok {
				bad(&ParseError{Path: path, Line: line, Row: row, Err: fmt.Errorf("%w: %d fields, the header has %d", ErrInvalidValue, len(rec), len(header))})
				continue
			}
			return (&scanner{path: path}).csvError(err, row)
		}
		line, _ := cr.FieldPos(0)
		r.line, r.row, r.fields = line, row, rec
		if err := fn(r); err != nil {
			return err
		}
		if row%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// extraColumns are the extra attributes of one source file: every column of its header
// that the importer does not map or skip (ids, strings, the label), in increasing order
// of attribute name.
type extraColumns struct {
	names []string // attribute names (ExtraName of the column), increasing
	cols  []string // the source column of each
}

// sourceExtra returns the extra attributes of a source file with the given header:
// every column not in skip. A column that leaks the label (CheckExtraName) is refused
// and recorded in rep.Refused, once per column name; two columns with the same
// attribute name, or a name CheckExtraName refuses for another reason, are an error.
func sourceExtra(path string, header []string, skip map[string]bool, rep *ImportReport) (extraColumns, error) {
	var e extraColumns
	byName := map[string]string{}
	for _, c := range header {
		if skip[c] {
			continue
		}
		n := ExtraName(c)
		if err := CheckExtraName(n); err != nil {
			if errors.Is(err, ErrLeakingColumn) {
				msg := fmt.Sprintf("%s: %v", c, err)
				if !slices.Contains(rep.Refused, msg) {
					rep.Refused = append(rep.Refused, msg)
				}
				continue
			}
			return e, &ParseError{Path: path, Line: 1, Row: -1, Column: c, Err: err}
		}
		if other, dup := byName[n]; dup {
			return e, &ParseError{Path: path, Line: 1, Row: -1, Column: c, Err: fmt.Errorf("%w: columns %s and %s are both the extra attribute %s", ErrDuplicateColumn, other, c, n)}
		}
		byName[n] = c
		e.names = append(e.names, n)
	}
	slices.Sort(e.names)
	for _, n := range e.names {
		e.cols = append(e.cols, byName[n])
	}
	return e, nil
}

// values parses the extra attributes of one source row: finite numbers, an empty cell
// NaN, and a value listed in undefined[column] NaN too (a source's code for
// "undefined"). A cell that is not a number is a problem.
func (e *extraColumns) values(r *sourceRow, undefined map[string]float64) ([]float64, *ParseError) {
	if len(e.names) == 0 {
		return nil, nil
	}
	v := make([]float64, len(e.names))
	for k, c := range e.cols {
		x, perr := r.number(c)
		if perr != nil {
			return nil, perr
		}
		if u, ok := undefined[c]; ok && x == u {
			x = nan
		}
		v[k] = x
	}
	return v, nil
}

// finishExtra aligns the extra attributes of h's changes (alignExtra) and records their
// names in the report.
func (r *ImportReport) finishExtra(h *History) {
	h.alignExtra()
	r.Extra = h.Extra
}
