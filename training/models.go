package training

import (
	"errors"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
)

// The models of a bundle, their files and their loading live in package modelset, below
// both training and the scorer, so that predictd loads bundles without linking the
// trainer (issue 15 item 10). The names below keep training's callers compiling.

// Bundle file names (see modelset).
const (
	FileSuccess            = modelset.FileSuccess
	FileConflict           = modelset.FileConflict
	FileBuildTime          = modelset.FileBuildTime
	FileSuccessGBM         = modelset.FileSuccessGBM
	FileConflictGBM        = modelset.FileConflictGBM
	FileBuildTimeLogNormal = modelset.FileBuildTimeLogNormal
	FileDevTable           = modelset.FileDevTable
	FileFeatures           = modelset.FileFeatures
	FileMetrics            = modelset.FileMetrics
)

// ExtraLeftOut is the manifest extra key listing, comma-separated, the champion model
// files a partial bundle (Config.AllowPartial) does not have (modelset.ExtraLeftOut).
const ExtraLeftOut = modelset.ExtraLeftOut

// Model names, as they appear in metric keys: the champions ModelLogistic (success and
// conflict) and ModelNGBoost (build time, whatever its family), the challengers ModelGBM
// and ModelNGBoostNormal (ModelNGBoostLogNormal in bundles whose champion is Normal),
// and ModelTruth for the ground truth of synthetic histories. ModelNGBoostLogNormal also
// names the build-time champion in the manifest's champions.
const (
	ModelLogistic         = modelset.ModelLogistic
	ModelNGBoost          = modelset.ModelNGBoost
	ModelGBM              = modelset.ModelGBM
	ModelNGBoostNormal    = modelset.ModelNGBoostNormal
	ModelNGBoostLogNormal = modelset.ModelNGBoostLogNormal
	ModelTruth            = modelset.ModelTruth
)

// SchemaHash returns the combined feature schema hash of a bundle (modelset.SchemaHash).
// Publish writes it into the manifest, and a loader passes it to registry.Load so that a
// bundle trained with other feature code is refused.
func SchemaHash() string { return modelset.SchemaHash() }

// Models are the fitted models of a bundle and its frozen developer table
// (modelset.Models).
type Models = modelset.Models

// Predictions are the outputs of a bundle's models on the rows of the three tables
// (modelset.Predictions).
type Predictions = modelset.Predictions

// LoadModels reads every model of the verified bundle b (modelset.LoadModels). Errors
// wrap ErrBundle (and modelset.ErrBundle) and name the file.
func LoadModels(b *registry.Bundle) (*Models, error) {
	m, err := modelset.LoadModels(b)
	return m, bundleErr(err)
}

// LoadOptions choose how Load reads a bundle: partial bundles and the author key of a
// pseudonymised one (modelset.LoadOptions).
type LoadOptions = modelset.LoadOptions

// Load is LoadModels with options (modelset.Load). Errors wrap ErrBundle, or
// features.ErrAuthorKey when the bundle's authors are pseudonymised under another key
// than opt.AuthorKey (or none was given).
func Load(b *registry.Bundle, opt LoadOptions) (*Models, error) {
	m, err := modelset.Load(b, opt)
	if err != nil && errors.Is(err, features.ErrAuthorKey) {
		return nil, err
	}
	return m, bundleErr(err)
}

// LoadPartialModels is LoadModels that also accepts a partial bundle
// (modelset.LoadPartialModels).
func LoadPartialModels(b *registry.Bundle) (*Models, error) {
	m, err := modelset.LoadPartialModels(b)
	return m, bundleErr(err)
}

// featuresJSON returns the content of FileFeatures for the extra attributes extra
// (modelset.FeaturesJSON).
func featuresJSON(extra []string) ([]byte, error) { return modelset.FeaturesJSON(extra) }

// bundleError is an error of modelset that also matches ErrBundle, with its message
// unchanged.
type bundleError struct{ err error }

func (e *bundleError) Error() string   { return e.err.Error() }
func (e *bundleError) Unwrap() []error { return []error{ErrBundle, e.err} }

// bundleErr returns err as a *bundleError, nil for nil.
func bundleErr(err error) error {
	if err == nil {
		return nil
	}
	return &bundleError{err}
}
