package modelset

import (
	"fmt"
	"math"
	"slices"

	"github.com/sqpredict/sqpredict/models/ngboost"
)

// RelativeColumn is the feature a relative build-time model reads its reference from:
// log1p of the mean of the repository's latest 10 succeeded builds (Zuul's estimate).
const RelativeColumn = "log1p_repo_mean10_success_duration"

// MinReference is the smallest reference duration, in seconds, a relative model divides
// by: the trainer's shortest duration (training.MinDuration), so that a recent mean of
// 0 s (a history that rounds short builds to 0) does not give log 0.
const MinReference = 1.0

// Relative makes a LogNormal build-time model predict the duration relative to a
// reference read from its row, the recent mean of the repository's succeeded builds
// (issue 12 item 1): the NGBoost models log(y/ref) and the served location is its
// location plus log(ref), the scale unchanged. Trees cannot follow a level shift of
// build times (2.4–13× between the training window and the holdout on the real
// histories); the recent mean follows it and the model only learns the ratio. A row
// whose reference is missing (no succeeded build yet) or not finite uses FallbackS,
// the geometric mean of the training durations.
type Relative struct {
	// Column names the feature holding log1p(reference seconds): RelativeColumn.
	Column string `json:"column"`
	// FallbackS is the reference, in seconds, of rows without one.
	FallbackS float64 `json:"fallback_s"`
	col       int     // index of Column in the model's features
}

// NewRelative returns the Relative of a LogNormal NGBoost m whose features include
// RelativeColumn, with the fallback reference fallbackS (finite, at least
// MinReference). Its errors wrap ErrBundle.
func NewRelative(m *ngboost.Model, fallbackS float64) (*Relative, error) {
	if m == nil || m.Family() != ngboost.LogNormal {
		return nil, fmt.Errorf("%w: a relative build-time model must be a LogNormal NGBoost", ErrBundle)
	}
	col := slices.Index(m.FeatureNames(), RelativeColumn)
	if col < 0 {
		return nil, fmt.Errorf("%w: a relative build-time model needs the feature %s", ErrBundle, RelativeColumn)
	}
	if !(fallbackS >= MinReference) || math.IsInf(fallbackS, 1) {
		return nil, fmt.Errorf("%w: relative fallback_s %v, want a finite duration of at least %v s", ErrBundle, fallbackS, MinReference)
	}
	return &Relative{Column: RelativeColumn, FallbackS: fallbackS, col: col}, nil
}

// ReferenceOf returns the reference duration, in seconds, of a row whose RelativeColumn
// value is v: expm1(v) raised to MinReference, or FallbackS when v is missing (NaN) or
// infinite. The trainer divides the targets by it, the model's predictions multiply by
// it.
func (r *Relative) ReferenceOf(v float64) float64 {
	ref := math.Expm1(v)
	if math.IsNaN(ref) || math.IsInf(ref, 0) {
		return r.FallbackS
	}
	return max(ref, MinReference)
}
