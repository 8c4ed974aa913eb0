package scoring

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
)

// allNodes is a configuration that selects every node with positive P-needed.
func allNodes(p Policy) Config {
	return Config{Policy: p, Capacity: 1 << 20, FallbackFloor: 1e-12}
}

// fullConflict returns conflicts between every pair of the first n changes.
func fullConflict(n int, c float64) []Conflict {
	var out []Conflict
	for j := range n {
		for i := range j {
			out = append(out, Conflict{A: i, B: j, PConf: c})
		}
	}
	return out
}

// nodeKey names a node by its change and assumed-landed path, as in B_{1.2.3}
// (1-based, the change last).
func nodeKey(change int, landed []int) string {
	s := "B"
	sep := "_"
	for _, k := range landed {
		s += fmt.Sprintf("%s%d", sep, k+1)
		sep = "."
	}
	return s + fmt.Sprintf("%s%d", sep, change+1)
}

func byKey(t *testing.T, p *Plan) map[string]float64 {
	t.Helper()
	m := make(map[string]float64)
	for _, nd := range p.Nodes {
		k := nodeKey(nd.Change, nd.Landed)
		if nd.Action == Abort {
			k = fmt.Sprintf("abort#%d:%s", nd.Build, k)
		}
		if _, dup := m[k]; dup {
			t.Fatalf("node %s appears twice", k)
		}
		m[k] = nd.PNeeded
	}
	return m
}

func checkNodes(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("P-needed(%s) missing, want %v", k, w)
			continue
		}
		if !scalar.EqualWithinAbsOrRel(g, w, tolExact, tolExact) {
			t.Errorf("P-needed(%s) = %v, want %v", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d nodes %v, want %d", len(got), got, len(want))
	}
}

// TestSQ2019Paper001 reproduces paper 001 Equations 1, 2 and 5 for the tree of
// Figure 5, with P-succ 0.9, 0.8, 0.7 and P-conf 0.1 between every pair (the joint
// P^conf of Equation 4 is P-succ_2 × 0.1).
func TestSQ2019Paper001(t *testing.T) {
	t.Parallel()
	s1, s2, c := 0.9, 0.8, 0.1
	q := Queue{
		Changes:   []Change{{PSucc: s1}, {PSucc: s2}, {PSucc: 0.7}},
		Conflicts: fullConflict(3, c),
	}
	p, err := Speculate(q, allNodes(PolicySQ2019))
	if err != nil {
		t.Fatal(err)
	}
	joint := s2 * c
	b12Succ := s2 * (1 - c) // P(B_{1.2} succeeds | B_1 succeeds)
	checkNodes(t, byKey(t, p), map[string]float64{
		"B_1":     1,                  // the root is always needed
		"B_1.2":   s1,                 // Equation 2
		"B_2":     1 - s1,             // Equation 2
		"B_1.2.3": s1 * (s2 - joint),  // Equation 5
		"B_1.3":   s1 * (1 - b12Succ), // B_{1.2} fails given B_1 succeeds
		"B_2.3":   (1 - s1) * s2,      // C_1 rejected: C_2 on HEAD
		"B_3":     (1 - s1) * (1 - s2),
	})
}

// TestSQ2024Paper000Cases reproduces the five cases of paper 000 §V-A for three
// conflicting changes. Arrivals and build times are chosen so that each
// P(FT_y < FT_x) falls on the side of the BLRD threshold (0.5) that the case orders.
func TestSQ2024Paper000Cases(t *testing.T) {
	t.Parallel()
	s1, s2, s3, c := 0.9, 0.8, 0.7, 0.1
	type ch struct{ at, mu, sigma float64 }
	for _, tc := range []struct {
		name       string
		c1, c2, c3 ch
		// bypass[y][x]: whether y bypasses x (P(FT_y < FT_x) >= 0.5).
		b21, b31, b32 bool
		want          func(p21, p31, p32 float64) map[string]float64
	}{
		{
			name: "case 1 FT1<FT2<FT3", c1: ch{0, 10, 5}, c2: ch{1, 50, 5}, c3: ch{2, 100, 5},
			want: func(_, _, _ float64) map[string]float64 {
				return map[string]float64{
					"B_1": 1, "B_1.2": s1, "B_2": 1 - s1,
					"B_1.2.3": s1 * s2 * (1 - c), "B_1.3": s1 * (1 - s2*(1-c)),
					"B_2.3": (1 - s1) * s2, "B_3": (1 - s1) * (1 - s2),
				}
			},
		},
		{
			name: "case 2 FT2<FT1<FT3", c1: ch{0, 100, 30}, c2: ch{1, 80, 20}, c3: ch{2, 300, 10}, b21: true,
			want: func(p21, _, _ float64) map[string]float64 {
				return map[string]float64{
					"B_1": 1, "B_1.2": p21, "B_2": p21,
					"B_1.2.3": s1 * s2 * (1 - c), "B_1.3": s1 * (1 - s2*(1-c)),
					"B_2.3": (1 - s1) * s2, "B_3": (1 - s1) * (1 - s2),
				}
			},
		},
		{
			name: "case 3 FT1<FT3<FT2", c1: ch{0, 10, 5}, c2: ch{1, 300, 30}, c3: ch{2, 250, 20}, b32: true,
			want: func(_, _, p32 float64) map[string]float64 {
				return map[string]float64{
					"B_1": 1, "B_1.2": s1, "B_2": 1 - s1,
					"B_1.2.3": s1 * p32, "B_1.3": s1 * p32,
					"B_2.3": (1 - s1) * p32, "B_3": (1 - s1) * p32,
				}
			},
		},
		{
			name: "case 4 FT3<FT2<FT1", c1: ch{0, 300, 30}, c2: ch{1, 250, 20}, c3: ch{2, 200, 20}, b21: true, b31: true, b32: true,
			want: func(p21, p31, p32 float64) map[string]float64 {
				return map[string]float64{
					"B_1": 1, "B_1.2": p21, "B_2": p21,
					"B_1.2.3": p31 * p32, "B_1.3": p31 * p32,
					"B_2.3": p31 * p32, "B_3": p31 * p32,
				}
			},
		},
		{
			name: "case 5 FT3<FT1<FT2", c1: ch{0, 100, 20}, c2: ch{1, 300, 30}, c3: ch{2, 60, 20}, b31: true, b32: true,
			want: func(_, p31, p32 float64) map[string]float64 {
				return map[string]float64{
					"B_1": 1, "B_1.2": s1, "B_2": 1 - s1,
					"B_1.2.3": p31 * p32, "B_1.3": p31 * p32,
					"B_2.3": p31 * p32, "B_3": p31 * p32,
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := Queue{
				Changes: []Change{
					{Arrival: tc.c1.at, BuildMu: tc.c1.mu, BuildSigma: tc.c1.sigma, PSucc: s1},
					{Arrival: tc.c2.at, BuildMu: tc.c2.mu, BuildSigma: tc.c2.sigma, PSucc: s2},
					{Arrival: tc.c3.at, BuildMu: tc.c3.mu, BuildSigma: tc.c3.sigma, PSucc: s3},
				},
				Conflicts: fullConflict(3, c),
			}
			pr := func(x, y ch) float64 { return FinishBeforeProb(x.at, x.mu, x.sigma, y.at, y.mu, y.sigma) }
			p21, p31, p32 := pr(tc.c1, tc.c2), pr(tc.c1, tc.c3), pr(tc.c2, tc.c3)
			for _, b := range []struct {
				name string
				p    float64
				want bool
			}{{"P(FT2<FT1)", p21, tc.b21}, {"P(FT3<FT1)", p31, tc.b31}, {"P(FT3<FT2)", p32, tc.b32}} {
				if (b.p >= DefaultBLRDThreshold) != b.want || b.p == 0 || b.p == 1 {
					t.Fatalf("test setup: %s = %v, want bypass %v and a value strictly inside (0, 1)", b.name, b.p, b.want)
				}
			}
			p, err := Speculate(q, allNodes(PolicySQ2024))
			if err != nil {
				t.Fatal(err)
			}
			checkNodes(t, byKey(t, p), tc.want(p21, p31, p32))
		})
	}
}

// TestSQ2024Fallback checks that a change whose bypass product is below the floor is
// scored by PolicySQ2019.
func TestSQ2024Fallback(t *testing.T) {
	t.Parallel()
	q := Queue{
		Changes:   []Change{{Arrival: 0, BuildMu: 300, BuildSigma: 30, PSucc: 0.9}, {Arrival: 1, BuildMu: 250, BuildSigma: 20, PSucc: 0.8}},
		Conflicts: fullConflict(2, 0.1),
	}
	p21 := FinishBeforeProb(0, 300, 30, 1, 250, 20)
	for _, tc := range []struct {
		floor float64
		want  map[string]float64
	}{
		{p21 - 1e-9, map[string]float64{"B_1": 1, "B_1.2": p21, "B_2": p21}},
		{p21 + 1e-9, map[string]float64{"B_1": 1, "B_1.2": 0.9, "B_2": 0.1}},
	} {
		cfg := allNodes(PolicySQ2024)
		cfg.FallbackFloor = tc.floor
		p, err := Speculate(q, cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkNodes(t, byKey(t, p), tc.want)
	}
}

// TestExpectedPolicy checks PolicyExpected against its definition and its two limits.
func TestExpectedPolicy(t *testing.T) {
	t.Parallel()
	s1, c := 0.9, 0.1
	for _, tc := range []struct {
		name string
		c2   Change
	}{
		{"never bypasses", Change{Arrival: 1000, BuildMu: 10, BuildSigma: 1, PSucc: 0.8}},
		{"always bypasses", Change{Arrival: 1, BuildMu: 1, BuildSigma: 1, PSucc: 0.8}},
		{"in between", Change{Arrival: 1, BuildMu: 80, BuildSigma: 20, PSucc: 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c1 := Change{Arrival: 0, BuildMu: 100, BuildSigma: 30, PSucc: s1}
			q := Queue{Changes: []Change{c1, tc.c2}, Conflicts: fullConflict(2, c)}
			pb := FinishBeforeProb(c1.Arrival, c1.BuildMu, c1.BuildSigma, tc.c2.Arrival, tc.c2.BuildMu, tc.c2.BuildSigma)
			p, err := Speculate(q, allNodes(PolicyExpected))
			if err != nil {
				t.Fatal(err)
			}
			checkNodes(t, byKey(t, p), map[string]float64{
				"B_1": 1, "B_1.2": pb + (1-pb)*s1, "B_2": pb + (1-pb)*(1-s1),
			})
		})
	}
}

// TestConflictGraphPrunes reproduces paper 001 §5, Figure 7: C_1 conflicts with C_2
// and C_3, which are independent, so the 7 builds of Figure 5 become 5.
func TestConflictGraphPrunes(t *testing.T) {
	t.Parallel()
	changes := []Change{{PSucc: 0.9}, {PSucc: 0.8}, {PSucc: 0.7}}
	for _, tc := range []struct {
		name      string
		conflicts []Conflict
		want      map[string]float64
	}{
		{"figure 5", fullConflict(3, 0), nil},
		{"figure 7", []Conflict{{A: 0, B: 1}, {A: 2, B: 0}}, map[string]float64{
			"B_1": 1, "B_1.2": 0.9, "B_2": 0.1, "B_1.3": 0.9, "B_3": 0.1,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Speculate(Queue{Changes: changes, Conflicts: tc.conflicts}, allNodes(PolicySQ2019))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if len(p.Nodes) != 7 {
					t.Errorf("figure 5: %d nodes, want 7", len(p.Nodes))
				}
				return
			}
			checkNodes(t, byKey(t, p), tc.want)
		})
	}
}

// randomQueue returns a queue of n changes with conflict density d.
func randomQueue(rng *rand.Rand, n int, d float64) Queue {
	q := Queue{Changes: make([]Change, n)}
	for j := range q.Changes {
		q.Changes[j] = Change{
			Arrival:    float64(j) * 30 * rng.Float64(),
			PSucc:      0.6 + 0.39*rng.Float64(),
			BuildMu:    300 + 3000*rng.Float64(),
			BuildSigma: 30 + 300*rng.Float64(),
		}
		for i := range j {
			if rng.Float64() < d {
				q.Conflicts = append(q.Conflicts, Conflict{A: i, B: j, PConf: 0.3 * rng.Float64()})
			}
		}
	}
	return q
}

// refNodes enumerates every node of every change by brute force with the formulas of
// the package documentation, written independently of the search.
func refNodes(q Queue, cfg Config) map[string]float64 {
	n := len(q.Changes)
	ahead := make([][]Conflict, n)
	for _, c := range q.Conflicts {
		ahead[max(c.A, c.B)] = append(ahead[max(c.A, c.B)], Conflict{A: min(c.A, c.B), PConf: c.PConf})
	}
	m := make([]float64, n)
	for k := range n {
		m[k] = q.Changes[k].PSucc
		for _, c := range ahead[k] {
			m[k] *= 1 - c.PConf*m[c.A]
		}
	}
	out := make(map[string]float64)
	for j := range n {
		var path []int
		for _, c := range ahead[j] {
			path = append(path, c.A)
		}
		sort.Ints(path)
		cj := q.Changes[j]
		pb := make([]float64, len(path))
		useBypass := false
		if cfg.Policy != PolicySQ2019 {
			beta := 1.0
			for x, i := range path {
				ci := q.Changes[i]
				pb[x] = FinishBeforeProbOf(ci.Arrival, buildTimeOf(ci), cj.Arrival, buildTimeOf(cj))
				if cfg.Policy == PolicySQ2024 && pb[x] >= DefaultBLRDThreshold {
					beta *= pb[x]
					useBypass = true
				}
			}
			if cfg.Policy == PolicySQ2024 && beta < cfg.FallbackFloor {
				useBypass = false
			}
		}
		for mask := 0; mask < 1<<len(path); mask++ {
			assumed := make(map[int]float64)
			var landed []int
			for x, i := range path {
				if mask&(1<<x) != 0 {
					assumed[i] = 1
					landed = append(landed, i)
				} else {
					assumed[i] = 0
				}
			}
			p := 1.0
			for x, i := range path {
				qi := q.Changes[i].PSucc
				for _, c := range ahead[i] {
					xk, ok := assumed[c.A]
					if !ok {
						xk = m[c.A]
					}
					qi *= 1 - c.PConf*xk
				}
				f := qi
				if assumed[i] == 0 {
					f = 1 - qi
				}
				switch {
				case cfg.Policy == PolicySQ2024 && useBypass && pb[x] >= DefaultBLRDThreshold:
					f = pb[x]
				case cfg.Policy == PolicyExpected:
					f = pb[x] + (1-pb[x])*f
				}
				p *= f
			}
			if p > 0 {
				out[nodeKey(j, landed)] = p
			}
		}
	}
	return out
}

// TestSpeculateBruteForce compares the best-first search with brute-force enumeration
// on random queues, and checks the properties of the package documentation:
// probabilities in [0, 1], nodes by decreasing P-needed, and under PolicySQ2019 the
// P-needed of a change's nodes summing to 1.
func TestSpeculateBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	aborted := 0
	for trial := range 20 {
		q := randomQueue(rng, 9, 0.2+0.6*rng.Float64())
		for _, pol := range []Policy{PolicySQ2019, PolicySQ2024, PolicyExpected} {
			cfg := allNodes(pol)
			cfg.FallbackFloor = 0.05
			p, err := Speculate(q, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := byKey(t, p)
			want := refNodes(q, cfg)

			// The order of the conflicts does not matter.
			shuffled := q
			shuffled.Conflicts = slices.Clone(q.Conflicts)
			rng.Shuffle(len(shuffled.Conflicts), func(a, b int) {
				shuffled.Conflicts[a], shuffled.Conflicts[b] = shuffled.Conflicts[b], shuffled.Conflicts[a]
			})
			for x := range shuffled.Conflicts {
				if rng.IntN(2) == 0 {
					c := &shuffled.Conflicts[x]
					c.A, c.B = c.B, c.A
				}
			}
			ps, err := Speculate(shuffled, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if gs := byKey(t, ps); len(gs) != len(got) {
				t.Errorf("trial %d %v: shuffled conflicts give %d nodes, want %d", trial, pol, len(gs), len(got))
			} else {
				for k, v := range got {
					if !scalar.EqualWithinAbsOrRel(gs[k], v, tolExact, 1e-12) {
						t.Errorf("trial %d %v: shuffled conflicts: P-needed(%s) = %v, want %v", trial, pol, k, gs[k], v)
					}
				}
			}
			if len(got) != len(want) {
				t.Fatalf("trial %d %v: %d nodes, want %d", trial, pol, len(got), len(want))
			}
			for k, w := range want {
				if !scalar.EqualWithinAbsOrRel(got[k], w, tolExact, 1e-10) {
					t.Errorf("trial %d %v: P-needed(%s) = %v, want %v", trial, pol, k, got[k], w)
				}
			}

			// Running builds on random paths beyond a capacity of 3 are aborted and
			// scored along their own path.
			withBuilds := q
			withBuilds.Builds = nil
			for range 6 {
				j := rng.IntN(len(q.Changes))
				var path []int
				for i := range j {
					if rng.IntN(2) == 0 {
						path = append(path, i)
					}
				}
				withBuilds.Builds = append(withBuilds.Builds, Build{Change: j, Path: path, Status: BuildRunning})
			}
			capped := cfg
			capped.Capacity = 3
			pb, err := Speculate(withBuilds, capped)
			if err != nil {
				t.Fatal(err)
			}
			for _, nd := range pb.Nodes {
				if nd.Action != Abort {
					continue
				}
				aborted++
				k := nodeKey(nd.Change, nd.Landed)
				if w := want[k]; !scalar.EqualWithinAbsOrRel(nd.PNeeded, w, tolExact, 1e-10) {
					t.Errorf("trial %d %v: aborted build %d: P-needed(%s) = %v, want %v", trial, pol, nd.Build, k, nd.PNeeded, w)
				}
			}
			logs := make([][]float64, len(q.Changes))
			for x, nd := range p.Nodes {
				if nd.PNeeded < 0 || nd.PNeeded > 1 {
					t.Errorf("trial %d %v: P-needed %v outside [0, 1]", trial, pol, nd.PNeeded)
				}
				if x > 0 && nd.LogPNeeded > p.Nodes[x-1].LogPNeeded {
					t.Errorf("trial %d %v: node %d more likely than node %d", trial, pol, x, x-1)
				}
				logs[nd.Change] = append(logs[nd.Change], nd.LogPNeeded)
			}
			if pol != PolicySQ2019 {
				continue
			}
			for j, l := range logs {
				// Paths with P-needed 0 are omitted; they add nothing to the sum.
				if s := math.Exp(floats.LogSumExp(l)); !scalar.EqualWithinAbsOrRel(s, 1, 1e-12, 1e-12) {
					t.Errorf("trial %d: P-needed of change %d sums to %v, want 1", trial, j, s)
				}
			}
		}
	}
	if aborted == 0 {
		t.Error("no running build was aborted: the abort check did not run")
	}
}

// TestSpeculateSelection checks the threshold and the capacity against the brute-force
// node list, and that a deep queue is searched without enumerating its tree.
func TestSpeculateSelection(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	q := randomQueue(rng, 10, 0.6)
	var all []float64
	for _, v := range refNodes(q, allNodes(PolicySQ2019)) {
		all = append(all, v)
	}
	slices.SortFunc(all, func(a, b float64) int { return -compare(a, b) })
	for _, tc := range []struct {
		thr float64
		cap int
	}{{0.05, 7}, {0.05, 1000}, {0.2, 3}, {0, 25}, {1, 5}} {
		p, err := Speculate(q, Config{SpeculationThreshold: tc.thr, Capacity: tc.cap})
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		for _, v := range all {
			if v >= tc.thr && len(want) < tc.cap {
				want = append(want, v)
			}
		}
		var got []float64
		for _, nd := range p.Nodes {
			got = append(got, nd.PNeeded)
		}
		if !floats.EqualApprox(got, want, 1e-12) {
			t.Errorf("threshold %v capacity %d: P-needed %v, want %v", tc.thr, tc.cap, got, want)
		}
	}

	// 300 fully conflicting changes have 2^300 nodes per change at the end.
	deep := Queue{Changes: make([]Change, 300), Conflicts: fullConflict(300, 0.01)}
	for j := range deep.Changes {
		deep.Changes[j].PSucc = 0.95
	}
	p, err := Speculate(deep, Config{SpeculationThreshold: 1e-3, Capacity: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Nodes) != 200 || p.Truncated || p.Explored > 200*300 {
		t.Errorf("deep queue: %d nodes, truncated %v, %d prefixes explored", len(p.Nodes), p.Truncated, p.Explored)
	}
}

func TestSpeculateEmpty(t *testing.T) {
	t.Parallel()
	p, err := Speculate(Queue{}, Config{Capacity: 1})
	if err != nil || len(p.Nodes) != 0 || len(p.Decisions) != 0 {
		t.Errorf("Speculate(empty) = %+v, %v, want an empty plan", p, err)
	}
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSpeculateRunningBuilds checks keep and abort of running builds and the use of
// finished builds.
func TestSpeculateRunningBuilds(t *testing.T) {
	t.Parallel()
	q := Queue{
		Changes:   []Change{{PSucc: 0.9}, {PSucc: 0.8}, {PSucc: 0.7}},
		Conflicts: fullConflict(3, 0.1),
		Builds: []Build{
			{Change: 0, Status: BuildRunning},                 // B_1: kept
			{Change: 1, Status: BuildRunning},                 // B_2: P 0.1, beyond capacity
			{Change: 1, Path: []int{0}, Status: BuildRunning}, // B_1.2: kept
			{Change: 1, Path: []int{0}, Status: BuildRunning}, // duplicate of B_1.2
		},
	}
	p, err := Speculate(q, Config{Capacity: 2})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		key    string
		action Action
		build  int
		p      float64
	}
	var got []row
	for _, nd := range p.Nodes {
		got = append(got, row{nodeKey(nd.Change, nd.Landed), nd.Action, nd.Build, nd.PNeeded})
	}
	want := []row{{"B_1", Keep, 0, 1}, {"B_1.2", Keep, 2, 0.9}, {"B_1.2", Abort, 3, 0.9}, {"B_2", Abort, 1, 0.1}}
	if len(got) != len(want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	for x := range want {
		if got[x].key != want[x].key || got[x].action != want[x].action || got[x].build != want[x].build ||
			!scalar.EqualWithinAbsOrRel(got[x].p, want[x].p, tolExact, tolExact) {
			t.Errorf("node %d = %v, want %v", x, got[x], want[x])
		}
	}

	// B_1 finished and succeeded: C_1 lands, B_2 becomes useless, and C_3's tree only
	// speculates on C_2.
	q.Builds[0].Status = BuildSucceeded
	p, err = Speculate(q, Config{Capacity: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Decisions[0].Verdict != Land {
		t.Fatalf("decision on C_1 = %v, want land", p.Decisions[0].Verdict)
	}
	checkNodes(t, byKey(t, p), map[string]float64{
		"B_2":         1,           // the kept B_1.2: C_2's path is now HEAD (with C_1)
		"abort#3:B_2": 1,           // its duplicate
		"abort#1:B_2": 0,           // the running B_2 assumed C_1 rejected
		"B_2.3":       0.8 * 0.9,   // C_2 lands with P-succ × (1 − P-conf)
		"B_3":         1 - 0.8*0.9, // C_3 on HEAD+C_1 without C_2
	})

	// A finished build of C_2 on HEAD+C_1 fixes its outcome for C_3.
	q.Builds[2].Status = BuildFailed
	p, err = Speculate(q, Config{Capacity: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Decisions[1].Verdict != Reject {
		t.Fatalf("decision on C_2 = %v, want reject", p.Decisions[1].Verdict)
	}
	checkNodes(t, byKey(t, p), map[string]float64{"B_3": 1, "abort#1:B_2": 0, "abort#3:B_2": 0})
}

func TestSpeculateErrors(t *testing.T) {
	t.Parallel()
	good := Queue{Changes: []Change{{PSucc: 0.9}, {PSucc: 0.8}}}
	for _, tc := range []struct {
		name    string
		q       Queue
		cfg     Config
		wantErr error
	}{
		{"zero capacity", good, Config{}, ErrInvalidConfig},
		{"threshold above 1", good, Config{Capacity: 1, SpeculationThreshold: 1.5}, ErrInvalidConfig},
		{"unknown policy", good, Config{Capacity: 1, Policy: 9}, ErrInvalidConfig},
		{"nan p_succ", Queue{Changes: []Change{{PSucc: math.NaN()}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"negative sigma", Queue{Changes: []Change{{PSucc: 0.5, BuildSigma: -1}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"conflict out of range", Queue{Changes: good.Changes, Conflicts: []Conflict{{A: 0, B: 2}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"self conflict", Queue{Changes: good.Changes, Conflicts: []Conflict{{A: 1, B: 1}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"duplicate conflict", Queue{Changes: good.Changes, Conflicts: []Conflict{{A: 0, B: 1}, {A: 1, B: 0}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"duplicate conflict unsorted", Queue{
			Changes:   []Change{{PSucc: 0.9}, {PSucc: 0.8}, {PSucc: 0.7}},
			Conflicts: []Conflict{{A: 1, B: 2}, {A: 0, B: 1}, {A: 0, B: 2}, {A: 2, B: 1}},
		}, Config{Capacity: 1}, ErrInvalidQueue},
		{"p_conf above 1", Queue{Changes: good.Changes, Conflicts: []Conflict{{A: 0, B: 1, PConf: 2}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"path behind", Queue{Changes: good.Changes, Builds: []Build{{Change: 0, Path: []int{1}}}}, Config{Capacity: 1}, ErrInvalidQueue},
		{"build change out of range", Queue{Changes: good.Changes, Builds: []Build{{Change: 5}}}, Config{Capacity: 1}, ErrInvalidQueue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Speculate(tc.q, tc.cfg); !errors.Is(err, tc.wantErr) {
				t.Errorf("Speculate = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestEnumStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{PolicySQ2019.String(), "sq2019"}, {PolicySQ2024.String(), "sq2024"}, {PolicyExpected.String(), "expected"}, {Policy(9).String(), "Policy(9)"},
		{Start.String(), "start"}, {Keep.String(), "keep"}, {Abort.String(), "abort"}, {Action(9).String(), "Action(9)"},
		{Wait.String(), "wait"}, {Land.String(), "land"}, {Reject.String(), "reject"}, {Verdict(9).String(), "Verdict(9)"},
		{NotWaiting.String(), "not_waiting"}, {WaitDecidingBuild.String(), "deciding_build"}, {WaitPaths.String(), "paths_pending"},
		{WaitPathsDisagree.String(), "paths_disagree"}, {WaitReason(9).String(), "WaitReason(9)"},
		{BuildRunning.String(), "running"}, {BuildSucceeded.String(), "succeeded"}, {BuildFailed.String(), "failed"}, {BuildStatus(9).String(), "BuildStatus(9)"},
		{OnePhase.String(), "one_phase"}, {TwoPhase.String(), "two_phase"}, {BatchScheme(9).String(), "BatchScheme(9)"},
	} {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
	for _, p := range []Policy{PolicySQ2019, PolicySQ2024, PolicyExpected} {
		if got, err := ParsePolicy(p.String()); err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParsePolicy("bogus"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParsePolicy(bogus) = %v, want ErrInvalidConfig", err)
	}
}

// TestSpeculateConcurrent runs Speculate from several goroutines at once (it recycles
// buffers through a pool) and checks that each gets the plan of a sequential call.
func TestSpeculateConcurrent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	queues := make([]Queue, 4)
	want := make([]map[string]float64, len(queues))
	for x := range queues {
		queues[x] = randomQueue(rng, 8+x, 0.5)
		p, err := Speculate(queues[x], allNodes(PolicyExpected))
		if err != nil {
			t.Fatal(err)
		}
		want[x] = byKey(t, p)
	}
	errs := make(chan error, len(queues))
	for x := range queues {
		go func() {
			for range 20 {
				p, err := Speculate(queues[x], allNodes(PolicyExpected))
				if err != nil {
					errs <- err
					return
				}
				for _, nd := range p.Nodes {
					if w := want[x][nodeKey(nd.Change, nd.Landed)]; !scalar.EqualWithinAbsOrRel(nd.PNeeded, w, tolExact, tolExact) {
						errs <- fmt.Errorf("queue %d: P-needed %v, want %v", x, nd.PNeeded, w)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range queues {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestSpeculateReusesNoState plans queues of different sizes, families, builds and
// policies one after the other, twice: Speculate recycles its state between calls
// (searchPool), so a call must give the same plan whatever the calls before it left.
func TestSpeculateReusesNoState(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type call struct {
		q   Queue
		cfg Config
	}
	var calls []call
	for x := range 12 {
		q := randomQueue(rng, 4+rng.IntN(20), 0.4)
		if x%2 == 1 {
			for j := range q.Changes {
				q.Changes[j].BuildFamily = BuildLogNormal
			}
		}
		// Builds on random paths: some running, some finished, so that the per-change
		// maps of one call hold entries a later call must not see.
		for range rng.IntN(2 * len(q.Changes)) {
			j := rng.IntN(len(q.Changes))
			var path []int
			for _, c := range q.Conflicts {
				if max(c.A, c.B) == j && rng.IntN(2) == 0 {
					path = append(path, min(c.A, c.B))
				}
			}
			q.Builds = append(q.Builds, Build{Change: j, Path: path, Status: BuildStatus(rng.IntN(3))})
		}
		pol := Policy(x % 3)
		calls = append(calls, call{q, Config{Policy: pol, Capacity: 1 + rng.IntN(30), SpeculationThreshold: []float64{0, 0.05}[x%2], KeepMargin: []float64{0, 4}[x/6]}})
	}
	first := make([]*Plan, len(calls))
	for k, c := range calls {
		p, err := Speculate(c.q, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		first[k] = p
	}
	for k := len(calls) - 1; k >= 0; k-- {
		p, err := Speculate(calls[k].q, calls[k].cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, first[k]) {
			t.Errorf("call %d: plan differs when other calls ran before it:\n%+v\nwant\n%+v", k, p, first[k])
		}
	}
}
