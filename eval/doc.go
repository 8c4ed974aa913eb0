// Package eval measures models: metrics for classifiers, regressors and predictive
// distributions, and time-ordered holdout evaluation.
//
// # Classifiers
//
// Binary classifiers predict p = P(y = 1) with labels y in {0, 1}. In sqpredict label 1
// is success and label 0 is failure (a build that fails), the class the merge queue must
// catch, so the
// precision, recall, F1 and average precision here are those of the FAILURE class
// (label 0), scored by 1 - p. Decisions use the threshold DecisionThreshold: a row is
// predicted to succeed when p >= 0.5. [EvaluateClassifier] computes every metric and
// returns an error for labels other than 0 and 1 or probabilities outside [0, 1]; the
// single-metric functions panic on such input and on slices of different lengths.
//
// # Regressors and predictive distributions
//
// [EvaluateRegression] gives RMSE, MAE and MAPE of point predictions;
// [EvaluateDistribution] scores predictive distributions (Normal, LogNormal) by negative
// log likelihood, CRPS, interval coverage and the PIT histogram.
//
// # Holdout
//
// Build histories are time series, so models are evaluated on a later period than they
// were trained on: [HoldoutByTime] splits row indices at a time cut-off, never mixing
// rows of the same instant between the two sides.
//
// # Comparing two models
//
// [PairedBootstrap], [PairedBootstrapMean] and [PairedBootstrapFunc] compare a model B
// with a model A on the same rows: the metric difference B - A with a paired bootstrap
// percentile interval ([PairedDiff]).
package eval
