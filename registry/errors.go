package registry

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Every error returned starts with "registry: " and
// wraps one of these with the repository, version or file it concerns; match them with
// errors.Is. A checksum failure is a *ChecksumError that wraps ErrChecksum.
var (
	// ErrUnknownFormat is a manifest whose format_version this build cannot read.
	ErrUnknownFormat = errors.New("unknown format version")
	// ErrChecksum is a bundle whose files do not match its manifest: a file is missing,
	// altered or not listed.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrSchemaMismatch is a bundle trained with another feature schema than the
	// caller's.
	ErrSchemaMismatch = errors.New("feature schema mismatch")
	// ErrNotFound is a repository, version or bundle file that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNoPointer is a champion or challenger pointer that is not set.
	ErrNoPointer = errors.New("pointer not set")
	// ErrInvalidName is a repository or version name that breaks the naming rules.
	ErrInvalidName = errors.New("invalid name")
	// ErrInvalidManifest is a manifest with a missing or malformed field, or a bundle
	// folder that cannot be published as it is.
	ErrInvalidManifest = errors.New("invalid manifest")
)

// Problems a *ChecksumError reports.
const (
	ProblemMissing = "missing"    // listed in the manifest, absent on disk
	ProblemAltered = "altered"    // size, sha256 or file type differs from the manifest
	ProblemExtra   = "not listed" // present on disk, absent from the manifest
)

// ChecksumError is a bundle file that does not match the manifest. It wraps ErrChecksum.
type ChecksumError struct {
	Dir     string // bundle folder
	File    string // slash-separated path relative to Dir
	Problem string // ProblemMissing, ProblemAltered or ProblemExtra
	Detail  string // what differs for ProblemAltered, for example both sha256 sums
}

// Error implements error.
func (e *ChecksumError) Error() string {
	msg := fmt.Sprintf("registry: bundle %s: %v: file %q %s", e.Dir, ErrChecksum, e.File, e.Problem)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns ErrChecksum.
func (e *ChecksumError) Unwrap() error { return ErrChecksum }
