package queue

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidTraffic reports traffic or a configuration the engine cannot run: arrivals
// out of order, an edge that does not point ahead, a non-positive worker count.
var ErrInvalidTraffic = errors.New("queue: invalid traffic")

// Change is one change of the traffic.
type Change struct {
	// ID names the change in errors and outputs.
	ID string
	// Arrival is the time the change enters the queue, in seconds from any origin;
	// arrivals must not decrease along the traffic.
	Arrival float64
	// Ahead holds the indices of the earlier changes this one may conflict with (the
	// edges of the conflict graph), ascending.
	Ahead []int
	// MeanBuild is the change's expected build time in seconds. It only serves the
	// small-behind-large metric (see Summarize); 0 when unknown.
	MeanBuild float64
}

// Traffic is the input of a run: changes in queue order.
type Traffic struct {
	Changes []Change
}

// validate checks the order of arrivals and the edges.
func (t *Traffic) validate() error {
	prev := math.Inf(-1)
	for i, c := range t.Changes {
		if math.IsNaN(c.Arrival) || math.IsInf(c.Arrival, 0) {
			return fmt.Errorf("%w: change %d (%s): arrival %v is not finite", ErrInvalidTraffic, i, c.ID, c.Arrival)
		}
		if c.Arrival < prev {
			return fmt.Errorf("%w: change %d (%s): arrival %v before the previous change's %v", ErrInvalidTraffic, i, c.ID, c.Arrival, prev)
		}
		prev = c.Arrival
		if err := c.validateAhead(i); err != nil {
			return err
		}
	}
	return nil
}

// validateAhead checks that the edges of c, change i of its traffic, point ahead.
func (c *Change) validateAhead(i int) error {
	last := -1
	for _, k := range c.Ahead {
		if k <= last || k >= i {
			return fmt.Errorf("%w: change %d (%s): ahead list %v is not ascending indices below %d", ErrInvalidTraffic, i, c.ID, c.Ahead, i)
		}
		last = k
	}
	return nil
}

// behind returns, for every change, the changes that list it in Ahead.
func (t *Traffic) behind() [][]int32 {
	n := len(t.Changes)
	cnt := make([]int32, n+1)
	for _, c := range t.Changes {
		for _, k := range c.Ahead {
			cnt[k+1]++
		}
	}
	for i := range n {
		cnt[i+1] += cnt[i]
	}
	flat := make([]int32, cnt[n])
	fill := make([]int32, n)
	for i, c := range t.Changes {
		for _, k := range c.Ahead {
			flat[cnt[k]+fill[k]] = int32(i)
			fill[k]++
		}
	}
	out := make([][]int32, n)
	for i := range n {
		out[i] = flat[cnt[i]:cnt[i+1]:cnt[i+1]]
	}
	return out
}
