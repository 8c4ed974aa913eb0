// Package synth generates synthetic build histories with a known ground truth: the
// world behind "trainer synth".
//
// [Simulate] builds a world of developers, teams and a build-target graph for one of
// three profiles ("go", "ios", "android"), submits changes to a speculative merge queue
// for a number of days, and returns the resulting [datasets.History] together with the
// hidden truth. [Generate] returns the history alone. The same [Config] (seed included)
// always gives the same history, value for value.
//
// # Ground truth
//
// Every truth column is a known function of the data, so that a model fitted on the
// history can be compared with the Bayes limit:
//
//   - changes.true_p_success is [SuccessModel.Prob]: the probability that the change's
//     build on HEAD alone succeeds (its intrinsic outcome, infrastructure failures
//     aside), a logistic function of its attributes and of its author's latent skill.
//     The build that decides a change (its build on the path of changes that really
//     landed) fails iff the change is intrinsically bad or conflicts with a change on
//     that path.
//   - pairs.true_p_conflict is [ConflictModel.Prob] of the pair's overlap of affected
//     targets; pairs.conflicted is the draw. There is one row per ordered pair pending at
//     the same time with overlapping affected targets, the earlier submission ahead.
//   - builds.true_mu_s and builds.true_sigma_s are the mean and the standard deviation in
//     seconds of the log-normal duration the build was drawn from ([DurationModel],
//     [MeanSD]), whatever the build's status.
//
// # Builds
//
// A build's path lists, in queue order, the changes ahead of its change (pending when it
// was submitted and overlapping it) that the build assumed landed, decided ones included:
// the path is relative to the mainline at the change's submission. speculation_height is
// the number of path changes still undecided when the build started. Aborted builds end
// when the decision that contradicted their path was made; duration_s is the time they
// ran. See [Simulate] for the whole queue.
package synth
