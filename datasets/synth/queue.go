package synth

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/sqpredict/sqpredict/queue"
)

// The world's queue runs on package queue's engine (queue.RunSource): sim is its
// Source (arrivals, whose conflict edges depend on what is pending, and resubmissions of
// rejected revisions), its Strategy (the speculation and culprit finding Simulate
// describes) and its TimedTruth (the world's outcomes and build draws).
var (
	_ queue.Source     = (*sim)(nil)
	_ queue.Strategy   = (*sim)(nil)
	_ queue.TimedTruth = (*sim)(nil)
)

// resubmission is a rejected revision's next submission: at t, the change after prev.
type resubmission struct {
	t    float64
	prev int
}

// culpritJob is a culprit-finding build waiting for a worker: change built on content,
// a part of its suspects (the empty path first).
type culpritJob struct {
	change  int
	content []int
}

// Next implements queue.Source: the earlier of the next first submission and the next
// resubmission (first submissions first at equal times).
func (s *sim) Next() (float64, bool) {
	t, ok := math.Inf(1), false
	if s.nextFirst < len(s.arrivals) {
		t, ok = s.arrivals[s.nextFirst], true
	}
	if len(s.resub) > 0 && s.resub[0].t < t {
		t, ok = s.resub[0].t, true
	}
	return t, ok
}

// Arrive implements queue.Source: it draws the change due now among the pending ones.
func (s *sim) Arrive(v *queue.View) queue.Change {
	t, _ := s.Next()
	if s.cfg.Progress != nil && len(s.changes)%progressEvery == 0 {
		s.cfg.Progress(math.Min(1, t/s.end))
	}
	var c *chg
	if s.nextFirst < len(s.arrivals) && s.arrivals[s.nextFirst] == t {
		s.nextFirst++
		s.nRev++
		c = s.arrive(t, s.drawAuthor(), s.nRev, nil, v.Pending())
	} else {
		prev := s.changes[s.resub[0].prev]
		s.resub = s.resub[1:]
		c = s.arrive(t, prev.dev, prev.rev, prev, v.Pending())
	}
	m, sd := s.p.Duration.LogParams(&c.c, 0)
	mean, _ := MeanSD(m, sd)
	return queue.Change{ID: c.c.ChangeID, Arrival: t, Ahead: c.ahead, MeanBuild: mean}
}

// Lands implements queue.TimedTruth.
func (s *sim) Lands(i int) bool { return s.changes[i].landed }

// BuildAt implements queue.TimedTruth. A build succeeds iff its change is
// intrinsically good, every change of its content lands and none of them conflicts with
// it. Its duration is log-normal with the build-time truth at its start (the dynamics'
// LogShift included), and it fails for infrastructure reasons with the probability
// World.InfraProb gives; both are drawn from a stream keyed by the seed, the change, the
// content, the attempt and whether it is a probe, so the draw does not depend on the
// order in which the queue starts builds.
func (s *sim) BuildAt(b queue.BuildStart) queue.Draw {
	c := s.changes[b.Change]
	ok := c.good
	key := queue.Mix(uint64(b.Change)<<1 | boolBit(b.Probe))
	k := 0
	for _, j := range b.Content {
		for c.ahead[k] != j {
			k++
		}
		ok = ok && s.changes[j].landed && !c.conf[k]
		key = queue.Mix(key ^ uint64(j))
	}
	r := rand.New(rand.NewPCG(s.cfg.Seed, queue.Mix(key+uint64(b.Attempt))))
	m, sd := s.p.Duration.LogParams(&c.c, float64(b.Height))
	m += s.dy.logShift(b.At)
	d := queue.Draw{Succeeds: ok, Duration: math.Max(1, math.Round(math.Exp(m+sd*r.NormFloat64())))}
	if r.Float64() < s.dy.infraProb(s.cfg.FlakyRate, c.areas, b.At) {
		d.Infra = true
		d.Duration = math.Max(1, math.Round(d.Duration*(0.1+0.9*r.Float64())))
	}
	return d
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Name implements queue.Strategy.
func (s *sim) Name() string { return "synth" }

// Plan implements queue.Strategy: decide what can be decided; otherwise give free
// workers to the earliest pending changes without a build, on their most likely path,
// then to culprit finding.
func (s *sim) Plan(v *queue.View) (queue.Actions, error) {
	for _, id := range v.Finished() {
		if b := v.Build(id); b.Probe {
			s.probeEnded(b)
		} else {
			s.recheck = append(s.recheck, b.Change)
		}
	}
	var a queue.Actions
	slices.Sort(s.recheck)
	for _, i := range slices.Compact(s.recheck) {
		if !v.IsPending(i) {
			continue
		}
		if s.scratch = v.PendingAhead(i, s.scratch[:0]); len(s.scratch) > 0 {
			continue
		}
		for _, id := range v.Builds(i) {
			if b := v.Build(id); b.Status != queue.Running {
				a.Decisions = append(a.Decisions, queue.Decision{Change: i, Land: b.Status == queue.Succeeded})
				s.decided(v.Now(), i, b)
				break
			}
		}
	}
	s.recheck = s.recheck[:0]
	for _, d := range a.Decisions {
		s.recheck = append(s.recheck, s.changes[d.Change].behind...)
	}
	if len(a.Decisions) > 0 {
		return a, nil // builds are planned once the decisions are applied
	}
	free := v.Free()
	for _, i := range v.Pending() {
		if free == 0 {
			break
		}
		if len(v.Builds(i)) > 0 {
			continue
		}
		var path []int
		s.scratch = v.PendingAhead(i, s.scratch[:0])
		for _, j := range s.scratch {
			if s.assumeLands(v, j) {
				path = append(path, j)
			}
		}
		a.Start = append(a.Start, queue.Start{Change: i, Path: path})
		free--
	}
	// Attribution only takes the capacity that deciding changes leave free.
	for ; free > 0 && len(s.culprits) > 0; free-- {
		a.Probes = append(a.Probes, queue.Probe{Change: s.culprits[0].change, Content: s.culprits[0].content})
		s.culprits = s.culprits[1:]
	}
	return a, nil
}

// assumeLands is the queue's guess of whether undecided change j will land: a success
// says the change is good; a failure only when the build did not speculate on anything
// (it may otherwise be the fault of a change ahead); otherwise the predictor's guess.
func (s *sim) assumeLands(v *queue.View, j int) bool {
	for _, id := range v.Builds(j) {
		if b := v.Build(id); b.Status != queue.Running && (b.Status == queue.Succeeded || b.Height == 0) {
			return b.Status == queue.Succeeded
		}
	}
	return s.changes[j].guess
}

// decided records the decision of change i at t on its deciding build b: a rejection on
// a non-empty path starts culprit finding, and a rejected revision may be submitted
// again.
func (s *sim) decided(t float64, i int, b *queue.Build) {
	if b.Status == queue.Succeeded {
		return
	}
	c := s.changes[i]
	if len(b.Content) > 0 && !s.cfg.NoCulpritFinding {
		c.suspects = slices.Clone(b.Content) // the landed changes ahead
		s.addCulprit(culpritJob{change: i})
	}
	if c.c.RevisionSubmissions < maxSubmissions && s.rAttr.Float64() < resubmitRate {
		delay := math.Round(resubmitMedian.Seconds() * math.Exp(0.8*s.rAttr.NormFloat64()))
		if t+delay < s.end {
			k := sort.Search(len(s.resub), func(k int) bool { return s.resub[k].t > t+delay })
			s.resub = slices.Insert(s.resub, k, resubmission{t: t + delay, prev: i})
		}
	}
}

// probeEnded queues what culprit-finding build b calls for next. An infrastructure
// failure is run again. When the change succeeded alone, its deciding path is known to
// fail; a failing set of two or more suspects is split in two halves (in queue order,
// the first rounded up), each built in turn (bisection). A set that succeeded holds no
// culprit; a single suspect that failed is a culprit.
func (s *sim) probeEnded(b *queue.Build) {
	set := b.Content
	switch {
	case b.Status == queue.InfraFailed:
		s.addCulprit(culpritJob{change: b.Change, content: set})
		return
	case b.Status == queue.Succeeded && len(set) == 0:
		set = s.changes[b.Change].suspects // the deciding path, which failed
	case b.Status == queue.Succeeded || len(set) == 0:
		return // no culprit in the set, or the change is broken on its own
	}
	if len(set) < 2 {
		return
	}
	mid := (len(set) + 1) / 2
	s.addCulprit(culpritJob{change: b.Change, content: set[:mid:mid]})
	s.addCulprit(culpritJob{change: b.Change, content: set[mid:]})
}

// addCulprit queues j, the earliest change first, then its content in lexical order.
func (s *sim) addCulprit(j culpritJob) {
	k, _ := slices.BinarySearchFunc(s.culprits, j, func(x, y culpritJob) int {
		if x.change != y.change {
			return x.change - y.change
		}
		return slices.Compare(x.content, y.content)
	})
	s.culprits = slices.Insert(s.culprits, k, j)
}
