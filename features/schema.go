package features

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
)

// SchemaVersion is the version of the feature definitions. Bump it whenever the meaning of
// a feature changes without its name changing; renaming, adding or removing a feature
// changes the schema hash by itself. Version 2: success rows describe the change at its
// submission and their label is its intrinsic outcome (so dev_prior_success_rate counts
// intrinsic outcomes too), and never-decided changes count as pending. Version 3: the
// recency groups.
const SchemaVersion = 3

// Kind is a kind of feature row: the question a model answers.
type Kind uint8

// The row kinds.
const (
	KindSuccess   Kind = iota // will this change's build on HEAD alone succeed (P-succ)
	KindConflict              // do these two pending changes conflict (P-conf)
	KindBuildTime             // how long will this build take (seconds)
)

var kindNames = [...]string{KindSuccess: "success", KindConflict: "conflict", KindBuildTime: "buildtime"}

// String returns the kind's name as the trainer's --task flag spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses "success", "conflict" or "buildtime".
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if s == n {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("features: %w %q (want success, conflict or buildtime)", ErrUnknownKind, s)
}

// LabelName returns the name of the column a row's label or target goes into: "label"
// for the classification kinds, "target" for build time.
func (k Kind) LabelName() string {
	if k == KindBuildTime {
		return "target"
	}
	return "label"
}

// MarshalText returns the kind's name, so that a Schema's JSON names its kind.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) >= len(kindNames) {
		return nil, fmt.Errorf("features: %w %d", ErrUnknownKind, k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText parses a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Schema describes the columns of one row kind. Its JSON form, which model bundles carry,
// is {"kind": "success", "version": 1, "names": [...]}.
type Schema struct {
	Kind    Kind     `json:"kind"`
	Version int      `json:"version"`
	Names   []string `json:"names"` // feature names, in column order
}

// Hash returns the hex SHA-256 of the schema's kind, version and names: the kind's name
// (as [Kind.String] spells it), the decimal version and every name, each followed by a
// newline. It identifies the feature code a model was trained with; two kinds with the
// same names have different hashes.
func (s Schema) Hash() string {
	h := sha256.New()
	h.Write([]byte(s.Kind.String() + "\n" + strconv.Itoa(s.Version) + "\n"))
	for _, n := range s.Names {
		h.Write([]byte(n + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NFeatures returns the number of feature columns.
func (s Schema) NFeatures() int { return len(s.Names) }

// Schema returns the schema of the kind, with a fresh copy of its names. It panics for an
// invalid kind.
func (k Kind) Schema() Schema {
	var names []string
	switch k {
	case KindSuccess:
		names = successNames
	case KindConflict:
		names = conflictNames
	case KindBuildTime:
		names = buildTimeNames
	default:
		panic("features: invalid kind " + k.String())
	}
	return Schema{Kind: k, Version: SchemaVersion, Names: append([]string(nil), names...)}
}

// The feature groups. The per-row writers in row.go fill them in exactly this order; a test
// checks that every position is written.
var (
	changeNames = []string{
		"targets_changed",
		"targets_added",
		"targets_removed",
		"lines_added",
		"lines_removed",
		"hunks",
		"files_changed",
		"commits",
		"binaries_added",
		"binaries_removed",
		"initial_checks_passed",
		"initial_checks_failed",
		"affected_targets", // distinct names; NaN when the list is unknown
		"log1p_targets_changed",
		"log1p_lines_added",
		"log1p_lines_removed",
		"log1p_lines_changed", // lines_added + lines_removed
		"log1p_hunks",
		"log1p_files_changed",
		"log1p_affected_targets",
		"initial_checks_failed_share", // failed / (passed + failed); NaN when no check ran
	}
	revisionNames = []string{
		"revision_submissions",
		"revision_has_revert_plan",
		"revision_has_test_plan",
	}
	developerNames = []string{
		"author_tenure_days",
		"log1p_author_tenure_days",
		"author_level",
		"dev_prior_changes",
		"log1p_dev_prior_changes",
		"dev_prior_success_rate",
		"dev_prior_conflict_rate",
	}
	durationNames = []string{
		"dev_prior_log1p_duration",
	}
	speculationNames = []string{
		"spec_succeeded",
		"spec_failed",
		"speculation_height",
		"conflicts_count",
		"queue_ahead",
		"path_changes",
		"log1p_path_lines_changed",
	}
	// recentNames are the success rows' recency features (see Recent).
	recentNames = []string{
		"repo_fail_rate_5",
		"repo_fail_rate_20",
		"repo_fail_rate_100",
		"repo_last_failed",
		"log1p_hours_since_repo_failure",
		"author_last_failed",
		"author_fail_rate_10",
		"revision_last_failed",
		"targets_fail_rate_20",
	}
	// recentDurationNames are the build-time rows' recency features.
	recentDurationNames = []string{
		"log1p_repo_last_duration",
		"log1p_repo_mean10_success_duration", // Zuul's estimate, log1p(seconds)
	}
	// pairNames describe the pair. The shares are of distinct affected targets; each
	// change's size and blast radius (affected_targets, its log) are in its change group.
	pairNames = []string{
		"overlap_targets",
		"jaccard_targets",
		"same_author",
		"seconds_between_submissions",
		"log1p_seconds_between_submissions",
		"log1p_overlap_targets",
		"containment_targets",  // overlap / the smaller change's targets
		"overlap_share_ahead",  // overlap / the ahead change's targets
		"overlap_share_behind", // overlap / the behind change's targets
		"same_area",            // the two changes' main areas (see mainArea) are the same
	}

	successNames   = concat(nil, changeNames, revisionNames, developerNames, speculationNames, recentNames)
	buildTimeNames = concat(nil, changeNames, revisionNames, developerNames, durationNames, speculationNames, recentDurationNames)
	conflictNames  = concat(nil,
		prefixed("ahead_", changeNames, revisionNames, developerNames),
		prefixed("behind_", changeNames, revisionNames, developerNames),
		pairNames)
)

// Offsets of the groups inside each row kind.
var (
	nChange      = len(changeNames)
	nRevision    = len(revisionNames)
	nDeveloper   = len(developerNames)
	nSpeculation = len(speculationNames)
	nRecent      = len(recentNames)
	nRecentDur   = len(recentDurationNames)
	nPair        = len(pairNames)
)

func concat(dst []string, groups ...[]string) []string {
	for _, g := range groups {
		dst = append(dst, g...)
	}
	return dst
}

func prefixed(p string, groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		for _, n := range g {
			out = append(out, p+n)
		}
	}
	return out
}
