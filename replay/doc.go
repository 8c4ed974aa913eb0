// Package replay measures what a merge-queue strategy and a model bundle do to the
// queue: it replays a history on the queue engine (package queue) under the strategies
// of paper 001 §8 and paper 000 §V, with probabilities from the truth, from constants or
// from a bundle's scorer (NewScorerProbs; Sweep takes it from its caller), over seeds,
// worker counts and arrival rates, and writes summary.json, decisions.csv and
// report.html.
//
// # Worlds
//
// A World is traffic (the changes in queue order with their conflict edges), a ground
// truth and the true probabilities.
//
// Synthetic worlds (datasets/synth) have the whole truth. A change is intrinsically good
// as the world drew it (synth.World.Good; from a history folder it is recovered from the
// builds, see FromHistory). The conflict edges of a change are the rows of the pairs table
// with it behind: the changes ahead of it pending at its submission in the generating
// queue with overlapping affected targets. A build of change C succeeds iff C is good and
// its content holds no change of a pair with conflicted = true; it fails for an
// infrastructure reason with the world's flaky rate; its duration is log-normal with the
// world's DurationModel at the build's speculation height. Both draws come from a
// stream keyed by (seed, change, content, attempt), so every strategy sees the same draw
// for the same build. A change truly lands iff it is good and conflicts with no change of
// its edges that truly lands, which fixes every outcome in arrival order: the outcomes
// do not depend on the strategy, only the time and the builds they take do.
//
// Real histories carry no conflicts. A change's outcome is the observed one whatever
// its path, its build time is the mean of its observed builds with a result (paper 000
// §IX-C estimates the builds production did not run that way) and no build fails for an
// infrastructure reason. Conflict edges come from overlapping affected targets between
// changes pending together in the history when the history lists affected targets, and
// there are none otherwise. What this cannot model: a change that failed because of a
// change ahead of it is rejected on every path (its true path is unknown), a change that
// landed lands on every path, so speculation never meets a path that disagrees and
// P-conf does not matter; build times do not vary between builds of a change; flaky
// builds are not replayed.
//
// # Strategies
//
// The oracles know every outcome and build exactly the node on each change's true path.
// oracle is paper 001 §8's Oracle: it decides a change once that build has finished and
// no conflicting change ahead of it is pending, so conflicting changes land in queue
// order (paper 001 §8.1); the turnaround-normalised comparisons of paper 001 use it, and
// strategies that bypass can beat it. oracle-bypass decides a change as soon as its
// build finishes, even before conflicting changes ahead: a lower bound on every
// strategy, since the green mainline invariant asks for that build before any decision.
// single
// builds a change only when no conflicting change is pending ahead (bors, as paper 001
// describes it: conflicting changes one at a time, independent ones in parallel).
// optimistic builds every change on the path where every pending conflicting change
// ahead lands, except those whose build on their own assumed path failed (Zuul); when
// an assumption turns out wrong the engine aborts the builds that made it and the
// strategy rebuilds. speculate-all, sq2019, sq2024 and expected call scoring.Speculate
// (which decides with scoring.Decide) on the pending queue exactly as predictd's
// ScoreSpeculation does, with the probabilities of the source: speculate-all with P-succ
// 0.5 and P-conf 0 under PolicySQ2019 (every node equally likely at each depth, so
// shallow nodes first), sq2019 with no threshold, sq2024 and expected with the
// speculation threshold. A plan's finish-order math uses the source's build-time family
// (Probs.BuildFamily): the truth plans with the world's log-normal build times in a
// synthetic world (scoring's fixed Gauss–Hermite rule), Normal (Phi(Z)) for a real
// history; a bundle with the family predictd serves it with (trainer replay: Normal,
// as predictd's ScoreSpeculation uses Phi(Z) for every bundle today). A change's P-succ is given on the current HEAD: the source's
// P-succ times 1 − P-conf for every conflicting change ahead that has landed since its
// submission (the queue scoring sees names only pending changes). sq2019, sq2024 and
// expected keep a running build unless a new node is more than Setting.KeepMargin times
// as likely to be needed (scoring.Config.KeepMargin; trainer replay --keep-margin,
// default 4): an aborted build's work is lost. sq2019, sq2024 and expected also learn from
// their finished builds, as paper 001 §7.2's models do through their speculation
// features (the numbers of speculations that succeeded and failed, its strongest
// predictors): a change whose build succeeded is known good and compatible with every
// change of that build, one whose builds failed has its P-succ and P-conf updated by
// Bayes' rule (Setting.NoLearning, trainer replay --no-learning, turns it off). The
// sources give a change's probabilities at submission; without this a change whose
// build has succeeded keeps its prior P-succ, and the changes behind it keep
// speculating on its rejection. batch is a merge queue that batches
// and bisects (bors, for one) on the conflict graph: up to b waiting changes, none
// waiting for a conflicting change outside the batch, are built as one build on the
// current mainline (queue.Actions.Batches: one worker, the longest of the changes'
// build times, a failure that names no change), land together when it succeeds and are
// bisected when it fails (see Batch); b is fixed (Setting.BatchSize, trainer replay
// --batch-size, default DefaultBatchSize) or chosen for each batch from the source's
// P-succ and P-conf with scoring's two-phase batching cost (BatchAuto). Its builds per
// change count a batch once.
//
// # Outputs
//
// Run replays one configuration; Sweep runs every strategy × probability source ×
// workers × rate over seeds and aggregates the metrics into Cells with 95% intervals over
// seeds (Student t). WriteSummary, WriteDecisions and WriteReport write the files.
package replay
