package gbm

import (
	"math"
	"slices"
)

// kEpsilon is LightGBM's kEpsilon (include/LightGBM/meta.h), the float literal 1e-15f
// used as a double. LightGBM adds it to hessian sums in the split search, and the
// leaf values it writes carry it, so the search here does the same.
var kEpsilon = float64(float32(1e-15))

// roundInt is LightGBM's Common::RoundInt.
func roundInt(x float64) int { return int(x + 0.5) }

// sign is LightGBM's Common::Sign: -1, 0 or 1.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// regParams are the penalties of LightGBM's leaf outputs and gains
// (src/treelearner/feature_histogram.hpp).
type regParams struct {
	l1, l2, maxDelta float64
	// mc is set when the model has monotone constraints (LightGBM's USE_MC): leaf
	// outputs are clamped to [cmin, cmax], the leaf's bounds, split gains come from
	// the clamped outputs, and a split on a feature of monotone type mono whose
	// outputs go the wrong way gains 0.
	mc         bool
	cmin, cmax float64
	mono       int
}

// outputMC is LightGBM's CalculateSplittedLeafOutput with USE_MC: output clamped to
// the leaf's bounds.
func (p regParams) outputMC(sg, sh float64) float64 {
	ret := p.output(sg, sh)
	if p.mc {
		if ret < p.cmin {
			ret = p.cmin
		} else if ret > p.cmax {
			ret = p.cmax
		}
	}
	return ret
}

// gainGivenOutput is LightGBM's GetLeafGainGivenOutput.
func (p regParams) gainGivenOutput(sg, sh, o float64) float64 {
	if p.l1 > 0 {
		sg = thresholdL1(sg, p.l1)
	}
	return -(2*sg*o + (sh+p.l2)*o*o)
}

// thresholdL1 is LightGBM's ThresholdL1: s shrunk towards 0 by l1.
func thresholdL1(s, l1 float64) float64 {
	return sign(s) * max(0, math.Abs(s)-l1)
}

// output is LightGBM's CalculateSplittedLeafOutput: the Newton step
// -ThresholdL1(G, l1)/(H + l2), clipped to ±max_delta_step when that is positive.
func (p regParams) output(sg, sh float64) float64 {
	var ret float64
	if p.l1 > 0 {
		ret = -thresholdL1(sg, p.l1) / (sh + p.l2)
	} else {
		ret = -sg / (sh + p.l2)
	}
	if p.maxDelta > 0 && math.Abs(ret) > p.maxDelta {
		ret = sign(ret) * p.maxDelta
	}
	return ret
}

// gain is LightGBM's GetLeafGain: ThresholdL1(G, l1)²/(H + l2), or, with
// max_delta_step, the loss reduction -(2·ThresholdL1(G, l1)·o + (H + l2)·o²) of the
// clipped output o.
func (p regParams) gain(sg, sh float64) float64 {
	sgl := sg
	if p.l1 > 0 {
		sgl = thresholdL1(sg, p.l1)
	}
	if !(p.maxDelta > 0) {
		return sgl * sgl / (sh + p.l2)
	}
	o := p.output(sg, sh)
	return -(2*sgl*o + (sh+p.l2)*o*o)
}

// splitGains is LightGBM's GetSplitGains.
func (p regParams) splitGains(lg, lh, rg, rh float64) float64 {
	if !p.mc {
		return p.gain(lg, lh) + p.gain(rg, rh)
	}
	lo, ro := p.outputMC(lg, lh), p.outputMC(rg, rh)
	if (p.mono > 0 && lo > ro) || (p.mono < 0 && lo < ro) {
		return 0
	}
	return p.gainGivenOutput(lg, lh, lo) + p.gainGivenOutput(rg, rh, ro)
}

// findState is the state of LightGBM's FeatureHistogram::FindBestThreshold for one
// feature and leaf: the running best and the leaf's sums.
type findState struct {
	sumG, sumH   float64 // the leaf's sums, sumH with 2·kEpsilon added
	num          int     // rows in the leaf
	cntFactor    float64 // num/sumH: LightGBM estimates a bin's rows from its hessian
	estimate     bool    // count rows as LightGBM does, from hessians
	minGainShift float64
	splittable   bool
	out          splitInfo // out.gain is -Inf until a split is found
}

// count returns the rows of bin b: LightGBM's estimate RoundInt(H_b·num/H) from the
// bin's hessian sum, or the true count.
func (st *findState) count(b hbin) int {
	if st.estimate {
		return roundInt(b.h * st.cntFactor)
	}
	return int(b.n)
}

// bestForFeature returns the best split of leaf l on feature f, by LightGBM's search:
// FindBestThresholdSequentially for a numerical feature (from the right with missing
// values left, then from the left with missing values right), and
// FindBestThresholdCategoricalInner for a categorical one. Fit counts the rows of a
// bin from its hessian as LightGBM does (so min_data_in_leaf and the other row limits
// bound weighted counts), GrowTree counts rows; gains, outputs and tie-breaking
// follow LightGBM's floating-point operations.
//
// ok reports LightGBM's is_splittable: some split had a gain above min_gain_to_split.
func (g *grower) bestForFeature(l *leafState, f int) (best splitInfo, ok bool) {
	d, cfg := g.d, g.cfg
	fb := &d.feats[f]
	h := l.hist[d.histOffset[f]:d.histOffset[f+1]]
	p := regParams{l1: cfg.LambdaL1, l2: cfg.LambdaL2, maxDelta: cfg.MaxDeltaStep,
		mc: cfg.MonotoneConstraints != nil, cmin: l.cmin, cmax: l.cmax}
	if p.mc && !fb.isCat() {
		p.mono = cfg.MonotoneConstraints[f]
	}
	st := findState{sumG: l.g, sumH: l.h + 2*kEpsilon, num: l.n}
	st.cntFactor = float64(st.num) / st.sumH
	st.estimate = cfg.lightGBMCounts
	st.out.gain = math.Inf(-1)
	st.out.feature = f
	if fb.isCat() {
		g.bestCategorical(&st, h, fb, p)
	} else {
		st.minGainShift = p.gain(st.sumG, st.sumH) + cfg.MinGainToSplit
		numBin := len(h)
		switch {
		case numBin > 2 && fb.hasNaN:
			g.scanNumerical(&st, h, p, true, true, false)
			g.scanNumerical(&st, h, p, false, true, fb.mostFreq == 0 && cfg.lightGBMCounts)
		case !fb.hasNaN:
			g.scanNumerical(&st, h, p, true, false, false)
		default:
			g.scanNumerical(&st, h, p, true, false, false)
			st.out.defaultLeft = false
		}
	}
	if !(st.out.gain > math.Inf(-1)) {
		return splitInfo{gain: math.Inf(-1), feature: f}, st.splittable
	}
	return st.out, st.splittable
}

// scanNumerical is FindBestThresholdSequentially over the histogram h of a numerical
// feature: from the last value bin down (reverse, missing values left) or from the
// first up, with naAsMissing when the last bin holds NaN and is left out of the scan.
//
// skipBin0 is LightGBM's histogram without bin 0 (its most frequent bin): the forward
// scan then starts with bin 0 alone on the left, the leaf's sums minus every other bin
// (NaN included), and goes on with bins 1, 2, ...; it never adds h[0].
func (g *grower) scanNumerical(st *findState, h []hbin, p regParams, reverse, naAsMissing, skipBin0 bool) {
	cfg := g.cfg
	minData, minH := cfg.MinDataInLeaf, cfg.MinSumHessianInLeaf
	numBin := len(h)
	na := 0
	if naAsMissing {
		na = 1
	}
	bestLG, bestLH := math.NaN(), math.NaN()
	bestGain := math.Inf(-1)
	bestLeftCount := 0
	bestThreshold := numBin
	if reverse && p.l1 == 0 && !(p.maxDelta > 0) && !p.mc {
		// The common case, written out: gains G²/(H + l2) without calls or branches
		// on the penalties; the same floating-point operations as splitGains.
		l2, cf, est := p.l2, st.cntFactor, st.estimate
		sumG, sumH, num, shift := st.sumG, st.sumH, st.num, st.minGainShift
		rg, rh, rc := 0.0, kEpsilon, 0
		for t := numBin - 1 - na; t >= 1; t-- {
			b := &h[t]
			rg += b.g
			rh += b.h
			if est {
				rc += int(b.h*cf + 0.5)
			} else {
				rc += int(b.n)
			}
			if rc < minData || rh < minH {
				continue
			}
			lc := num - rc
			if lc < minData {
				break
			}
			lh := sumH - rh
			if lh < minH {
				break
			}
			lg := sumG - rg
			gain := lg*lg/(lh+l2) + rg*rg/(rh+l2)
			if gain <= shift {
				continue
			}
			st.splittable = true
			if gain > bestGain {
				bestLeftCount, bestLG, bestLH = lc, lg, lh
				bestThreshold = t - 1
				bestGain = gain
			}
		}
	} else if reverse {
		rg, rh, rc := 0.0, kEpsilon, 0
		for t := numBin - 1 - na; t >= 1; t-- {
			rg += h[t].g
			rh += h[t].h
			rc += st.count(h[t])
			if rc < minData || rh < minH {
				continue
			}
			lc := st.num - rc
			if lc < minData {
				break
			}
			lh := st.sumH - rh
			if lh < minH {
				break
			}
			lg := st.sumG - rg
			gain := p.splitGains(lg, lh, rg, rh)
			if gain <= st.minGainShift {
				continue
			}
			st.splittable = true
			if gain > bestGain {
				bestLeftCount, bestLG, bestLH = lc, lg, lh
				bestThreshold = t - 1
				bestGain = gain
			}
		}
	} else {
		lg, lh, lc := 0.0, kEpsilon, 0
		t := 0
		if skipBin0 {
			lg, lh, lc = st.sumG, st.sumH-kEpsilon, st.num
			for b := 1; b < numBin; b++ {
				lg -= h[b].g
				lh -= h[b].h
				lc -= st.count(h[b])
			}
			t = -1
		}
		for ; t <= numBin-2; t++ {
			if t == 0 && skipBin0 {
				// Bin 0 is on the left since t = -1 (threshold 0): the next
				// threshold adds bin 1, as LightGBM's scan of a histogram without
				// bin 0 does. Adding h[0] again counted bin 0 twice, and the right
				// child (NaN and the bins above the threshold) got the leaf's sums
				// minus them: a hessian sum far below its rows' and a wild value.
				continue
			}
			if t >= 0 {
				lg += h[t].g
				lh += h[t].h
				lc += st.count(h[t])
			}
			if lc < minData || lh < minH {
				continue
			}
			rc := st.num - lc
			if rc < minData {
				break
			}
			rh := st.sumH - lh
			if rh < minH {
				break
			}
			rg := st.sumG - lg
			gain := p.splitGains(lg, lh, rg, rh)
			if gain <= st.minGainShift {
				continue
			}
			st.splittable = true
			if gain > bestGain {
				bestLeftCount, bestLG, bestLH = lc, lg, lh
				bestThreshold = max(t, 0)
				bestGain = gain
			}
		}
	}
	if st.splittable && bestGain > st.out.gain+st.minGainShift {
		o := &st.out
		o.bin = bestThreshold
		o.lOut = p.outputMC(bestLG, bestLH)
		o.rOut = p.outputMC(st.sumG-bestLG, st.sumH-bestLH)
		o.lg, o.lh, o.ln = bestLG, bestLH-kEpsilon, bestLeftCount
		o.rg, o.rh, o.rn = st.sumG-bestLG, st.sumH-bestLH-kEpsilon, st.num-bestLeftCount
		o.gain = bestGain - st.minGainShift
		o.defaultLeft = reverse
	}
}

// bestCategorical is FindBestThresholdCategoricalInner over the histogram h of a
// categorical feature: one category against the rest when the feature has at most
// max_cat_to_onehot bins; otherwise the categories with at least cat_smooth rows,
// sorted by G/(H + cat_smooth), split into a prefix from either end of at most
// max_cat_threshold categories, with cat_l2 added to lambda_l2 and min_data_per_group
// rows between candidate split points.
func (g *grower) bestCategorical(st *findState, hist []hbin, fb *featureBins, p regParams) {
	cfg := g.cfg
	minData, minH := cfg.MinDataInLeaf, cfg.MinSumHessianInLeaf
	// The search visits the category bins 1..numBin-1, never the missing bin 0,
	// whose rows go right (as LightGBM 4.6.0 does: its scan covers the categories
	// only, and a missing bin is empty when the feature's missing type is None).
	const off = 1
	h := hist[off:]
	st.minGainShift = p.gain(st.sumG, st.sumH) + cfg.MinGainToSplit
	usedBin := len(h)
	numBin := fb.nBins()
	bestGain := math.Inf(-1)
	bestThreshold, bestDir := -1, 1
	var bestLG, bestLH float64
	bestLeftCount := 0
	var sorted []int
	useOnehot := numBin <= cfg.MaxCatToOnehot
	if useOnehot {
		for t := 0; t < usedBin; t++ {
			grad, hess := h[t].g, h[t].h
			cnt := st.count(h[t])
			if cnt < minData || hess < minH {
				continue
			}
			otherCount := st.num - cnt
			if otherCount < minData {
				continue
			}
			otherH := st.sumH - hess - kEpsilon
			if otherH < minH {
				continue
			}
			otherG := st.sumG - grad
			gain := p.splitGains(otherG, otherH, grad, hess+kEpsilon)
			if gain <= st.minGainShift {
				continue
			}
			st.splittable = true
			if gain > bestGain {
				bestThreshold = t
				bestLG, bestLH = grad, hess+kEpsilon
				bestLeftCount = cnt
				bestGain = gain
			}
		}
	} else {
		for i := 0; i < usedBin; i++ {
			if float64(st.count(h[i])) >= cfg.CatSmooth {
				sorted = append(sorted, i)
			}
		}
		usedBin = len(sorted)
		p.l2 += cfg.CatL2
		ctr := func(i int) float64 { return h[i].g / (h[i].h + cfg.CatSmooth) }
		slices.SortStableFunc(sorted, func(a, b int) int {
			ca, cb := ctr(a), ctr(b)
			switch {
			case ca < cb:
				return -1
			case ca > cb:
				return 1
			}
			return 0
		})
		maxNumCat := min(cfg.MaxCatThreshold, (usedBin+1)/2)
		for _, dir := range [2]int{1, -1} {
			pos := 0
			if dir < 0 {
				pos = usedBin - 1
			}
			cntGroup := 0
			lg, lh, lc := 0.0, kEpsilon, 0
			for i := 0; i < usedBin && i < maxNumCat; i++ {
				t := sorted[pos]
				pos += dir
				lg += h[t].g
				lh += h[t].h
				cnt := st.count(h[t])
				lc += cnt
				cntGroup += cnt
				if lc < minData || lh < minH {
					continue
				}
				rc := st.num - lc
				if rc < minData || rc < cfg.MinDataPerGroup {
					break
				}
				rh := st.sumH - lh
				if rh < minH {
					break
				}
				if cntGroup < cfg.MinDataPerGroup {
					continue
				}
				cntGroup = 0
				rg := st.sumG - lg
				gain := p.splitGains(lg, lh, rg, rh)
				if gain <= st.minGainShift {
					continue
				}
				st.splittable = true
				if gain > bestGain {
					bestLeftCount, bestLG, bestLH = lc, lg, lh
					bestThreshold = i
					bestGain = gain
					bestDir = dir
				}
			}
		}
	}
	if !st.splittable {
		return
	}
	o := &st.out
	o.lOut = p.outputMC(bestLG, bestLH)
	o.rOut = p.outputMC(st.sumG-bestLG, st.sumH-bestLH)
	o.lg, o.lh, o.ln = bestLG, bestLH-kEpsilon, bestLeftCount
	o.rg, o.rh, o.rn = st.sumG-bestLG, st.sumH-bestLH-kEpsilon, st.num-bestLeftCount
	o.gain = bestGain - st.minGainShift
	o.defaultLeft = false
	o.catBins = o.catBins[:0]
	if useOnehot {
		o.catBins = append(o.catBins, bestThreshold+off)
		return
	}
	for i := 0; i <= bestThreshold; i++ {
		t := sorted[i]
		if bestDir < 0 {
			t = sorted[usedBin-1-i]
		}
		o.catBins = append(o.catBins, t+off)
	}
}
