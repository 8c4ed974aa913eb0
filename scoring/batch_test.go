package scoring

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// bruteBatch enumerates the 2^b outcomes of a batch, runs the scheme on each and
// returns the expected builds per change.
func bruteBatch(s BatchScheme, p []float64) float64 {
	b := len(p)
	allOK := func(out []bool, lo, hi int) bool {
		for _, ok := range out[lo:hi] {
			if !ok {
				return false
			}
		}
		return true
	}
	expected := 0.0
	out := make([]bool, b)
	for mask := 0; mask < 1<<b; mask++ {
		prob := 1.0
		for i := range out {
			out[i] = mask&(1<<i) != 0
			if out[i] {
				prob *= p[i]
			} else {
				prob *= 1 - p[i]
			}
		}
		builds := 1
		if b > 1 && !allOK(out, 0, b) {
			switch s {
			case OnePhase:
				builds += b
			case TwoPhase:
				builds += 2
				h := (b + 1) / 2
				for _, half := range [][2]int{{0, h}, {h, b}} {
					if n := half[1] - half[0]; n > 1 && !allOK(out, half[0], half[1]) {
						builds += n
					}
				}
			}
		}
		expected += prob * float64(builds)
	}
	return expected / float64(b)
}

// TestBatchCostBruteForce checks both schemes against an enumeration of outcomes, for
// heterogeneous and common success probabilities.
func TestBatchCostBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range []BatchScheme{OnePhase, TwoPhase} {
		for b := 1; b <= 11; b++ {
			p := make([]float64, b)
			for i := range p {
				p[i] = 0.5 + 0.5*rng.Float64()
			}
			got, err := BatchCost(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteBatch(s, p); !scalar.EqualWithinAbsOrRel(got, want, tolExact, 1e-12) {
				t.Errorf("BatchCost(%v, b=%d) = %v, want %v", s, b, got, want)
			}
			for _, q := range []float64{0, 0.37, 0.9, 1} {
				common := make([]float64, b)
				for i := range common {
					common[i] = q
				}
				got, err := BatchCostCommon(s, q, b)
				if err != nil {
					t.Fatal(err)
				}
				if want := bruteBatch(s, common); !scalar.EqualWithinAbsOrRel(got, want, tolExact, 1e-12) {
					t.Errorf("BatchCostCommon(%v, %v, %d) = %v, want %v", s, q, b, got, want)
				}
				if s == OnePhase && b >= 2 {
					if closed := 1 + 1/float64(b) - math.Pow(q, float64(b)); !scalar.EqualWithinAbsOrRel(got, closed, tolExact, 1e-12) {
						t.Errorf("one-phase cost(q=%v, b=%d) = %v, want 1 + 1/b − q^b = %v", q, b, got, closed)
					}
				}
			}
		}
	}
}

// TestBestBatchSize checks the best sizes: Dorfman's classic optimum for a 10% failure
// rate is a group of 4 at 0.5939 tests per item.
func TestBestBatchSize(t *testing.T) {
	t.Parallel()
	r, err := BestBatchSize(OnePhase, 0.9, 32)
	if err != nil {
		t.Fatal(err)
	}
	if r.Best != 4 || math.Abs(r.Cost-0.5939) > tolPaperP || len(r.ByB) != 32 {
		t.Errorf("BestBatchSize(one phase, 0.9) = %d, %v (%d sizes), want 4, 0.5939", r.Best, r.Cost, len(r.ByB))
	}
	for _, s := range []BatchScheme{OnePhase, TwoPhase} {
		r, err := BestBatchSize(s, 0.9, 32)
		if err != nil {
			t.Fatal(err)
		}
		for b, c := range r.ByB {
			if c < r.Cost {
				t.Errorf("%v: size %d costs %v < best %v", s, b+1, c, r.Cost)
			}
		}
		// With a common q the list form with exact multiples of b agrees.
		p := make([]float64, 24)
		for i := range p {
			p[i] = 0.9
		}
		lr, err := BestBatchSizeList(s, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []int{1, 2, 3, 4, 6, 8, 12, 24} {
			if !scalar.EqualWithinAbsOrRel(lr.ByB[b-1], r.ByB[b-1], tolExact, tolExact) {
				t.Errorf("%v: list cost(b=%d) = %v, want %v", s, b, lr.ByB[b-1], r.ByB[b-1])
			}
		}
		// Heterogeneous list: the whole-list entry is BatchCost of the list, and a
		// chunked entry is the size-weighted mean of its batches.
		h := []float64{0.95, 0.9, 0.99, 0.8, 0.97}
		hr, err := BestBatchSizeList(s, h)
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := BatchCost(s, h)
		c3, _ := BatchCost(s, h[:3])
		c2, _ := BatchCost(s, h[3:])
		if !scalar.EqualWithinAbsOrRel(hr.ByB[4], whole, tolExact, tolExact) ||
			!scalar.EqualWithinAbsOrRel(hr.ByB[2], (3*c3+2*c2)/5, tolExact, tolExact) {
			t.Errorf("%v: list costs %v, want whole %v and b=3 %v", s, hr.ByB, whole, (3*c3+2*c2)/5)
		}
	}
	// Certain success: the largest batch is best; certain failure: no batching.
	if r, _ := BestBatchSize(TwoPhase, 1, 8); r.Best != 8 {
		t.Errorf("BestBatchSize(q=1) = %d, want 8", r.Best)
	}
	if r, _ := BestBatchSize(OnePhase, 0, 8); r.Best != 1 || r.Cost != 1 {
		t.Errorf("BestBatchSize(q=0) = %d, %v, want 1, 1", r.Best, r.Cost)
	}
}

func TestBatchErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"empty", func() error { _, err := BatchCost(OnePhase, nil); return err }},
		{"nan", func() error { _, err := BatchCost(TwoPhase, []float64{0.5, math.NaN()}); return err }},
		{"above 1", func() error { _, err := BestBatchSizeList(OnePhase, []float64{1.5}); return err }},
		{"size 0", func() error { _, err := BatchCostCommon(OnePhase, 0.5, 0); return err }},
		{"max 0", func() error { _, err := BestBatchSize(OnePhase, 0.5, 0); return err }},
		{"scheme", func() error { _, err := BatchCost(BatchScheme(7), []float64{0.5}); return err }},
	} {
		if err := tc.err(); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("%s: error %v, want ErrInvalidBatch", tc.name, err)
		}
	}
}

// TestBestBatchSizeListMatchesChunks checks the prefix-sum list costs against the
// direct definition: for every b, the size-weighted mean of BatchCost over the chunks,
// each computed from its own probabilities. Lists mix certain failures, certain
// successes and values near 1, where a difference of prefix sums could lose accuracy.
func TestBestBatchSizeListMatchesChunks(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(14, 1))
	for trial := range 40 {
		n := 1 + rnd.IntN(120)
		p := make([]float64, n)
		for i := range p {
			switch r := rnd.Float64(); {
			case r < 0.03:
				p[i] = 0
			case r < 0.1:
				p[i] = 1
			case r < 0.5:
				p[i] = 1 - 1e-9*rnd.Float64()
			default:
				p[i] = rnd.Float64()
			}
		}
		for _, s := range []BatchScheme{OnePhase, TwoPhase} {
			got, err := BestBatchSizeList(s, p)
			if err != nil {
				t.Fatal(err)
			}
			for b := 1; b <= n; b++ {
				total := 0.0
				for lo := 0; lo < n; lo += b {
					hi := min(lo+b, n)
					c, err := BatchCost(s, p[lo:hi])
					if err != nil {
						t.Fatal(err)
					}
					total += c * float64(hi-lo)
				}
				want := total / float64(n)
				if !scalar.EqualWithinAbsOrRel(got.ByB[b-1], want, 1e-12, 1e-12) {
					t.Fatalf("trial %d %v n=%d b=%d: %v, want %v", trial, s, n, b, got.ByB[b-1], want)
				}
			}
		}
	}
}
