package synth

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// Tunables of the world that no profile changes. Each is a modelling choice, not a
// measured number.
const (
	largeDiffRate  = 0.01 // share of first submissions that are large diffs touching core
	resubmitRate   = 0.7  // probability that a rejected revision is submitted again
	maxSubmissions = 6    // a revision is abandoned after this many submissions
	resubmitMedian = 2 * time.Hour
	ownAreaShare   = 0.92 // share of changed targets in the author's team area
	otherAreaShare = 0.06 // share in another team's area; the rest are core targets
	newTargetRate  = 0.08 // probability that a change adds targets
	delTargetRate  = 0.03 // probability that a change removes a target
	skipCheckRate  = 0.05 // probability that an initial check did not run
	// predictorAccuracy is how often the queue's predictor is right about whether a change
	// lands; paper 001 (§7.2) reports 97% accuracy for SubmitQueue's model.
	predictorAccuracy = 0.9
	progressEvery     = 4096 // events between two Progress calls and context checks
)

// World is a generated history together with the hidden truth behind it.
type World struct {
	// History holds the changes, builds and pairs tables, in submission, start and
	// (behind, ahead) queue order.
	History *datasets.History
	// Developers are the authors with their hidden skill, indexed as their names
	// dev0000, dev0001, ... are numbered.
	Developers []Developer
	// Config is the configuration used, with every default filled in.
	Config Config
	// Params are the profile's parameters, truth models included.
	Params Params
	// Good[i] reports whether History.Changes[i] is intrinsically good: its build on
	// the mainline at its submission, with no change ahead of it, succeeds
	// (infrastructure failures aside). It was drawn with probability true_p_success.
	Good []bool
}

// Generate simulates the synthetic world of cfg and returns its history. It is Simulate
// without the hidden truth.
func Generate(ctx context.Context, cfg Config) (*datasets.History, error) {
	w, err := Simulate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return w.History, nil
}

// resolve validates cfg and fills in its defaults.
func (cfg Config) resolve() (Config, Params, error) {
	p, err := LookupProfile(cfg.Profile)
	if err != nil {
		return cfg, p, err
	}
	switch {
	case !(cfg.Days > 0) || math.IsInf(cfg.Days, 0):
		return cfg, p, fmt.Errorf("synth: days %v must be positive", cfg.Days)
	case !(cfg.ChangesPerHour >= 0) || math.IsInf(cfg.ChangesPerHour, 0):
		return cfg, p, fmt.Errorf("synth: changes per hour %v must be non-negative", cfg.ChangesPerHour)
	case !(cfg.FlakyRate >= 0 && cfg.FlakyRate < 1):
		return cfg, p, fmt.Errorf("synth: flaky rate %v must be in [0, 1)", cfg.FlakyRate)
	case cfg.Workers < 0:
		return cfg, p, fmt.Errorf("synth: workers %d must be non-negative", cfg.Workers)
	}
	if cfg.ChangesPerHour == 0 {
		cfg.ChangesPerHour = p.ChangesPerHour
	}
	if cfg.FlakyRate == 0 {
		cfg.FlakyRate = p.FlakyRate
	}
	if cfg.Workers == 0 {
		cfg.Workers = p.Workers
	}
	if cfg.Start.IsZero() {
		cfg.Start = DefaultStart
	}
	cfg.Start = cfg.Start.UTC().Truncate(time.Second)
	if cfg.Repo == "" {
		cfg.Repo = p.Name
	}
	return cfg, p, nil
}

// chg is the simulation state of one change.
type chg struct {
	c        datasets.Change
	dev      int
	rev      int
	changed  []int32 // changed targets
	affected []int32 // reverse-dependency closure of changed, sorted
	newNames []string
	pTrue    float64
	good     bool   // intrinsically good: its build on HEAD alone succeeds
	landed   bool   // the outcome, known at arrival (see Simulate)
	guess    bool   // the queue's prediction of landed
	ahead    []int  // pending overlapping changes ahead at arrival, in queue order
	conf     []bool // whether it conflicts with each change of ahead
	behind   []int  // changes that have this one in ahead
	undec    int    // members of ahead not yet decided
	decided  bool
	active   int // running build, -1 if none
	finished int // finished succeeded/failed build on a still consistent path, -1 if none
	inReady  bool
	pendPos  int // position in sim.pending while undecided
	// suspects lists the positions in ahead of the changes of the path a rejection
	// happened on, for culprit finding (see Simulate).
	suspects []int
}

// bld is the simulation state of one build.
type bld struct {
	change        int
	path          []int
	height        int
	start, finish float64
	status        datasets.Status // StatusUnknown while running
	result        datasets.Status // how it ends unless aborted
	mean, sd      float64
	culprit       bool // a culprit-finding build, run after its change was decided
	lo, hi        int  // a culprit-finding build's suspects (see culpritJob)
}

type evKind uint8

const (
	evArrival evKind = iota
	evResubmit
	evFinish
)

type event struct {
	t    float64 // seconds since Start
	seq  uint64
	kind evKind
	id   int
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// culpritJob is a culprit-finding build waiting for a worker: change built on the path
// of its suspects lo to hi-1 (the empty path when lo == hi).
type culpritJob struct {
	change, lo, hi int
}

// jobHeap orders culprit-finding builds by change, then suspects.
type jobHeap []culpritJob

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.change != b.change {
		return a.change < b.change
	}
	if a.lo != b.lo {
		return a.lo < b.lo
	}
	return a.hi < b.hi
}
func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(culpritJob)) }
func (h *jobHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type pair struct {
	ahead, behind int
	p             float64
	conflicted    bool
}

type sim struct {
	cfg    Config
	p      Params
	g      *graph
	devs   []Developer
	devCum []float64 // cumulative activity, for drawing authors
	end    float64   // end of the arrival window, seconds since Start
	rAttr  *rand.Rand
	rQueue *rand.Rand
	seen   []bool

	arrivals []float64 // first submissions, seconds since Start
	changes  []*chg
	builds   []*bld
	pairs    []pair
	pending  []int // undecided changes, any order
	events   eventHeap
	ready    intHeap // changes that may need a build, lowest (earliest) first
	culprits jobHeap // culprit-finding builds waiting for a worker
	seq      uint64
	free     int
	nRev     int
}

// Simulate generates the synthetic world of cfg.
//
// The world: developers with a latent skill, a level and a tenure belong to teams; each
// team owns an area of a build-target graph (team 0 owns the core libraries everything
// depends on). Revisions arrive as a Poisson process whose rate follows a daily and
// weekly cycle (RateShape). A change touches targets mostly in its author's area; its
// affected targets are the reverse-dependency closure of the changed ones. Sizes are
// heavy-tailed, and about 1.5% of first submissions are large diffs that change core
// libraries and so affect most targets.
//
// The truth: each change is intrinsically good with probability true_p_success
// (Params.Success); each ordered pair of changes pending at the same time with overlapping
// affected targets conflicts with probability true_p_conflict (Params.Conflict), drawn
// once (the pairs table's conflicted column). A change lands iff it is intrinsically good
// and conflicts with no change of its landed path: the changes ahead of it in the queue,
// pending when it was submitted, overlapping it, that landed. Because that path only
// holds earlier changes, every outcome is known at arrival; the queue only decides when.
//
// The queue: Workers builds run at once, given to changes in queue order. A change's
// build assumes every decided change of its ahead set as decided and speculates on the
// undecided ones along the most likely path according to the queue's predictor: a change
// is assumed to land when its latest finished build succeeded, to be rejected when it
// failed without speculating, and otherwise as a predictor right with probability 0.9
// says (standing in for a trained model; paper 001 §7.2 reports 97% accuracy). A build's
// path lists the assumed-landed changes (decided ones included), so the path is relative
// to the mainline at the change's submission; its speculation_height is the number of
// path changes still undecided when it started.
// A build succeeds iff its change is intrinsically good, every change on its path lands
// and none of them conflicts with it; with probability FlakyRate it ends infra_failed
// instead, part way, and the change is built again. When a decision contradicts the
// path of a running build, that build is aborted at once. A change is decided, at the
// time the last piece of evidence arrives, when every change ahead of it is decided and
// one of its builds finished on exactly its landed path; that deciding build's status
// is its outcome. A rejected revision is resubmitted (same revision_id, one more
// submission, new change_id) with probability 0.7 after a log-normal delay of median
// 2 hours, if that falls inside the window. After the window the queue drains: every
// change in the history is decided.
//
// Culprit finding (unless Config.NoCulpritFinding): a change rejected on a non-empty
// path keeps its outcome and decided_at (the queue rejects at once and attributes
// afterwards), and is built again to find out why. First on the empty path, without
// every change of its path (all of which overlap it): that build succeeds iff the change
// is intrinsically good. If it fails, the change is broken on its own and attribution
// stops. If it succeeds, the culprits are searched by bisection: a path known to fail
// with two or more changes is split in two halves in queue order (the first one rounded
// up), the change is built on each, and each half that fails with two or more changes
// is split again. A half that succeeds holds no culprit; a single change whose build
// failed is a culprit (with one change on the deciding path, that change is the culprit
// at once). These builds run on the same workers, taking only the capacity that the
// queue's own builds leave free, earliest rejected change first; their path is fully
// decided, so their height is 0 and they are never aborted; their duration comes from
// the same model, and an infra_failed one is run again. A change that landed needs no
// such build: its deciding build succeeded with every change of its path, which says
// none of them conflicts with it.
//
// All times are whole seconds; build durations are log-normal (Params.Duration),
// rounded to whole seconds, at least 1.
func Simulate(ctx context.Context, cfg Config) (*World, error) {
	cfg, p, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	rWorld := rand.New(rand.NewPCG(cfg.Seed, 1))
	s := &sim{
		cfg:    cfg,
		p:      p,
		end:    math.Round(cfg.Days * 86400),
		rAttr:  rand.New(rand.NewPCG(cfg.Seed, 3)),
		rQueue: rand.New(rand.NewPCG(cfg.Seed, 4)),
		free:   cfg.Workers,
	}
	var teamSize []int
	s.devs, teamSize = newDevelopers(p, rWorld)
	s.g = newGraph(p, teamSize, rWorld)
	s.seen = make([]bool, len(s.g.names))
	s.devCum = make([]float64, len(s.devs))
	acc := 0.0
	for i, d := range s.devs {
		acc += d.Activity
		s.devCum[i] = acc
	}
	s.arrivals = arrivalTimes(cfg, s.end, rand.New(rand.NewPCG(cfg.Seed, 2)))
	if len(s.arrivals) > 0 {
		s.push(s.arrivals[0], evArrival, 0)
	}
	if err := s.run(ctx); err != nil {
		return nil, err
	}
	good := make([]bool, len(s.changes))
	for i, c := range s.changes {
		good[i] = c.good
	}
	return &World{History: s.history(), Developers: s.devs, Config: cfg, Params: p, Good: good}, nil
}

// arrivalTimes draws the first submissions: a Poisson process with rate
// ChangesPerHour*RateShape, piecewise constant by the hour, in whole seconds.
func arrivalTimes(cfg Config, end float64, r *rand.Rand) []float64 {
	var out []float64
	for a := 0.0; a < end; {
		at := cfg.Start.Add(time.Duration(a) * time.Second)
		b := math.Min(end, float64(at.Truncate(time.Hour).Add(time.Hour).Sub(cfg.Start)/time.Second))
		rate := cfg.ChangesPerHour * RateShape(at) / 3600 // per second
		for t := a + r.ExpFloat64()/rate; t < b; t += r.ExpFloat64() / rate {
			out = append(out, math.Floor(t))
		}
		a = b
	}
	return out
}

func (s *sim) push(t float64, k evKind, id int) {
	s.seq++
	heap.Push(&s.events, event{t: t, seq: s.seq, kind: k, id: id})
}

func (s *sim) run(ctx context.Context) error {
	for n := 0; s.events.Len() > 0; n++ {
		ev := heap.Pop(&s.events).(event)
		if n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("synth: %w", err)
			}
			if s.cfg.Progress != nil {
				s.cfg.Progress(math.Min(1, ev.t/s.end))
			}
		}
		switch ev.kind {
		case evArrival:
			s.nRev++
			s.arrive(ev.t, s.drawAuthor(), s.nRev, nil)
			if ev.id+1 < len(s.arrivals) {
				s.push(s.arrivals[ev.id+1], evArrival, ev.id+1)
			}
		case evResubmit:
			prev := s.changes[ev.id]
			s.arrive(ev.t, prev.dev, prev.rev, prev)
		case evFinish:
			s.finish(ev.t, ev.id)
		}
		s.assign(ev.t)
	}
	if s.cfg.Progress != nil {
		s.cfg.Progress(1)
	}
	if len(s.pending) > 0 {
		// Every change's ahead set holds only earlier changes, so the earliest
		// undecided one can always be built and decided: this cannot happen.
		panic(fmt.Sprintf("synth: %d changes left undecided", len(s.pending)))
	}
	return nil
}

func (s *sim) drawAuthor() int {
	u := s.rAttr.Float64() * s.devCum[len(s.devCum)-1]
	return min(sort.SearchFloat64s(s.devCum, u), len(s.devCum)-1)
}

// pickIn returns a random target of team t's area.
func (s *sim) pickIn(t int) int32 {
	lo, hi := s.g.areaFirst[t], s.g.areaFirst[t+1]
	return int32(lo + s.rAttr.IntN(hi-lo))
}

// arrive submits a change of revision rev by developer dev at t; prev is the previous
// submission of the revision, nil for a first submission.
func (s *sim) arrive(t float64, dev, rev int, prev *chg) {
	r := s.rAttr
	d := s.devs[dev]
	idx := len(s.changes)
	c := &chg{dev: dev, rev: rev, active: -1, finished: -1}
	c.c = datasets.Change{
		ChangeID:         fmt.Sprintf("C%07d", idx+1),
		Repo:             s.cfg.Repo,
		RevisionID:       fmt.Sprintf("R%07d", rev),
		Author:           d.Name,
		SubmittedAt:      s.cfg.Start.Add(time.Duration(t) * time.Second),
		AuthorLevel:      float64(d.Level),
		AuthorTenureDays: math.Round((d.TenureDays+t/86400)*100) / 100,
		TrueProbSuccess:  math.NaN(),
	}
	x := &c.c
	if prev == nil {
		s.drawFirst(c, d)
	} else {
		s.drawResubmission(c, prev)
	}
	x.TargetsChanged = float64(len(c.changed))
	x.AffectedTargets = make([]string, 0, len(c.affected)+len(c.newNames))
	for _, a := range c.affected {
		x.AffectedTargets = append(x.AffectedTargets, s.g.names[a])
	}
	x.AffectedTargets = append(x.AffectedTargets, c.newNames...)

	// Initial checks: weaker developers fail more of them; a resubmission fixes most.
	nRun := 0
	for range s.p.Checks {
		if r.Float64() >= skipCheckRate {
			nRun++
		}
	}
	failP := Sigmoid(-3 - 0.8*d.Skill)
	if prev != nil {
		failP = Sigmoid(-3.5 - 0.8*d.Skill)
	}
	failed := 0
	for range nRun {
		if r.Float64() < failP {
			failed++
		}
	}
	x.InitialChecksFailed = float64(failed)
	x.InitialChecksPassed = float64(nRun - failed)

	c.pTrue = s.p.Success.Prob(x, d.Skill)
	x.TrueProbSuccess = c.pTrue
	c.good = r.Float64() < c.pTrue

	// Ahead set and conflicts: every pending change with overlapping affected targets.
	cand := slices.Clone(s.pending)
	slices.Sort(cand)
	c.landed = c.good
	for _, j := range cand {
		o := s.changes[j]
		ov := overlap(c.affected, o.affected)
		if ov == 0 {
			continue
		}
		q := s.p.Conflict.Prob(ov, len(o.c.AffectedTargets), len(x.AffectedTargets), len(s.g.names))
		conf := r.Float64() < q
		s.pairs = append(s.pairs, pair{ahead: j, behind: idx, p: q, conflicted: conf})
		c.ahead = append(c.ahead, j)
		c.conf = append(c.conf, conf)
		o.behind = append(o.behind, idx)
		if conf && o.landed {
			c.landed = false
		}
	}
	// The queue's predictor: right about the outcome with probability predictorAccuracy.
	c.guess = c.landed != (s.rQueue.Float64() >= predictorAccuracy)
	c.undec = len(c.ahead)
	c.pendPos = len(s.pending)
	s.pending = append(s.pending, idx)
	s.changes = append(s.changes, c)
	s.markNeed(idx)
}

// drawFirst draws the code attributes of a first submission.
func (s *sim) drawFirst(c *chg, d Developer) {
	r := s.rAttr
	x := &c.c
	nCore := s.g.areaFirst[1]
	large := r.Float64() < largeDiffRate
	var changed []int32
	if large {
		// A large diff: several of the lowest core libraries, which reach most targets.
		for range 3 + r.IntN(8) {
			changed = append(changed, int32(r.IntN(max(1, nCore/5))))
		}
	}
	// Pareto tail: P(k >= x) = x^-1.6.
	k := int(math.Min(30, math.Floor(math.Pow(1-r.Float64(), -1/1.6))))
	for range k {
		u := r.Float64()
		switch {
		case u < ownAreaShare:
			changed = append(changed, s.pickIn(d.Team))
		case u < ownAreaShare+otherAreaShare:
			changed = append(changed, s.pickIn(1+r.IntN(s.p.Teams-1)))
		default:
			changed = append(changed, s.pickIn(0))
		}
	}
	slices.Sort(changed)
	c.changed = slices.Compact(changed)
	c.affected = s.g.closure(c.changed, s.seen)
	if r.Float64() < newTargetRate {
		area := s.g.names[c.changed[0]]
		area = area[:len(area)-len("/t0000")]
		for i := range 1 + r.IntN(2) {
			c.newNames = append(c.newNames, fmt.Sprintf("%s/new-%s-%d", area, x.RevisionID, i+1))
		}
	}
	x.TargetsAdded = float64(len(c.newNames))
	x.TargetsRemoved = 0
	if r.Float64() < delTargetRate {
		x.TargetsRemoved = 1
	}

	mu := 3.3 + 0.4*math.Log(float64(len(c.changed)))
	if large {
		mu += 3
	}
	x.LinesAdded = math.Max(1, math.Round(math.Exp(mu+1.3*r.NormFloat64())))
	x.LinesRemoved = math.Round(x.LinesAdded * math.Exp(-1+r.NormFloat64()))
	s.drawShape(c)
	x.Commits = math.Floor(math.Pow(1-r.Float64(), -1/2.2)) // P(commits >= x) = x^-2.2
	if large {
		x.Commits += float64(r.IntN(10))
	}
	x.BinariesAdded, x.BinariesRemoved = 0, 0
	if r.Float64() < s.p.BinaryRate {
		x.BinariesAdded = float64(1 + r.IntN(4))
	}
	if r.Float64() < s.p.BinaryRate/3 {
		x.BinariesRemoved = float64(1 + r.IntN(2))
	}
	x.RevisionSubmissions = 1
	x.RevisionHasTestPlan = flag(r.Float64() < Sigmoid(0.8+0.5*d.Skill+0.2*float64(d.Level-3)))
	x.RevisionHasRevertPlan = flag(r.Float64() < Sigmoid(-1+0.3*float64(d.Level-3)))
}

// drawResubmission derives a resubmitted change from the previous submission of its
// revision: the same targets, a reworked diff, one more commit.
func (s *sim) drawResubmission(c *chg, prev *chg) {
	r := s.rAttr
	x, p := &c.c, &prev.c
	c.changed, c.affected, c.newNames = prev.changed, prev.affected, prev.newNames
	x.TargetsAdded, x.TargetsRemoved = p.TargetsAdded, p.TargetsRemoved
	x.LinesAdded = math.Max(1, math.Round(p.LinesAdded*math.Exp(0.3*r.NormFloat64())+float64(r.IntN(20))))
	x.LinesRemoved = math.Round(p.LinesRemoved*math.Exp(0.3*r.NormFloat64()) + float64(r.IntN(10)))
	s.drawShape(c)
	x.Commits = p.Commits + 1
	x.BinariesAdded, x.BinariesRemoved = p.BinariesAdded, p.BinariesRemoved
	x.RevisionSubmissions = p.RevisionSubmissions + 1
	x.RevisionHasRevertPlan = p.RevisionHasRevertPlan
	x.RevisionHasTestPlan = p.RevisionHasTestPlan
	if x.RevisionHasTestPlan == datasets.FlagFalse && r.Float64() < 0.3 {
		x.RevisionHasTestPlan = datasets.FlagTrue
	}
}

// drawShape draws files and hunks from the lines of c.
func (s *sim) drawShape(c *chg) {
	r := s.rAttr
	x := &c.c
	lines := x.LinesAdded + x.LinesRemoved
	x.FilesChanged = math.Max(float64(len(c.changed)), math.Round(math.Exp(0.45*math.Log1p(lines)+0.5*r.NormFloat64())))
	x.Hunks = x.FilesChanged + math.Floor(r.ExpFloat64()*lines/40)
}

func flag(b bool) datasets.Flag {
	if b {
		return datasets.FlagTrue
	}
	return datasets.FlagFalse
}

// markNeed queues change i for a build if it is not queued already.
func (s *sim) markNeed(i int) {
	if c := s.changes[i]; !c.inReady {
		c.inReady = true
		heap.Push(&s.ready, i)
	}
}

// assign gives free workers to the earliest changes that need a build.
func (s *sim) assign(t float64) {
	for s.free > 0 && s.ready.Len() > 0 {
		i := heap.Pop(&s.ready).(int)
		c := s.changes[i]
		c.inReady = false
		if c.decided || c.active >= 0 || c.finished >= 0 {
			continue
		}
		s.start(t, i)
	}
	// Attribution only takes the capacity that deciding changes leave free.
	for s.free > 0 && s.culprits.Len() > 0 {
		s.startCulprit(t, heap.Pop(&s.culprits).(culpritJob))
	}
}

// assumeLands is the queue's guess of whether undecided change j will land.
func (s *sim) assumeLands(j int) bool {
	c := s.changes[j]
	if c.finished >= 0 {
		// A success says the change is good; a failure only when the build did not
		// speculate on anything (it may otherwise be the fault of a change ahead).
		b := s.builds[c.finished]
		if b.result == datasets.StatusSucceeded || b.height == 0 {
			return b.result == datasets.StatusSucceeded
		}
	}
	return c.guess
}

// start starts a build of change i on its most likely path.
func (s *sim) start(t float64, i int) {
	c := s.changes[i]
	b := &bld{change: i, start: t, result: datasets.StatusSucceeded}
	good := c.good
	for k, j := range c.ahead {
		a := s.changes[j]
		var in bool
		if a.decided {
			in = a.landed
		} else {
			in = s.assumeLands(j)
			if in {
				b.height++
			}
		}
		if !in {
			continue
		}
		b.path = append(b.path, j)
		if !a.landed || c.conf[k] {
			good = false
		}
	}
	if !good {
		b.result = datasets.StatusFailed
	}
	c.active = s.launch(t, b)
}

// launch draws the duration and any infrastructure failure of b, which starts at t,
// records it, takes a worker and schedules its end; it returns the build's index.
func (s *sim) launch(t float64, b *bld) int {
	m, sd := s.p.Duration.LogParams(&s.changes[b.change].c, float64(b.height))
	b.mean, b.sd = MeanSD(m, sd)
	dur := math.Max(1, math.Round(math.Exp(m+sd*s.rQueue.NormFloat64())))
	if s.rQueue.Float64() < s.cfg.FlakyRate {
		b.result = datasets.StatusInfraFailed
		dur = math.Max(1, math.Round(dur*(0.1+0.9*s.rQueue.Float64())))
	}
	id := len(s.builds)
	s.builds = append(s.builds, b)
	s.free--
	s.push(t+dur, evFinish, id)
	return id
}

// startCulprit starts culprit-finding build j. Every change of its path is decided, so
// the build speculates on nothing (height 0) and is never aborted. It succeeds iff the
// change is intrinsically good and conflicts with no change of its path.
func (s *sim) startCulprit(t float64, j culpritJob) {
	c := s.changes[j.change]
	b := &bld{change: j.change, start: t, result: datasets.StatusSucceeded, culprit: true, lo: j.lo, hi: j.hi}
	good := c.good
	for _, k := range c.suspects[j.lo:j.hi] {
		b.path = append(b.path, c.ahead[k])
		good = good && !c.conf[k]
	}
	if !good {
		b.result = datasets.StatusFailed
	}
	s.launch(t, b)
}

// finish ends build id at t.
func (s *sim) finish(t float64, id int) {
	b := s.builds[id]
	if b.status != datasets.StatusUnknown {
		return // aborted earlier
	}
	b.finish, b.status = t, b.result
	s.free++
	if b.culprit {
		s.finishCulprit(b)
		return
	}
	c := s.changes[b.change]
	c.active = -1
	if b.status == datasets.StatusInfraFailed {
		s.markNeed(b.change)
		return
	}
	c.finished = id
	if c.undec == 0 {
		s.decide(t, b.change)
	}
}

// finishCulprit queues what culprit-finding build b calls for next. An infrastructure
// failure is run again. When the change succeeded alone, its deciding path is known to
// fail; a failing set of two or more suspects is split in two halves (in queue order),
// each built in turn (bisection). A set that succeeded holds no culprit; a single
// suspect that failed is a culprit.
func (s *sim) finishCulprit(b *bld) {
	c := s.changes[b.change]
	lo, hi := b.lo, b.hi
	switch {
	case b.status == datasets.StatusInfraFailed:
		heap.Push(&s.culprits, culpritJob{change: b.change, lo: lo, hi: hi})
		return
	case b.status == datasets.StatusSucceeded && lo == hi:
		lo, hi = 0, len(c.suspects) // the deciding path, which failed
	case b.status == datasets.StatusSucceeded || lo == hi:
		return // no culprit in the set, or the change is broken on its own
	}
	if hi-lo < 2 {
		return
	}
	mid := lo + (hi-lo+1)/2
	heap.Push(&s.culprits, culpritJob{change: b.change, lo: lo, hi: mid})
	heap.Push(&s.culprits, culpritJob{change: b.change, lo: mid, hi: hi})
}

// consistent reports whether path agrees with the decision that change j landed or not.
func consistent(path []int, j int, landed bool) bool {
	return slices.Contains(path, j) == landed
}

// decide decides change i at t from its finished build on its landed path, and then
// every change behind it that this makes decidable.
func (s *sim) decide(t float64, i int) {
	stack := []int{i}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := s.changes[i]
		landed := s.builds[c.finished].status == datasets.StatusSucceeded
		if landed != c.landed {
			panic(fmt.Sprintf("synth: change %s decided %v on build %d, want %v", c.c.ChangeID, landed, c.finished, c.landed))
		}
		c.decided = true
		c.c.DecidedAt = s.cfg.Start.Add(time.Duration(t) * time.Second)
		c.c.Outcome = datasets.OutcomeRejected
		if landed {
			c.c.Outcome = datasets.OutcomeLanded
		}
		if !landed && len(s.builds[c.finished].path) > 0 && !s.cfg.NoCulpritFinding {
			// Culprit finding: the change alone first.
			for k, j := range c.ahead {
				if s.changes[j].landed {
					c.suspects = append(c.suspects, k)
				}
			}
			heap.Push(&s.culprits, culpritJob{change: i})
		}
		// Remove from pending (swap with the last).
		last := s.pending[len(s.pending)-1]
		s.pending[c.pendPos] = last
		s.changes[last].pendPos = c.pendPos
		s.pending = s.pending[:len(s.pending)-1]

		if !landed && c.c.RevisionSubmissions < maxSubmissions && s.rAttr.Float64() < resubmitRate {
			delay := math.Round(resubmitMedian.Seconds() * math.Exp(0.8*s.rAttr.NormFloat64()))
			if t+delay < s.end {
				s.push(t+delay, evResubmit, i)
			}
		}
		for _, k := range c.behind {
			d := s.changes[k]
			d.undec--
			if d.active >= 0 && !consistent(s.builds[d.active].path, i, landed) {
				b := s.builds[d.active]
				b.finish, b.status = t, datasets.StatusAborted
				s.free++
				d.active = -1
			}
			if d.finished >= 0 && !consistent(s.builds[d.finished].path, i, landed) {
				d.finished = -1
			}
			switch {
			case d.active < 0 && d.finished < 0:
				s.markNeed(k)
			case d.active < 0 && d.undec == 0:
				stack = append(stack, k)
			}
		}
	}
}

// history assembles the tables.
func (s *sim) history() *datasets.History {
	h := &datasets.History{
		Changes: make([]datasets.Change, len(s.changes)),
		Builds:  make([]datasets.Build, len(s.builds)),
		Pairs:   make([]datasets.Pair, len(s.pairs)),
	}
	for i, c := range s.changes {
		h.Changes[i] = c.c
	}
	for i, b := range s.builds {
		var path []string // nil for the empty path, as datasets' readers return it
		for _, j := range b.path {
			path = append(path, s.changes[j].c.ChangeID)
		}
		h.Builds[i] = datasets.Build{
			BuildID:           fmt.Sprintf("B%08d", i+1),
			Repo:              s.cfg.Repo,
			ChangeID:          s.changes[b.change].c.ChangeID,
			Path:              path,
			SpeculationHeight: float64(b.height),
			StartedAt:         s.cfg.Start.Add(time.Duration(b.start) * time.Second),
			FinishedAt:        s.cfg.Start.Add(time.Duration(b.finish) * time.Second),
			DurationS:         b.finish - b.start,
			Status:            b.status,
			TrueMuS:           b.mean,
			TrueSigmaS:        b.sd,
		}
	}
	for i, p := range s.pairs {
		h.Pairs[i] = datasets.Pair{
			AheadChangeID:    s.changes[p.ahead].c.ChangeID,
			BehindChangeID:   s.changes[p.behind].c.ChangeID,
			TrueProbConflict: p.p,
			Conflicted:       p.conflicted,
		}
	}
	return h
}
