package gbm

// rowChunk is the number of rows of one task of the row loops that Fit's pool runs in
// parallel (gradients, scores, gathering a leaf's gradients, partitioning its rows):
// small, so that the leaves of a few thousand rows deep in a tree, most of the rows a
// fit partitions and gathers, are split between the workers too (a task of 4,096 rows
// takes microseconds, handing it out tens of nanoseconds). The chunks do not depend
// on the number of workers, and neither do the results.
const rowChunk = 1 << 12

// rowChunks calls fn(lo, hi) for consecutive chunks of [0, n) that together cover
// it: in parallel on Fit's pool for large n, else once for all of [0, n). fn must write
// only what belongs to its rows.
func (g *grower) rowChunks(n, workers int, fn func(lo, hi int)) {
	g.rowChunksAnd(nil, n, workers, fn)
}

// rowChunksAnd is rowChunks that also calls first, when not nil, as one more task of
// the same loop, handed out before the chunks (give it the longest work).
func (g *grower) rowChunksAnd(first func(), n, workers int, fn func(lo, hi int)) {
	if g.pool == nil || workers <= 1 || n < 2*rowChunk {
		if first != nil {
			first()
		}
		fn(0, n)
		return
	}
	extra := b2i(first != nil)
	nc := (n + rowChunk - 1) / rowChunk
	g.pool.forEach(nc+extra, workers, func(_, c int) {
		if c < extra {
			first()
			return
		}
		c -= extra
		fn(c*rowChunk, min(n, (c+1)*rowChunk))
	})
}

// partition reorders rows so that those whose bin in col goes left (goLeft[bin] = 1)
// come first, each side in its original order, and returns how many go left. Leaves
// of two chunks or more are partitioned in parallel on Fit's pool, as LightGBM's
// ParallelPartitionRunner does: each chunk writes its left rows to g.tmp and its right
// rows to g.tmpRight at its own offset, then every chunk copies both to their places
// once the left counts before it are summed.
func (g *grower) partition(rows []int32, col []uint8, goLeft *[256]int) int {
	n := len(rows)
	tmp := g.tmp[:n]
	workers := g.cfg.NumThreads
	if g.serialRows(n) {
		nl, nr := 0, 0
		for _, r := range rows {
			// rows[nl] has been read already (nl is at most the current index).
			x := goLeft[col[r]]
			rows[nl] = r
			tmp[nr] = r
			nl += x
			nr += 1 - x
		}
		copy(rows[nl:], tmp[:nr])
		return nl
	}
	nc := (n + rowChunk - 1) / rowChunk
	if cap(g.chunkLeft) < nc+1 {
		g.chunkLeft = make([]int, nc+1)
	}
	if cap(g.tmpRight) < n {
		g.tmpRight = make([]int32, cap(g.tmp))
	}
	tmpR := g.tmpRight[:n]
	// left[c+1] is the number of left rows of chunk c, then of chunks 0..c once summed.
	left := g.chunkLeft[:nc+1]
	left[0] = 0
	g.pool.forEach(nc, workers, func(_, c int) {
		lo := c * rowChunk
		l, r := tmp[lo:], tmpR[lo:]
		nl, nr := 0, 0
		for _, row := range rows[lo:min(n, lo+rowChunk)] {
			x := goLeft[col[row]]
			l[nl] = row // written always, kept when x = 1: no branch on the side
			r[nr] = row
			nl += x
			nr += 1 - x
		}
		left[c+1] = nl
	})
	for c := range nc {
		left[c+1] += left[c]
	}
	nl := left[nc]
	g.pool.forEach(nc, workers, func(_, c int) {
		lo := c * rowChunk
		k := left[c+1] - left[c]
		m := min(n, lo+rowChunk) - lo - k
		copy(rows[left[c]:], tmp[lo:lo+k])
		copy(rows[nl+lo-left[c]:], tmpR[lo:lo+m]) // right rows before chunk c: lo - left[c]
	})
	return nl
}

// serialRows reports whether a row loop over n rows runs on one thread: without Fit's
// pool, with one thread, or below two chunks of rows.
func (g *grower) serialRows(n int) bool {
	return g.pool == nil || g.cfg.NumThreads <= 1 || n < 2*rowChunk
}

// label is partition for a split whose children are never split: it leaves rows in
// place, counts those whose bin in col goes left (goLeft[bin] = 1) and returns the
// count, and, when g.leafOf is not nil, sets g.leafOf[r] to left or right for every
// row r of rows, the leaves grow would otherwise set after the partition.
func (g *grower) label(rows []int32, col []uint8, goLeft *[256]int, left, right int) int {
	nl := 0
	if g.leafOf == nil {
		for _, r := range rows {
			nl += goLeft[col[r]]
		}
		return nl
	}
	leafOf := g.leafOf
	l, step := int32(right), int32(right-left)
	for _, r := range rows {
		x := goLeft[col[r]]
		nl += x
		leafOf[r] = l - int32(x)*step // no branch on the side
	}
	return nl
}
