package datasets

import (
	"errors"
	"math"
)

var nan = math.NaN()

// Errors returned by this package. Problems with one cell or row are reported as a
// *ParseError or a *RowError that wraps one of these.
var (
	// ErrInvalidValue is a cell that does not parse or lies outside its column's domain.
	ErrInvalidValue = errors.New("invalid value")
)
