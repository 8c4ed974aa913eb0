package ngboost

import "math"

// maxLeaves is the most leaves of a tree whose leaf pairs leafCells sums: depth 6.
const maxLeaves = 64

// cellSum holds the sums over the batch rows of one leaf pair that the log score at
// any step needs: with r = t - loc, v = exp(-2·log scale) and weight w of each row,
// a = Σ w·v·r², b = Σ w·v·r, c = Σ w·v, w = Σ w and l = Σ w·log scale; n counts the
// rows.
type cellSum struct {
	a, b, c, w, l float64
	n             int
}

// leafCells is the batch of one iteration grouped by leaf pair (the leaf of the
// location tree and the leaf of the scale tree) for the log score of the Normal and
// the LogNormal. Every row of a pair moves by the same (a_k, b_m) = the two leaves'
// values, so the score of the batch at parameters param - s·(a_k, b_m) is
//
//	Σ_pairs ½·exp(2s·b_m)·(A + 2s·a_k·B + s²·a_k²·C) + L - s·b_m·W
//
// with the pair's sums (see cellSum): one pass over the rows serves every step of the
// line search, which then costs a few hundred operations per step instead of a pass
// over the rows. The sums differ from a row-by-row sum by rounding only.
type leafCells struct {
	vals [2][]float64 // the leaf values of the two trees
	part [2][]cellSum // one set of sums per splitRows half, indexed l0·len(vals[1]) + l1
	sum  []cellSum    // the two halves added, in order
}

// fill sets the leaf values and sums the batch rows (nil = all) of b's training set
// by leaf pair, with leafOf the rows' leaves in each tree.
func (c *leafCells) fill(b *booster, rows []int, leafOf [2][]int32, vals [2][]float64) {
	c.vals = vals
	nc := len(vals[0]) * len(vals[1])
	for h := range c.part {
		c.part[h] = resize(c.part[h], nc)
	}
	c.sum = resize(c.sum, nc)
	if rows == nil {
		rows = b.allRows()
	}
	tr := b.train
	n1 := int32(len(vals[1]))
	l0, l1, w, ls, r, iv := leafOf[0], leafOf[1], tr.w, tr.param[1], b.resid, b.invVar
	unit := b.unitW // then every w[i] is 1: not loaded, the same sums
	b.splitRows(rows, func(part []int, worker int) float64 {
		s := c.part[worker]
		for _, i := range part {
			e := &s[l0[i]*n1+l1[i]]
			wi := 1.0
			if !unit {
				wi = w[i]
			}
			wv := wi * iv[i]
			e.a += wv * r[i] * r[i]
			e.b += wv * r[i]
			e.c += wv
			e.w += wi
			e.l += wi * ls[i]
			e.n++
		}
		return 0
	})
	for k := range c.sum {
		p, q := &c.part[0][k], &c.part[1][k]
		c.sum[k] = cellSum{a: p.a + q.a, b: p.b + q.b, c: p.c + q.c, w: p.w + q.w, l: p.l + q.l, n: p.n + q.n}
	}
}

// resize returns s with length n and every entry zero.
func resize(s []cellSum, n int) []cellSum {
	if cap(s) < n {
		return make([]cellSum, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// score returns the weighted mean log score of the batch at parameters
// param - s·(tree outputs), less log√(2π) and the LogNormal term; sumW is the batch's
// weight sum.
func (c *leafCells) score(s, sumW float64) float64 {
	var tot float64
	n1 := len(c.vals[1])
	for m, bm := range c.vals[1] {
		e := math.Exp(2 * s * bm)
		for k, ak := range c.vals[0] {
			p := &c.sum[k*n1+m]
			if p.n == 0 {
				continue
			}
			sa := s * ak
			tot += 0.5*e*(p.a+sa*(2*p.b+sa*p.c)) + p.l - s*bm*p.w
		}
	}
	return tot / sumW
}

// stepNorm returns the mean over the batch rows of the norm of the trees' step.
func (c *leafCells) stepNorm() float64 {
	var s float64
	var n int
	n1 := len(c.vals[1])
	for k, ak := range c.vals[0] {
		for m, bm := range c.vals[1] {
			if p := &c.sum[k*n1+m]; p.n > 0 {
				s += float64(p.n) * math.Hypot(ak, bm)
				n += p.n
			}
		}
	}
	return s / float64(n)
}
