package scoring

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchQueue returns a queue of n pending changes with conflict density d: P-succ in
// [0.8, 0.99], P-conf in [0, 0.02], one arrival every 10 s, builds of 5 to 60 minutes.
// The builds the previous round selected (capacity 200, threshold 0.001, the same
// policy) are running, as in the steady state of the engine.
func benchQueue(n int, d float64, p Policy) Queue {
	rng := rand.New(rand.NewPCG(1, 1))
	q := Queue{Changes: make([]Change, n)}
	for j := range q.Changes {
		mu := 300 + 3300*rng.Float64()
		q.Changes[j] = Change{Arrival: 10 * float64(j), PSucc: 0.8 + 0.19*rng.Float64(), BuildMu: mu, BuildSigma: mu * (0.1 + 0.2*rng.Float64())}
		for i := range j {
			if rng.Float64() < d {
				q.Conflicts = append(q.Conflicts, Conflict{A: i, B: j, PConf: 0.02 * rng.Float64()})
			}
		}
	}
	prev, err := Speculate(q, Config{Policy: p, SpeculationThreshold: 1e-3, Capacity: 200})
	if err != nil {
		panic(err)
	}
	for _, nd := range prev.Nodes {
		q.Builds = append(q.Builds, Build{Change: nd.Change, Path: nd.Landed, Status: BuildRunning})
	}
	// The oldest change's build has finished since.
	q.Builds[0].Status = BuildSucceeded
	return q
}

var benchPlan *Plan

func benchmarkSpeculate(b *testing.B, n int, d float64, p Policy) {
	benchmarkSpeculateFamily(b, n, d, p, BuildNormal)
}

// benchmarkSpeculateFamily is benchmarkSpeculate with every build time of family f.
func benchmarkSpeculateFamily(b *testing.B, n int, d float64, p Policy, f BuildFamily) {
	q := benchQueue(n, d, p)
	for j := range q.Changes {
		q.Changes[j].BuildFamily = f
	}
	cfg := Config{Policy: p, SpeculationThreshold: 1e-3, Capacity: 200}
	defer lockThread()()
	b.ReportAllocs()
	cpu0 := threadCPUTime()
	for b.Loop() {
		plan, err := Speculate(q, cfg)
		if err != nil {
			b.Fatal(err)
		}
		benchPlan = plan
	}
	// CPU time of this goroutine's thread per operation: the one-core cost, free of
	// the time other jobs on a shared machine hold the core (GC work on other threads
	// is not included; allocs/op shows it).
	b.ReportMetric(float64(threadCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSpeculate scores queues of 50, 200 and 500 pending changes at conflict
// densities 0.3 and 0.7 with a capacity of 200 builds and a threshold of 0.001.
func BenchmarkSpeculate(b *testing.B) {
	for _, p := range []Policy{PolicySQ2019, PolicySQ2024, PolicyExpected} {
		for _, n := range []int{50, 200, 500} {
			for _, d := range []float64{0.3, 0.7} {
				b.Run(fmt.Sprintf("%v/n=%d/density=%.1f", p, n, d), func(b *testing.B) { benchmarkSpeculate(b, n, d, p) })
			}
		}
	}
}

var benchSizes BatchSizes

func BenchmarkBestBatchSize(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r, err := BestBatchSize(TwoPhase, 0.9, 32)
		if err != nil {
			b.Fatal(err)
		}
		benchSizes = r
	}
}

// BenchmarkBestBatchSizeList compares every batch size of a 10,000-change list, the
// largest list predictd accepts by default.
func BenchmarkBestBatchSizeList(b *testing.B) {
	p := make([]float64, 10000)
	for i := range p {
		p[i] = 0.9 + 0.1*float64(i%7)/7
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := BestBatchSizeList(TwoPhase, p)
		if err != nil {
			b.Fatal(err)
		}
		benchSizes = r
	}
}
