package scoring

import (
	"fmt"
	"math"
)

// BatchScheme is a way to build several independent changes together; the package
// documentation derives the cost of each.
type BatchScheme uint8

// The batching schemes.
const (
	// OnePhase builds the whole batch once; if that fails, it builds every change alone.
	OnePhase BatchScheme = iota
	// TwoPhase builds the whole batch once; if that fails, it builds each half as one
	// build, then every change of a failed half alone.
	TwoPhase
)

// String returns "one_phase" or "two_phase".
func (s BatchScheme) String() string {
	switch s {
	case OnePhase:
		return "one_phase"
	case TwoPhase:
		return "two_phase"
	}
	return fmt.Sprintf("BatchScheme(%d)", uint8(s))
}

// logAllSucceed returns log ∏ p of p, in log space so that long batches do not
// underflow; a zero p gives -Inf.
func logAllSucceed(p []float64) float64 {
	s := 0.0
	for _, x := range p {
		s += math.Log(x)
	}
	return s
}

// failProb returns 1 − exp(logAll), the probability that a build of a group fails when
// logAll is the log-probability that all of its changes succeed.
func failProb(logAll float64) float64 { return -math.Expm1(logAll) }

// batchBuilds returns the expected number of builds for one batch whose changes have
// the success log-probabilities given by logAll(lo, hi) over index ranges.
func batchBuilds(s BatchScheme, b int, logAll func(lo, hi int) float64) float64 {
	if b == 1 {
		return 1 // a batch of one is the change's own build
	}
	all := failProb(logAll(0, b))
	if s == OnePhase {
		return 1 + float64(b)*all
	}
	h := (b + 1) / 2
	cost := 1 + 2*all
	if h >= 2 {
		cost += float64(h) * failProb(logAll(0, h))
	}
	if b-h >= 2 {
		cost += float64(b-h) * failProb(logAll(h, b))
	}
	return cost
}

func checkBatch(s BatchScheme, p []float64) error {
	if s > TwoPhase {
		return fmt.Errorf("%w: unknown scheme %d", ErrInvalidBatch, s)
	}
	if len(p) == 0 {
		return fmt.Errorf("%w: empty batch", ErrInvalidBatch)
	}
	for i, x := range p {
		if !checkProb(x) {
			return fmt.Errorf("%w: p_succ[%d] = %v outside [0, 1]", ErrInvalidBatch, i, x)
		}
	}
	return nil
}

// BatchCost returns the expected number of builds per change when the changes with
// success probabilities pSucc are built as one batch under scheme s. The changes fail
// independently; a batch build succeeds exactly when all its changes do. For TwoPhase
// the first half holds the first ceil(b/2) changes.
//
// A batch of one costs 1. An empty pSucc, or a probability outside [0, 1] or NaN,
// returns an error wrapping ErrInvalidBatch.
func BatchCost(s BatchScheme, pSucc []float64) (float64, error) {
	if err := checkBatch(s, pSucc); err != nil {
		return math.NaN(), err
	}
	return batchBuilds(s, len(pSucc), func(lo, hi int) float64 { return logAllSucceed(pSucc[lo:hi]) }) / float64(len(pSucc)), nil
}

// BatchCostCommon returns BatchCost for b changes that all succeed with probability q:
// for OnePhase and b ≥ 2 the closed form 1 + 1/b − q^b.
//
// b below 1, or q outside [0, 1] or NaN, returns an error wrapping ErrInvalidBatch.
func BatchCostCommon(s BatchScheme, q float64, b int) (float64, error) {
	if b < 1 {
		return math.NaN(), fmt.Errorf("%w: batch size %d, want at least 1", ErrInvalidBatch, b)
	}
	if err := checkBatch(s, []float64{q}); err != nil {
		return math.NaN(), err
	}
	lq := math.Log(q)
	return batchBuilds(s, b, func(lo, hi int) float64 { return float64(hi-lo) * lq }) / float64(b), nil
}

// BatchSizes is the cost of every batch size and the best one.
type BatchSizes struct {
	// Best is the batch size with the fewest expected builds per change (the smallest
	// such size on a tie), and Cost that number.
	Best int
	Cost float64
	// ByB[b-1] is the expected number of builds per change with batch size b.
	ByB []float64
}

// BestBatchSize returns the cost of batch sizes 1 to maxB for changes that all succeed
// with probability q, and the best size. maxB below 1, or q outside [0, 1] or NaN,
// returns an error wrapping ErrInvalidBatch.
func BestBatchSize(s BatchScheme, q float64, maxB int) (BatchSizes, error) {
	if maxB < 1 {
		return BatchSizes{}, fmt.Errorf("%w: max batch size %d, want at least 1", ErrInvalidBatch, maxB)
	}
	by := make([]float64, maxB)
	for b := 1; b <= maxB; b++ {
		c, err := BatchCostCommon(s, q, b)
		if err != nil {
			return BatchSizes{}, err
		}
		by[b-1] = c
	}
	return best(by), nil
}

// BestBatchSizeList returns, for the given list of changes in queue order, the expected
// builds per change when the list is cut into consecutive batches of b changes (the last
// batch holds the remainder), for every b from 1 to len(pSucc), and the best b. ByB for
// b = len(pSucc) is BatchCost of the whole list as one batch.
//
// The log-probability that a range of changes all succeed comes from prefix sums, so
// size b costs O(n/b) and all sizes together O(n log n) (the harmonic sum).
//
// An empty list, or a probability outside [0, 1] or NaN, returns an error wrapping
// ErrInvalidBatch.
func BestBatchSizeList(s BatchScheme, pSucc []float64) (BatchSizes, error) {
	if err := checkBatch(s, pSucc); err != nil {
		return BatchSizes{}, err
	}
	n := len(pSucc)
	pre := newLogPrefix(pSucc)
	by := make([]float64, n)
	for b := 1; b <= n; b++ {
		total := 0.0
		for lo := 0; lo < n; lo += b {
			base, size := lo, min(b, n-lo)
			total += batchBuilds(s, size, func(l, h int) float64 { return pre.logAll(base+l, base+h) })
		}
		by[b-1] = total / float64(n)
	}
	return best(by), nil
}

// logPrefix answers log ∏ p over index ranges of a list in O(1): sum[i] is the sum of
// log p over the positive p of the first i entries, and zeros[i] counts the zero p among
// them (whose logarithm, -Inf, would make differences of sums NaN).
type logPrefix struct {
	sum   []float64
	zeros []int
}

// newLogPrefix builds the prefix sums of p with Neumaier's compensated summation, so
// that a difference of two sums keeps about the accuracy of summing the range itself.
func newLogPrefix(p []float64) logPrefix {
	lp := logPrefix{sum: make([]float64, len(p)+1), zeros: make([]int, len(p)+1)}
	var s, comp float64
	for i, x := range p {
		z := lp.zeros[i]
		if x == 0 {
			z++
		} else {
			v := math.Log(x)
			t := s + v
			if math.Abs(s) >= math.Abs(v) {
				comp += (s - t) + v
			} else {
				comp += (v - t) + s
			}
			s = t
		}
		lp.sum[i+1], lp.zeros[i+1] = s+comp, z
	}
	return lp
}

// logAll returns log ∏ p over p[lo:hi].
func (lp logPrefix) logAll(lo, hi int) float64 {
	if lp.zeros[hi] > lp.zeros[lo] {
		return math.Inf(-1)
	}
	return lp.sum[hi] - lp.sum[lo]
}

func best(by []float64) BatchSizes {
	r := BatchSizes{Best: 1, Cost: by[0], ByB: by}
	for b, c := range by {
		if c < r.Cost {
			r.Best, r.Cost = b+1, c
		}
	}
	return r
}

// DefaultMaxBatchSize is the largest batch size BatchQuery compares when MaxBatchSize
// is zero.
const DefaultMaxBatchSize = 32

// BatchQuery asks for the cost of batching under both schemes.
type BatchQuery struct {
	// PSucc, when not empty, is the list of changes to batch in queue order; sizes 1
	// to len(PSucc) are compared (see BestBatchSizeList).
	PSucc []float64
	// CommonPSucc is the success probability of every change when PSucc is empty;
	// sizes 1 to MaxBatchSize are compared (see BestBatchSize).
	CommonPSucc float64
	// MaxBatchSize is the largest size compared for CommonPSucc; zero means
	// DefaultMaxBatchSize. It is ignored for a list.
	MaxBatchSize int
}

// BatchComparison holds the batch sizes of both schemes.
type BatchComparison struct {
	OnePhase, TwoPhase BatchSizes
}

// CompareBatching returns the cost of every batch size and the best one under
// OnePhase and TwoPhase for q. Bad input returns an error wrapping ErrInvalidBatch.
func CompareBatching(q BatchQuery) (BatchComparison, error) {
	var c BatchComparison
	var err error
	if len(q.PSucc) > 0 {
		if c.OnePhase, err = BestBatchSizeList(OnePhase, q.PSucc); err != nil {
			return c, err
		}
		c.TwoPhase, err = BestBatchSizeList(TwoPhase, q.PSucc)
		return c, err
	}
	maxB := q.MaxBatchSize
	if maxB == 0 {
		maxB = DefaultMaxBatchSize
	}
	if c.OnePhase, err = BestBatchSize(OnePhase, q.CommonPSucc, maxB); err != nil {
		return c, err
	}
	c.TwoPhase, err = BestBatchSize(TwoPhase, q.CommonPSucc, maxB)
	return c, err
}
