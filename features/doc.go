// Package features turns build histories into the feature matrices every sqpredict model
// is fit on, and computes the same feature vectors for single requests at serving time.
//
// Every feature is defined once, in the per-row functions [Success], [Conflict] and
// [BuildTime]. The trainer reaches them through [NewIndex] and [Index.Table], which derive
// labels and the point-in-time inputs of each row from a [datasets.History]; the scorer
// calls them directly with a [datasets.Change], the [Speculation] state it was told about
// and the [DevStats] of a [DevTable] frozen into the model bundle at training. Both paths
// give bit-identical vectors for the same inputs, so there is no training/serving skew by
// construction. Missing values are NaN.
//
// # Row kinds and labels
//
// The feature groups come from "Keeping Master Green at Scale" (EuroSys 2019) §7.2
// (change, revision, developer, speculation) and "CI at Scale" (2024) §IX-B (the build-time
// list: targets changed/added/removed, conflicts count, speculation height, lines, files,
// commits, developer). A change's decision time D is its decided_at, or, when the history
// does not record it, the latest finished_at (else started_at) of its builds; a change
// is decided when D or its outcome is known, or when the history has no time for it at
// all (a complete record without timestamps). A build is
// decisive when its status is succeeded or failed; infra_failed and aborted builds say
// nothing about the change and are ignored everywhere below.
//
//   - Success rows, one per decided change. The real path of a change C is the set of
//     changes A of the same repository that are ahead of C in the queue (submitted earlier),
//     were still pending when C was submitted (D(A) >= submitted_at(C): not decided before), landed, and were
//     decided no later than C (D(A) <= D(C)). A build of C is on its real path when its
//     path holds only real-path changes, each once, and every real-path change that may
//     conflict with C (shares an affected target, or either's targets are unknown) and
//     was not decided at the very instant C was submitted (a tie a history cannot order): a
//     change that affects none of C's targets cannot change C's build, and queues, like
//     paper 001 §5 and the synthetic one, leave such changes off speculation paths. The
//     label is the status of C's labelling build: its decisive build on its real path;
//     when there is none, its decisive build on the empty path; the latest finished such
//     build wins. With neither the row is skipped ("no_build_on_real_or_empty_path", or
//     "no_decisive_build" when C has no decisive build at all). The label is P-succ's
//     event: the change's deciding build succeeds.
//   - Conflict rows, one per ordered pair (A ahead, B behind) of decided changes of one
//     repository where A was pending when B was submitted and their affected targets share
//     at least one name (a candidate pair with an undecided change is skipped as
//     "undecided"). The label is P-conf's event, which paper 001 §4-5 conditions on
//     both changes succeeding (P(B on a path with A succeeds | A's build succeeds) =
//     P-succ(B) x (1 - P-conf(A, B))): it is defined only when A succeeds (A's success
//     label is 1) and B succeeds without A (some decisive build of B succeeded: a build
//     that succeeds with A on its path succeeds without it too). Then it is 1 when B
//     fails with A while succeeding without it (a decisive build of B on a path P holding
//     A failed, and one on the set P less A succeeded: the pairwise evidence of a queue's
//     culprit finding; a failure on a path that holds other changes besides A does not
//     tell which of them is the culprit), and 0 when B succeeds with A (a decisive build
//     of B whose path contains A succeeded). When A's label is 0, or B has no succeeded
//     build and one without A failed, the pair is outside P-conf's condition and skipped
//     as "not_both_succeed_alone"; when a term is unknown (A has no label; B's only
//     decisive builds failed with A) or the evidence is missing, as "undetermined"; when
//     B's builds say both 1 and 0 (flaky builds), as "contradictory_builds". Pairs where
//     either change's affected targets are unknown are skipped as
//     "unknown_affected_targets". A conflict is observable only when the queue builds B
//     without A after B failed with it (culprit finding); a history without such builds
//     labels its non-conflicts and leaves its conflicts undetermined, so its labelled
//     pairs under-represent conflicts (on a synthetic go history without culprit
//     finding, a mean label of 0.0004 against a mean true_p_conflict of 0.036).
//   - Build-time rows, one per decisive build with a known duration_s (the target).
//
// # Point in time
//
// A row belongs to a change submitted at t (the behind change for pairs). Its developer
// features see only results known strictly before t: changes decided (and their
// labelling build finished), decisive builds finished of changes decided, and labelled
// pairs with both changes decided and every decisive build of the behind change
// finished, all strictly before t; builds a queue runs after a decision (culprit
// finding) count from their finish. Its queue features (conflicts_count, queue_ahead)
// describe the changes pending at t: ahead in the queue, not decided before t (a
// change never decided, still queued when the history was exported, is pending for good). Its
// speculation counts are the change's own decisive builds that finished strictly before
// the row's build started: the build itself for a build-time row, and for a success row
// its labelling build. A success row describes
// the moment its labelling build started, with that build's height and path: the
// prediction the queue makes for that node of its speculation tree. So neither the
// labelling build's own result nor that of any build started at or after it (such as
// the builds a queue runs after a rejection to find the culprit) enters the row. Nothing
// about a change decided after t, other than what was known when it was submitted (its
// attributes), enters a row at t, except through which build of the change labels it:
// which changes ahead landed decides which of its builds is on its real path.
//
// # Developer statistics
//
// Rates are smoothed towards the population with a Beta prior worth [PriorStrength]
// observations: rate = (k + PriorStrength*m) / (n + PriorStrength), where k of n are the
// author's successes (conflicted pairs), and m, the population rate over everything
// counted so far, is itself smoothed with Laplace's rule, (K+1)/(N+2), so it is 1/2 before
// any data. The developer's prior mean log1p(duration_s) is smoothed the same way towards
// the population mean (NaN while no build has been counted). An author never seen gets the
// population values and 0 prior changes; an empty author name is unknown and gets NaN
// prior changes. The author name itself is not a feature (the schema is fixed-width); the
// smoothed rates are its target encoding.
//
// # Schemas
//
// Each row kind has a [Schema]: its ordered feature names and [SchemaVersion]. Its hash,
// the SHA-256 of the kind, the version and the names (see [Schema.Hash]), is pinned by a golden
// test and goes into every model bundle; the scorer refuses a bundle whose hash differs
// from its own.
//
// # Developer table format
//
// [WriteDevTable] writes a JSON object (format_version [DevTableVersion]) holding
// feature_schema_version, prior_strength, as_of (RFC 3339), and the counts of the
// population and of every author: changes, labelled, succeeded, pairs, conflicts, builds
// and log_duration_sum. Lookups compute the smoothed statistics from these counts, so the
// scorer gets exactly what the trainer's rows saw at as_of.
package features
