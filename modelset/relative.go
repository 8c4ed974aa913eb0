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
//
// Shift moves the served location by a constant on the log scale: the trainer sets it
// to the median of the model's training residuals, log y minus the location (issue 12).
// The reference is the mean of the latest succeeded builds, and the failed builds end
// early: on BuildFast's histories about one build in ten, at a log-ratio near -1, which
// pulls the fitted location (the mean of the log-ratios) about 0.1 below the succeeded
// builds' and makes the predictive median ~10% short of most builds, while Zuul's
// estimate itself is not. The median of the residuals is where most builds are; the
// scale, which the failed builds widen, is left as fitted. Bundles written before
// Shift have none (0).
type Relative struct {
	// Column names the feature holding log1p(reference seconds): RelativeColumn.
	Column string `json:"column"`
	// FallbackS is the reference, in seconds, of rows without one.
	FallbackS float64 `json:"fallback_s"`
	// Shift is added to the location, in log seconds; finite.
	Shift float64 `json:"log_shift,omitempty"`
	col   int     // index of Column in the model's features
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

// Offset returns what the model adds to its location on a row whose RelativeColumn
// value is v: the log of the reference (ReferenceOf) plus Shift.
func (r *Relative) Offset(v float64) float64 { return math.Log(r.ReferenceOf(v)) + r.Shift }

// boundsVersion returns the FileBuildTimeBounds format version that can hold r: 2, or
// 3 when it has a Shift, which a reader of version 2 would silently ignore.
func (r *Relative) boundsVersion() int {
	if r.Shift != 0 {
		return BoundsVersion
	}
	return 2
}
