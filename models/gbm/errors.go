package gbm

import "errors"

// Errors returned by this package. They are wrapped with context (the file, tree,
// field or row at fault); match them with errors.Is.
var (
	// ErrUnsupportedVersion is returned for a LightGBM text model whose version=
	// header is not one of v2, v3 and v4.
	ErrUnsupportedVersion = errors.New("gbm: unsupported LightGBM model version")
	// ErrUnsupportedObjective is returned for an objective whose output transform
	// this package does not implement (ranking, multiclassova, ...).
	ErrUnsupportedObjective = errors.New("gbm: unsupported objective")
	// ErrUnsupportedFeature is returned for a model that uses a LightGBM feature this
	// package does not implement, such as linear trees.
	ErrUnsupportedFeature = errors.New("gbm: unsupported model feature")
	// ErrFormat is returned for a malformed LightGBM text model.
	ErrFormat = errors.New("gbm: malformed model")
	// ErrBadData is returned for training data this package cannot use: no rows,
	// infinite feature values, NaN or infinite targets, gradients or weights.
	ErrBadData = errors.New("gbm: bad training data")
	// ErrBadConfig is returned for an invalid or unknown hyperparameter.
	ErrBadConfig = errors.New("gbm: bad config")
)

// Panic messages for misuse by the caller (rule: misuse panics, bad data is an error).
const (
	errDstLength    = "gbm: dst length mismatch"
	errFeatureCount = "gbm: feature count mismatch"
)
