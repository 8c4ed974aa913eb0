package gbm

// rowChunk is the number of rows of one task of the row loops that Fit's pool runs in
// parallel (gathering a leaf's gradients, partitioning its rows). The chunks do not
// depend on the number of workers, and neither do the results.
const rowChunk = 1 << 14

// rowChunks calls fn(lo, hi) for consecutive chunks of [0, n) that together cover
// it: in parallel on Fit's pool for large n, else once for all of [0, n). fn must write
// only what belongs to its rows.
func (g *grower) rowChunks(n, workers int, fn func(lo, hi int)) {
	if g.pool == nil || workers <= 1 || n < 2*rowChunk {
		fn(0, n)
		return
	}
	nc := (n + rowChunk - 1) / rowChunk
	g.pool.forEach(nc, workers, func(_, c int) {
		fn(c*rowChunk, min(n, (c+1)*rowChunk))
	})
}

// partition reorders rows so that those whose bin in col goes left (goLeft[bin] = 1)
// come first, each side in its original order, and returns how many go left. Large
// leaves are partitioned in parallel on Fit's pool: the left rows of each chunk are
// counted, then every chunk writes its rows to their places in g.tmp.
func (g *grower) partition(rows []int32, col []uint8, goLeft *[256]int) int {
	n := len(rows)
	tmp := g.tmp[:n]
	workers := g.cfg.NumThreads
	if g.pool == nil || workers <= 1 || n < 4*rowChunk {
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
	// left[c] is the number of left rows before chunk c, once summed.
	left := g.chunkLeft[:nc+1]
	left[0] = 0
	g.pool.forEach(nc, workers, func(_, c int) {
		k := 0
		for _, r := range rows[c*rowChunk : min(n, (c+1)*rowChunk)] {
			k += goLeft[col[r]]
		}
		left[c+1] = k
	})
	for c := range nc {
		left[c+1] += left[c]
	}
	nl := left[nc]
	g.pool.forEach(nc, workers, func(_, c int) {
		lo := c * rowChunk
		li, ri := left[c], nl+lo-left[c] // right rows before chunk c: lo - left[c]
		for _, r := range rows[lo:min(n, lo+rowChunk)] {
			if goLeft[col[r]] != 0 {
				tmp[li] = r
				li++
			} else {
				tmp[ri] = r
				ri++
			}
		}
	})
	copy(rows, tmp)
	return nl
}
