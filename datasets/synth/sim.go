package synth

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/queue"
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
	progressEvery     = 4096 // changes between two Progress calls
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
	// Episodes are the episodes of the world's dynamics (Params.Dynamics) by start.
	Episodes []Episode

	dy    *dynamics
	areas [][]int32 // team areas each change affects
}

// LogShift returns what the world's dynamics add to ln(duration) of a build starting at
// at: the mean of its logarithm is DurationModel.LogParams's plus LogShift, the
// log-sd is unchanged (0 without dynamics).
func (w *World) LogShift(at time.Time) float64 {
	return w.dy.logShift(at.Sub(w.Config.Start).Seconds())
}

// InfraProb returns the probability that a build of History.Changes[i] starting at at
// fails for infrastructure reasons: Config.FlakyRate, raised by the episodes of the
// world's dynamics.
func (w *World) InfraProb(i int, at time.Time) float64 {
	return w.dy.infraProb(w.Config.FlakyRate, w.areas[i], at.Sub(w.Config.Start).Seconds())
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
	if cfg.Dynamics != nil {
		if err := cfg.Dynamics.validate(); err != nil {
			return cfg, p, err
		}
		p.Dynamics = *cfg.Dynamics
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

// sim is the generation of one world: the state of its changes, and the source, the
// strategy and the truth of its queue (queue.go).
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
	dy     *dynamics

	arrivals  []float64      // first submissions, seconds since Start
	nextFirst int            // next first submission
	resub     []resubmission // resubmissions to come, by time
	changes   []*chg
	pairs     []pair
	nRev      int

	recheck  []int        // changes that may be decidable at the next Plan call
	culprits []culpritJob // culprit-finding builds waiting for a worker
	scratch  []int
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
// The queue runs on package queue's event-driven engine (queue.RunSource), the one the
// replay simulator uses, with this world as its traffic source, its strategy and its
// truth. Workers builds run at once, given to changes in queue order. A change's
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
// rounded to whole seconds, at least 1. A build's duration and infrastructure failure
// are drawn from a random stream keyed by the seed, the change, the build's content (the
// changes ahead it includes), its attempt and whether it finds culprits, so they do not
// depend on the order in which builds start.
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
	s.dy = &dynamics{}
	if !cfg.NoDynamics {
		s.dy = newDynamics(p.Dynamics, s.end, p.Teams, s.devs, cfg.Start, rand.New(rand.NewPCG(cfg.Seed, 5)))
	}
	res, err := queue.RunSource(ctx, s, s, s, queue.Config{Workers: cfg.Workers, MaxPlansPerInstant: math.MaxInt})
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if cfg.Progress != nil {
		cfg.Progress(1)
	}
	good := make([]bool, len(s.changes))
	areas := make([][]int32, len(s.changes))
	for i, c := range s.changes {
		good[i], areas[i] = c.good, c.areas
	}
	return &World{History: s.history(res), Developers: s.devs, Config: cfg, Params: p, Good: good,
		Episodes: s.dy.episodes(cfg.Start), dy: s.dy, areas: areas}, nil
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

// history assembles the tables from the changes and the run of their queue.
func (s *sim) history(res *queue.Result) *datasets.History {
	h := &datasets.History{
		Changes: make([]datasets.Change, len(s.changes)),
		Builds:  make([]datasets.Build, len(res.Builds)),
		Pairs:   make([]datasets.Pair, len(s.pairs)),
	}
	at := func(t float64) time.Time { return s.cfg.Start.Add(time.Duration(t) * time.Second) }
	for i, c := range s.changes {
		h.Changes[i] = c.c
		r := &res.Records[i]
		h.Changes[i].DecidedAt = at(r.DecidedAt)
		h.Changes[i].Outcome = datasets.OutcomeRejected
		if r.Landed {
			h.Changes[i].Outcome = datasets.OutcomeLanded
		}
	}
	for i, b := range res.Builds {
		var path []string // nil for the empty path, as datasets' readers return it
		for _, j := range b.Content {
			path = append(path, s.changes[j].c.ChangeID)
		}
		m, sd := s.p.Duration.LogParams(&s.changes[b.Change].c, float64(b.Height))
		mean, sd := MeanSD(m+s.dy.logShift(b.Start), sd)
		h.Builds[i] = datasets.Build{
			BuildID:           fmt.Sprintf("B%08d", i+1),
			Repo:              s.cfg.Repo,
			ChangeID:          s.changes[b.Change].c.ChangeID,
			Path:              path,
			SpeculationHeight: float64(b.Height),
			StartedAt:         at(b.Start),
			FinishedAt:        at(b.End),
			DurationS:         b.End - b.Start,
			Status:            buildStatus[b.Status],
			TrueMuS:           mean,
			TrueSigmaS:        sd,
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

// buildStatus maps the engine's build states to the builds table's; no build runs at
// the end of a run.
var buildStatus = [...]datasets.Status{
	queue.Running:     datasets.StatusUnknown,
	queue.Succeeded:   datasets.StatusSucceeded,
	queue.Failed:      datasets.StatusFailed,
	queue.InfraFailed: datasets.StatusInfraFailed,
	queue.Aborted:     datasets.StatusAborted,
}
