package logistic

import "errors"

// Errors returned by this package; they are wrapped with context, so match them with
// errors.Is.
var (
	// ErrUnsupportedVersion is an artifact whose format_version this package cannot read.
	ErrUnsupportedVersion = errors.New("logistic: unsupported artifact format version")
	// ErrMalformed is an artifact that does not decode or is inconsistent.
	ErrMalformed = errors.New("logistic: malformed artifact")
	// ErrInvalidData is training data Fit cannot use: no rows, a label other than 0 or 1,
	// a single class, an infinite input, or a negative or non-finite weight.
	ErrInvalidData = errors.New("logistic: invalid training data")
	// ErrInvalidConfig is a Config field outside its domain.
	ErrInvalidConfig = errors.New("logistic: invalid config")
	// ErrNumeric is a non-finite objective or a failed optimisation.
	ErrNumeric = errors.New("logistic: numerical failure")
)
