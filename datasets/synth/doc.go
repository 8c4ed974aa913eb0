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
//     aside), a logistic function of its attributes and of its author's latent skill at
//     submission.
//     The build that decides a change (its build on the path of changes that really
//     landed) fails iff the change is intrinsically bad or conflicts with a change on
//     that path.
//   - pairs.true_p_conflict is [ConflictModel.Prob] of the pair's overlap of affected
//     targets, their sizes and the ahead change's blast radius (the share of the world's
//     targets it affects); pairs.conflicted is the draw. There is one row per ordered pair pending at
//     the same time with overlapping affected targets, the earlier submission ahead.
//   - builds.true_mu_s and builds.true_sigma_s are the mean and the standard deviation in
//     seconds of the log-normal duration the build was drawn from ([DurationModel],
//     [MeanSD]) at the build's start ([World.LogShift]), whatever the build's status.
//
// # Dynamics
//
// The world changes while it runs, as real histories do ([Dynamics], on by default,
// off with Config.NoDynamics): infrastructure episodes and flaky areas fail many builds
// for infrastructure reasons for hours or days ([World.InfraProb]), build times drift
// upwards, jump during cache outages and shift for good ([World.LogShift]), and some
// authors' skill, hence failure rate, changes once ([Developer.SkillAt]). The truth
// columns are what the world knew at the moment they describe, so the gap of a model
// to the Bayes limit stays measurable: true_p_success uses the author's skill at
// submission, true_mu_s and true_sigma_s the build-time distribution at the build's
// start. [World.Episodes] lists the episodes.
//
// # Builds
//
// A build's path lists, in queue order, the changes ahead of its change (pending when it
// was submitted and overlapping it) that the build assumed landed, decided ones included:
// the path is relative to the mainline at the change's submission. speculation_height is
// the number of path changes still undecided when the build started. Aborted builds end
// when the decision that contradicted their path was made; duration_s is the time they
// ran. See [Simulate] for the whole queue.
//
// # Culprit finding and conflict labels
//
// A change rejected on a non-empty path (its deciding build failed with landed changes
// ahead of it) is built again after its decision, to tell an intrinsically broken change
// from a conflict: first on the empty path, and, when that succeeds, on halves of the
// failing path, bisecting until every culprit is found (see [Simulate]). These builds
// start at or after the change's decided_at, have height 0 and a known status:
// succeeded iff the change is intrinsically good and conflicts with no change of their
// path. With them the conflict label of every pair (Ci ahead, Cj behind) of
// intrinsically good changes with Ci on Cj's landed path follows from the builds table,
// following paper 001's definition (Cj succeeds
// individually but fails combined with Ci):
//
//   - conflict: Ci landed, Cj has a succeeded build on some path S without Ci and a
//     failed build on S plus Ci;
//   - no conflict: Cj has a succeeded build whose path contains Ci.
//
// The coarser reading "Cj succeeded on some path without Ci and failed on its deciding
// path, which contains Ci" is exact only when Ci is alone on that path: with several
// changes on it, every change of a conflicted path satisfies it, the innocent ones too.
package synth
