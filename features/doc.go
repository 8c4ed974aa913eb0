// Package features turns build histories into the feature matrices every sqpredict model
// is fit on, and computes the same feature vectors for single requests at serving time.
//
// Every feature is defined once, in the per-row functions [Success], [Conflict] and
// [BuildTime]. The trainer reaches them through [NewIndex] and [Index.Table], which derive
// labels and the point-in-time inputs of each row from a [datasets.History]; the scorer
// calls them directly with a [datasets.Change], the [Speculation] state it was told about
// (for a success row, the one [SubmissionSpeculation] builds at the change's submission)
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
//   - Success rows, one per decided change, describing it at its submission time t.
//     The label is P-succ's event as paper 001 §4 uses it (P(B_i.j succeeds | B_i
//     succeeds) = P-succ_j x (1 - P-conf_i,j)): the change's intrinsic outcome, whether
//     its build on HEAD alone succeeds. It is 1 when any decisive build of the change
//     succeeded, on any path (a build succeeds only when its change is good and nothing
//     on its path broke it); 0 when none did and one failed on the empty path; otherwise
//     the row is skipped ("undetermined_alone": it failed only with other changes on the
//     path, which may be their fault; "no_decisive_build" when it has no decisive
//     build). A queue with culprit finding builds every change rejected on a non-empty
//     path alone, so its changes all get a label; without it, those changes are
//     undetermined and the labelled rows over-represent good changes (synthetic go, 3
//     days, seed 11: 460 of 4,308 changes skipped, mean label 0.90 against 0.83 with
//     culprit finding). The table's BuildID names the build
//     that settles the label (the first, in order of finish, succeeded one for 1, failed
//     one alone for 0); it enters no feature. On a synthetic history the label's
//     probability is exactly true_p_success.
//   - Conflict rows, one per ordered pair (A ahead, B behind) of decided changes of one
//     repository where A was pending when B was submitted and their affected targets share
//     at least one name (a candidate pair with an undecided change is skipped as
//     "undecided"). The label is P-conf's event, which paper 001 §4-5 conditions on
//     both changes succeeding (P(B on a path with A succeeds | A's build succeeds) =
//     P-succ(B) x (1 - P-conf(A, B))): it is defined only when A succeeds (A landed: its
//     build on its path succeeded; it does not when it was rejected or its success label
//     is 0) and B succeeds without A (some decisive build of B succeeded: a build
//     that succeeds with A on its path succeeds without it too). Then it is 1 when B
//     fails with A while succeeding without it (a decisive build of B on a path P holding
//     A failed, and one on the set P less A succeeded: the pairwise evidence of a queue's
//     culprit finding; a failure on a path that holds other changes besides A does not
//     tell which of them is the culprit), and 0 when B succeeds with A (a decisive build
//     of B whose path contains A succeeded). When A does not succeed, or B has no
//     succeeded build and one without A failed, the pair is outside P-conf's condition
//     and skipped as "not_both_succeed_alone"; when a term is unknown (A's outcome is
//     unknown and its success label is not 0; B's only
//     decisive builds failed with A) or the evidence is missing, as "undetermined"; when
//     B's builds say both 1 and 0 (flaky builds), as "contradictory_builds". Pairs where
//     either change's affected targets are unknown are skipped as
//     "unknown_affected_targets". A conflict is observable only when the queue builds B
//     without A after B failed with it (culprit finding); a history without such builds
//     labels its non-conflicts and leaves its conflicts undetermined, so its labelled
//     pairs under-represent conflicts (on a synthetic go history without culprit
//     finding, a mean label of 0.0004 against a mean true_p_conflict of 0.036).
//     Against the synthetic truth the label has precision and recall 1: no pair is
//     labelled a conflict because the behind change failed with the ahead one for
//     another reason (the pairwise evidence, a failure with A and a success on the
//     same path without A, rules out a broken behind change and every other change of
//     the path), and every real conflict inside the label's condition (A landed, B
//     intrinsically good) gets label 1, since the queue's culprit finding bisects
//     every rejected path (seed 1, 90 days: 1,744 of 1,744 conflicts on ios, 1,601 on
//     go, 2,325 on android; TestSyntheticConflictLabels checks 3-day histories).
//     Real conflicts outside the condition (A rejected, B broken alone) are skipped,
//     not mislabelled: P-conf is conditioned on both changes succeeding. There is
//     thus no label noise to remove here; on real histories, flaky builds that say
//     both are skipped as "contradictory_builds".
//   - Build-time rows, one per decisive build with a known duration_s (the target).
//
// # Pair features
//
// A conflict row holds each change's change, revision and developer groups (prefixed
// ahead_ and behind_: their size and blast radius, affected_targets and its log, and each
// author's smoothed conflict rate) and the pair group, computed from the two changes
// alone so that the scorer needs nothing else: the shared affected targets (count, its
// log1p, Jaccard), containment (shared over the smaller change's targets: a small change
// inside a large diff), the shared share of each side, whether the two changes' main
// areas agree (the first package path component most of their affected targets fall
// in, //team03/... -> team03), whether the author is the same, and the time between the
// submissions. Paper 001 §5 builds conflict analysis on this overlap, and paper 000 §IV
// observes that large diffs that affect most targets conflict with nearly every change
// behind them. Overlap on targets many changes touch (hot targets) would need the
// repository's recent activity by target, which the per-row function does not receive,
// so it is not a feature; the overlap count stands in for it.
//
// # Point in time
//
// A row belongs to a change submitted at t (the behind change for pairs). Its developer
// features see only results known strictly before t: changes decided, decisive builds
// finished of changes decided, and labelled pairs with both changes decided and every
// decisive build of the behind change finished, all strictly before t; a change's
// success label counts from when it was settled (its first succeeded build finished;
// for a label 0 or none, its last decisive build finished), since builds a queue runs
// after a decision (culprit finding) may settle it later. Its queue features
// (conflicts_count, queue_ahead) describe the changes pending at t: ahead in the queue,
// not decided before t (a change never decided, still queued when the history was
// exported, is pending for good).
//
// The speculation group of a success row is also what is known at t (see
// [SubmissionSpeculation], which the scorer calls with the same inputs):
// speculation_height and queue_ahead are the number of changes pending ahead at t, the
// height at which a queue speculating on every change ahead first builds it;
// path_changes and log1p_path_lines_changed describe the most likely path at t, every
// change pending ahead that may conflict with it (overlapping affected targets, or
// unknown ones), assumed to land; and spec_succeeded and spec_failed count the earlier
// attempts of the change's revision (the submissions with the same revision_id decided
// before t) that landed and that were rejected, the only speculation outcomes of the
// change known at t. They count outcomes rather than intrinsic labels because an
// outcome is known at its decision, which the queue (and so the scorer) sees, while a
// label may be settled only later by culprit finding. Nothing decided after t, neither which changes ahead land nor any
// build of the change, enters a success row; only its label. An earlier definition
// described the change's build on the path of the changes that really landed: which
// build that is depends on outcomes decided after t, a leak.
//
// A build-time row describes its build as it starts: its speculation counts are the
// change's own decisive builds that finished strictly before that, and its height and
// path are the build's.
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
// # Recency
//
// Success rows end with a recency group and build-time rows with a recent-duration group
// (see [Recent]), read from the same time-ordered events as the developer statistics and
// so under the same point-in-time rule: a change's success label counts from when it was
// settled, a decisive build's duration from when its change was decided and it had
// finished, both strictly before the row's submission time. The repository's failure
// shares over its latest 5, 20 and 100 labelled changes, whether the latest one failed,
// and the hours since its latest failure (log1p); the author's latest label and failure
// share over their latest 10 (NaN for an unknown author: a history without authors gets
// no developer signal rather than the repository's dressed as one); the latest earlier
// attempt of the revision; the pooled failure share of the latest 20 labelled changes of
// each affected target; and, for build time, the latest decisive build's duration and
// the mean of the latest 10 succeeded builds (Zuul's estimate), both log1p. Outcomes
// (landed, rejected) are not used: real histories rarely record them, and a label is
// what the models predict. The state is kept per repository in the [DevTable], so a
// bundle's frozen table gives the scorer the recency of its training window's end.
//
// # Schemas
//
// Each row kind has a [Schema]: its ordered feature names and [SchemaVersion]. Its hash,
// the SHA-256 of the kind, the version and the names (see [Schema.Hash]), is pinned by a golden
// test and goes into every model bundle; the scorer refuses a bundle whose hash differs
// from its own.
//
// # Extra attributes
//
// A history's extra attributes (numeric source columns outside the schema,
// datasets.Extra) end the success and build-time rows, one column x_<name> each in the
// history's order, NaN where a change lacks one ([Kind.SchemaWithExtra], [Extra]); they
// are part of the row kind's schema names and so of its hash. Conflict rows take none.
// The scorer gives a model the attributes its column names list ([ExtraOf]) by name,
// whatever order or superset a request sends. A name that leaks the label is refused
// (datasets.CheckExtraName). They are descriptions of the change at its submission as
// the source recorded them: the point-in-time rule holds only as far as the source's own
// computation did (BuildFast's history counts look at earlier builds only).
//
// # Developer table format
//
// [WriteDevTable] writes a JSON object (format_version [DevTableVersion]) holding
// feature_schema_version, prior_strength, as_of (RFC 3339), the counts of the
// population and of every author (changes, labelled, succeeded, pairs, conflicts, builds
// and log_duration_sum) and the recency state: per repository its latest 100 labels
// (1 = failed, oldest first), the time of its latest failure, the latest duration and the
// latest 10 succeeded durations, the latest label of every revision and a window of the
// latest 20 labels of every affected target; per author a window of the latest 10 labels.
// A window is {"b": bits, "n": count}, the newest label in bit 0. Lookups compute the smoothed statistics from these counts, so the
// scorer gets exactly what the trainer's rows saw at as_of.
//
// A table pseudonymised under an operator's AuthorKey (DevTable.Pseudonymise) names every
// author, in the statistics and the recency windows, by the hex HMAC-SHA256 of the name
// under the key, and records author_key_id, a hash of the key; the key is never written.
// Read back, it scores only with that key (DevTable.WithAuthorKey), which hashes the
// authors it is asked about the same way.
package features
