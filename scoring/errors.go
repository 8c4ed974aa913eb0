package scoring

import "errors"

// Errors returned by the speculation math. Each is wrapped with the field or index it
// concerns; match them with errors.Is.
var (
	// ErrInvalidQueue reports a malformed queue: an index out of range, a probability
	// outside [0, 1] or NaN, a negative build time, a duplicate conflict or a build path
	// that names a change not ahead of the build's change.
	ErrInvalidQueue = errors.New("scoring: invalid queue")
	// ErrInvalidConfig reports a Config that cannot be used, such as a non-positive
	// capacity or a threshold outside [0, 1].
	ErrInvalidConfig = errors.New("scoring: invalid config")
	// ErrInvalidBatch reports batching input that cannot be used: an empty batch, a
	// success probability outside [0, 1] or a batch size below 1.
	ErrInvalidBatch = errors.New("scoring: invalid batch")
	// ErrNoModel reports that no model is available to answer: the scorer lacks a model,
	// or a server has not loaded a bundle yet.
	ErrNoModel = errors.New("scoring: no model")
	// ErrNoConflictModel reports a P-conf question to a scorer built without a P-conf
	// model (NewScorerNoConflict): the bundle's history had no conflict labels.
	ErrNoConflictModel = errors.New("scoring: no P-conf model")
	// ErrModelShape reports a model whose number of feature columns differs from the
	// feature schema of the rows it is asked to score.
	ErrModelShape = errors.New("scoring: model does not fit the feature schema")
)
