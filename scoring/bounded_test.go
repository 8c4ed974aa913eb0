package scoring

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// hostileQueue is the request of issue 14: n changes, the last of which conflicts with
// every other, all with P-succ 0.9.
func hostileQueue(n int) Queue {
	q := Queue{Changes: make([]Change, n)}
	for i := range q.Changes {
		q.Changes[i] = Change{PSucc: 0.9, BuildMu: 600, BuildSigma: 60, Arrival: float64(i)}
	}
	for i := range n - 1 {
		q.Conflicts = append(q.Conflicts, Conflict{A: i, B: n - 1, PConf: 0.5})
	}
	return q
}

// TestSpeculateBoundedMemory runs the hostile queue of issue 14 (3,000 changes, 2,999
// conflicts on the last, threshold 0, unbounded capacity) with the default limits: the
// plan must be truncated by a named limit and the call must allocate far less than
// the 4.8 GB it took before the limits.
func TestSpeculateBoundedMemory(t *testing.T) {
	q := hostileQueue(3000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := Speculate(q, Config{Capacity: 1 << 30})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || p.Limit == "" {
		t.Errorf("plan of %d nodes not truncated (limit %q)", len(p.Nodes), p.Limit)
	}
	ids := 0
	for _, nd := range p.Nodes {
		ids += len(nd.Landed) + len(nd.Rejected)
	}
	if ids > DefaultMaxNodeIDs {
		t.Errorf("plan names %d changes, more than %d", ids, DefaultMaxNodeIDs)
	}
	// The bound: prefix words (32 MiB), node ids (8 MiB) and the heap, with room for
	// slice growth; TotalAlloc counts every allocation of the process during the call.
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Errorf("allocated %d MiB, want at most 256", got>>20)
	}
}

// TestSpeculateLimits checks that each limit truncates the search it bounds and names
// itself, and that the nodes returned before the limit are the most likely ones.
func TestSpeculateLimits(t *testing.T) {
	t.Parallel()
	q := Queue{Changes: make([]Change, 20), Conflicts: fullConflict(20, 0.3)}
	for i := range q.Changes {
		q.Changes[i] = Change{PSucc: 0.8}
	}
	full, err := Speculate(q, Config{Capacity: 64})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		limit string
	}{
		{"explored", Config{Capacity: 1 << 20, MaxExplored: 50}, LimitMaxExplored},
		{"prefix words", Config{Capacity: 1 << 20, MaxPrefixWords: 100}, LimitMaxPrefixWords},
		{"node ids", Config{Capacity: 1 << 20, MaxNodeIDs: 200}, LimitMaxNodeIDs},
	} {
		p, err := Speculate(q, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Truncated || p.Limit != tc.limit {
			t.Errorf("%s: truncated %v by %q, want %q", tc.name, p.Truncated, p.Limit, tc.limit)
		}
		ids := 0
		for k, nd := range p.Nodes {
			ids += len(nd.Landed) + len(nd.Rejected)
			if k < len(full.Nodes) && nd.PNeeded != full.Nodes[k].PNeeded {
				t.Errorf("%s: node %d P-needed %v, want %v as without the limit", tc.name, k, nd.PNeeded, full.Nodes[k].PNeeded)
			}
		}
		if tc.cfg.MaxNodeIDs > 0 && ids > tc.cfg.MaxNodeIDs {
			t.Errorf("%s: %d ids over the limit %d", tc.name, ids, tc.cfg.MaxNodeIDs)
		}
	}
	if full.Truncated || full.Limit != "" {
		t.Errorf("capacity-bound plan truncated by %q", full.Limit)
	}
	if _, err := Speculate(q, Config{Capacity: 1, MaxNodeIDs: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative MaxNodeIDs: %v, want ErrInvalidConfig", err)
	}
	if _, err := Speculate(q, Config{Capacity: 1, MaxPrefixWords: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative MaxPrefixWords: %v, want ErrInvalidConfig", err)
	}
}

// TestSpeculateContext checks that a done context stops the search with its error,
// and that SpeculateContext with a live context equals Speculate.
func TestSpeculateContext(t *testing.T) {
	t.Parallel()
	q := hostileQueue(3000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SpeculateContext(ctx, q, Config{Capacity: 1 << 30}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
	if _, err := DecideContext(ctx, q); !errors.Is(err, context.Canceled) {
		t.Errorf("DecideContext cancelled: %v, want context.Canceled", err)
	}
	small := hostileQueue(30)
	a, err := Speculate(small, Config{Capacity: 50})
	if err != nil {
		t.Fatal(err)
	}
	b, err := SpeculateContext(context.Background(), small, Config{Capacity: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Nodes) != len(b.Nodes) || a.Explored != b.Explored {
		t.Errorf("SpeculateContext: %d nodes, %d explored; Speculate: %d, %d", len(b.Nodes), b.Explored, len(a.Nodes), a.Explored)
	}
}

// TestStaleBase is the scenario of issue 14: X has landed and conflicts with J, and
// J's builds ran on a base without X. A finished stale build decides nothing (J waits
// and its node is started again), and a running stale build is aborted.
func TestStaleBase(t *testing.T) {
	t.Parallel()
	q := Queue{Changes: []Change{{PSucc: 0.9}}}
	for _, st := range []BuildStatus{BuildSucceeded, BuildFailed} {
		q.Builds = []Build{{Change: 0, Status: st}}
		d, err := Decide(q)
		if err != nil {
			t.Fatal(err)
		}
		if d[0].Verdict == Wait {
			t.Fatalf("%v current build: J waits", st)
		}
		q.Builds[0].StaleBase = true
		d, err = Decide(q)
		if err != nil {
			t.Fatal(err)
		}
		if d[0].Verdict != Wait || d[0].Reason != WaitDecidingBuild {
			t.Errorf("%v stale build: verdict %v (%v), want wait for the deciding build", st, d[0].Verdict, d[0].Reason)
		}
		p, err := Speculate(q, Config{Capacity: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Nodes) != 1 || p.Nodes[0].Action != Start || p.Nodes[0].Change != 0 {
			t.Errorf("%v stale build: nodes %+v, want one Start of J", st, p.Nodes)
		}
	}
	q.Builds = []Build{{Change: 0, Status: BuildRunning, StaleBase: true}}
	p, err := Speculate(q, Config{Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	var start, abort int
	for _, nd := range p.Nodes {
		switch {
		case nd.Action == Start:
			start++
		case nd.Action == Abort && nd.Build == 0 && nd.PNeeded == 0 && nd.StaleBase:
			abort++
		}
	}
	if start != 1 || abort != 1 || len(p.Nodes) != 2 {
		t.Errorf("running stale build: nodes %+v, want one Start and the build aborted", p.Nodes)
	}
}
