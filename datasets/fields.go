package datasets

import (
	"fmt"
	"math"
	"time"
)

// field is one column of a history table and how it maps to a field of the row type T.
// Exactly the accessor of its kind is set.
type field[T any] struct {
	name     string
	kind     kind
	required bool // the file must have the column (its cells may still be missing)
	id       bool // a string that must not be missing
	truth    bool // synthetic ground truth: written only when some row has a value
	count    bool // a non-negative count
	nonneg   bool // a non-negative measure
	prob     bool // a probability in [0, 1]
	dict     bool // few distinct values (dictionary-encoded in Parquet)
	// emptyNil makes an empty list and a missing list the same: both are written as
	// missing and read as nil (the path of a build on HEAD).
	emptyNil bool

	float   func(*T) *float64
	str     func(*T) *string
	time    func(*T) *time.Time
	list    func(*T) *[]string
	flag    func(*T) *Flag
	boolean func(*T) *bool
	outcome func(*T) *Outcome
	status  func(*T) *Status
}

func (f field[T]) req() field[T]  { f.required = true; return f }
func (f field[T]) cnt() field[T]  { f.count = true; return f }
func (f field[T]) pos() field[T]  { f.nonneg = true; return f }
func (f field[T]) tru() field[T]  { f.truth = true; return f }
func (f field[T]) few() field[T]  { f.dict = true; return f }
func (f field[T]) isID() field[T] { f.id = true; f.required = true; return f }

func numField[T any](name string, acc func(*T) *float64) field[T] {
	return field[T]{name: name, kind: kFloat, float: acc}
}

func strField[T any](name string, acc func(*T) *string) field[T] {
	return field[T]{name: name, kind: kString, str: acc}
}

func timeField[T any](name string, acc func(*T) *time.Time) field[T] {
	return field[T]{name: name, kind: kTime, time: acc}
}

func listField[T any](name string, acc func(*T) *[]string) field[T] {
	return field[T]{name: name, kind: kList, list: acc}
}

func flagField[T any](name string, acc func(*T) *Flag) field[T] {
	return field[T]{name: name, kind: kFlag, flag: acc}
}

// changeFields are the columns of the changes table, in the order they are written.
var changeFields = []field[Change]{
	strField("change_id", func(r *Change) *string { return &r.ChangeID }).isID(),
	strField("repo", func(r *Change) *string { return &r.Repo }).req().few(),
	strField("revision_id", func(r *Change) *string { return &r.RevisionID }).req(),
	strField("author", func(r *Change) *string { return &r.Author }).req().few(),
	timeField("submitted_at", func(r *Change) *time.Time { return &r.SubmittedAt }).req(),
	timeField("decided_at", func(r *Change) *time.Time { return &r.DecidedAt }).req(),
	{name: "outcome", kind: kOutcome, required: true, dict: true, outcome: func(r *Change) *Outcome { return &r.Outcome }},
	numField("targets_changed", func(r *Change) *float64 { return &r.TargetsChanged }).cnt(),
	numField("targets_added", func(r *Change) *float64 { return &r.TargetsAdded }).cnt(),
	numField("targets_removed", func(r *Change) *float64 { return &r.TargetsRemoved }).cnt(),
	numField("lines_added", func(r *Change) *float64 { return &r.LinesAdded }).cnt(),
	numField("lines_removed", func(r *Change) *float64 { return &r.LinesRemoved }).cnt(),
	numField("hunks", func(r *Change) *float64 { return &r.Hunks }).cnt(),
	numField("files_changed", func(r *Change) *float64 { return &r.FilesChanged }).cnt(),
	numField("commits", func(r *Change) *float64 { return &r.Commits }).cnt(),
	numField("binaries_added", func(r *Change) *float64 { return &r.BinariesAdded }).cnt(),
	numField("binaries_removed", func(r *Change) *float64 { return &r.BinariesRemoved }).cnt(),
	numField("initial_checks_passed", func(r *Change) *float64 { return &r.InitialChecksPassed }).cnt(),
	numField("initial_checks_failed", func(r *Change) *float64 { return &r.InitialChecksFailed }).cnt(),
	listField("affected_targets", func(r *Change) *[]string { return &r.AffectedTargets }),
	numField("revision_submissions", func(r *Change) *float64 { return &r.RevisionSubmissions }).cnt(),
	flagField("revision_has_revert_plan", func(r *Change) *Flag { return &r.RevisionHasRevertPlan }),
	flagField("revision_has_test_plan", func(r *Change) *Flag { return &r.RevisionHasTestPlan }),
	numField("author_tenure_days", func(r *Change) *float64 { return &r.AuthorTenureDays }).pos(),
	numField("author_level", func(r *Change) *float64 { return &r.AuthorLevel }),
	func() field[Change] {
		f := numField("true_p_success", func(r *Change) *float64 { return &r.TrueProbSuccess }).tru()
		f.prob = true
		return f
	}(),
}

// buildFields are the columns of the builds table, in the order they are written.
var buildFields = []field[Build]{
	strField("build_id", func(r *Build) *string { return &r.BuildID }).isID(),
	strField("repo", func(r *Build) *string { return &r.Repo }).req().few(),
	strField("change_id", func(r *Build) *string { return &r.ChangeID }).isID(),
	func() field[Build] {
		f := listField("path", func(r *Build) *[]string { return &r.Path }).req()
		f.emptyNil = true
		return f
	}(),
	numField("speculation_height", func(r *Build) *float64 { return &r.SpeculationHeight }).req().cnt(),
	timeField("started_at", func(r *Build) *time.Time { return &r.StartedAt }).req(),
	timeField("finished_at", func(r *Build) *time.Time { return &r.FinishedAt }).req(),
	numField("duration_s", func(r *Build) *float64 { return &r.DurationS }).req().pos(),
	{name: "status", kind: kStatus, required: true, dict: true, status: func(r *Build) *Status { return &r.Status }},
	numField("true_mu_s", func(r *Build) *float64 { return &r.TrueMuS }).tru().pos(),
	numField("true_sigma_s", func(r *Build) *float64 { return &r.TrueSigmaS }).tru().pos(),
}

// pairFields are the columns of the pairs table, in the order they are written.
var pairFields = []field[Pair]{
	strField("ahead_change_id", func(r *Pair) *string { return &r.AheadChangeID }).isID(),
	strField("behind_change_id", func(r *Pair) *string { return &r.BehindChangeID }).isID(),
	func() field[Pair] {
		f := numField("true_p_conflict", func(r *Pair) *float64 { return &r.TrueProbConflict }).req()
		f.prob = true
		return f
	}(),
	{name: "conflicted", kind: kBool, required: true, boolean: func(r *Pair) *bool { return &r.Conflicted }},
}

// blank returns the row with every field missing: NaN numbers, the zero value otherwise.
func blank[T any](fields []field[T]) T {
	var r T
	for i := range fields {
		if fields[i].kind == kFloat {
			*fields[i].float(&r) = math.NaN()
		}
	}
	return r
}

// decode reads the cell of row i into r and checks it against the field's domain.
func (f *field[T]) decode(c cells, i int, r *T) error {
	switch f.kind {
	case kFloat:
		v, err := c.float(i)
		if err != nil {
			return err
		}
		*f.float(r) = v
		return f.checkFloat(v)
	case kString:
		s, err := c.str(i)
		if err != nil {
			return err
		}
		if f.id && s == "" {
			return fmt.Errorf("%w: missing id", ErrInvalidValue)
		}
		*f.str(r) = s
	case kTime:
		t, err := c.time(i)
		if err != nil {
			return err
		}
		*f.time(r) = t
	case kList:
		l, err := c.list(i)
		if err != nil {
			return err
		}
		if f.emptyNil && len(l) == 0 {
			l = nil
		}
		*f.list(r) = l
	case kFlag:
		v, err := c.flag(i)
		if err != nil {
			return err
		}
		*f.flag(r) = v
	case kBool:
		v, err := c.flag(i)
		if err != nil {
			return err
		}
		if v == FlagUnknown {
			return fmt.Errorf("%w: missing, want true or false", ErrInvalidValue)
		}
		*f.boolean(r) = v == FlagTrue
	case kOutcome:
		s, err := c.str(i)
		if err != nil {
			return err
		}
		o, err := ParseOutcome(s)
		if err != nil {
			return err
		}
		*f.outcome(r) = o
	case kStatus:
		s, err := c.str(i)
		if err != nil {
			return err
		}
		st, err := ParseStatus(s)
		if err != nil {
			return err
		}
		*f.status(r) = st
	}
	return nil
}

func (f *field[T]) checkFloat(v float64) error {
	switch {
	case math.IsNaN(v):
		return nil
	case math.IsInf(v, 0):
		return fmt.Errorf("%w: %v is not finite", ErrInvalidValue, v)
	case f.count && v < 0:
		return fmt.Errorf("%w: %v", ErrNegativeCount, v)
	case f.count && v != math.Trunc(v):
		return fmt.Errorf("%w: count %v is not a whole number", ErrInvalidValue, v)
	case f.nonneg && v < 0:
		return fmt.Errorf("%w: %v is negative", ErrInvalidValue, v)
	case f.prob && (v < 0 || v > 1):
		return fmt.Errorf("%w: probability %v outside [0, 1]", ErrInvalidValue, v)
	}
	return nil
}

// wcol returns the column that writes the field of rows.
func (f *field[T]) wcol(rows []T) wcol {
	c := wcol{name: f.name, kind: f.kind, dict: f.dict}
	switch f.kind {
	case kFloat:
		c.float = func(i int) float64 { return *f.float(&rows[i]) }
	case kString:
		c.str = func(i int) string { return *f.str(&rows[i]) }
	case kTime:
		c.time = func(i int) time.Time { return *f.time(&rows[i]) }
	case kList:
		c.list = func(i int) []string {
			l := *f.list(&rows[i])
			if f.emptyNil && len(l) == 0 {
				return nil
			}
			return l
		}
	case kFlag:
		c.flag = func(i int) Flag { return *f.flag(&rows[i]) }
	case kBool:
		c.flag = func(i int) Flag {
			if *f.boolean(&rows[i]) {
				return FlagTrue
			}
			return FlagFalse
		}
	case kOutcome:
		c.kind = kString
		c.str = func(i int) string { return f.outcome(&rows[i]).String() }
	case kStatus:
		c.kind = kString
		c.str = func(i int) string { return f.status(&rows[i]).String() }
	}
	return c
}

// present reports whether some row has a value in a numeric field; truth columns are
// written only then.
func (f *field[T]) present(rows []T) bool {
	if f.kind != kFloat {
		return true
	}
	for i := range rows {
		if !math.IsNaN(*f.float(&rows[i])) {
			return true
		}
	}
	return false
}
