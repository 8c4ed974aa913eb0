// Package logistic fits and evaluates binary logistic regression: the P-succ and P-conf
// models of SubmitQueue ("Keeping Master Green at Scale", EuroSys 2019, §4.2 and §7.2,
// papers/001), which predict the probability that a change's build succeeds and that two
// changes conflict.
//
// # Model and objective
//
// With inputs x (d features), the model is
//
//	P(y=1 | x) = σ(b + Σ_j w_j (x_j - μ_j) / s_j),   σ(z) = 1 / (1 + e^-z),
//
// where μ_j and s_j are the weighted mean and population standard deviation of feature j
// over the training rows (standardisation happens inside the model; s_j = 1 for a
// constant feature). [Fit] minimises, as scikit-learn's LogisticRegression does on
// standardised inputs (a Pipeline of StandardScaler and LogisticRegression),
//
//	L2:  ½‖w‖² + C Σ_i c_i ℓ_i        L1:  ‖w‖₁ + C Σ_i c_i ℓ_i
//	ℓ_i = log(1 + e^{z_i}) - y_i z_i  (the log loss of row i at log-odds z_i)
//
// with c_i the sample weight times the class weight of row i; the intercept b is not
// penalised. The L2 problem is solved with L-BFGS (gonum/optimize, Moré–Thuente line
// search) on the exact gradient; the L1 problem, which is not differentiable, with the
// accelerated proximal gradient method FISTA (Beck and Teboulle, SIAM J. Imaging Sciences
// 2(1), 2009) with backtracking, soft-thresholding w and leaving b free. Both stop when
// the infinity norm of the gradient of the objective divided by C Σ c_i (for L1, of its
// minimum-norm subgradient) falls below Config.Tol, the scaling scikit-learn's lbfgs
// solver uses. The coefficients on the original scale of the inputs are w_j / s_j, with
// intercept b - Σ_j μ_j w_j / s_j.
//
// # Missing values
//
// A NaN input is replaced by the training mean μ_j of its feature, recorded in the
// model, both in Fit (where μ_j is computed over the non-NaN values) and in Predict. On
// the standardised scale an imputed value is 0, so it contributes nothing to the log-odds.
// ±Inf inputs are an error in Fit and give ±Inf log-odds (probability 0 or 1, or NaN
// when infinities cancel) in Predict.
//
// # Feature selection
//
// Config.NFeaturesToSelect > 0 runs recursive feature elimination (RFE, as scikit-learn's
// sklearn.feature_selection.RFE and paper 001 §7.2): fit, drop the Config.Step features
// with the smallest |w_j| on the standardised scale, refit, until the target count
// remains. Dropped features keep their column in the input matrix and get coefficient 0.
//
// # Unpenalised columns
//
// Config.Unpenalized leaves some coefficients out of the penalty, as the intercept is
// (glmnet's penalty.factor of 0). A strong penalty then shrinks the model towards the
// unpenalised fit on those columns alone instead of towards a constant: the trainer
// anchors P-succ at the last-outcome baseline this way (training/select.go).
//
// # Artifact format
//
// A model is saved as one JSON object (format_version 1, or 2 for a model that clips
// its inputs to their training range, Config.ClipToTrainingRange):
//
//	format_version         1 or 2 (readers reject other values with ErrUnsupportedVersion)
//	kind                   "logistic"
//	feature_names          d names, in input column order
//	means, scales          μ_j and s_j, d numbers each
//	selected               d booleans: false for features removed by RFE
//	coefficients           w_j on the standardised scale (0 when not selected)
//	intercept              b on the standardised scale
//	original_coefficients  w_j / s_j, checked on read against the above
//	original_intercept     b - Σ_j μ_j w_j / s_j, checked likewise
//	config                 C, penalty, max_iter, tol, class_weight,
//	                       n_features_to_select, step, and unpenalized (the column
//	                       indices of Config.Unpenalized, left out when empty; readers
//	                       older than it refuse a model that has it)
//	training               rows, iterations, converged, log_loss
//	clip_lo, clip_hi       version 2 only: the training minimum and maximum of each
//	                       feature, which Predict clamps the inputs to (NaN is still
//	                       imputed with μ_j, and ±Inf is clamped too)
//
// # Conventions
//
// Prediction methods write into a slice named dst: a nil dst is allocated, a dst of the
// wrong length panics, as does a matrix with the wrong number of columns. A *Model is
// immutable and safe for concurrent use.
package logistic
