package eval

import (
	"math"
	"slices"
	"time"
)

// HoldoutByTime splits rows into a training set and a later test set for time-ordered
// holdout evaluation. t[i] is the time of row i. The cut-off is the time of the row at
// position n - ⌈testFraction·n⌉ in time order; test holds every row at or after it
// (rows tied with the cut-off all go to the test side, so no instant is split) and train
// every row before it. Both are returned in time order (ties in input order). It panics
// unless 0 < testFraction < 1.
func HoldoutByTime(t []time.Time, testFraction float64) (train, test []int) {
	if !(testFraction > 0 && testFraction < 1) {
		panic("eval: HoldoutByTime: testFraction not in (0, 1)")
	}
	order := make([]int, len(t))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return t[a].Compare(t[b]) })
	if len(t) == 0 {
		return nil, nil
	}
	// ⌈testFraction·n⌉, forgiving the rounding of products such as 10·0.3.
	nTest := int(math.Ceil(float64(len(t))*testFraction - 1e-9))
	nTest = min(max(nTest, 1), len(t))
	cut := len(t) - nTest
	for cut > 0 && t[order[cut-1]].Equal(t[order[cut]]) {
		cut--
	}
	return order[:cut], order[cut:]
}
