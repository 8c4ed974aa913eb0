package replay

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sqpredict/sqpredict/queue"
	"github.com/sqpredict/sqpredict/scoring"
)

// psuccProbe is a Speculative that records, at every call, the time, the pending
// changes and the P-succ it gave scoring.Speculate for each.
type psuccProbe struct {
	*Speculative
	now    float64
	family scoring.BuildFamily
	snaps  []psuccSnap
}

type psuccSnap struct {
	now   float64
	pend  []int
	psucc []float64
}

func (p *psuccProbe) Plan(v *queue.View) (queue.Actions, error) {
	p.now = v.Now()
	pend := slices.Clone(v.Pending())
	p.Speculative.Planner = func(q scoring.Queue, cfg scoring.Config) (*scoring.Plan, error) {
		s := psuccSnap{now: p.now, pend: pend}
		for _, c := range q.Changes {
			s.psucc = append(s.psucc, c.PSucc)
			if c.BuildFamily != p.family {
				return nil, fmt.Errorf("change planned with build family %v, want %v", c.BuildFamily, p.family)
			}
		}
		p.snaps = append(p.snaps, s)
		return scoring.Speculate(q, cfg)
	}
	return p.Speculative.Plan(v)
}

// TestQueuePSuccOnHead replays half a day under sq2019 and checks the P-succ of every
// pending change at every planning call against the run's own record of decisions: the
// truth's P-succ times 1 − P-conf for each conflicting change ahead that landed before
// that moment (changes decided at that very instant are skipped, since the engine plans
// again after them). Every change is planned with the world's log-normal build times.
func TestQueuePSuccOnHead(t *testing.T) {
	w, _ := smallWorld(t, 0.5, 3)
	p := &psuccProbe{Speculative: NewSpeculative("sq2019", w, trueProbs{w}, scoring.Config{Policy: scoring.PolicySQ2019}), family: scoring.BuildLogNormal}
	res, err := queue.Run(context.Background(), &w.Traffic, w.Truth(7), p, queue.Config{Workers: 30})
	if err != nil {
		t.Fatal(err)
	}
	var checked, lowered int
	for _, s := range p.snaps {
	changes:
		for l, i := range s.pend {
			want := w.PSucc[i]
			for t, k := range w.Traffic.Changes[i].Ahead {
				r := res.Records[k]
				switch {
				case r.Decided && r.DecidedAt == s.now:
					continue changes
				case r.Decided && r.Landed && r.DecidedAt < s.now:
					want *= 1 - w.PConf[i][t]
				}
			}
			if math.Abs(s.psucc[l]-want) > 1e-15 {
				t.Fatalf("t = %v: change %d has P-succ %v, want %v (truth %v)", s.now, i, s.psucc[l], want, w.PSucc[i])
			}
			checked++
			if want < w.PSucc[i] {
				lowered++
			}
		}
	}
	if lowered == 0 || checked < 1000 {
		t.Fatalf("%d P-succ checked, %d lowered by a landed conflict: the test saw no landed conflict", checked, lowered)
	}
	t.Logf("%d P-succ checked, %d lowered by a landed conflict", checked, lowered)
}
