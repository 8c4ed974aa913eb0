package ngboost

import "errors"

// Errors returned by this package, wrapped with the field, row or file they concern.
var (
	// ErrInvalidConfig is a Config field, or a name parsed into one, that is out of range.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrInvalidData is training data the model cannot use: mismatched lengths, a target
	// outside the distribution's support, negative weights.
	ErrInvalidData = errors.New("invalid data")
	// ErrFormat is an artifact that does not parse or is inconsistent.
	ErrFormat = errors.New("invalid model artifact")
	// ErrUnsupportedVersion is an artifact whose format_version this build does not read.
	ErrUnsupportedVersion = errors.New("unsupported artifact format version")
)
