// Package scoring turns models into the three predictions the speculation engine asks
// for (Scorer: P-succ, P-conf and the build time (mu, sigma) of changes described by
// their raw attributes) and holds sqpredict's speculation math: the probability that a
// build of SubmitQueue's speculation tree is needed (P-needed), the best-first selection
// of the builds to run under a speculation threshold and a worker capacity, the
// decisions a queue allows now (including bypassing large diffs, BLRD), the
// finish-order probability P(FT_y < FT_x) and the expected cost of batching. The
// speculation math is pure computation: no I/O, no context, no model; its probabilities
// come from the caller (in predictd, from a Scorer).
//
// Sources: paper 000 ("CI at Scale: Lean, Green, and Fast", §IV-VIII), paper 001
// ("Keeping Master Green at Scale", §4-5) and paper 003 ("Bypassing Large Diffs in
// SubmitQueue"); copies are in the repository's shared papers folder.
//
// # Conventions
//
// Changes are indices into Queue.Changes, which is the queue (arrival) order. Times are
// seconds. Probabilities must lie in [0, 1]: Speculate and Decide return an error
// wrapping ErrInvalidQueue for NaN or out-of-range input rather than clamping. Products
// of probabilities along a path are accumulated as sums of logarithms, so deep paths do
// not underflow; Node.LogPNeeded carries the logarithm.
//
// # Finish order
//
// For the ahead change x and the new change y (x arrived first), paper 000 §VII models
// the build times as T_x ~ N(mu_x, sigma_x²), T_y ~ N(mu_y, sigma_y²) and finish times
// FT = AT + T, so
//
//	P(FT_y < FT_x) = Phi(Z),  Z = ((AT_x − AT_y) − (mu_y − mu_x)) / sqrt(sigma_x² + sigma_y²).
//
// FinishBeforeProb computes it; CombineBuildTimes averages the means and the variances
// of a change's builds into its combined (mu, sigma²).
//
// Build times may instead be log-normal (Change.BuildFamily, BuildLogNormal), which is
// how build durations are distributed (issue 12). FinishBeforeProbOf computes the
// probability then: in closed form for two LogNormals with equal arrivals, otherwise as
// an expectation over one build time's standard-normal score by a fixed 20-, 32- or
// 64-point Gauss–Hermite rule, accepted where a check on its own nodes says it resolves
// the integrand (within 1e-7 of a brute-force integral on log-sigmas from 0.001 to 3,
// 2–5 µs a pair against 30 µs), and by adaptive Gauss–Kronrod quadrature where it does not. The
// search settles most BLRD threshold tests with cheap bounds, and a FinishCache in the
// Config keeps the probabilities from one call to the next.
//
// # Running builds
//
// Config.KeepMargin keeps a running build that the search would abort unless the new
// node taking its worker is more than KeepMargin times as likely to be needed: an
// aborted build's work is lost.
//
// # The speculation tree
//
// A node is a build of change C on one assumed outcome (landed or rejected) of every
// conflicting change still pending ahead of C, the set A_C; changes that do not
// conflict with C do not multiply its nodes (paper 001 §5: the 7 builds of Figure 5
// become 5 in Figure 7). Write a_i for the assumed outcome of i in A_C.
//
// The outcome probability of a change i on the node's path is the probability that
// the build of i on that path succeeds. Paper 001 Equation 4 gives it for one change
// ahead: P(B_{1.2} succeeds | B_1 succeeds) = P-succ_2 − P-conf_{1,2}, where P-conf is
// the joint probability that C_2 succeeds alone but fails on C_1. sqpredict's P-conf is
// conditional on both succeeding alone (the conflict label), so the joint probability
// is P-succ_2 × P-conf_{1,2} and the equation reads P-succ_2 × (1 − P-conf_{1,2}). With
// several conflicting changes k ahead of i, conflicts are independent:
//
//	q_i = P(i lands | path) = P-succ_i × ∏_{k ∈ A_i} (1 − P-conf_{k,i} x_k),
//
// where x_k is 1 if k is assumed landed on the path and 0 if rejected. A change k ahead
// of i that is not on the path (it conflicts with i but not with C) is unknown to the
// node; x_k is then its marginal landing probability, computed in queue order by the
// same formula with every x replaced by a marginal (a mean-field approximation; it is
// exact whenever A_i ⊆ A_C, as in every example of the papers). A change decided by
// this call has x_k fixed to 1 or 0. When the path fixes the whole path of i and i has
// a finished build there, q_i is 1 or 0: its result is known.
//
// # Policies
//
// PolicySQ2019 (paper 001 Equations 1-5). One build decides a change, so a node is
// needed exactly when every change in A_C has the assumed outcome:
//
//	P-needed = ∏_{i ∈ A_C} P-outcome_i,  P-outcome_i = q_i if a_i is landed, 1 − q_i if rejected,
//
// taken in queue order, each q_i conditioned on the assumptions before it. It is a
// chain of conditional probabilities, so the P-needed of a change's 2^|A_C| nodes sum
// to 1; for the full tree of three changes it gives Equation 5,
// P-needed(B_{1.2.3}) = P-succ_1 × (P-succ_2 − P-conf_{1,2}).
//
// PolicySQ2024 (paper 000 §V-B). The bypass set B_C holds the changes j in A_C with
// P(FT_C < FT_j) ≥ Config.BLRDThreshold; for them both outcomes must be built (BLRD
// needs every path), so they contribute the probability that the bypass happens:
//
//	P-needed = ∏_{i ∈ A_C \ B_C} P-outcome_i × ∏_{j ∈ B_C} P(FT_C < FT_j).
//
// When the second product falls below Config.FallbackFloor (paper 000: "→ 0", as the
// speculation depth grows), C falls back to PolicySQ2019. With three conflicting
// changes this reproduces the paper's Cases 1-5 exactly.
//
// PolicyExpected (sqpredict's generalisation). Node N is needed if, for every j in
// A_C, either C finishes before j (event E_j: BLRD then needs C's builds on both
// outcomes of j, so N is needed whatever a_j is) or j finishes first with the outcome
// a_j (event O_j). Hence N is needed on ∩_j (E_j ∪ O_j). Taking the finish order
// independent of build results and of the other changes' events,
//
//	P(E_j ∪ O_j) = P(E_j) + P(not E_j) P(O_j) = p_j + (1 − p_j) P-outcome_j,
//	P-needed = ∏_{j ∈ A_C} (p_j + (1 − p_j) P-outcome_j),  p_j = P(FT_C < FT_j).
//
// With p_j = 0 the factor is P-outcome_j (PolicySQ2019); with p_j = 1 it is 1, which is
// PolicySQ2024's factor P(FT_C < FT_j) = 1. In between it never drops a path abruptly
// at a threshold. Which policy serves the queue best is for the replay simulator.
//
// # Selection
//
// Every factor is at most 1, so P-needed only falls with depth. Speculate searches
// best-first over tree prefixes (a change plus the outcomes assumed for the first d
// changes of A_C) with one heap for all changes, ordered by the prefix's log P-needed
// plus the log of an upper bound on the factors still to come (an A* search with an
// admissible bound). The bound of change i's level is u_i = max(q_i^max, 1 − q_i^min),
// with q_i^max = P-succ_i times (1 − P-conf) over the landed changes and q_i^min the same
// over every change not rejected; under PolicySQ2024 a bypass level's bound is its exact
// factor, and under PolicyExpected Phi is bounded by its value at the next edge of a
// fixed grid of Z. Complete nodes therefore come off the heap in decreasing P-needed.
// Prefixes whose bound is below Config.SpeculationThreshold, or whose P-needed is 0, are
// never pushed, and the search stops once Config.Capacity nodes are selected: it expands
// only prefixes that could still beat the last selected node, never the 2^n nodes of the
// tree, and a tree whose bound is already too low is never opened. Selected nodes with a
// running build are kept; running builds not selected are aborted and reported with the
// P-needed of their own path. Nodes with a finished build are not candidates.
//
// # Decisions
//
// Decide (and Speculate) walk the queue in order. A change with no conflicting change
// pending ahead is decided by its one build on the path of the outcomes ahead. A change
// with r conflicting changes pending ahead is decided now when all 2^r paths over them
// have finished builds with the same result (paper 003: landing then commutes with the
// changes ahead; rejecting never affects them): it lands or is rejected, bypassing them.
// Otherwise it waits, and the decision says for whom and why (a build not finished,
// paths missing, or paths that disagree). A decided change is landed or rejected for
// the changes behind it.
//
// # Batching
//
// b independent changes with success probabilities p_i are built together; a build of
// a group succeeds when all its changes do, with probability S(G) = ∏_{i ∈ G} p_i.
//
// One-phase: one build of the batch; if it fails, each change alone. Expected builds
// are 1 + b (1 − S(batch)), per change 1/b + 1 − S(batch), and with a common q
//
//	cost₁(b) = 1 + 1/b − q^b  (b ≥ 2).
//
// Two-phase: one build of the batch; if it fails, one build of each half (H_1, the
// first ceil(b/2) changes, and H_2); if a half of two or more changes fails, each of
// its changes alone (a half of one change has just had its own build). A half fails
// only if the batch fails, so P(batch fails and H fails) = 1 − S(H), and
//
//	E = 1 + 2 (1 − S(batch)) + Σ_{H : |H| ≥ 2} |H| (1 − S(H)),
//	cost₂(b) = E / b = (1 + 2(1 − q^b) + h(1 − q^h)[h ≥ 2] + (b−h)(1 − q^(b−h))[b−h ≥ 2]) / b,
//
// with h = ceil(b/2) for a common q. A batch of one costs one build under both schemes.
// The tests check both formulas against an enumeration of all 2^b outcomes.
// BestBatchSize and BestBatchSizeList return the cost of every batch size and the
// best one. Products S are taken in log space and 1 − S as −expm1(log S).
package scoring
