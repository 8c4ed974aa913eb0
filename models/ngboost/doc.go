// Package ngboost implements NGBoost, natural gradient boosting for probabilistic
// regression (Duan et al., "NGBoost: Natural Gradient Boosting for Probabilistic
// Prediction", ICML 2020; reference implementation github.com/stanfordmlgroup/ngboost),
// on the regression trees of models/gbm. It predicts the build-time distribution
// N(μ, σ²) of paper 000 §VII and §IX-B, from which P(FT_y < FT_x) = Φ(Z) follows, and a
// LogNormal alternative for positive, right-skewed build times.
//
// # Distributions and parametrisation
//
// A prediction is a [Dist]: a [Family] and two parameters. Boosting works on
// θ = (θ₀, θ₁) = (loc, log scale), in that order:
//
//   - [Normal]: Y ~ N(loc, scale²); loc is the mean and scale the standard deviation of Y.
//   - [LogNormal]: log Y ~ N(loc, scale²); [Dist.Mean] and [Dist.StdDev] give the mean
//     and standard deviation of Y itself (seconds, for build times).
//
// Two more families for durations follow the reference's, with the log score only:
//
//   - [Exponential]: one boosted parameter θ₀ = log scale (the mean); the second
//     value of every parameter pair is 0 and has no trees.
//   - [Gamma]: θ = (log α, log β), shape α and rate β; its Fisher information
//     [[α²ψ'(α), -α], [-α, α]] is not diagonal, and the natural gradient solves it.
//
// # Algorithm
//
// [Fit] follows the reference: θ starts at the maximum-likelihood fit to the marginal
// of y ([FitMarginal]); each iteration computes, for every row of a minibatch, the
// natural gradient M(θ)⁻¹∇θ S(θ, y) of the scoring rule S, fits one depth-3 regression
// tree per parameter to it by least squares, finds a step scale by the reference's line
// search, and moves θ by learning_rate·scale times the trees' outputs. The scoring rule
// is the log score (negative log-likelihood; M is the Fisher information, diagonal in
// this parametrisation) or the CRPS ([CRPScore]; M is the reference's CRPS metric).
// Early stopping on a validation set keeps the iterations up to the best validation
// score; Refit then fits again on all rows with that number of iterations.
//
// Differences from the reference: the trees split on histograms of at most MaxBin
// (255) quantile bins per feature rather than on every distinct value; Fit's validation
// set is the last ValidationFraction of the rows (a time-ordered history validates on
// its most recent builds), not a random sample; the marginal fit uses the row weights.
//
// # Censored observations
//
// [FitCensored] takes right-censored rows (y is a lower bound: an aborted build ran at
// least y seconds) for the Normal and the LogNormal with the log score: their score is
// the log survival -log P(Y > y) ([ScoreCensored], [GradCensored]), the marginal start
// is the censored maximum-likelihood fit ([FitMarginalCensored], by EM), and the natural
// gradient uses the uncensored Fisher information for every row, as the reference's
// censored LogNormal does (censored.go says why that is safe).
//
// # Staged prediction
//
// [Model.StagedParams] yields every row's parameters after each iteration in one pass,
// [Model.StagedScore] the mean score of held-out rows after each iteration (the NGBoost
// paper picks the number of iterations by it), and [Model.Truncate] the model of the
// first k iterations, which predicts as a fit run for k iterations does (the
// reference's pred_dist(max_iter=k)). On data where the two algorithms coincide
// (features with fewer distinct values than MaxBin), the staged NLL of the training
// rows equals the reference's to 1e-15 (Normal) and 1e-6 nats (LogNormal, whose
// reference Fisher information adds 1e-5); testdata/reference holds the vectors and
// the script that made them.
//
// # Feature importance
//
// [Model.SplitCounts] and [Model.SplitGains] give, per parameter, LightGBM's "split"
// and "gain" importances of that parameter's trees: the number of splits on each
// feature, and the total decrease of the squared error of the natural-gradient fit
// they bring. "trainer fit" prints the gain shares and split counts of the top
// features.
//
// # Artifact format
//
// [Model.WriteJSON] writes one JSON object (format_version 1, [FormatVersion]):
//
//	format_version  1 (readers reject other values with ErrUnsupportedVersion)
//	kind            "ngboost" ([Kind])
//	dist            "normal", "lognormal", "exponential" or "gamma"
//	score           "nll" or "crps", the rule it was fitted with
//	feature_names   the input columns, in matrix column order
//	init_params     [loc, log scale] every row starts from ([log scale, 0] for an
//	                exponential, [log alpha, log beta] for a gamma)
//	n_iterations    number of boosting iterations kept
//	scalings        the line-search scale of each kept iteration
//	config          the hyper-parameters, under the reference's names
//	training        best_iteration (0-based, -1 without validation), refit, and per
//	                iteration run train_score (before the step) and val_score (after
//	                it; absent without validation; null where it was not finite)
//	params          one object {"name": ..., "lightgbm": text} per boosted parameter
//	                (loc and log_scale; log_scale for an exponential; log_alpha and
//	                log_beta for a gamma): a LightGBM text model (objective
//	                regression) whose trees are already multiplied by
//	                -learning_rate·scaling, so that
//	                θₖ(x) = init_params[k] + (raw prediction of params[k])(x)
//
// # Conventions
//
// Prediction methods write into a slice named dst: a nil dst is allocated, a dst of the
// wrong length panics, as does a matrix with the wrong number of columns. A *Model is
// immutable and safe for concurrent use.
//
// # Benchmarks and the UCI protocol
//
// The tests read the UCI benchmarks kin8nm and power-plant from testdata/uci.
// TestUCIProtocol runs the protocol of the NGBoost paper: per split, the last 20% of the
// training rows pick the number of iterations by early stopping, the model is refitted
// on all training rows with it, and the test NLL and RMSE are averaged over splits. By
// default it runs split 0 with learning rate 0.05 against loose bounds; the full form
// (splits 0..4, depth-3 trees, learning rate 0.01, minibatch_frac 0.5, up to 20000
// iterations), which must reach the published NLL within one standard deviation, runs
// with
//
//	go test ./models/ngboost -run TestUCIProtocol -v -timeout 30m -args -ngboost.uci-full
//
// Adding -ngboost.uci-minibatch=1 -ngboost.uci-iterations=2000 gives the reference's own
// setting instead.
package ngboost
