package features

import "errors"

// Errors returned by this package, wrapped with the context of the failure.
var (
	// ErrUnknownKind is a row kind name that is not success, conflict or buildtime.
	ErrUnknownKind = errors.New("unknown row kind")
	// ErrInvalidHistory is a history whose tables contradict each other: a duplicate
	// change or build id, a build naming an unknown change, a path naming an unknown change.
	ErrInvalidHistory = errors.New("invalid history")
	// ErrUnsupportedVersion is a developer table file of a format version this code does
	// not read.
	ErrUnsupportedVersion = errors.New("unsupported format version")
	// ErrInvalidDevTable is a developer table file that does not parse or holds
	// impossible counts.
	ErrInvalidDevTable = errors.New("invalid developer table")
)
