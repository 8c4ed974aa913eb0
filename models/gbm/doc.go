// Package gbm implements gradient-boosted regression trees: a histogram-based,
// leaf-wise trainer in the manner of LightGBM, a reader and writer for LightGBM's text
// model format, and a batch predictor over flat node arrays.
//
// The method is Ke et al., "LightGBM: A Highly Efficient Gradient Boosting Decision
// Tree" (NeurIPS 2017, https://papers.nips.cc/paper/6907), with LightGBM's parameter
// names and defaults (https://lightgbm.readthedocs.io/en/latest/Parameters.html). Each
// round fits a tree to the gradients g and hessians h of the loss at the current raw
// scores: a split maximises G_L²/(H_L+λ) + G_R²/(H_R+λ) - G²/(H+λ), a leaf's value is
// the Newton step -G/(H+λ), and the tree is added scaled by the learning rate.
//
// # Objectives
//
// Fit trains "regression" (squared error, identity link: the prediction is the raw
// score), "binary" (log loss on labels 0/1, sigmoid link: the prediction is
// P(y=1) = 1/(1+exp(-raw)); is_unbalance and scale_pos_weight weight the classes) and
// "poisson" (counts, log link: the prediction is exp(raw); the hessian is
// exp(raw + poisson_max_delta_step)), "regression_l1" and "quantile" (absolute and
// pinball loss: after each tree is grown its leaves are set to the median or alpha
// quantile of their rows' residuals, LightGBM's RenewTreeOutput; unweighted rows
// only) and "huber" (squared error within alpha, linear beyond), or any loss given as
// a gradient/hessian callback (the prediction is then the raw score). The initial
// score is LightGBM's boost_from_average (the weighted mean, its log-odds, its log,
// or the median or alpha quantile), folded into the first tree.
//
// Models read from LightGBM files may also use regression_l1, huber, fair, quantile and
// mape (identity; "sqrt" squares the output), cross_entropy (sigmoid), poisson, gamma and
// tweedie (log link: exp of the raw score) and multiclass (softmax over num_class raw
// scores, trees interleaved by class).
//
// # Engine
//
// NewDataset quantises a feature matrix into at most 255 quantile bins per feature
// (NaN, the missing value, has a bin of its own); NewDatasetCategorical also bins the
// columns named categorical as LightGBM's categorical_feature does (one bin per
// frequent category, bin 0 for missing and rare ones); NewDatasetThreads bounds the
// goroutines binning uses. GrowTree fits one tree to
// gradients and hessians on it (GrowTreeLeaves also reports the leaf of every row it
// grew on); NewModel assembles trees into a Model. Fit is built from these three, and
// so is models/ngboost.
//
// The split search is LightGBM 4.6.0's (src/treelearner/feature_histogram.hpp): a
// numerical feature is scanned from its last bin down with missing values left, then,
// when it has missing values, from the first bin up with them right; a categorical
// feature splits one category against the rest (at most max_cat_to_onehot bins) or a
// prefix of its categories sorted by G/(H + cat_smooth) with cat_l2 and
// min_data_per_group; gains and outputs use lambda_l1, lambda_l2, max_delta_step and
// min_gain_to_split as LightGBM does, with its kEpsilon on hessian sums and its
// tie-breaking; monotone_constraints follow LightGBM's basic method. Fit also keeps
// labels, weights, gradients and hessians in float32 and estimates a bin's rows from
// its hessians, as LightGBM does, so that on data LightGBM bins alike (numerical bin
// edges are this package's quantile midpoints, not LightGBM's; they agree when every
// distinct value has a bin) it grows LightGBM's trees: testdata/gen_cat.py and
// gen_opts.py pin the raw scores, equal to the bit on amd64.
//
// # Conventions
//
// Inputs are dense float64 matrices (gonum mat.Matrix) with NaN for missing values.
// Predictions are written into a slice named dst: nil means allocate, a wrong length
// panics, as does a matrix without NFeatures columns. Multiclass outputs are row-major,
// NClasses values per row. A numerical split sends x left when x <= threshold, as
// LightGBM does. Missing values follow each split's learned default direction; a
// feature without missing values in training gets LightGBM's missing type None, so
// a NaN goes where 0 goes. Like
// LightGBM's parsers and C API, training and prediction read every value with
// |x| <= kZeroThreshold (1.0000000180025095e-35, LightGBM's 1e-35f) as 0, so a row at
// exactly ±kZeroThreshold takes the branch of 0 (the compiled walks move thresholds
// inside that band to its edge instead of testing every value).
//
// # Prediction
//
// NewModel and ReadLightGBM compile the trees once. Numerical trees (missing type None
// or NaN) go into one 16-byte node array for the whole model, children adjacent and
// leaves absorbing, walked with no branch on the split direction (the sign bit of
// threshold - x); trees of depth at most 3 on at most 256 features are further padded
// to perfect trees in fixed-size arrays, walked with no bounds checks. Batches go
// through blocks of 64 rows with the trees in the outer loop; PredictRawRow and
// AddRawRow take one row without a matrix and do not allocate. Rows with NaN or
// infinite values take a checked walk, and models with categorical splits or missing
// type Zero the general one. Every path adds each row's tree values in model order, so
// all give the same bits.
//
// # Artifact format
//
// Models are stored in LightGBM's text format (Booster.save_model), which LightGBM and
// its Python package load. ReadLightGBM accepts version=v2, v3 and v4; WriteLightGBM
// writes version=v3, the version of the LightGBM 4.x reference files in testdata/. A
// file is:
//
//	tree
//	version=v3
//	num_class=1                    (K for multiclass)
//	num_tree_per_iteration=1       (K for multiclass)
//	label_index=0
//	max_feature_idx=N-1
//	objective=binary sigmoid:1     (absent for a custom objective)
//	feature_names=a b c
//	feature_infos=[0:1] none ...   ([min:max], category lists, or none)
//	tree_sizes=S0 S1 ...           (byte length of each Tree=K block)
//
//	Tree=0
//	num_leaves=L
//	num_cat=C
//	split_feature=...              (L-1 values, one per internal node)
//	split_gain=...
//	threshold=...                  (x <= threshold goes left; bitset index if categorical)
//	decision_type=...              (bit 0 categorical, bit 1 default left,
//	                                bits 2-3 missing type: 0 None, 1 Zero, 2 NaN)
//	left_child=... right_child=... (node index >= 0, or ^leaf < 0)
//	leaf_value=...                 (L values, learning rate included)
//	leaf_weight=... leaf_count=... internal_value=... internal_weight=... internal_count=...
//	cat_boundaries=... cat_threshold=...   (only when C > 0: C bitsets of uint32 words)
//	is_linear=0
//	shrinkage=0.1
//
//	Tree=1
//	...
//	end of trees
//
//	feature_importances:
//	a=12
//	...
//
//	parameters:
//	[num_leaves: 31]
//	...
//	end of parameters
//
// Linear trees (is_linear=1) are rejected with ErrUnsupportedFeature.
package gbm
