package datasets

import (
	"fmt"
	"time"
)

// Outcome is how a change's land request ended.
type Outcome uint8

// The outcomes of a change. OutcomeUnknown is the zero value: a change still pending, or a
// real history that does not say.
const (
	OutcomeUnknown Outcome = iota
	OutcomeLanded
	OutcomeRejected
)

var outcomeNames = [...]string{OutcomeUnknown: "", OutcomeLanded: "landed", OutcomeRejected: "rejected"}

// String returns the outcome as written in the changes table ("" for OutcomeUnknown).
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// ParseOutcome parses the outcome column; the empty string is OutcomeUnknown.
func ParseOutcome(s string) (Outcome, error) {
	for i, n := range outcomeNames {
		if s == n {
			return Outcome(i), nil
		}
	}
	return OutcomeUnknown, fmt.Errorf("%w: outcome %q (want landed or rejected)", ErrInvalidValue, s)
}

// Status is how a build ended.
type Status uint8

// The statuses of a build. StatusUnknown is the zero value and is invalid in a file.
// InfraFailed and Aborted builds say nothing about the change: they are excluded from
// success labels and from duration targets.
const (
	StatusUnknown Status = iota
	StatusSucceeded
	StatusFailed
	StatusInfraFailed
	StatusAborted
)

var statusNames = [...]string{StatusUnknown: "", StatusSucceeded: "succeeded", StatusFailed: "failed", StatusInfraFailed: "infra_failed", StatusAborted: "aborted"}

// String returns the status as written in the builds table.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", s)
}

// ParseStatus parses the status column.
func ParseStatus(s string) (Status, error) {
	for i, n := range statusNames {
		if i != 0 && s == n {
			return Status(i), nil
		}
	}
	return StatusUnknown, fmt.Errorf("%w: status %q (want succeeded, failed, infra_failed or aborted)", ErrInvalidValue, s)
}

// Flag is a yes/no attribute that a history may not know.
type Flag uint8

// The values of a Flag; FlagUnknown is the zero value.
const (
	FlagUnknown Flag = iota
	FlagFalse
	FlagTrue
)

// Float returns 1 for FlagTrue, 0 for FlagFalse and NaN for FlagUnknown, the form the
// feature pipeline uses.
func (f Flag) Float() float64 {
	switch f {
	case FlagTrue:
		return 1
	case FlagFalse:
		return 0
	}
	return nan
}

// String returns "true", "false" or "" for FlagUnknown.
func (f Flag) String() string {
	switch f {
	case FlagTrue:
		return "true"
	case FlagFalse:
		return "false"
	case FlagUnknown:
		return ""
	}
	return fmt.Sprintf("Flag(%d)", f)
}

// Change is one row of the changes table: one land request.
//
// Numeric attributes are float64 so that a missing value can be NaN; when present they
// are whole, non-negative counts (author_level and author_tenure_days excepted, which may
// be fractional).
type Change struct {
	ChangeID    string
	Repo        string
	RevisionID  string
	Author      string
	SubmittedAt time.Time
	DecidedAt   time.Time // zero while pending or when unknown
	Outcome     Outcome

	// Change group.
	TargetsChanged      float64
	TargetsAdded        float64
	TargetsRemoved      float64
	LinesAdded          float64
	LinesRemoved        float64
	Hunks               float64
	FilesChanged        float64
	Commits             float64
	BinariesAdded       float64
	BinariesRemoved     float64
	InitialChecksPassed float64
	InitialChecksFailed float64
	AffectedTargets     []string // build targets the change affects; nil when unknown

	// Revision group.
	RevisionSubmissions   float64 // how many times this revision was submitted, this one included
	RevisionHasRevertPlan Flag
	RevisionHasTestPlan   Flag

	// Developer group, as the history recorded it at submission.
	AuthorTenureDays float64
	AuthorLevel      float64

	// TrueProbSuccess is synthetic ground truth: the probability that the change's own
	// build succeeds. NaN in real histories.
	TrueProbSuccess float64

	// Extra holds the change's extra attributes, numeric source columns outside the
	// schema (the x_* columns of the changes table); its Names are the history's
	// History.Extra, or nil when the change has none.
	Extra Extra
}

// Build is one row of the builds table: one executed node of a speculation tree.
type Build struct {
	BuildID           string
	Repo              string
	ChangeID          string   // the change this build decides
	Path              []string // ids of the changes ahead assumed landed, in queue order
	SpeculationHeight float64  // number of changes ahead on the path when it was scheduled
	StartedAt         time.Time
	FinishedAt        time.Time
	DurationS         float64 // seconds; NaN when unknown
	Status            Status

	// TrueMuS and TrueSigmaS are synthetic ground truth: the mean and the standard
	// deviation, in seconds, of the log-normal distribution the duration was drawn from.
	// NaN in real histories.
	TrueMuS    float64
	TrueSigmaS float64
}

// Pair is one row of the pairs table, which only synthetic histories have: the ground
// truth about two changes pending at the same time whose affected targets overlap.
type Pair struct {
	AheadChangeID    string
	BehindChangeID   string
	TrueProbConflict float64
	Conflicted       bool
}

// History is a whole build history: the three tables of one folder.
type History struct {
	Changes []Change
	Builds  []Build
	Pairs   []Pair // nil for real histories
	// Extra names the extra attributes of the changes table (its x_* columns, without
	// the prefix), strictly increasing; nil when it has none. See [Extra].
	Extra []string
}
