package scoring

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestKeepMarginTwoChanges: change 1 conflicts with change 0 ahead of it; the one worker
// runs change 1 on the path where 0 is rejected, P-needed 1 − p0, while the search
// prefers change 0 on HEAD, P-needed 1. With a margin of 4 the running build stays
// while 1 <= 4(1 − p0), that is p0 <= 0.75, and change 0 waits; above, it is aborted
// for change 0, as it always is without a margin.
func TestKeepMarginTwoChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p0   float64
		keep bool
	}{{0.5, true}, {0.75, true}, {0.8, false}, {0.95, false}} {
		q := Queue{
			Changes:   []Change{{PSucc: tc.p0, BuildMu: 600, BuildSigma: 60}, {Arrival: 10, PSucc: 0.9, BuildMu: 600, BuildSigma: 60}},
			Conflicts: []Conflict{{A: 0, B: 1, PConf: 0.1}},
			Builds:    []Build{{Change: 1, Status: BuildRunning}},
		}
		for _, margin := range []float64{0, 4} {
			p, err := Speculate(q, Config{Policy: PolicySQ2019, Capacity: 1, KeepMargin: margin})
			if err != nil {
				t.Fatal(err)
			}
			if margin > 0 && tc.keep {
				if len(p.Nodes) != 1 || p.Nodes[0].Action != Keep || p.Nodes[0].Change != 1 || p.Nodes[0].Build != 0 {
					t.Errorf("p0 %v margin %v: %+v, want only change 1's build kept", tc.p0, margin, p.Nodes)
				}
				continue
			}
			if len(p.Nodes) != 2 || p.Nodes[0].Action != Start || p.Nodes[0].Change != 0 ||
				p.Nodes[1].Action != Abort || p.Nodes[1].Change != 1 {
				t.Errorf("p0 %v margin %v: %+v, want change 0 started and change 1 aborted", tc.p0, margin, p.Nodes)
			}
		}
	}
}

// TestKeepMarginRandom compares plans with and without a margin on random queues whose
// previous plan's builds run (each node once, no stale base): the margin plan keeps
// within capacity, only ever trades a start of the plain plan for a running build the
// plain plan aborts, and trades as long as the rule allows: every running build it
// still aborts is beaten by more than the margin by every start it keeps, and could not
// take a free worker.
func TestKeepMarginRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	var traded int
	for trial := range 60 {
		q := randomQueue(rng, 6+rng.IntN(10), 0.5)
		pol := []Policy{PolicySQ2019, PolicySQ2024, PolicyExpected}[trial%3]
		capacity := 2 + rng.IntN(6)
		thr := []float64{0, 0.01, 0.1}[trial%3]
		// The builds of a plan made with other probabilities run now.
		prev := q
		prev.Changes = append([]Change(nil), q.Changes...)
		for j := range prev.Changes {
			prev.Changes[j].PSucc = 0.6 + 0.39*rng.Float64()
		}
		pp, err := Speculate(prev, Config{Policy: pol, Capacity: capacity, SpeculationThreshold: thr})
		if err != nil {
			t.Fatal(err)
		}
		for _, nd := range pp.Nodes {
			q.Builds = append(q.Builds, Build{Change: nd.Change, Path: nd.Landed, Status: BuildRunning})
		}
		const margin = 4
		cfg := Config{Policy: pol, Capacity: capacity, SpeculationThreshold: thr}
		plain, err := Speculate(q, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.KeepMargin = margin
		kept, err := Speculate(q, cfg)
		if err != nil {
			t.Fatal(err)
		}
		plainAction := map[string]Action{}
		plainP := map[string]float64{}
		for _, nd := range plain.Nodes {
			k := nodeKey(nd.Change, nd.Landed)
			plainAction[k], plainP[k] = nd.Action, nd.PNeeded
		}
		var selected int
		minStart := 2.0
		var aborted []Node
		for n, nd := range kept.Nodes {
			k := nodeKey(nd.Change, nd.Landed)
			pa, ok := plainAction[k]
			switch {
			case !ok:
				t.Fatalf("trial %d: node %s is not in the plain plan", trial, k)
			case nd.Action == Abort && pa != Abort, nd.Action == Start && pa != Start:
				t.Fatalf("trial %d: node %s is %v, %v without the margin", trial, k, nd.Action, pa)
			case nd.Action == Keep && pa == Abort:
				traded++
			}
			if nd.PNeeded != plainP[k] {
				t.Fatalf("trial %d: node %s P-needed %v, %v without the margin", trial, k, nd.PNeeded, plainP[k])
			}
			if nd.Action != Abort {
				selected++
				if n > 0 && kept.Nodes[n-1].PNeeded < nd.PNeeded {
					t.Fatalf("trial %d: selected nodes not by decreasing P-needed at %d", trial, n)
				}
				if nd.Action == Start {
					minStart = min(minStart, nd.PNeeded)
				}
			} else {
				aborted = append(aborted, nd)
			}
		}
		if selected > capacity {
			t.Fatalf("trial %d: %d selected, capacity %d", trial, selected, capacity)
		}
		for _, nd := range aborted {
			if nd.PNeeded == 0 || nd.Landed == nil {
				continue
			}
			if selected < capacity && margin*nd.PNeeded >= thr {
				t.Errorf("trial %d: running %s (P-needed %v) aborted with a worker free", trial, nodeKey(nd.Change, nd.Landed), nd.PNeeded)
			}
			if minStart <= margin*nd.PNeeded {
				t.Errorf("trial %d: running %s (P-needed %v) aborted for a start with P-needed %v", trial, nodeKey(nd.Change, nd.Landed), nd.PNeeded, minStart)
			}
		}
	}
	if traded == 0 {
		t.Fatal("no running build was kept by the margin: the test is vacuous")
	}
	t.Logf("%d running builds kept by the margin", traded)
}

func TestKeepMarginInvalid(t *testing.T) {
	t.Parallel()
	q := Queue{Changes: []Change{{PSucc: 0.9, BuildMu: 600, BuildSigma: 60}}}
	for _, m := range []float64{0.5, -1, math.NaN(), math.Inf(1)} {
		if _, err := Speculate(q, Config{Capacity: 1, KeepMargin: m}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("keep margin %v: err %v, want ErrInvalidConfig", m, err)
		}
	}
}
