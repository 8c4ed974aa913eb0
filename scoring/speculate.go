package scoring

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Policy selects how P-needed of a speculation-tree node is computed; the package
// documentation derives each.
type Policy uint8

// The P-needed policies.
const (
	// PolicySQ2019 is paper 001 Equations 1-5: one build decides a change.
	PolicySQ2019 Policy = iota
	// PolicySQ2024 is paper 000 §V-B: conflicting changes ahead that the change is
	// likely to outrun contribute P(FT_C < FT_Cj) instead of an outcome probability,
	// with the fall-back to PolicySQ2019 when their product is small.
	PolicySQ2024
	// PolicyExpected weighs each conflicting change ahead by
	// p_bypass + (1 − p_bypass) × P-outcome.
	PolicyExpected
)

// String returns "sq2019", "sq2024" or "expected".
func (p Policy) String() string {
	switch p {
	case PolicySQ2019:
		return "sq2019"
	case PolicySQ2024:
		return "sq2024"
	case PolicyExpected:
		return "expected"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// ParsePolicy returns the policy named s ("sq2019", "sq2024" or "expected"); the empty
// string is PolicySQ2019.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "sq2019":
		return PolicySQ2019, nil
	case "sq2024":
		return PolicySQ2024, nil
	case "expected":
		return PolicyExpected, nil
	}
	return 0, fmt.Errorf("%w: unknown policy %q (want sq2019, sq2024 or expected)", ErrInvalidConfig, s)
}

// Defaults used for zero Config fields.
const (
	// DefaultBLRDThreshold is the P(FT_C < FT_Cj) from which PolicySQ2024 lets C
	// bypass Cj: more likely than not to finish first. Paper 000 §VI fixes the value
	// from empirical build data; tune it per repository.
	DefaultBLRDThreshold = 0.5
	// DefaultMaxExplored bounds the tree prefixes one Speculate call may expand.
	DefaultMaxExplored = 1 << 20
	// DefaultMaxPrefixWords bounds the 64-bit words of prefix assignments one call
	// may store: 1<<22 words are 32 MiB. Every expanded prefix copies its parent's
	// assignment, one bit per conflicting change pending ahead, so a change with
	// thousands of such changes fills this long before DefaultMaxExplored.
	DefaultMaxPrefixWords = 1 << 22
	// DefaultMaxNodeIDs bounds the change indices listed in the Landed and Rejected
	// sets of a plan's nodes, summed over the nodes: 1<<20 indices are 8 MiB, and a
	// few times that once named by change ids in a response.
	DefaultMaxNodeIDs = 1 << 20
)

// Names of the limits that can truncate a plan, as Plan.Limit reports them.
const (
	LimitMaxExplored    = "max_explored"
	LimitMaxPrefixWords = "max_prefix_words"
	LimitMaxNodeIDs     = "max_node_ids"
)

// Config holds the parameters of Speculate. The zero value is PolicySQ2019 with no
// threshold, but Capacity must be set.
type Config struct {
	// Policy is the P-needed policy; zero is PolicySQ2019.
	Policy Policy
	// SpeculationThreshold is the least P-needed of a selected node (paper 000 §VIII),
	// in [0, 1]. Zero selects every node whose P-needed is positive.
	SpeculationThreshold float64
	// Capacity is the number of builds that may run at once: kept running builds plus
	// new ones. It must be at least 1.
	Capacity int
	// BLRDThreshold is the P(FT_C < FT_Cj) from which PolicySQ2024 puts Cj in C's bypass
	// set, in (0, 1]. Zero means DefaultBLRDThreshold.
	BLRDThreshold float64
	// FallbackFloor is the product of P(FT_C < FT_Cj) over the bypass set below which
	// PolicySQ2024 falls back to PolicySQ2019 for C, in [0, 1]. Zero means
	// SpeculationThreshold: below it no bypass node of C could be selected, while the
	// most likely PolicySQ2019 node might.
	FallbackFloor float64
	// KeepMargin, when at least 1, keeps running builds against new nodes: a running
	// build the search would abort stays (Action Keep) unless the new node that would
	// take its worker is more than KeepMargin times as likely to be needed, and, with
	// a worker free, unless KeepMargin times its P-needed is below
	// SpeculationThreshold. An aborted build's work is lost, and a node that is a
	// little more likely to be needed rarely pays for it (see keepRunning). Zero keeps
	// no build the search did not select; values in (0, 1) are invalid.
	KeepMargin float64
	// FinishCache, when not nil, remembers P(FT_y < FT_x) of pairs whose build times
	// are not both Normal from one call to the next (see FinishCache). The plan does not
	// depend on it; a Config that holds one must not be used by concurrent calls.
	FinishCache *FinishCache
	// MaxExplored bounds the number of tree prefixes expanded; when reached the plan is
	// marked Truncated. Zero means DefaultMaxExplored.
	MaxExplored int
	// MaxPrefixWords bounds the memory of the search: the 64-bit words of prefix
	// assignments stored. When reached the plan is marked Truncated. Zero means
	// DefaultMaxPrefixWords.
	MaxPrefixWords int
	// MaxNodeIDs bounds the size of the plan: the entries of Node.Landed and
	// Node.Rejected summed over all nodes. A selected node that would pass it ends
	// the search (Truncated); an aborted build past it is still listed, with nil
	// Landed and Rejected. Zero means DefaultMaxNodeIDs.
	MaxNodeIDs int
}

func (c *Config) validate() error {
	switch {
	case c.Policy > PolicyExpected:
		return fmt.Errorf("%w: unknown policy %d", ErrInvalidConfig, c.Policy)
	case !checkProb(c.SpeculationThreshold):
		return fmt.Errorf("%w: speculation threshold %v outside [0, 1]", ErrInvalidConfig, c.SpeculationThreshold)
	case c.Capacity < 1:
		return fmt.Errorf("%w: capacity %d, want at least 1", ErrInvalidConfig, c.Capacity)
	case !checkProb(c.BLRDThreshold):
		return fmt.Errorf("%w: BLRD threshold %v outside [0, 1]", ErrInvalidConfig, c.BLRDThreshold)
	case !checkProb(c.FallbackFloor):
		return fmt.Errorf("%w: fallback floor %v outside [0, 1]", ErrInvalidConfig, c.FallbackFloor)
	case c.KeepMargin != 0 && !(c.KeepMargin >= 1) || math.IsInf(c.KeepMargin, 1):
		return fmt.Errorf("%w: keep margin %v, want 0 or a finite value of at least 1", ErrInvalidConfig, c.KeepMargin)
	case c.MaxExplored < 0:
		return fmt.Errorf("%w: max explored %d is negative", ErrInvalidConfig, c.MaxExplored)
	case c.MaxPrefixWords < 0:
		return fmt.Errorf("%w: max prefix words %d is negative", ErrInvalidConfig, c.MaxPrefixWords)
	case c.MaxNodeIDs < 0:
		return fmt.Errorf("%w: max node ids %d is negative", ErrInvalidConfig, c.MaxNodeIDs)
	}
	return nil
}

// Action is what the engine should do with a node of the plan.
type Action uint8

// The actions of a plan.
const (
	// Start: the node is selected and no build runs for it; start one.
	Start Action = iota
	// Keep: the node is selected and its build is already running.
	Keep
	// Abort: a running build that is not selected (below the threshold, beyond the
	// capacity, duplicated, or made useless by a decision); stop it.
	Abort
)

// String returns "start", "keep" or "abort".
func (a Action) String() string {
	switch a {
	case Start:
		return "start"
	case Keep:
		return "keep"
	case Abort:
		return "abort"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Node is one build of the speculation tree: a change built on one assumed outcome of
// every conflicting change still pending ahead of it.
type Node struct {
	// Change is the index of the change the build decides.
	Change int
	// Landed and Rejected partition the conflicting changes pending ahead of Change
	// (in queue order) into those the build assumes landed (its path) and rejected.
	// Changes decided by this call's decisions are not listed: a landed one is part of
	// every path. For an aborted build whose path contradicts such a decision, or whose
	// change is decided, both are nil.
	Landed, Rejected []int
	// PNeeded is the probability that the build's result is needed, in [0, 1], and
	// LogPNeeded its natural logarithm (-Inf for 0).
	PNeeded, LogPNeeded float64
	// Action says whether to start, keep or abort the build.
	Action Action
	// Build is the index in Queue.Builds of the running build for Keep and Abort, -1
	// for Start.
	Build int
	// StaleBase reports an aborted build whose base is stale (Build.StaleBase): the
	// engine should build its node again, and the plan may list that node as Start.
	StaleBase bool
}

// Plan is the result of Speculate.
type Plan struct {
	// Nodes holds the selected nodes (Start or Keep) by decreasing P-needed, followed
	// by the running builds to abort, by decreasing P-needed.
	Nodes []Node
	// Decisions holds the decision on every change, in queue order (see Decide).
	Decisions []Decision
	// Explored is the number of tree prefixes expanded by the search.
	Explored int
	// Truncated reports that the search stopped at a limit of Config (MaxExplored,
	// MaxPrefixWords or MaxNodeIDs) before reaching the threshold or the capacity, and
	// Limit names that limit (LimitMaxExplored, LimitMaxPrefixWords or
	// LimitMaxNodeIDs); empty when not truncated.
	Truncated bool
	Limit     string
}

// Speculate decides what can be decided now (see Decide) and selects the builds to run
// for the changes still pending: the nodes with P-needed at least
// cfg.SpeculationThreshold, highest first, up to cfg.Capacity, keeping running builds
// that are selected and aborting the others. Nodes that already have a finished build
// are not candidates.
//
// The search is best-first over tree prefixes (P-needed only falls with depth), so it
// expands only prefixes whose probability exceeds that of the last selected node, never
// the 2^n nodes of the tree.
//
// An empty queue gives an empty plan. Speculate returns an error wrapping
// ErrInvalidQueue or ErrInvalidConfig for bad input: all probabilities must lie in
// [0, 1] (NaN is rejected, nothing is clamped), times must be finite and sigmas
// non-negative.
//
// Speculate may be called concurrently (with a FinishCache only as its doc says). It
// recycles its working memory from one call to the next; the plan it returns shares
// nothing with it or with q.
func Speculate(q Queue, cfg Config) (*Plan, error) {
	return SpeculateContext(context.Background(), q, cfg)
}

// ctxCheckEvery is how many iterations of a long loop pass between two checks of the
// context: a check costs tens of nanoseconds, an iteration about as much.
const ctxCheckEvery = 1024

// SpeculateContext is Speculate that stops when ctx is done: the search, the decisions
// and the other loops over the queue check ctx every ctxCheckEvery iterations. A done
// ctx returns an error wrapping ctx.Err() and the number of prefixes explored so far.
func SpeculateContext(ctx context.Context, q Queue, cfg Config) (*Plan, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	g, err := q.validate()
	if err != nil {
		return nil, err
	}
	if cfg.BLRDThreshold == 0 {
		cfg.BLRDThreshold = DefaultBLRDThreshold
	}
	if cfg.FallbackFloor == 0 {
		cfg.FallbackFloor = cfg.SpeculationThreshold
	}
	if cfg.MaxExplored == 0 {
		cfg.MaxExplored = DefaultMaxExplored
	}
	if cfg.MaxPrefixWords == 0 {
		cfg.MaxPrefixWords = DefaultMaxPrefixWords
	}
	if cfg.MaxNodeIDs == 0 {
		cfg.MaxNodeIDs = DefaultMaxNodeIDs
	}
	defer g.release()
	s := newSearch(ctx, &q, g, &cfg)
	defer s.release()
	if s.plan.Decisions, s.state, err = decideContext(ctx, &q, g); err != nil {
		return nil, fmt.Errorf("scoring: deciding: %w", err)
	}
	steps := []func() error{s.prepare, s.run, s.abortRest, s.keepRunning}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("scoring: speculation stopped after %d prefixes: %w", s.plan.Explored, err)
		}
	}
	plan := s.plan // s goes back to the pool
	return &plan, nil
}

// level is depth d of one change's tree: the conflicting change i pending ahead whose
// outcome the node assumes there, and what its factor needs.
type level struct {
	i int32
	// cst is P-succ of i times (1 − c·x) over the changes ahead of i that conflict with
	// it but are not on the tree's path (x is 1 or 0 for decided changes, the marginal
	// landing probability otherwise).
	cst float64
	// terms[lo:hi] are the conflicting changes of i on the tree's path.
	lo, hi int32
	// det reports that the path fixes i's own path and i has finished builds.
	det bool
	// pb is P(FT_C < FT_i) where the policy uses it, NaN otherwise.
	pb float64
}

// term is a change on the tree's path that conflicts with a level's change.
type term struct {
	p   int32   // position on the path
	omc float64 // 1 − P-conf
	z   uint64  // zobrist key of the change
}

// tree is the speculation tree of one pending change j, built lazily.
type tree struct {
	inited bool
	pend   []int // conflicting changes pending ahead of j, in queue order (WaitingFor of its decision)
	words  int32
	levels []level
	// pb[p] is P(FT_j < FT_pend[p]) for the bypass set under PolicySQ2024 (NaN
	// outside it), followed by the logarithms, pb[len(pend)+p]; nil when j does not
	// bypass.
	pb []float64
	// pre[p], in a queue whose build times are not all Normal, is P(FT_j < FT_pend[p])
	// once computed (finishOf), NaN before; under PolicySQ2024, −1 when initTree found
	// it below the BLRD threshold without computing it.
	pre []float64
	// j is the tree's change.
	j int
	// logh[d] is the log of an upper bound on the product of the factors of levels d
	// and deeper, so that a prefix's log P-needed plus logh[depth] bounds every node
	// below it; logh[len(pend)] is 0. It is filled when the root is first expanded;
	// root is logh[0], known from the start.
	logh []float64
	root float64
	// exact reports that pb and root are final; until then (PolicySQ2024 only) root is
	// a looser bound that counts bypass candidates as 1.
	exact bool
	// own maps the node key of j's builds to the index of its first running build, or
	// -1 when a finished build exists.
	own map[uint64]int32
}

// item is a tree prefix in the search heap.
type item struct {
	key   float64 // logp + logh[depth]: the best log P-needed below the prefix
	logp  float64
	t     int32 // change of the tree
	depth int32
	off   int32 // offset of its assignment bits in search.bits
}

// search is the state of one Speculate call: the queue, its decisions, the lazily
// built trees and the heap of tree prefixes.
type search struct {
	ctx   context.Context
	q     *Queue
	g     *graph
	cfg   *Config
	state []int8
	m     []float64 // marginal landing probability of each change
	// u[i] bounds both factors of change i on any path: max(q_i, 1 − q_i) ≤ u[i].
	u []float64
	// logU[i] is log u[i].
	logU []float64
	// x and onPath are scratch for logPNeeded: the assumed outcome (or marginal) of
	// every change, and whether it is on the path being scored.
	x      []float64
	onPath []bool
	// loghArena and pbArena back the trees' logh and pb slices.
	loghArena, pbArena []float64
	zob                []uint64
	trees              []tree
	// finishedBy[i] maps the key of a finished build of i (its landed set over i's
	// pending conflicting changes ahead) to whether it succeeded.
	finishedBy []map[uint64]bool
	terms      []term
	bits       []uint64
	heap       []item
	kept       []bool
	// ids counts the entries of Landed and Rejected of the plan's nodes so far.
	ids    int
	logThr float64
	zThr   float64
	// preArena holds the trees' pre slices; nonNormal reports a queue with a build
	// time that is not Normal, whose trees keep them.
	preArena  []float64
	nonNormal bool
	// sides holds the prepared build times of the changes (side), sided which are set.
	sides []finishSide
	sided []bool
	// keepable holds the builds (Queue.Builds indices) that abortRest aborted and
	// keepRunning may keep.
	keepable map[int]bool
	// inPath is scratch for the paths of builds, all false between uses.
	inPath []bool
	// xReady reports that x and onPath are set up for this call.
	xReady bool
	plan   Plan
}

// searchPool recycles the state of Speculate calls: a caller that plans again and again
// (predictd, a replay) would otherwise allocate every slice, map and arena anew on each
// call, and the garbage collector took a third of the CPU time of a 90-day replay.
var searchPool = sync.Pool{New: func() any { return new(search) }}

// resize returns x with length n and every element zero, reusing its array when it is
// large enough.
func resize[T any](x []T, n int) []T {
	if cap(x) < n {
		return make([]T, n)
	}
	x = x[:n]
	clear(x)
	return x
}

func newSearch(ctx context.Context, q *Queue, g *graph, cfg *Config) *search {
	n := len(q.Changes)
	s := searchPool.Get().(*search)
	s.nonNormal = slices.ContainsFunc(q.Changes, func(c Change) bool { return c.BuildFamily != BuildNormal })
	s.ctx, s.q, s.g, s.cfg = ctx, q, g, cfg
	s.m, s.u, s.logU = resize(s.m, n), resize(s.u, n), resize(s.logU, n)
	s.zob = resize(s.zob, n)
	// A tree keeps the arrays of its levels and the map of its builds from an earlier
	// call; everything else starts from zero.
	if cap(s.trees) < n {
		s.trees = append(s.trees[:cap(s.trees)], make([]tree, n-cap(s.trees))...)
	}
	s.trees = s.trees[:n]
	for j := range s.trees {
		t := &s.trees[j]
		lv, own := t.levels[:0], t.own
		clear(own)
		*t = tree{levels: lv, own: own}
	}
	if cap(s.finishedBy) < n {
		s.finishedBy = append(s.finishedBy[:cap(s.finishedBy)], make([]map[uint64]bool, n-cap(s.finishedBy))...)
	}
	s.finishedBy = s.finishedBy[:n]
	for _, f := range s.finishedBy {
		clear(f)
	}
	s.kept = resize(s.kept, len(q.Builds))
	s.inPath = resize(s.inPath, n)
	s.logThr = math.Log(cfg.SpeculationThreshold)
	s.zThr = 0
	s.loghArena, s.pbArena, s.preArena = s.loghArena[:0], s.pbArena[:0], s.preArena[:0]
	s.terms, s.bits, s.heap = s.terms[:0], s.bits[:0], s.heap[:0]
	s.sides, s.sided = s.sides[:0], s.sided[:0]
	s.xReady = false
	clear(s.keepable)
	s.ids = 0
	s.plan = Plan{}
	return s
}

// release returns s to the pool without the caller's data.
func (s *search) release() {
	s.ctx, s.q, s.g, s.cfg, s.state = nil, nil, nil, nil, nil
	s.plan = Plan{}
	for j := range s.trees {
		s.trees[j].pend = nil // Decisions' memory, which the plan returned
	}
	searchPool.Put(s)
}

// prepare computes the marginals and indexes the builds by path.
func (s *search) prepare() error {
	for k, c := range s.q.Changes {
		if k%ctxCheckEvery == ctxCheckEvery-1 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		s.zob[k] = zobrist(k)
		// p is the marginal of a pending k. q_k lies between P-succ_k times (1 − c)
		// over the conflicting changes ahead that are not rejected (all landed), lo,
		// and times (1 − c) over the landed ones only, hi.
		p, hi, lo := c.PSucc, c.PSucc, c.PSucc
		for _, e := range s.g.row(k) {
			p *= 1 - e.c*s.m[e.k]
			switch s.state[e.k] {
			case landed:
				hi *= 1 - e.c
				lo *= 1 - e.c
			case pending:
				lo *= 1 - e.c
			}
		}
		s.u[k] = max(hi, 1-lo)
		switch s.state[k] {
		case landed:
			s.m[k] = 1
		case rejected:
			s.m[k] = 0
		default:
			s.m[k] = p
		}
	}
	if s.cfg.Policy == PolicySQ2024 {
		s.zThr = normalQuantile(s.cfg.BLRDThreshold)
	}
	inPath := s.inPath
	for b, bd := range s.q.Builds {
		if b%ctxCheckEvery == ctxCheckEvery-1 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		j := bd.Change
		if s.state[j] != pending || bd.StaleBase {
			continue
		}
		for _, k := range bd.Path {
			inPath[k] = true
		}
		key, ok := pathKey(s.g.row(j), s.state, inPath)
		for _, k := range bd.Path {
			inPath[k] = false
		}
		if !ok {
			continue
		}
		if bd.Status != BuildRunning {
			if s.finishedBy[j] == nil {
				s.finishedBy[j] = make(map[uint64]bool)
			}
			s.finishedBy[j][key] = bd.Status == BuildSucceeded
		}
		t := &s.trees[j]
		if t.own == nil {
			t.own = make(map[uint64]int32)
		}
		// A finished build makes the node no candidate; of several running builds
		// on one node the first is kept and the others are aborted later.
		if bd.Status != BuildRunning {
			t.own[key] = -1
		} else if _, seen := t.own[key]; !seen {
			t.own[key] = int32(b)
		}
	}
	for i, f := range s.finishedBy {
		if len(f) > 0 {
			s.u[i] = 1 // a known result makes either factor 1
		}
		s.logU[i] = math.Log(s.u[i])
	}
	return nil
}

// initTree fills the pending path of change j's tree, its bypass probabilities and the
// bound on the factors below each depth.
func (s *search) initTree(j int) *tree {
	t := &s.trees[j]
	if t.inited {
		return t
	}
	t.inited, t.j = true, j
	t.pend = s.plan.Decisions[j].WaitingFor
	t.words = int32((len(t.pend) + 63) / 64)
	cj := s.q.Changes[j]
	if s.cfg.Policy == PolicySQ2024 {
		// The bypass set needs an Erfc and a logarithm per member, and only trees that
		// are popped need it: until then a member's level is bounded by 1. For build
		// times that are not both Normal the test costs an integral now and then, so
		// its outcome is kept for exactTree (t.pre).
		if s.nonNormal && len(t.pend) > 0 {
			t.pre = s.newPre(len(t.pend))
		}
		for p, i := range t.pend {
			ci := s.q.Changes[i]
			below, pb := false, math.NaN()
			if ci.BuildFamily != BuildNormal || cj.BuildFamily != BuildNormal {
				below, pb = s.finishBelow(i, j, stdNormalCDF(s.zThr))
			} else {
				below = finishZBelow(ci, cj, s.zThr)
			}
			if below {
				t.root += s.logU[i]
				pb = -1
			}
			if t.pre != nil {
				t.pre[p] = pb
			}
		}
		return t
	}
	s.exactTree(j, t)
	return t
}

// exactTree computes the bypass set of change j's tree (PolicySQ2024) and the exact
// bound of its root.
func (s *search) exactTree(j int, t *tree) {
	if t.exact {
		return
	}
	t.exact = true
	cj := s.q.Changes[j]
	if s.cfg.Policy == PolicySQ2024 {
		logBeta, any := 0.0, false
		n := len(t.pend)
		for p, i := range t.pend {
			ci := s.q.Changes[i]
			var pb float64
			if t.pre != nil {
				if t.pre[p] < 0 {
					continue // below the BLRD threshold (initTree)
				}
				pb = s.finishOf(t, p, i, &cj)
			} else {
				if finishZBelow(ci, cj, s.zThr) {
					continue
				}
				pb = changeFinishBefore(ci, cj)
			}
			if pb < s.cfg.BLRDThreshold {
				continue // z within rounding of the quantile
			}
			if t.pb == nil {
				start := len(s.pbArena)
				s.pbArena = append(s.pbArena, make([]float64, 2*n)...)
				t.pb = s.pbArena[start:len(s.pbArena):len(s.pbArena)]
				for x := range n {
					t.pb[x] = math.NaN()
				}
			}
			t.pb[p] = pb
			lp := math.Log(pb)
			t.pb[n+p] = lp
			logBeta += lp
			any = true
		}
		if !any || logBeta < math.Log(s.cfg.FallbackFloor) || math.IsInf(logBeta, -1) {
			t.pb = nil // not bypassing: PolicySQ2019 for this change
		}
	}
	t.root = 0
	if s.cfg.Policy == PolicyExpected {
		// Every factor bound is at least u ≥ 1/2, so 64 of them cannot underflow:
		// multiply and take one logarithm per 64 levels.
		prod := 1.0
		if s.nonNormal && t.pre == nil && len(t.pend) > 0 {
			t.pre = s.newPre(len(t.pend))
		}
		for x, i := range t.pend {
			prod *= s.expectedBound(i, &cj, t, x)
			if x&63 == 63 {
				t.root += math.Log(prod)
				prod = 1
			}
		}
		t.root += math.Log(prod)
		return
	}
	for d := range t.pend {
		t.root += s.levelBound(t, cj, d)
	}
}

// expectedBound bounds both factors of the level of change i ahead of cj under
// PolicyExpected (not in log space): p + (1 − p)·u_i with p = Phi at the grid point at
// or above Z, so that no Erfc is needed per conflict; 1 above the grid.
func (s *search) expectedBound(i int, cj *Change, t *tree, d int) float64 {
	ci := &s.q.Changes[i]
	// The numerator of FinishZ: (AT_i + mu_i) − (AT_j + mu_j).
	num := (ci.Arrival - cj.Arrival) - (cj.BuildMu - ci.BuildMu)
	den2 := ci.BuildSigma*ci.BuildSigma + cj.BuildSigma*cj.BuildSigma
	if ci.BuildFamily != BuildNormal || cj.BuildFamily != BuildNormal {
		num, den2 = normalQuantile(s.finishOf(t, d, i, cj)), 1 // Z itself (finish.go)
	}
	var p float64
	switch {
	case den2 > 0:
		// The margin keeps the grid point at or above Z despite rounding.
		f := math.Ceil((num/math.Sqrt(den2)-zGridLo)/zGridStep + 1e-9)
		switch {
		case !(f < zGridN):
			return 1 // Z above the grid, or NaN
		case f < 0:
			f = 0
		}
		p = phiGrid[int(f)]
	case num >= 0:
		return 1 // certain finish times, C first or a tie: P(FT_C < FT_i) is 1 or 1/2
	default:
		// Certain finish times with C last: p = 0.
	}
	return p + (1-p)*s.u[i]
}

// levelBound returns the log of an upper bound on both factors of level d of the tree
// t of change cj.
func (s *search) levelBound(t *tree, cj Change, d int) float64 {
	i := t.pend[d]
	switch {
	case s.cfg.Policy == PolicyExpected:
		// The exact P(FT_j < FT_i) of a level is computed when the level is built.
		return math.Log(s.expectedBound(i, &cj, t, d))
	case t.pb != nil && !math.IsNaN(t.pb[d]):
		return t.pb[len(t.pend)+d] // its logarithm, stored behind it
	}
	return s.logU[i]
}

// expand fills the suffix bounds of change j's tree when its root is first expanded.
func (s *search) expand(j int, t *tree) {
	if t.logh != nil {
		return
	}
	start := len(s.loghArena)
	s.loghArena = append(s.loghArena, make([]float64, len(t.pend)+1)...)
	t.logh = s.loghArena[start:len(s.loghArena):len(s.loghArena)]
	cj := s.q.Changes[j]
	for d := len(t.pend) - 1; d >= 0; d-- {
		t.logh[d] = t.logh[d+1] + s.levelBound(t, cj, d)
	}
}

// levelAt returns level d of change j's tree, building the missing levels.
func (s *search) levelAt(j int, t *tree, d int) *level {
	for len(t.levels) <= d {
		s.buildLevel(j, t, len(t.levels))
	}
	return &t.levels[d]
}

func (s *search) buildLevel(j int, t *tree, d int) {
	i := t.pend[d]
	lv := level{i: int32(i), cst: s.q.Changes[i].PSucc, lo: int32(len(s.terms)), det: len(s.finishedBy[i]) > 0, pb: math.NaN()}
	p := 0
	for _, e := range s.g.row(i) {
		switch s.state[e.k] {
		case landed:
			lv.cst *= 1 - e.c
			continue
		case rejected:
			continue
		}
		for p < d && t.pend[p] < int(e.k) {
			p++
		}
		if p < d && t.pend[p] == int(e.k) {
			s.terms = append(s.terms, term{p: int32(p), omc: 1 - e.c, z: s.zob[e.k]})
		} else {
			lv.cst *= 1 - e.c*s.m[e.k]
			lv.det = false
		}
	}
	lv.hi = int32(len(s.terms))
	if t.pb != nil {
		lv.pb = t.pb[d]
	}
	if s.cfg.Policy == PolicyExpected {
		lv.pb = s.finishOf(t, d, i, &s.q.Changes[j])
	}
	t.levels = append(t.levels, lv)
}

// factors returns the factors of a prefix's two children at level lv: assuming the
// level's change lands (f1) or is rejected (f0).
func (s *search) factors(lv *level, a []uint64) (f1, f0 float64) {
	q := lv.cst
	var key uint64
	for _, tm := range s.terms[lv.lo:lv.hi] {
		if a[tm.p>>6]&(1<<(uint(tm.p)&63)) != 0 {
			q *= tm.omc
			key ^= tm.z
		}
	}
	if lv.det {
		if ok, found := s.finishedBy[lv.i][key]; found {
			q = 0
			if ok {
				q = 1
			}
		}
	}
	f1, f0 = q, 1-q
	if !math.IsNaN(lv.pb) {
		switch s.cfg.Policy {
		case PolicySQ2024:
			f1, f0 = lv.pb, lv.pb
		case PolicyExpected:
			f1 = lv.pb + (1-lv.pb)*f1
			f0 = lv.pb + (1-lv.pb)*f0
		}
	}
	return f1, f0
}

// before orders the heap: higher bound first, then earlier change, then deeper (so
// that equally likely bypass levels are walked depth first).
func (a *item) before(b *item) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	if a.t != b.t {
		return a.t < b.t
	}
	return a.depth > b.depth
}

// push and pop keep s.heap a 4-ary heap under before: shallower than a binary heap,
// and the four children of a slot share a cache line or two.
func (s *search) push(it item) {
	h := append(s.heap, it)
	c := len(h) - 1
	for c > 0 {
		p := (c - 1) / 4
		if !it.before(&h[p]) {
			break
		}
		h[c] = h[p]
		c = p
	}
	h[c] = it
	s.heap = h
}

func (s *search) pop() item {
	h := s.heap
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	s.heap = h
	if last == 0 {
		return top
	}
	c := 0
	for {
		f := 4*c + 1
		if f >= last {
			break
		}
		best := f
		for k := f + 1; k < min(f+4, last); k++ {
			if h[k].before(&h[best]) {
				best = k
			}
		}
		if !h[best].before(&x) {
			break
		}
		h[c] = h[best]
		c = best
	}
	h[c] = x
	return top
}

// truncate marks the plan truncated by the named limit.
func (s *search) truncate(limit string) {
	s.plan.Truncated, s.plan.Limit = true, limit
}

// run is the best-first search. It returns an error only when s.ctx is done.
func (s *search) run() error {
	for j := range s.q.Changes {
		if s.state[j] == pending {
			if t := s.initTree(j); t.root >= s.logThr {
				s.push(item{key: t.root, t: int32(j)})
			}
		}
	}
	// Roots have no assumption yet: their bits are all zero.
	zeros := make([]uint64, (len(s.q.Changes)+63)/64)
	selected := 0
	for len(s.heap) > 0 && selected < s.cfg.Capacity {
		it := s.pop()
		// Follow the better child as long as it is at least as good as the best item
		// in the heap, without going through the heap: it would be the next item
		// popped anyway, up to ties.
		for {
			if s.plan.Explored >= s.cfg.MaxExplored {
				s.truncate(LimitMaxExplored)
				return nil
			}
			if s.plan.Explored%ctxCheckEvery == ctxCheckEvery-1 {
				if err := s.ctx.Err(); err != nil {
					return err
				}
			}
			s.plan.Explored++
			j := int(it.t)
			t := s.initTree(j)
			if !t.exact {
				// The root was pushed with the loose bound; put it back with the exact
				// one unless that is still the best item.
				s.exactTree(j, t)
				if t.root < it.key {
					if t.root >= s.logThr {
						s.push(item{key: t.root, t: it.t})
					}
					break
				}
			}
			a := zeros[:t.words]
			if it.depth > 0 {
				a = s.bits[it.off : it.off+t.words]
			}
			if int(it.depth) == len(t.pend) {
				if s.ids+len(t.pend) > s.cfg.MaxNodeIDs {
					s.truncate(LimitMaxNodeIDs)
					return nil
				}
				if s.emit(j, t, it.logp, a) {
					selected++
				}
				break
			}
			if len(s.bits)+2*int(t.words) > s.cfg.MaxPrefixWords {
				s.truncate(LimitMaxPrefixWords)
				return nil
			}
			s.expand(j, t)
			lv := s.levelAt(j, t, int(it.depth))
			f1, f0 := s.factors(lv, a)
			var lf1, lf0 float64
			if f1 == f0 {
				lf1 = math.Log(f1)
				lf0 = lf1
			} else {
				lf1, lf0 = math.Log(f1), math.Log(f0)
			}
			var children [2]item
			nc := 0
			for bit, lf := range [2]float64{lf0, lf1} {
				if math.IsInf(lf, -1) || math.IsNaN(lf) {
					continue
				}
				lp := it.logp + lf
				key := lp + t.logh[it.depth+1]
				if key < s.logThr {
					continue
				}
				off := int32(len(s.bits))
				s.bits = append(s.bits, a...)
				if bit == 1 {
					s.bits[off+it.depth>>6] |= 1 << (uint(it.depth) & 63)
				}
				children[nc] = item{key: key, logp: lp, t: it.t, depth: it.depth + 1, off: off}
				nc++
			}
			if nc == 2 && children[1].before(&children[0]) {
				children[0], children[1] = children[1], children[0]
			}
			if nc == 2 {
				s.push(children[1])
			}
			if nc == 0 || len(s.heap) > 0 && s.heap[0].before(&children[0]) {
				if nc > 0 {
					s.push(children[0])
				}
				break
			}
			it = children[0]
		}
	}
	return nil
}

// emit adds a complete node to the plan unless it has a finished build; it reports
// whether the node was selected.
func (s *search) emit(j int, t *tree, logp float64, a []uint64) bool {
	var key uint64
	for w, word := range a {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			key ^= s.zob[t.pend[w*64+b]]
			word &= word - 1
		}
	}
	build := -1
	if b, ok := t.own[key]; ok {
		if b < 0 {
			return false
		}
		build = int(b)
		s.kept[build] = true
	}
	nd := s.node(j, t, logp, a)
	s.ids += len(t.pend)
	nd.Build, nd.Action = build, Start
	if build >= 0 {
		nd.Action = Keep
	}
	s.plan.Nodes = append(s.plan.Nodes, nd)
	return true
}

// node returns the node of change j with assignment a.
func (s *search) node(j int, t *tree, logp float64, a []uint64) Node {
	nd := Node{Change: j, LogPNeeded: logp, PNeeded: math.Exp(logp)}
	nl := 0
	for _, w := range a {
		nl += bits.OnesCount64(w)
	}
	all := make([]int, len(t.pend))
	nd.Landed, nd.Rejected = all[:0:nl], all[nl:nl]
	for p, k := range t.pend {
		if a[p>>6]&(1<<(uint(p)&63)) != 0 {
			nd.Landed = append(nd.Landed, k)
		} else {
			nd.Rejected = append(nd.Rejected, k)
		}
	}
	return nd
}

// abortRest adds every running build that was not kept, with its P-needed. Builds on
// a stale base, builds of decided changes, builds whose path contradicts a decision and
// builds past Config.MaxNodeIDs are listed without Landed and Rejected, with P-needed
// 0.
func (s *search) abortRest() error {
	first := len(s.plan.Nodes)
	inPath := s.inPath
	for b, bd := range s.q.Builds {
		if b%ctxCheckEvery == ctxCheckEvery-1 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		if bd.Status != BuildRunning || s.kept[b] {
			continue
		}
		j := bd.Change
		nd := Node{Change: j, Action: Abort, Build: b, LogPNeeded: math.Inf(-1), StaleBase: bd.StaleBase}
		if s.state[j] == pending && !bd.StaleBase && s.ids+len(s.plan.Decisions[j].WaitingFor) > s.cfg.MaxNodeIDs {
			s.truncate(LimitMaxNodeIDs)
		} else if s.state[j] == pending && !bd.StaleBase {
			for _, k := range bd.Path {
				inPath[k] = true
			}
			key, ok := pathKey(s.g.row(j), s.state, inPath)
			if ok {
				t := s.initTree(j)
				s.exactTree(j, t)
				a := make([]uint64, t.words)
				for p, k := range t.pend {
					if inPath[k] {
						a[p>>6] |= 1 << (uint(p) & 63)
					}
				}
				nd = s.node(j, t, s.logPNeeded(j, t, a), a)
				s.ids += len(t.pend)
				nd.Action, nd.Build = Abort, b
				// Only the first running build of a node may be kept: the others
				// duplicate it, and a node with a finished build needs none.
				if t.own[key] == int32(b) && nd.PNeeded > 0 {
					if s.keepable == nil {
						s.keepable = make(map[int]bool)
					}
					s.keepable[b] = true
				}
			}
			for _, k := range bd.Path {
				inPath[k] = false
			}
		}
		s.plan.Nodes = append(s.plan.Nodes, nd)
	}
	slices.SortStableFunc(s.plan.Nodes[first:], func(x, y Node) int { return cmp.Compare(y.LogPNeeded, x.LogPNeeded) })
	return nil
}

// keepRunning applies Config.KeepMargin: it goes through the running builds the search
// would abort, most likely needed first, and keeps each one while a worker is free
// (KeepMargin·P-needed at least the threshold) or while the least likely new node of the
// plan is at most KeepMargin times as likely to be needed, which it then drops. Stale
// builds, builds of decided changes, duplicates and builds with P-needed 0 are never
// kept. The plan keeps its order: selected nodes by decreasing P-needed, then aborts.
func (s *search) keepRunning() error {
	if s.cfg.KeepMargin == 0 || len(s.keepable) == 0 {
		return nil
	}
	nodes := s.plan.Nodes
	nsel := 0
	for nsel < len(nodes) && nodes[nsel].Action != Abort {
		nsel++
	}
	// Start nodes from the least likely up, the next one to give up its worker.
	var starts []int
	for n := nsel - 1; n >= 0; n-- {
		if nodes[n].Action == Start {
			starts = append(starts, n)
		}
	}
	drop := make([]bool, len(nodes))
	running := nsel
	changed := false
	for n := nsel; n < len(nodes); n++ {
		nd := &nodes[n]
		if !s.keepable[nd.Build] {
			continue
		}
		switch {
		case running < s.cfg.Capacity && s.cfg.KeepMargin*nd.PNeeded >= s.cfg.SpeculationThreshold:
			running++
		case len(starts) > 0 && nodes[starts[0]].PNeeded <= s.cfg.KeepMargin*nd.PNeeded:
			drop[starts[0]] = true
			starts = starts[1:]
		default:
			continue
		}
		nd.Action = Keep
		changed = true
	}
	if !changed {
		return nil
	}
	kept := make([]Node, 0, len(nodes))
	for n, nd := range nodes {
		if !drop[n] && nd.Action != Abort {
			kept = append(kept, nd)
		}
	}
	slices.SortStableFunc(kept, func(x, y Node) int { return cmp.Compare(y.LogPNeeded, x.LogPNeeded) })
	for _, nd := range nodes[nsel:] {
		if nd.Action == Abort {
			kept = append(kept, nd)
		}
	}
	s.plan.Nodes = kept
	return nil
}

// logPNeeded returns log P-needed of the complete node a of change j's tree, computed
// along its one path without building the tree's levels.
func (s *search) logPNeeded(j int, t *tree, a []uint64) float64 {
	if !s.xReady {
		s.x = append(s.x[:0], s.m...)
		s.onPath = resize(s.onPath, len(s.m))
		s.xReady = true
	}
	for p, k := range t.pend {
		s.onPath[k] = true
		s.x[k] = 0
		if a[p>>6]&(1<<(uint(p)&63)) != 0 {
			s.x[k] = 1
		}
	}
	lp, prod := 0.0, 1.0
	for d, i := range t.pend {
		q, det := s.q.Changes[i].PSucc, len(s.finishedBy[i]) > 0
		var key uint64
		for _, e := range s.g.row(int(i)) {
			if s.state[e.k] == pending && !s.onPath[e.k] {
				det = false
			}
			q *= 1 - e.c*s.x[e.k]
			if s.onPath[e.k] && s.x[e.k] == 1 {
				key ^= s.zob[e.k]
			}
		}
		if det {
			if ok, found := s.finishedBy[i][key]; found {
				q = 0
				if ok {
					q = 1
				}
			}
		}
		f := q
		if s.x[i] == 0 {
			f = 1 - q
		}
		pb := math.NaN()
		if t.pb != nil {
			pb = t.pb[d]
		}
		if s.cfg.Policy == PolicyExpected && math.IsNaN(pb) {
			pb = s.finishOf(t, d, i, &s.q.Changes[j])
		}
		if !math.IsNaN(pb) {
			switch s.cfg.Policy {
			case PolicySQ2024:
				f = pb
			case PolicyExpected:
				f = pb + (1-pb)*f
			}
		}
		// Multiply in linear space and move the product into lp before it can
		// underflow: one logarithm per many levels.
		prod *= f
		if prod < 0x1p-900 {
			lp += math.Log(prod)
			prod = 1
		}
	}
	lp += math.Log(prod)
	for _, k := range t.pend {
		s.onPath[k] = false
		s.x[k] = s.m[k]
	}
	return lp
}

// newPre returns a tree's pre slice of n entries, all NaN (unknown).
func (s *search) newPre(n int) []float64 {
	start := len(s.preArena)
	for range n {
		s.preArena = append(s.preArena, math.NaN())
	}
	return s.preArena[start:len(s.preArena):len(s.preArena)]
}

// finishOf returns P(FT_j < FT_i) for the change i at depth d of change j's tree t, cj
// its change, keeping it in t.pre (when the tree has one) for the next caller and in
// the FinishCache (when the config has one) for the next call.
func (s *search) finishOf(t *tree, d, i int, cj *Change) float64 {
	if t.pre != nil && t.pre[d] >= 0 {
		return t.pre[d]
	}
	ci := &s.q.Changes[i]
	var p float64
	if ci.BuildSigma > 0 && cj.BuildSigma > 0 && (ci.BuildFamily != BuildNormal || cj.BuildFamily != BuildNormal) {
		c := s.cfg.FinishCache
		var k finishKey
		if c != nil {
			k = keyOf(ci, cj)
			if v, ok := c.get(k); ok {
				p = v
				goto done
			}
		}
		p = finishBeforeSides(ci.Arrival-cj.Arrival, s.side(i), s.side(t.j), buildTimeOf(*ci), buildTimeOf(*cj))
		if c != nil {
			c.put(k, p)
		}
	} else {
		p = changeFinishBefore(*ci, *cj)
	}
done:
	if t.pre != nil {
		t.pre[d] = p
	}
	return p
}

// finishBelow is finishBeforeBelow for the changes i ahead and j, with their prepared
// build times; a probability it must compute comes from, or goes to, the FinishCache
// when the config has one (the bounds cost less than a look-up).
func (s *search) finishBelow(i, j int, p0 float64) (bool, float64) {
	ci, cj := &s.q.Changes[i], &s.q.Changes[j]
	if !(ci.BuildSigma > 0 && cj.BuildSigma > 0) {
		p := changeFinishBefore(*ci, *cj)
		return p < p0, p
	}
	d, xs, ys := ci.Arrival-cj.Arrival, s.side(i), s.side(j)
	if settled, below, _, _ := finishBeforeBounds(d, xs, ys, p0); settled {
		return below, math.NaN()
	}
	c := s.cfg.FinishCache
	var k finishKey
	if c != nil {
		k = keyOf(ci, cj)
		if p, ok := c.get(k); ok {
			return p < p0, p
		}
	}
	p := finishBeforeExact(d, xs, ys, buildTimeOf(*ci), buildTimeOf(*cj))
	if c != nil {
		c.put(k, p)
	}
	return p < p0, p
}

// side returns the prepared build time of change i (positive sigma), computed once.
func (s *search) side(i int) *finishSide {
	if len(s.sided) == 0 {
		s.sides = resize(s.sides, len(s.q.Changes))
		s.sided = resize(s.sided, len(s.q.Changes))
	}
	if !s.sided[i] {
		s.sides[i], s.sided[i] = prepareSide(buildTimeOf(s.q.Changes[i])), true
	}
	return &s.sides[i]
}

// finishZBelow reports whether FinishZ of the ahead change ci and the new change cj is
// below z0, comparing squares instead of taking a square root.
func finishZBelow(ci, cj Change, z0 float64) bool {
	if ci.BuildFamily != BuildNormal || cj.BuildFamily != BuildNormal {
		// Z < z0 as Phi(Z) < Phi(z0), decided by bounds for most pairs (finish_hermite.go).
		below, _ := finishBeforeBelow(ci, cj, stdNormalCDF(z0))
		return below
	}
	num := (ci.Arrival - cj.Arrival) - (cj.BuildMu - ci.BuildMu)
	den2 := ci.BuildSigma*ci.BuildSigma + cj.BuildSigma*cj.BuildSigma
	if den2 == 0 || math.IsInf(z0, 0) {
		return FinishZ(ci.Arrival, ci.BuildMu, ci.BuildSigma, cj.Arrival, cj.BuildMu, cj.BuildSigma) < z0
	}
	if z0 <= 0 {
		return num < 0 && num*num > z0*z0*den2
	}
	return num < 0 || num*num < z0*z0*den2
}

// The grid of Z on which PolicyExpected's bound takes Phi: zGridN points from zGridLo
// in steps of zGridStep (-8 to 4), and phiGrid holds Phi at each.
const (
	zGridLo   = -8.0
	zGridStep = 0.5
	zGridN    = 25
)

var phiGrid = func() (p [zGridN]float64) {
	for k := range p {
		p[k] = stdNormalCDF(zGridLo + zGridStep*float64(k))
	}
	return p
}()

// normalQuantile returns z with Phi(z) = p for p in [0, 1] (±Inf at the ends).
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}
