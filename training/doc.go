// Package training is the trainer's job as a library: a build history in, a published
// model bundle out. Train selects a repository and a window of history, builds the
// success, conflict and build-time feature tables with package features, fits the models
// on the earlier part of the window and evaluates them on the later part (a time
// holdout), refits them on the whole window, freezes the developer table, and returns a
// Result; Publish checks the gates against the current champion and writes the Result as
// a registry bundle. LoadModels reads the models of a bundle back, Evaluate scores them on
// any history and Compare scores two bundles on the same rows with paired-bootstrap
// intervals. Schedule runs a job on a cron schedule (robfig/cron, UTC).
//
// # Models
//
// The champions are a logistic regression of success (P-succ), a logistic regression of
// conflict (P-conf) and an NGBoost LogNormal model of build time (mu, sigma in seconds;
// build times are positive and right-skewed, issue 12), as in ARCHITECTURE.md.
// Challengers on request: "gbm-success", gradient-boosted trees of success,
// "gbm-conflict", gradient-boosted trees of conflicts (small trees, stopped early on the
// latest training rows' log loss so that the rare class stays calibrated; see
// conflictGBM), and "ngboost-normal", NGBoost Normal of build time ("ngboost-lognormal",
// the former challenger, is accepted and ignored). A challenger that fails to fit is
// dropped with a warning and listed in the manifest extra "dropped_challengers"; it never
// fails the champions.
//
// Both NGBoost models have their parameters clipped to the range their predictions span
// on their training rows without the most extreme 0.5% at each end (modelset.BoundsOf,
// modelset.ParamBounds, written to buildtime.bounds.json), and
// build durations below MinDuration (1 s) are raised to it in every build-time table.
// Both also fit the aborted builds of their rows as right-censored durations (they ran
// at least duration_s; censored.go, ngboost.FitCensored), unless
// NGBoostParams.DropAborted: dropping them, the long builds the queue gave up on, biases
// the durations short. The metrics score finished builds only. The LogNormal champion
// may model the duration relative to the recent mean of succeeded builds
// (modelset.Relative, relative.go), with trees or without (the reference form: the
// recent mean with a fitted shift and scale): by default each fit chooses its form on
// its inner folds (SelectRelative), and metrics.json records whether the holdout model
// is relative as buildtime.relative (1 for both relative forms).
//
// Hyper-parameters that no one default serves from a real repository's few hundred
// rows to a synthetic world's tens of thousands are chosen on validation inside each
// fit's own rows, never on the holdout (select.go, smalltable.go): the logistic
// champions' L2 strength C (when not configured) from LogisticCGrid by the log loss of
// two forward-chaining folds over the latest 20% of the rows by submission time, and the
// gbm-success parameters (when Config.GBM is empty) from SmallGBMGrid with early
// stopping on the latest 20%; the chosen model is then refitted on every row. The
// holdout models choose on the rows before the cut, the published ones on the whole
// window. The holdout models' choices are in metrics.json as success.c, conflict.c and
// success.gbm.num_leaves, min_data_in_leaf, learning_rate and num_iterations.
//
// # Window and time split
//
// The window is [AsOf - Window, AsOf). The features are computed from every change of the
// repository submitted before AsOf and their builds that finished before it (what was
// known at AsOf), so developer statistics may look back before the window; every developer statistic is point-in-time (package features). A row is kept
// when its change was submitted in the window and its label was known before AsOf:
// the change was decided (success rows), both changes of the pair were decided (conflict
// rows), or the build finished (build-time rows) before AsOf. A change counts as decided
// once both its decided_at (when recorded) and the finish of its last build have passed:
// a speculative build may finish after the decision, and conflict labels read them all.
//
// The holdout cut is the submission time of the change at the start of the last
// HoldoutFraction of the changes submitted in the window (eval.HoldoutByTime); the same
// cut splits all three tables. It is taken from every change, not from the success rows,
// because which changes get a success row depends on their outcomes. Holdout rows are those submitted at or after the cut. Training rows for the
// holdout evaluation are those submitted before the cut whose label was also known
// before it (rows whose outcome came after the cut are purged), so no information from
// after the cut reaches a model that is scored on the holdout. The published models are
// then refitted on every row of the window.
//
// # Evaluating on another history
//
// Evaluate and Compare ("trainer eval", "trainer compare") score a bundle's models on the
// rows of any history with that history's own point-in-time features, not with the
// developer table frozen into the bundle: every row sees the developer statistics of
// what was decided before it, so the scores are those of a scorer whose table is fresh,
// and a row from after the bundle's window is not scored with statistics that are older
// than the row. EvalOptions.From (--from) restricts the rows to those submitted after,
// for example, the bundle's window, so that its training rows are left out; the trainer's
// eval and compare commands default to that (published models are refitted on the whole
// window, so even its holdout rows are in-sample for them).
//
// # Bundle
//
// Publish writes these files (the manifest is the registry's):
//
//	success.logistic.json              logistic artifact (models/logistic)
//	conflict.logistic.json             logistic artifact
//	buildtime.ngboost-lognormal.json   NGBoost LogNormal artifact (models/ngboost)
//	buildtime.bounds.json              the NGBoost parameter bounds (modelset)
//	success.gbm.txt                    challenger gbm-success, LightGBM text (models/gbm)
//	conflict.gbm.txt                   challenger gbm-conflict, LightGBM text (models/gbm)
//	buildtime.ngboost.json             challenger ngboost-normal (NGBoost Normal)
//	devtable.json                      developer table frozen at AsOf (features); with
//	                                   Config.AuthorKey its authors are HMAC-SHA256
//	                                   pseudonyms and the manifest extra
//	                                   "author_key_id" names the key
//	features.json                      the three feature schemas and the combined hash;
//	                                   the success and build-time schemas end with the
//	                                   history's extra attributes (x_*), which the
//	                                   manifest extra "extra_attributes" lists
//	metrics.json                       holdout metrics, flat, NaN written as null
//	report.html, *.png                 the evaluation report (eval/report), titled with
//	                                   the version (chosen with registry.NextVersion first)
//
// A bundle Publish refuses keeps its metrics.json, report (headed by the reason) and
// reason.txt in RejectedDir of the repository's registry folder, under the name the
// version would have had; the error is a *RejectedError naming the report.
//
// The bundle is published under RegistryName(repo) (the registry allows only
// [A-Za-z0-9._-] in names; "gradle/gradle" becomes "gradle_gradle"), and the manifest
// extra "history_repo" keeps the history's name. With Config.AllowPartial a champion
// whose table has no rows or one class (real histories without durations or pairs) is
// left out, listed in the manifest extra "left_out"; LoadModels refuses such a bundle
// and LoadPartialModels leaves the model nil.
//
// The manifest carries the same metrics under flat keys such as "success.auc" (champion
// models) and "success.gbm.auc" (challengers), leaving out values that are NaN, the
// window, trained_at (the time of publication), the holdout cut, seed and configuration
// in extra, and the feature schema hash SchemaHash: the hex SHA-256 of "success
// <hash>\nconflict <hash>\nbuildtime <hash>\n" over the three features.Schema hashes,
// so that a change to any row kind changes it. It identifies the feature code; the
// extra attributes a bundle's models take (a history's x_* columns, issue 12 item 3)
// are in features.json's per-kind schemas and hashes, in the manifest extra
// "extra_attributes" and in every model's column names, which the loader checks
// against each other.
//
// # Metrics
//
// The conflict metrics score P(no conflict) = 1 − P-conf against the label "no
// conflict", so that eval's failure class (label 0) is the conflicts: failures,
// failure_precision, failure_recall and failure_f1 are those of conflicting pairs.
//
// Metric keys are "<section>.<metric>" for the champion and "<section>.<model>.<metric>"
// for challengers (e.g. "buildtime.ngboost-normal.nll"), with sections success, conflict and buildtime. Classifier metrics:
// n, failures, accuracy, auc, pr_auc, log_loss, brier, ece, failure_precision,
// failure_recall, failure_f1. Build-time metrics: n, mape and mdape (mean and median
// absolute percentage error, in percent), rmse and mae, all of the point forecast
// (eval.Predictive.Point: the predictive median, and for zuul-mean10 Zuul's estimate,
// its mean), nll, crps, coverage50, coverage80, coverage95. When the history has
// ground truth (synthetic histories) the same metrics of the true probabilities or true
// log-normal distribution appear under the model name "truth", and bayes_gap_log_loss
// (classifiers) or bayes_gap_nll (build time) is the model's value minus the truth's: how
// far the model is from the Bayes limit, and bayes_skill_log_loss (classifiers) is the
// model's log-loss skill over the constant training rate towards the truth,
// (LL_constant − LL_model) / (LL_constant − LL_truth) with the pass-rate (success) or
// constant-rate (conflict) baseline as the constant (eval.Skill): 0 for a model that
// learnt nothing, 1 at the Bayes limit. The success truth, true_p_success, is the
// probability that a change's build succeeds alone, while the label is its build on the
// path that really landed, which also fails on a conflict; that gap can therefore be
// slightly negative. A metric that is undefined (AUC with one class in the holdout) is
// NaN in memory, null in metrics.json and absent from the manifest.
//
// # Gates
//
// Before publishing, every gated metric of the new champion models is compared with the
// same metric in the manifest of the repository's current champion. A metric that is
// worse by more than its Gate allows stops the publication with a *GateError naming the
// metric, both values and the margin. A gated metric the new bundle cannot compute (NaN,
// such as an AUC on a holdout with one class) fails its gate even without a champion;
// metrics missing from the new bundle (a model left out) or from the champion are not
// compared. A bundle without any model, without holdout rows or without one finite
// metric is never published, and neither is a champion that answers out of range on
// the holdout rows (a probability NaN or outside [0, 1], a build-time location, scale or
// moment that is not finite, a scale <= 0): Train returns an *OutputError naming the
// model and the row. Both the holdout models and the refitted ones are checked; a
// challenger that answers out of range is dropped with a warning and listed in
// "dropped_challengers". The
// two values come from the holdouts of different windows (last week's and this week's),
// so a margin must absorb the week-to-week noise of a metric; Compare measures two
// bundles on the same rows when that noise matters.
package training
