package scoring

// FinishCache remembers P(FT_y < FT_x) of pairs of changes whose build times are not
// both Normal across calls of Speculate, for a caller that scores the same pending
// changes again and again (a replay, a speculation engine polling predictd): the
// probability depends only on the two build times and the difference of the arrivals,
// so a pair costs one integral for its whole time in the queue instead of one per call.
// It remembers the probabilities the search computed (not the cheaper bounds that
// settle most BLRD threshold tests). The zero value is ready to use; it is not safe for
// concurrent use.
type FinishCache struct {
	m map[finishKey]float64
	// MaxEntries bounds the cache: when an insert would pass it, the cache is cleared.
	// Zero means DefaultFinishCacheEntries.
	MaxEntries int
}

// DefaultFinishCacheEntries is FinishCache.MaxEntries when zero: about 64 MB.
const DefaultFinishCacheEntries = 1 << 20

// finishKey is what P(FT_y < FT_x) depends on: d = AT_x − AT_y and the two build times.
type finishKey struct {
	d, mx, sx, my, sy float64
	fx, fy            BuildFamily
}

// Len returns the number of pairs remembered.
func (c *FinishCache) Len() int { return len(c.m) }

func keyOf(ci, cj *Change) finishKey {
	return finishKey{d: ci.Arrival - cj.Arrival, mx: ci.BuildMu, sx: ci.BuildSigma, my: cj.BuildMu, sy: cj.BuildSigma, fx: ci.BuildFamily, fy: cj.BuildFamily}
}

func (c *FinishCache) get(k finishKey) (float64, bool) {
	v, ok := c.m[k]
	return v, ok
}

func (c *FinishCache) put(k finishKey, v float64) {
	limit := c.MaxEntries
	if limit == 0 {
		limit = DefaultFinishCacheEntries
	}
	if c.m == nil || len(c.m) >= limit {
		c.m = make(map[finishKey]float64)
	}
	c.m[k] = v
}
