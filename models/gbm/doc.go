// Package gbm implements gradient-boosted regression trees: a histogram-based,
// leaf-wise trainer in the manner of LightGBM, a reader and writer for LightGBM's text
// model format, and a batch predictor over flat node arrays.
//
// The trees follow Ke et al., "LightGBM: A Highly Efficient Gradient Boosting Decision
// Tree" (NeurIPS 2017, https://papers.nips.cc/paper/6907) and LightGBM's own
// conventions (https://lightgbm.readthedocs.io/en/latest/Parameters.html): a tree is
// fitted to the gradients g and hessians h of the loss at the current raw scores, a
// split maximises G_L²/(H_L+λ) + G_R²/(H_R+λ) - G²/(H+λ), and a leaf's value is the
// Newton step -G/(H+λ) times the learning rate.
//
// # Engine
//
// NewDataset quantises a feature matrix into at most 255 quantile bins per feature
// (NaN, the missing value, has a bin of its own); GrowTree fits one tree to gradients
// and hessians on it; NewModel assembles trees into a Model. models/ngboost builds on
// these three.
//
// # Conventions
//
// Inputs are dense float64 matrices (gonum mat.Matrix) with NaN for missing values.
// Predictions are written into a slice named dst: nil means allocate, a wrong length
// panics. Multiclass outputs are row-major, NClasses values per row.
package gbm
