// Package ngboost implements NGBoost, natural gradient boosting for probabilistic
// regression (Duan et al., "NGBoost: Natural Gradient Boosting for Probabilistic
// Prediction", ICML 2020; reference implementation github.com/stanfordmlgroup/ngboost),
// on the regression trees of models/gbm. It predicts the build-time distribution of
// paper 000 §VII and §IX-B.
package ngboost
