// Package modelset reads and writes the models of a registry bundle: the champion and
// challenger model files, the baselines and the frozen developer table, checked against
// the feature schema of this build (SchemaHash). It is the part of the trainer that the
// scorer needs, so that predictd loads bundles without linking the training pipeline
// (reports, plotting, scheduling): training and internal/bundleload both import it, and
// it imports only features, the model packages, eval (for the predictive distributions
// of Predict) and registry.
//
// # Bundle files
//
// A bundle holds FileSuccess and FileConflict (logistic regressions, models/logistic
// JSON), the build-time champion FileBuildTimeLogNormal (NGBoost LogNormal,
// models/ngboost JSON; FileBuildTime, the NGBoost Normal, in bundles published before
// LogNormal became the champion), FileBuildTimeBounds (the NGBoost parameter bounds,
// ParamBounds, and the reference of a champion relative to the recent mean, Relative),
// the challengers FileSuccessGBM and FileConflictGBM (LightGBM text) and
// the other family's NGBoost (Models.BuildTimeChallenger), one
// baseline.<name>.json per fitted baseline (format BaselineVersion, see
// Baseline.WriteJSON), FileDevTable and FileFeatures (the schema names and hashes). The
// manifest's extra keys ExtraLeftOut, ExtraConflictLeftOut, ExtraConflictPrior,
// ExtraServedBaselines and ExtraChampions say which models a bundle lacks and which it
// serves.
package modelset
