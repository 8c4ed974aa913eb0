package synth

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// chg is the generation state of one change: its attributes and its hidden truth.
type chg struct {
	c        datasets.Change
	dev      int
	rev      int
	changed  []int32 // changed targets
	affected []int32 // reverse-dependency closure of changed, sorted
	newNames []string
	areas    []int32 // team areas of the affected targets, ascending
	pTrue    float64
	good     bool   // intrinsically good: its build on HEAD alone succeeds
	landed   bool   // the outcome, known at arrival (see Simulate)
	guess    bool   // the queue's prediction of landed
	ahead    []int  // pending overlapping changes ahead at arrival, ascending
	conf     []bool // whether it conflicts with each change of ahead
	behind   []int  // changes that have this one in ahead
	// suspects lists the changes of the path a rejection happened on, for culprit
	// finding (see Simulate).
	suspects []int
}

type pair struct {
	ahead, behind int
	p             float64
	conflicted    bool
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
// submission of the revision, nil for a first submission, and pending the undecided
// changes, ascending.
func (s *sim) arrive(t float64, dev, rev int, prev *chg, pending []int) *chg {
	r := s.rAttr
	d := s.devs[dev]
	skill := d.SkillAt(s.cfg.Start.Add(time.Duration(t) * time.Second))
	idx := len(s.changes)
	c := &chg{dev: dev, rev: rev}
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
		s.drawFirst(c, d, skill)
	} else {
		s.drawResubmission(c, prev)
	}
	x.TargetsChanged = float64(len(c.changed))
	for _, a := range c.affected {
		c.areas = append(c.areas, s.g.area[a])
	}
	slices.Sort(c.areas)
	c.areas = slices.Compact(c.areas)
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
	failP := Sigmoid(-3 - 0.8*skill)
	if prev != nil {
		failP = Sigmoid(-3.5 - 0.8*skill)
	}
	failed := 0
	for range nRun {
		if r.Float64() < failP {
			failed++
		}
	}
	x.InitialChecksFailed = float64(failed)
	x.InitialChecksPassed = float64(nRun - failed)

	c.pTrue = s.p.Success.Prob(x, skill)
	x.TrueProbSuccess = c.pTrue
	c.good = r.Float64() < c.pTrue

	// Ahead set and conflicts: every pending change with overlapping affected targets.
	c.landed = c.good
	for _, j := range pending {
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
	s.changes = append(s.changes, c)
	return c
}

// drawFirst draws the code attributes of a first submission.
func (s *sim) drawFirst(c *chg, d Developer, skill float64) {
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
	x.RevisionHasTestPlan = flag(r.Float64() < Sigmoid(0.8+0.5*skill+0.2*float64(d.Level-3)))
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
