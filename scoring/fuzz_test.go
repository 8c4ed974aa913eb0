package scoring

import (
	"math"
	"testing"
)

// queueFromBytes builds a small valid queue from fuzz input: up to 8 changes, any
// conflict graph, and running or finished builds on any paths.
func queueFromBytes(data []byte) (Queue, Config) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	n := 1 + int(next()%8)
	q := Queue{Changes: make([]Change, n)}
	for j := range q.Changes {
		q.Changes[j] = Change{
			Arrival:    float64(next()) * 10,
			PSucc:      float64(next()) / 255,
			BuildMu:    float64(next()) * 20,
			BuildSigma: float64(next()),
		}
		mask := next()
		for i := range min(j, 8) {
			if mask&(1<<i) != 0 {
				q.Conflicts = append(q.Conflicts, Conflict{A: i, B: j, PConf: float64(next()) / 255})
			}
		}
	}
	for range int(next() % 6) {
		j := int(next()) % n
		mask := next()
		var path []int
		for i := range min(j, 8) {
			if mask&(1<<i) != 0 {
				path = append(path, i)
			}
		}
		q.Builds = append(q.Builds, Build{Change: j, Path: path, Status: BuildStatus(next() % 3)})
	}
	cfg := Config{
		Policy:               Policy(next() % 3),
		SpeculationThreshold: float64(next()%64) / 255,
		Capacity:             1 + int(next()%16),
		BLRDThreshold:        float64(next())/256 + 1.0/512,
	}
	return q, cfg
}

// FuzzSpeculate checks that any valid queue is scored without error and that the plan
// keeps its invariants: probabilities in [0, 1], selected nodes by decreasing P-needed
// within the capacity and above the threshold, and aborted nodes only for running
// builds.
func FuzzSpeculate(f *testing.F) {
	f.Add([]byte{3, 0, 200, 50, 10, 0, 10, 180, 20, 5, 1, 20, 20, 150, 1, 3, 3, 9, 2, 1, 2, 0, 1, 0, 4, 128})
	f.Add([]byte{7, 1, 255, 1, 0, 255, 2, 0, 9, 9, 255, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		q, cfg := queueFromBytes(data)
		p, err := Speculate(q, cfg)
		if err != nil {
			t.Fatalf("Speculate(valid queue) = %v", err)
		}
		selected := 0
		prev := math.Inf(1)
		for _, nd := range p.Nodes {
			if !(nd.PNeeded >= 0 && nd.PNeeded <= 1) {
				t.Fatalf("P-needed %v outside [0, 1]", nd.PNeeded)
			}
			if nd.Action == Abort {
				if nd.Build < 0 || q.Builds[nd.Build].Status != BuildRunning {
					t.Fatalf("abort of build %d, which is not running", nd.Build)
				}
				continue
			}
			selected++
			if nd.LogPNeeded > prev+1e-12 || nd.PNeeded < cfg.SpeculationThreshold*(1-1e-12) {
				t.Fatalf("selected node %+v out of order or below threshold %v", nd, cfg.SpeculationThreshold)
			}
			prev = nd.LogPNeeded
		}
		if selected > cfg.Capacity {
			t.Fatalf("%d nodes selected, capacity %d", selected, cfg.Capacity)
		}
		if len(p.Decisions) != len(q.Changes) {
			t.Fatalf("%d decisions for %d changes", len(p.Decisions), len(q.Changes))
		}
	})
}
