package ngboost

import "math"

// applyStep moves every training row's parameters by -step times the iteration's tree
// outputs, in the two halves of splitRows. Without a minibatch and with the leaf pairs
// summed (useCells) it reads each row's leaves and the leaf values, not the outputs
// treeOutputs would have written. With fast set it also keeps invVar = exp(-2·log
// scale): the log scale moves by -step·out₁, so invVar is multiplied by
// exp(2·step·out₁), which takes one value per leaf of the scale tree. The product
// drifts from a fresh exp by rounding only, a few units in the last place over
// hundreds of iterations.
func (b *booster) applyStep(step float64) {
	tr := b.train
	loc, ls, iv := tr.param[0], tr.param[1], b.invVar
	if b.useCells && b.batch == nil {
		a, bv := b.cells.vals[0], b.cells.vals[1]
		f := b.scaleFactors(step)
		l0, l1 := b.leafOf[0], b.leafOf[1]
		b.splitRows(b.allRows(), func(part []int, _ int) float64 {
			for _, i := range part {
				loc[i] -= step * a[l0[i]]
				m := l1[i]
				ls[i] -= step * bv[m]
				iv[i] *= f[m]
			}
			return 0
		})
		return
	}
	o0, o1 := tr.out[0], tr.out[1]
	fast := b.fast
	b.splitRows(b.allRows(), func(part []int, worker int) float64 {
		c := &b.cache[worker]
		c.reset(2 * step)
		for _, i := range part {
			loc[i] -= step * o0[i]
			ls[i] -= step * o1[i]
			if fast {
				iv[i] *= c.exp(o1[i])
			}
		}
		return 0
	})
}

// scaleFactors returns exp(2·step·v) for the value v of each leaf of the scale tree in
// cells: the factor of invVar of the rows of that leaf.
func (b *booster) scaleFactors(step float64) *[maxLeaves]float64 {
	var f [maxLeaves]float64
	for m, v := range b.cells.vals[1] {
		f[m] = math.Exp(2 * step * v)
	}
	return &f
}

// stepAndGradients is applyStep followed by the next iteration's gradients in one
// pass over the rows (read once instead of twice), for fuse and useCells: every row
// takes the step of its leaf pair as in applyStep, then its residual and gradients
// are computed as in gradients, in the same two halves of splitRows and with the same
// operations, so the parameters, gradients and score are the ones the two passes
// would give, bit for bit. It returns the next iteration's training score; sumW is
// the weight sum of all rows.
func (b *booster) stepAndGradients(step, sumW float64) float64 {
	tr := b.train
	loc, ls, iv, t, w := tr.param[0], tr.param[1], b.invVar, tr.t, tr.w
	a, bv := b.cells.vals[0], b.cells.vals[1]
	f := b.scaleFactors(step)
	l0, l1 := b.leafOf[0], b.leafOf[1]
	natural, unit := !b.cfg.OrdinaryGradient, b.unitW
	sum := b.splitRows(b.allRows(), func(part []int, _ int) float64 {
		var sum float64
		for _, i := range part {
			li := loc[i] - step*a[l0[i]]
			m := l1[i]
			s := ls[i] - step*bv[m]
			v := iv[i] * f[m]
			loc[i], ls[i], iv[i] = li, s, v
			wi := 1.0
			if !unit {
				wi = w[i]
			}
			sum += b.normalRow(i, t[i]-li, s, v, wi, natural)
		}
		return sum
	})
	return sum/sumW + logSqrt2Pi + tr.jacMean(nil, sumW)
}
