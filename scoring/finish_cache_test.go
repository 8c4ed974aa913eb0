package scoring

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestFinishCacheSamePlans scores a queue of log-normal build times that changes from
// call to call (the oldest change leaves, a new one arrives) with and without a
// FinishCache, under every policy and with a cache small enough to be cleared: the
// plans must be identical, and the cache must have been used.
func TestFinishCacheSamePlans(t *testing.T) {
	t.Parallel()
	for _, pol := range []Policy{PolicySQ2019, PolicySQ2024, PolicyExpected} {
		for _, maxEntries := range []int{0, 50} {
			rng := rand.New(rand.NewPCG(31, uint64(pol)))
			all := randomQueue(rng, 40, 0.4)
			for j := range all.Changes {
				all.Changes[j].BuildFamily = BuildLogNormal
				all.Changes[j].BuildSigma *= 1 + 2*rng.Float64()
			}
			cache := &FinishCache{MaxEntries: maxEntries}
			for start := 0; start+12 <= len(all.Changes); start += 2 {
				// The window [start, start+12) of the changes, with its conflicts.
				q := Queue{Changes: all.Changes[start : start+12]}
				for _, c := range all.Conflicts {
					if c.A >= start && c.B >= start && c.A < start+12 && c.B < start+12 {
						q.Conflicts = append(q.Conflicts, Conflict{A: c.A - start, B: c.B - start, PConf: c.PConf})
					}
				}
				cfg := Config{Policy: pol, Capacity: 8, SpeculationThreshold: 0.01}
				want, err := Speculate(q, cfg)
				if err != nil {
					t.Fatal(err)
				}
				cfg.FinishCache = cache
				got, err := Speculate(q, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%v, max %d, window %d: plan with the cache differs:\n%+v\nwant\n%+v", pol, maxEntries, start, got.Nodes, want.Nodes)
				}
			}
			if pol != PolicySQ2019 && cache.Len() == 0 {
				t.Errorf("%v, max %d: the cache is empty", pol, maxEntries)
			}
			if maxEntries > 0 && cache.Len() > maxEntries {
				t.Errorf("%v: %d entries, max %d", pol, cache.Len(), maxEntries)
			}
		}
	}
}
