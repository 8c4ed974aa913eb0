package gbm

import (
	"fmt"
	"math"
	"runtime"
)

// LightGBM's defaults for the tree parameters (docs/Parameters.rst).
const (
	DefaultNumLeaves           = 31
	DefaultMinDataInLeaf       = 20
	DefaultMinSumHessianInLeaf = 1e-3
)

// TreeConfig holds the parameters of one tree. Zero values mean LightGBM's defaults.
type TreeConfig struct {
	// NumLeaves is the maximum number of leaves; 0 means DefaultNumLeaves (31).
	NumLeaves int
	// MaxDepth limits the depth of a leaf (the root has depth 0); 0 or negative means
	// no limit, as LightGBM's default -1.
	MaxDepth int
	// MinDataInLeaf is the minimum number of rows in a leaf; 0 means
	// DefaultMinDataInLeaf (20). Use 1 to allow any split.
	MinDataInLeaf int
	// MinSumHessianInLeaf is the minimum sum of hessians in a leaf; 0 means
	// DefaultMinSumHessianInLeaf (1e-3). Use a negative value for no minimum.
	MinSumHessianInLeaf float64
	// LambdaL2 is the L2 penalty on leaf values (LightGBM lambda_l2); 0 means none.
	LambdaL2 float64
	// NumThreads is the number of goroutines building histograms; 0 means GOMAXPROCS.
	NumThreads int

	// LambdaL1 is the L1 penalty on leaf values (LightGBM lambda_l1): gradient sums
	// shrink towards 0 by it. 0 means none.
	LambdaL1 float64
	// MinGainToSplit is the least gain a split must bring (LightGBM
	// min_gain_to_split); 0 means any positive gain.
	MinGainToSplit float64
	// MaxDeltaStep caps the absolute value of a leaf's output before the learning rate
	// (LightGBM max_delta_step); 0 or negative means no cap.
	MaxDeltaStep float64

	// The parameters of categorical splits, with LightGBM's names and defaults.
	// MaxCatToOnehot: a feature with at most this many bins (its categories plus the
	// missing bin) splits one category against the rest; 0 means 4.
	MaxCatToOnehot int
	// CatSmooth: categories with fewer rows are not split on, and it is added to the
	// hessian sum when categories are ordered by G/(H + cat_smooth); 0 means 10,
	// negative means 0.
	CatSmooth float64
	// CatL2 is added to LambdaL2 for categorical splits; 0 means 10, negative means 0.
	CatL2 float64
	// MaxCatThreshold is the most categories on the left of a split; 0 means 32.
	MaxCatThreshold int
	// MinDataPerGroup is the least number of rows between candidate split points of
	// the sorted categories and on the right of a split; 0 means 100.
	MinDataPerGroup int

	// MonotoneConstraints, when not nil, holds one of -1, 0, 1 per feature (LightGBM
	// monotone_constraints with its "basic" method): predictions may only decrease,
	// freely move, or increase with the feature. A split on a constrained feature
	// bounds its children's outputs at the mean of the two, and every output is kept
	// within its leaf's bounds. Categorical features must have 0.
	MonotoneConstraints []int

	// lightGBMCounts makes the split search count a histogram bin's rows from its
	// hessian sum, RoundInt(H_b·n/H), as LightGBM does; Fit sets it so that its trees
	// are LightGBM's. GrowTree counts rows.
	lightGBMCounts bool
}

// LightGBM's defaults for the categorical split parameters (docs/Parameters.rst).
const (
	DefaultMaxCatToOnehot  = 4
	DefaultCatSmooth       = 10.0
	DefaultCatL2           = 10.0
	DefaultMaxCatThreshold = 32
	DefaultMinDataPerGroup = 100
)

// withDefaults returns c with zero values replaced by defaults, or an error for values
// no default can fix.
func (c TreeConfig) withDefaults() (TreeConfig, error) {
	if c.NumLeaves == 0 {
		c.NumLeaves = DefaultNumLeaves
	}
	if c.MinDataInLeaf == 0 {
		c.MinDataInLeaf = DefaultMinDataInLeaf
	}
	if c.MinSumHessianInLeaf == 0 {
		c.MinSumHessianInLeaf = DefaultMinSumHessianInLeaf
	}
	if c.NumThreads <= 0 {
		c.NumThreads = runtime.GOMAXPROCS(0)
	}
	if c.MaxCatToOnehot == 0 {
		c.MaxCatToOnehot = DefaultMaxCatToOnehot
	}
	switch {
	case c.CatSmooth == 0:
		c.CatSmooth = DefaultCatSmooth
	case c.CatSmooth < 0:
		c.CatSmooth = 0
	}
	switch {
	case c.CatL2 == 0:
		c.CatL2 = DefaultCatL2
	case c.CatL2 < 0:
		c.CatL2 = 0
	}
	if c.MaxCatThreshold == 0 {
		c.MaxCatThreshold = DefaultMaxCatThreshold
	}
	if c.MinDataPerGroup == 0 {
		c.MinDataPerGroup = DefaultMinDataPerGroup
	}
	if c.MaxDeltaStep < 0 {
		c.MaxDeltaStep = 0
	}
	switch {
	case c.NumLeaves < 2 || c.NumLeaves > 131072:
		return c, fmt.Errorf("%w: num_leaves=%d, want 2..131072", ErrBadConfig, c.NumLeaves)
	case c.MinDataInLeaf < 0:
		return c, fmt.Errorf("%w: min_data_in_leaf=%d, want >= 0", ErrBadConfig, c.MinDataInLeaf)
	case c.LambdaL2 < 0 || math.IsNaN(c.LambdaL2) || math.IsInf(c.LambdaL2, 0):
		return c, fmt.Errorf("%w: lambda_l2=%v, want a finite value >= 0", ErrBadConfig, c.LambdaL2)
	case math.IsNaN(c.MinSumHessianInLeaf):
		return c, fmt.Errorf("%w: min_sum_hessian_in_leaf is NaN", ErrBadConfig)
	case c.LambdaL1 < 0 || math.IsNaN(c.LambdaL1) || math.IsInf(c.LambdaL1, 0):
		return c, fmt.Errorf("%w: lambda_l1=%v, want a finite value >= 0", ErrBadConfig, c.LambdaL1)
	case c.MinGainToSplit < 0 || math.IsNaN(c.MinGainToSplit) || math.IsInf(c.MinGainToSplit, 0):
		return c, fmt.Errorf("%w: min_gain_to_split=%v, want a finite value >= 0", ErrBadConfig, c.MinGainToSplit)
	case math.IsNaN(c.MaxDeltaStep) || math.IsInf(c.MaxDeltaStep, 0):
		return c, fmt.Errorf("%w: max_delta_step=%v, want a finite value", ErrBadConfig, c.MaxDeltaStep)
	case c.MaxCatToOnehot < 0:
		return c, fmt.Errorf("%w: max_cat_to_onehot=%d, want > 0", ErrBadConfig, c.MaxCatToOnehot)
	case math.IsNaN(c.CatSmooth) || math.IsInf(c.CatSmooth, 0) || math.IsNaN(c.CatL2) || math.IsInf(c.CatL2, 0):
		return c, fmt.Errorf("%w: cat_smooth=%v, cat_l2=%v, want finite values", ErrBadConfig, c.CatSmooth, c.CatL2)
	case c.MaxCatThreshold < 0:
		return c, fmt.Errorf("%w: max_cat_threshold=%d, want > 0", ErrBadConfig, c.MaxCatThreshold)
	case c.MinDataPerGroup < 0:
		return c, fmt.Errorf("%w: min_data_per_group=%d, want > 0", ErrBadConfig, c.MinDataPerGroup)
	}
	return c, nil
}

// hbin is one histogram bin: the sums of gradients and hessians and the row count.
type hbin struct {
	g, h, n float64
}

// splitInfo is the best split found for a leaf, LightGBM's SplitInfo.
type splitInfo struct {
	gain        float64 // gain over not splitting; <= 0 means no split
	feature     int
	bin         int   // numerical: value bins <= bin go left
	catBins     []int // categorical: the bins that go left
	defaultLeft bool
	lg, lh      float64
	rg, rh      float64
	ln, rn      int     // estimated from hessians, as LightGBM does
	lOut, rOut  float64 // the children's outputs (leaf values before shrinkage)
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// leafState is a leaf of the tree being grown.
type leafState struct {
	begin, end int // its rows are idx[begin:end]
	g, h       float64
	n          int
	out        float64 // the leaf's value, set when its parent was split
	cmin, cmax float64 // the leaf's output bounds under monotone constraints
	depth      int
	hist       []hbin // nil when the leaf will not be split
	best       splitInfo
	// unsplittable[i] reports that feature g.feats[i] had no split with positive gain
	// in this leaf; LightGBM's children then skip it (is_splittable of the parent's
	// histogram), and so do this leaf's.
	unsplittable []bool
	// labelled reports that the split that made this leaf, whose children are never
	// split, set g.leafOf of its rows instead of partitioning them: idx[begin:end]
	// is then not the leaf's rows.
	labelled bool
}

// grower holds the buffers of one GrowTree call; Dataset.growers recycles them.
type grower struct {
	d        *Dataset
	cfg      TreeConfig
	feats    []int
	grad     []float64
	hess     []float64
	idx, tmp []int32
	gh       []gradPair // the gradients of a leaf's rows, in row order
	identity bool       // idx is 0, 1, ..., nRows-1 (all rows, no sample)
	// constHess reports that every hessian equals hess[0] (squared error without
	// weights): histograms then sum gradients and counts only, and a bin's hessian
	// sum is its count times hess[0], as LightGBM's is_constant_hessian.
	constHess bool
	og        []float64 // the gradients of a leaf's rows, for constHess
	free      [][]hbin
	bests     []splitInfo       // per-feature best splits of findBest
	scratch   [][256]scratchBin // one scratch histogram per histogram worker
	cscratch  [][256]constScratchBin
	leaves    []leafState
	// pool runs the parallel loops when set (Fit's grower); nil starts goroutines per
	// loop (GrowTree's pooled growers, which may be dropped without a close).
	pool *workPool
	// chunkLeft holds the per-chunk left counts of a parallel partition, and goLeft
	// the side of each bin of the split being made.
	chunkLeft []int
	goLeft    [256]int
	tmpRight  []int32 // the right rows of a parallel partition
	// chunkBad and chunkConst are checkGradients' results per chunk of rows.
	chunkBad   []int
	chunkConst []bool
	// rootG and rootH are the sums of the gradients and hessians of the rows in idx,
	// in their order.
	rootG, rootH float64
	// leafOf is the caller's leafOf during a grow (may be nil).
	leafOf []int32
}

// GrowTree fits one regression tree to the gradients and hessians grad and hess (one
// per row of d) by leaf-wise growth: starting from one leaf, it repeatedly splits the
// leaf whose best histogram split gains most, until cfg.NumLeaves leaves or no split
// with positive gain. The gain of a split is
//
//	G_L²/(H_L+λ) + G_R²/(H_R+λ) - G²/(H+λ)
//
// (LightGBM's, without the constant 1/2), and leaf values are the Newton step
// -G/(H+λ) with no learning rate applied. Missing values go to the side that gains
// more; when a leaf has no missing values, a later NaN follows the side with the larger
// hessian sum.
//
// rows lists the row indices to use (nil means all rows; repeats are allowed, as for
// bootstrap samples); features lists the feature indices a split may use (nil means
// all). Bad input (lengths, indices, NaN or infinite gradients, negative hessians)
// returns an error wrapping ErrBadData or ErrBadConfig.
func GrowTree(d *Dataset, grad, hess []float64, rows []int, features []int, cfg TreeConfig) (*Tree, error) {
	return d.grow(nil, grad, hess, rows, features, cfg, nil)
}

// GrowTreeLeaves is GrowTree that also reports where the rows went: it sets leafOf[r]
// to the index of the leaf of the returned tree that row r falls into (the index
// Tree.LeafValue and Model.PredictLeaf use) for every row r in rows, or every row of d
// when rows is nil, and leaves the other entries of leafOf unchanged. It is the leaf
// that the tree's Predict gives for the row's raw values, found while growing, so a
// booster can update its training scores without walking the new tree. leafOf must
// have one entry per row of d.
func GrowTreeLeaves(d *Dataset, grad, hess []float64, rows []int, features []int, cfg TreeConfig, leafOf []int32) (*Tree, error) {
	if len(leafOf) != d.nRows {
		return nil, fmt.Errorf("%w: leafOf has %d entries for %d rows", ErrBadData, len(leafOf), d.nRows)
	}
	return d.grow(nil, grad, hess, rows, features, cfg, leafOf)
}

// grow is GrowTree with the buffers of g, or of a grower from d's pool when g is nil
// (the pool may drop its growers at any garbage collection, so Fit keeps its own).
// When leafOf is not nil it also sets leafOf[r] to the leaf of every row r in rows,
// which saves Fit predicting its training rows.
func (d *Dataset) grow(g *grower, grad, hess []float64, rows []int, features []int, cfg TreeConfig, leafOf []int32) (*Tree, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(grad) != d.nRows || len(hess) != d.nRows {
		return nil, fmt.Errorf("%w: %d gradients and %d hessians for %d rows", ErrBadData, len(grad), len(hess), d.nRows)
	}
	if mc := cfg.MonotoneConstraints; mc != nil {
		if len(mc) != d.nFeatures {
			return nil, fmt.Errorf("%w: %d monotone constraints for %d features", ErrBadConfig, len(mc), d.nFeatures)
		}
		for f, c := range mc {
			if c < -1 || c > 1 {
				return nil, fmt.Errorf("%w: monotone constraint %d of feature %d, want -1, 0 or 1", ErrBadConfig, c, f)
			}
			if c != 0 && d.feats[f].isCat() {
				return nil, fmt.Errorf("%w: monotone constraint on categorical feature %d", ErrBadConfig, f)
			}
		}
	}
	if g == nil {
		g, _ = d.growers.Get().(*grower)
		if g == nil {
			g = &grower{d: d}
		}
		defer d.growers.Put(g)
	}
	g.cfg = cfg

	g.feats = g.feats[:0]
	if features == nil {
		for f := range d.nFeatures {
			g.feats = append(g.feats, f)
		}
	} else {
		for _, f := range features {
			if f < 0 || f >= d.nFeatures {
				return nil, fmt.Errorf("%w: feature index %d out of range [0, %d)", ErrBadData, f, d.nFeatures)
			}
			g.feats = append(g.feats, f)
		}
	}
	n := d.nRows
	if rows != nil {
		n = len(rows)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no rows", ErrBadData)
	}
	if cap(g.idx) < n {
		g.idx, g.tmp = make([]int32, n), make([]int32, n)
		g.gh = make([]gradPair, n)
		g.og = make([]float64, n)
	}
	g.idx, g.tmp, g.gh, g.og = g.idx[:n], g.tmp[:n], g.gh[:n], g.og[:n]
	g.identity = rows == nil
	if rows == nil {
		g.rowChunks(n, cfg.NumThreads, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				g.idx[i] = int32(i)
			}
		})
	} else {
		for i, r := range rows {
			if r < 0 || r >= d.nRows {
				return nil, fmt.Errorf("%w: row index %d out of range [0, %d)", ErrBadData, r, d.nRows)
			}
			g.idx[i] = int32(r)
		}
	}
	var bad int
	var constHess bool
	if g.identity && g.serialRows(n) {
		// One thread over all rows in order: check and sum in one pass, which reads
		// the gradients and hessians once instead of twice (NGBoost's trees, one
		// thread each, spent about 7% of their time in a separate check).
		bad, constHess, g.rootG, g.rootH = checkSumGradients(grad, hess)
	} else {
		bad, constHess = g.checkSumChunks(grad, hess)
	}
	if i := bad; i >= 0 {
		if !finite(grad[i]) {
			return nil, fmt.Errorf("%w: gradient of row %d is %v", ErrBadData, i, grad[i])
		}
		return nil, fmt.Errorf("%w: hessian of row %d is %v, want finite and >= 0", ErrBadData, i, hess[i])
	}
	g.grad, g.hess = grad, hess
	g.constHess = constHess
	defer func() { g.grad, g.hess = nil, nil }()
	return g.grow(leafOf)
}

// checkSumChunks checks the gradients and hessians of every row of g.d in chunks of
// rows and sums the root's gradients and hessians in the order of g.idx (one more
// task, the longest, handed out first), in parallel on Fit's pool. It returns the
// first bad row of the first chunk with one (whatever the number of workers), or -1,
// and whether every hessian equals hess[0].
func (g *grower) checkSumChunks(grad, hess []float64) (bad int, constHess bool) {
	nRows := g.d.nRows
	nc := (nRows + rowChunk - 1) / rowChunk
	if cap(g.chunkBad) < nc {
		g.chunkBad, g.chunkConst = make([]int, nc), make([]bool, nc)
	}
	for c := range nc {
		g.chunkBad[c], g.chunkConst[c] = -1, true // chunks rowChunks runs as one stay so
	}
	sumRoot := func() {
		var sg, sh float64
		for _, r := range g.idx {
			sg += grad[r]
			sh += hess[r]
		}
		g.rootG, g.rootH = sg, sh
	}
	g.rowChunksAnd(sumRoot, nRows, g.cfg.NumThreads, func(lo, hi int) {
		c := lo / rowChunk
		g.chunkBad[c], g.chunkConst[c] = checkGradients(grad[lo:hi], hess[lo:hi], hess[0])
		if g.chunkBad[c] >= 0 {
			g.chunkBad[c] += lo
		}
	})
	constHess = true
	for c := range nc {
		if g.chunkBad[c] >= 0 {
			return g.chunkBad[c], false
		}
		constHess = constHess && g.chunkConst[c]
	}
	return -1, constHess
}

// finite reports whether v is neither NaN nor infinite: v - v is NaN for both, 0
// otherwise, one subtraction and one comparison instead of IsNaN's and IsInf's three.
func finite(v float64) bool { return v-v == 0 }

// checkGradients returns the index of the first row whose gradient is not finite or
// whose hessian is not finite and >= 0, -1 when there is none, and whether every
// hessian equals h0.
func checkGradients(grad, hess []float64, h0 float64) (bad int, constHess bool) {
	hess = hess[:len(grad)]
	constHess = true
	for i, v := range grad {
		h := hess[i]
		if !finite(v) || !(h >= 0 && finite(h)) {
			return i, false
		}
		constHess = constHess && h == h0
	}
	return -1, constHess
}

// checkSumGradients is checkGradients of all rows with h0 = hess[0] that also returns
// the sums of grad and hess, added in row order (as checkSumChunks's sumRoot adds them
// for all rows). The sums are meaningless when bad >= 0.
func checkSumGradients(grad, hess []float64) (bad int, constHess bool, sg, sh float64) {
	hess = hess[:len(grad)]
	h0 := hess[0]
	constHess = true
	for i, v := range grad {
		h := hess[i]
		if !finite(v) || !(h >= 0 && finite(h)) {
			return i, false, 0, 0
		}
		constHess = constHess && h == h0
		sg += v
		sh += h
	}
	return -1, constHess, sg, sh
}

// grow grows the tree on the prepared buffers.
func (g *grower) grow(leafOf []int32) (*Tree, error) {
	d, cfg := g.d, g.cfg
	spec := &treeSpec{numLeaves: 1, shrinkage: 1, nFeatures: d.nFeatures}
	root := leafState{begin: 0, end: len(g.idx), g: g.rootG, h: g.rootH}
	root.n = len(g.idx)
	root.cmin, root.cmax = math.Inf(-1), math.Inf(1)
	root.out = regParams{l1: cfg.LambdaL1, l2: cfg.LambdaL2, maxDelta: cfg.MaxDeltaStep}.output(root.g, root.h)
	if !(root.h+cfg.LambdaL2 > 0) {
		return nil, fmt.Errorf("%w: sum of hessians plus lambda_l2 is %v, want > 0", ErrBadData, root.h+cfg.LambdaL2)
	}
	g.leaves = append(g.leaves[:0], root)
	g.leafOf = leafOf
	defer func() { g.leafOf = nil }()
	if g.splittable(&g.leaves[0]) {
		h := g.alloc()
		g.buildHist(&g.leaves[0], h)
		g.leaves[0].hist = h
		g.leaves[0].best = g.findBest(&g.leaves[0], nil, nil)
	}
	defer func() {
		for i := range g.leaves {
			g.release(i)
		}
	}()

	for len(g.leaves) < cfg.NumLeaves {
		best := -1
		for i := range g.leaves {
			if g.leaves[i].best.gain > 0 && (best < 0 || g.leaves[i].best.gain > g.leaves[best].best.gain) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		// After the split that reaches NumLeaves no leaf is split again, so its
		// children need no histograms (LightGBM's loop stops there too).
		g.split(spec, best, len(g.leaves)+1 < cfg.NumLeaves)
	}

	spec.numLeaves = len(g.leaves)
	spec.leafValue = make([]float64, len(g.leaves))
	spec.leafWeight = make([]float64, len(g.leaves))
	spec.leafCount = make([]int, len(g.leaves))
	for i := range g.leaves {
		l := &g.leaves[i]
		spec.leafValue[i] = l.out
		spec.leafWeight[i] = l.h
		spec.leafCount[i] = l.n
	}
	if leafOf != nil {
		// One leaf per task on Fit's pool: leaves hold disjoint rows.
		setLeaf := func(_, i int) {
			l := &g.leaves[i]
			if l.labelled {
				return
			}
			for _, r := range g.idx[l.begin:l.end] {
				leafOf[r] = int32(i)
			}
		}
		workers := g.cfg.NumThreads
		if g.serialRows(len(g.idx)) {
			workers = 1
		}
		g.parallel(len(g.leaves), workers, setLeaf)
	}
	return newTree(spec)
}

// split splits leaf li by its best split: the leaf keeps index li for its left child
// and the right child becomes leaf len(g.leaves), and the new internal node gets index
// len(g.leaves)-1, as LightGBM's Tree::Split numbers them.
//
// With more false the children get no histograms or best splits.
func (g *grower) split(spec *treeSpec, li int, more bool) {
	d := g.d
	l := g.leaves[li]
	s := l.best
	fb := &d.feats[s.feature]
	newNode := len(g.leaves) - 1
	newLeaf := len(g.leaves)

	// Re-point the parent's child from leaf li to the new node.
	for i := range spec.leftChild {
		if spec.leftChild[i] == ^li {
			spec.leftChild[i] = newNode
		} else if spec.rightChild[i] == ^li {
			spec.rightChild[i] = newNode
		}
	}
	var threshold float64
	var dt int
	var inLeft [256]bool
	if fb.isCat() {
		// The node's bitset holds the categories of the left bins; LightGBM's
		// cat_threshold words, with threshold the index of the bitset.
		var words []uint32
		for _, b := range s.catBins {
			inLeft[b] = true
			if b == 0 {
				continue // the missing bin has no category: its rows go right in prediction
			}
			c := fb.cats[b-1]
			for len(words) <= c/32 {
				words = append(words, 0)
			}
			words[c/32] |= 1 << (c % 32)
		}
		if len(spec.catBoundaries) == 0 {
			spec.catBoundaries = append(spec.catBoundaries, 0)
		}
		threshold = float64(len(spec.catBoundaries) - 1)
		spec.catThreshold = append(spec.catThreshold, words...)
		spec.catBoundaries = append(spec.catBoundaries, len(spec.catThreshold))
		dt = lgCategoricalMask
		if fb.catNaN {
			dt |= lgMissingNaN << 2
		}
	} else {
		threshold = fb.upper[s.bin]
		if math.IsInf(threshold, 1) {
			// Only the split "all values left, NaN right" uses the last value bin.
			threshold = math.MaxFloat64
		}
		// LightGBM's missing type: NaN when the feature had missing values in
		// training, None otherwise (prediction then reads NaN as 0).
		if fb.hasNaN {
			dt = lgMissingNaN << 2
		}
		if s.defaultLeft {
			dt |= lgDefaultLeftMask
		}
	}
	spec.splitFeature = append(spec.splitFeature, s.feature)
	spec.threshold = append(spec.threshold, threshold)
	spec.decisionType = append(spec.decisionType, dt)
	spec.leftChild = append(spec.leftChild, ^li)
	spec.rightChild = append(spec.rightChild, ^newLeaf)
	spec.splitGain = append(spec.splitGain, s.gain)
	spec.internalValue = append(spec.internalValue, l.out)
	spec.internalWeight = append(spec.internalWeight, l.h)
	spec.internalCount = append(spec.internalCount, l.n)

	// Stable partition of the leaf's rows: left rows stay in front, in order.
	col := d.column(s.feature)
	nan := uint8(fb.nanBin())
	bin := uint8(s.bin)
	rows := g.idx[l.begin:l.end]
	// goLeft[b] is 1 when bin b goes left; the loop then has no branch on the side,
	// which is a coin flip for the branch predictor. It lives in g: the parallel
	// partition shares it, and a local would be allocated for every split.
	goLeft := &g.goLeft
	clear(goLeft[:])
	for b := range fb.nBins() {
		switch {
		case fb.isCat():
			goLeft[b] = b2i(inLeft[b])
		case b == int(nan):
			goLeft[b] = b2i(s.defaultLeft)
		default:
			goLeft[b] = b2i(b <= int(bin))
		}
	}
	// Children that will never be split (the last split, or children at the depth
	// limit) need only their counts and, for GrowTreeLeaves, their rows' leaves: one
	// thread labels the rows instead of moving them (NGBoost's depth-3 trees make
	// four of their seven splits so).
	final := !more || (g.cfg.MaxDepth > 0 && l.depth+1 >= g.cfg.MaxDepth)
	final = final && g.serialRows(len(rows))
	var nl int
	if final {
		nl = g.label(rows, col, goLeft, li, newLeaf)
	} else {
		nl = g.partition(rows, col, goLeft)
	}
	nr := len(rows) - nl

	// The children's sums come from the split search; their row counts from the
	// partition (LightGBM's leaf_count), which for weighted rows the hessian estimates
	// of the search only approximate.
	left := leafState{begin: l.begin, end: l.begin + nl, g: s.lg, h: s.lh, n: nl, out: s.lOut, depth: l.depth + 1,
		cmin: l.cmin, cmax: l.cmax, labelled: final}
	right := leafState{begin: l.begin + nl, end: l.end, g: s.rg, h: s.rh, n: nr, out: s.rOut, depth: l.depth + 1,
		cmin: l.cmin, cmax: l.cmax, labelled: final}
	if mc := g.cfg.MonotoneConstraints; mc != nil && !fb.isCat() && mc[s.feature] != 0 {
		// LightGBM's BasicLeafConstraints::Update: the children meet at the mean.
		mid := (s.lOut + s.rOut) / 2
		if mc[s.feature] < 0 {
			left.cmin = max(left.cmin, mid)
			right.cmax = min(right.cmax, mid)
		} else {
			left.cmax = min(left.cmax, mid)
			right.cmin = max(right.cmin, mid)
		}
	}
	parentHist, parentSkip := l.hist, l.unsplittable
	g.leaves[li] = left
	g.leaves = append(g.leaves, right)
	// Build the smaller child's histogram from its rows and get the larger one's by
	// subtracting it from the parent's, in the parent's buffer (LightGBM's histogram
	// subtraction). Leaves that cannot be split keep no histogram.
	// LightGBM builds the left child's histogram only when it has fewer rows.
	small, large := li, newLeaf
	if nl >= nr {
		small, large = newLeaf, li
	}
	smallOK, largeOK := g.splittable(&g.leaves[small]), g.splittable(&g.leaves[large])
	if !more || (!smallOK && !largeOK) {
		g.free = append(g.free, parentHist)
		return
	}
	smallHist := g.alloc()
	g.buildHist(&g.leaves[small], smallHist)
	// Both children are searched in one loop; the large child's search subtracts the
	// small child's histogram from the parent's, feature by feature, as it goes.
	var search [2]*leafState
	var sub []hbin
	if largeOK {
		g.leaves[large].hist = parentHist
		search[0], sub = &g.leaves[large], smallHist
	}
	if smallOK {
		g.leaves[small].hist = smallHist
		search[b2i(largeOK)] = &g.leaves[small]
	}
	g.findBests(search, parentSkip, sub)
	if !largeOK {
		g.free = append(g.free, parentHist)
	}
	if !smallOK {
		g.free = append(g.free, smallHist)
	}
}

// subtractHist subtracts the bins c from p: gradient and hessian sums, and the counts
// when withN.
func subtractHist(p, c []hbin, withN bool) {
	c = c[:len(p)]
	for b := range p {
		p[b].g -= c[b].g
		p[b].h -= c[b].h
	}
	if withN {
		for b := range p {
			p[b].n -= c[b].n
		}
	}
}

// searchWorkers returns the number of goroutines for a split search (and histogram
// subtraction) over all features: below about 16k bins in all the scan takes tens of
// microseconds, less than starting goroutines costs; handing it to Fit's pool costs a
// few microseconds, worth it from about a thousand bins.
func (g *grower) searchWorkers() int {
	limit := 1 << 14
	if g.pool != nil {
		limit = 1 << 10
	}
	if g.d.histOffset[g.d.nFeatures] < limit {
		return 1
	}
	return g.cfg.NumThreads
}

// splittable reports whether leaf l may be split at all under the depth, data and
// hessian limits; leaves that may not get no histogram.
func (g *grower) splittable(l *leafState) bool {
	cfg := g.cfg
	return (cfg.MaxDepth <= 0 || l.depth < cfg.MaxDepth) &&
		l.n >= 2*max(cfg.MinDataInLeaf, 1) && l.h >= 2*cfg.MinSumHessianInLeaf
}

// alloc returns a histogram buffer for every feature.
func (g *grower) alloc() []hbin {
	if n := len(g.free); n > 0 {
		h := g.free[n-1]
		g.free = g.free[:n-1]
		return h
	}
	return make([]hbin, g.d.histOffset[g.d.nFeatures])
}

// release returns leaf li's histogram to the free list.
func (g *grower) release(li int) {
	if h := g.leaves[li].hist; h != nil {
		g.free = append(g.free, h)
		g.leaves[li].hist = nil
	}
}

// fixFeature sets the sums of feature f's most frequent bin (when not bin 0) in hist
// to leaf l's sums minus the feature's other bins, as LightGBM's
// Dataset::FixHistogram does for a histogram it built, so that the search sees
// LightGBM's roundings. Counts stay exact. buildHist calls it for each feature it fills.
func (g *grower) fixFeature(l *leafState, f int, hist []hbin) {
	if !g.cfg.lightGBMCounts {
		return
	}
	d := g.d
	mf := d.feats[f].mostFreq
	if mf == 0 {
		return
	}
	h := hist[d.histOffset[f]:d.histOffset[f+1]]
	sg, sh := l.g, l.h
	for b := range h {
		if b != mf {
			sg -= h[b].g
			sh -= h[b].h
		}
	}
	h[mf].g, h[mf].h = sg, sh
}

// gradPair is the gradient and hessian of one row.
type gradPair struct{ g, h float64 }

// buildHist fills hist for the features in use from l's rows. It gathers the leaf's
// gradients into one contiguous buffer, then fills one feature's histogram per task, in
// parallel when there is enough work. A leaf holding every row in order (the root
// without a sample) reads the bins and gradients directly.
func (g *grower) buildHist(l *leafState, hist []hbin) {
	d := g.d
	rows := g.idx[l.begin:l.end]
	all := g.identity && len(rows) == d.nRows
	if g.constHess {
		g.buildHistConstHess(l, rows, all, hist)
		return
	}
	gh := g.gh[:len(rows)]
	workers := g.histWorkers(len(rows))
	g.rowChunks(len(rows), workers, func(lo, hi int) {
		if all {
			for k := lo; k < hi; k++ {
				gh[k] = gradPair{g.grad[k], g.hess[k]}
			}
			return
		}
		for k, r := range rows[lo:hi] {
			gh[lo+k] = gradPair{g.grad[r], g.hess[r]}
		}
	})
	// Accumulate in 256-entry scratch histograms indexed by the byte bin (no bounds
	// checks, integer counts), four features per pass over the rows, then copy the
	// features' bins out. Each bin still adds its rows in order, as LightGBM's do. The
	// one to three features left over are tasks of one feature, last, so that they
	// even out the workers' shares of the groups.
	nGroups := len(g.feats) / group
	g.parallel(nGroups+len(g.feats)%group, workers, func(w, i int) {
		if i >= nGroups {
			f, col := g.featureRest(d, i-nGroups)
			sc := &g.scratch[group*w]
			clear(sc[:d.feats[f].nBins()])
			if all {
				accumulateAllGH1(sc, col[:len(gh)], gh)
			} else {
				accumulateRowsGH1(sc, col, rows, gh)
			}
			copyHist(hist[d.histOffset[f]:d.histOffset[f+1]], sc)
			g.fixFeature(l, f, hist)
			return
		}
		fs, cols := g.featureGroup(d, i)
		sc := (*[group][256]scratchBin)(g.scratch[group*w : group*w+group])
		for j := range group {
			clear(sc[j][:d.feats[fs[j]].nBins()])
		}
		if all {
			n := len(gh)
			accumulateAllGH4(sc, cols[0][:n], cols[1][:n], cols[2][:n], cols[3][:n], gh)
		} else {
			accumulateRowsGH4(sc, cols[0], cols[1], cols[2], cols[3], rows, gh)
		}
		for j := range group {
			copyHist(hist[d.histOffset[fs[j]]:d.histOffset[fs[j]+1]], &sc[j])
			g.fixFeature(l, fs[j], hist)
		}
	})
}

// accumulateAllGH1 adds gh[k] to bin c[k] of sc for every row k.
func accumulateAllGH1(sc *[256]scratchBin, c []uint8, gh []gradPair) {
	gh = gh[:len(c)]
	for k, b := range c {
		e := &sc[b]
		e.g += gh[k].g
		e.h += gh[k].h
		e.n++
	}
}

// accumulateRowsGH1 adds gh[k] to bin c[rows[k]] of sc.
func accumulateRowsGH1(sc *[256]scratchBin, c []uint8, rows []int32, gh []gradPair) {
	gh = gh[:len(rows)]
	for k, r := range rows {
		e := &sc[c[r]]
		e.g += gh[k].g
		e.h += gh[k].h
		e.n++
	}
}

// accumulateAllGH4 adds gh[k] to bin cj[k] of sc[j] for the four columns cj and
// every row k; the columns are as long as gh.
func accumulateAllGH4(sc *[4][256]scratchBin, c0, c1, c2, c3 []uint8, gh []gradPair) {
	n := len(c0)
	gh, c1, c2, c3 = gh[:n], c1[:n], c2[:n], c3[:n]
	s0, s1, s2, s3 := &sc[0], &sc[1], &sc[2], &sc[3]
	for k, b0 := range c0 {
		v := gh[k]
		e0, e1, e2, e3 := &s0[b0], &s1[c1[k]], &s2[c2[k]], &s3[c3[k]]
		e0.g += v.g
		e0.h += v.h
		e0.n++
		e1.g += v.g
		e1.h += v.h
		e1.n++
		e2.g += v.g
		e2.h += v.h
		e2.n++
		e3.g += v.g
		e3.h += v.h
		e3.n++
	}
}

// accumulateRowsGH4 adds gh[k] to bin cj[rows[k]] of sc[j] for the four columns cj.
func accumulateRowsGH4(sc *[4][256]scratchBin, c0, c1, c2, c3 []uint8, rows []int32, gh []gradPair) {
	gh = gh[:len(rows)]
	n := len(c0)
	c1, c2, c3 = c1[:n], c2[:n], c3[:n]
	s0, s1, s2, s3 := &sc[0], &sc[1], &sc[2], &sc[3]
	for k, r := range rows {
		v := gh[k]
		e0, e1, e2, e3 := &s0[c0[r]], &s1[c1[r]], &s2[c2[r]], &s3[c3[r]]
		e0.g += v.g
		e0.h += v.h
		e0.n++
		e1.g += v.g
		e1.h += v.h
		e1.n++
		e2.g += v.g
		e2.h += v.h
		e2.n++
		e3.g += v.g
		e3.h += v.h
		e3.n++
	}
}

// copyHist copies the scratch histogram sc into h.
func copyHist(h []hbin, sc *[256]scratchBin) {
	for b := range h {
		e := &sc[b]
		h[b] = hbin{g: e.g, h: e.h, n: float64(e.n)}
	}
}

// scratchBin is an entry of the scratch histograms of buildHist.
type scratchBin struct {
	g, h float64
	n    int64
}

// constScratchBin is an entry of the scratch histograms of buildHistConstHess, 16
// bytes like LightGBM's: the gradient sum and the row count.
type constScratchBin struct {
	g float64
	n int64
}

// histWorkers returns the number of goroutines for a histogram of n rows, and makes
// sure each has a scratch histogram.
func (g *grower) histWorkers(n int) int {
	workers := g.cfg.NumThreads
	// Below this many row-features a histogram takes tens of microseconds: less than
	// starting goroutines costs, or a few times what handing work to the pool does.
	limit := 1 << 16
	if g.pool != nil {
		limit = 1 << 14
	}
	if n*len(g.feats) < limit {
		workers = 1
	}
	workers = max(1, min(workers, len(g.feats)))
	need := workers
	if g.pool != nil {
		need = max(need, g.pool.workers) // any pool goroutine may take a group
	}
	for len(g.scratch) < 4*need {
		g.scratch = append(g.scratch, make([][256]scratchBin, 4)...)
		g.cscratch = append(g.cscratch, make([][256]constScratchBin, 4)...)
	}
	return workers
}

// buildHistConstHess is buildHist when every hessian is the same: it accumulates
// gradients and counts only, then sets each bin's hessian sum to count·hess[0].
func (g *grower) buildHistConstHess(l *leafState, rows []int32, all bool, hist []hbin) {
	d := g.d
	og := g.og[:len(rows)]
	hv := g.hess[0]
	workers := g.histWorkers(len(rows))
	var cnt []int64 // the bins' counts when known in advance, else nil
	if all {
		// The leaf's rows are all rows, in order: no gather, and the bins' counts
		// are the Dataset's, so the passes add gradients only.
		og = g.grad[:len(rows)]
		cnt = d.allCounts()
	} else {
		g.rowChunks(len(rows), workers, func(lo, hi int) {
			for k, r := range rows[lo:hi] {
				og[lo+k] = g.grad[r]
			}
		})
	}
	// Features go in fours, so that one pass over the rows loads each row index and
	// gradient once for four histograms; the one to three left over are tasks of two
	// features and then one, last, so that they even out the workers' shares of the
	// groups. (A pair instead of two single passes took about a third less time for
	// NGBoost's ten features, 4 + 4 + 2.)
	nGroups := len(g.feats) / group
	rest := len(g.feats) % group
	g.parallel(nGroups+(rest+1)/2, workers, func(w, i int) {
		if i >= nGroups {
			j := 2 * (i - nGroups)
			f, col := g.featureRest(d, j)
			sc := &g.cscratch[group*w]
			clear(sc[:d.feats[f].nBins()])
			if j+1 < rest {
				f2, col2 := g.featureRest(d, j+1)
				sc2 := &g.cscratch[group*w+1]
				clear(sc2[:d.feats[f2].nBins()])
				if all {
					accumulateAll2(sc, sc2, col[:len(og)], col2[:len(og)], og)
				} else {
					accumulateRows2(sc, sc2, col, col2, rows, og)
				}
				copyConstHist(hist[d.histOffset[f2]:d.histOffset[f2+1]], sc2, hv, countsOf(cnt, d, f2))
				g.fixFeature(l, f2, hist)
			} else if all {
				accumulateAll1(sc, col[:len(og)], og)
			} else {
				accumulateRows1(sc, col, rows, og)
			}
			copyConstHist(hist[d.histOffset[f]:d.histOffset[f+1]], sc, hv, countsOf(cnt, d, f))
			g.fixFeature(l, f, hist)
			return
		}
		fs, cols := g.featureGroup(d, i)
		sc := (*[group][256]constScratchBin)(g.cscratch[group*w : group*w+group])
		for j := range group {
			clear(sc[j][:d.feats[fs[j]].nBins()])
		}
		if all {
			n := len(og)
			accumulateAll4(sc, cols[0][:n], cols[1][:n], cols[2][:n], cols[3][:n], og)
		} else {
			accumulateRows4(sc, cols[0], cols[1], cols[2], cols[3], rows, og)
		}
		for j := range group {
			copyConstHist(hist[d.histOffset[fs[j]]:d.histOffset[fs[j]+1]], &sc[j], hv, countsOf(cnt, d, fs[j]))
			g.fixFeature(l, fs[j], hist)
		}
	})
}

// accumulateAll1 adds og[k] to the gradient sum of bin c[k] of sc for every row k;
// the counts come from Dataset.allCounts.
func accumulateAll1(sc *[256]constScratchBin, c []uint8, og []float64) {
	og = og[:len(c)]
	for k, b := range c {
		sc[b].g += og[k]
	}
}

// accumulateRows1 adds og[k] to bin c[rows[k]] of sc.
func accumulateRows1(sc *[256]constScratchBin, c []uint8, rows []int32, og []float64) {
	og = og[:len(rows)]
	for k, r := range rows {
		e := &sc[c[r]]
		e.g += og[k]
		e.n++
	}
}

// accumulateAll2 adds og[k] to the gradient sums of bin c0[k] of s0 and bin c1[k] of
// s1 for every row k; the columns are as long as og, and the counts come from
// Dataset.allCounts.
func accumulateAll2(s0, s1 *[256]constScratchBin, c0, c1 []uint8, og []float64) {
	og, c1 = og[:len(c0)], c1[:len(c0)]
	for k, b0 := range c0 {
		v := og[k]
		s0[b0].g += v
		s1[c1[k]].g += v
	}
}

// accumulateRows2 adds og[k] to bin c0[rows[k]] of s0 and bin c1[rows[k]] of s1.
func accumulateRows2(s0, s1 *[256]constScratchBin, c0, c1 []uint8, rows []int32, og []float64) {
	og, c1 = og[:len(rows)], c1[:len(c0)]
	for k, r := range rows {
		v := og[k]
		e0, e1 := &s0[c0[r]], &s1[c1[r]]
		e0.g += v
		e0.n++
		e1.g += v
		e1.n++
	}
}

// accumulateAll4 adds og[k] to the gradient sum of bin cj[k] of sc[j] for the four
// columns cj and every row k; the columns are as long as og, and the counts come from
// Dataset.allCounts.
func accumulateAll4(sc *[4][256]constScratchBin, c0, c1, c2, c3 []uint8, og []float64) {
	n := len(c0)
	og, c1, c2, c3 = og[:n], c1[:n], c2[:n], c3[:n]
	s0, s1, s2, s3 := &sc[0], &sc[1], &sc[2], &sc[3]
	for k, b0 := range c0 {
		v := og[k]
		s0[b0].g += v
		s1[c1[k]].g += v
		s2[c2[k]].g += v
		s3[c3[k]].g += v
	}
}

// accumulateRows4 adds og[k] to bin cj[rows[k]] of sc[j] for the four columns cj.
func accumulateRows4(sc *[4][256]constScratchBin, c0, c1, c2, c3 []uint8, rows []int32, og []float64) {
	og = og[:len(rows)]
	n := len(c0)
	c1, c2, c3 = c1[:n], c2[:n], c3[:n]
	s0, s1, s2, s3 := &sc[0], &sc[1], &sc[2], &sc[3]
	for k, r := range rows {
		v := og[k]
		e0, e1, e2, e3 := &s0[c0[r]], &s1[c1[r]], &s2[c2[r]], &s3[c3[r]]
		e0.g += v
		e0.n++
		e1.g += v
		e1.n++
		e2.g += v
		e2.n++
		e3.g += v
		e3.n++
	}
}

// copyConstHist sets h from the scratch histogram sc: the gradient sums, the counts
// (cnt's when not nil, else sc's) and count·hv as the hessian sums.
func copyConstHist(h []hbin, sc *[256]constScratchBin, hv float64, cnt []int64) {
	if cnt != nil {
		cnt = cnt[:len(h)]
		for b := range h {
			n := float64(cnt[b])
			h[b] = hbin{g: sc[b].g, h: n * hv, n: n}
		}
		return
	}
	for b := range h {
		e := &sc[b]
		n := float64(e.n)
		h[b] = hbin{g: e.g, h: n * hv, n: n}
	}
}

// countsOf returns feature f's part of the counts cnt of a histogram of all
// features, or nil when cnt is nil.
func countsOf(cnt []int64, d *Dataset, f int) []int64 {
	if cnt == nil {
		return nil
	}
	return cnt[d.histOffset[f]:d.histOffset[f+1]]
}

// findBest returns the best split of leaf l over the features in use. For each feature
// it scans the value bins in order; when the leaf has missing values it tries them on
// the right (including the split "all values left, NaN right") and on the left.
//
// Features with no split of positive gain in the parent (skip; nil for the root) are
// not searched, as in LightGBM's SerialTreeLearner::FindBestSplits; l.unsplittable
// records the features without one in l.
//
// When sub is not nil, l.hist is still its parent's histogram and sub its sibling's:
// each feature's bins are first set to their difference (LightGBM's histogram
// subtraction), in the same parallel pass as the search.
func (g *grower) findBest(l *leafState, skip []bool, sub []hbin) splitInfo {
	g.findBests([2]*leafState{l}, skip, sub)
	return l.best
}

// findBests sets ls[c].best as findBest would, for the one or two leaves ls (ls[1] may
// be nil) in one parallel loop, so that a split waits for its workers once for both
// children: sub, when not nil, is subtracted from ls[0]'s histogram only (the larger
// child's), and skip applies to both.
func (g *grower) findBests(ls [2]*leafState, skip []bool, sub []hbin) {
	nf := len(g.feats)
	nl := 1
	if ls[1] != nil {
		nl = 2
	}
	if cap(g.bests) < nl*nf {
		g.bests = make([]splitInfo, nl*nf)
	}
	bests := g.bests[:nl*nf]
	for _, l := range ls[:nl] {
		l.unsplittable = make([]bool, nf)
	}
	// Fit's search estimates counts from hessians; only GrowTree's reads n.
	withN := !g.cfg.lightGBMCounts
	g.parallel(nl*nf, g.searchWorkers(), func(_, i int) {
		c, k := i/nf, i%nf
		l := ls[c]
		if c == 0 && sub != nil {
			lo, hi := g.d.histOffset[g.feats[k]], g.d.histOffset[g.feats[k]+1]
			subtractHist(l.hist[lo:hi], sub[lo:hi], withN)
		}
		if skip != nil && skip[k] {
			bests[i] = splitInfo{gain: math.Inf(-1)}
			l.unsplittable[k] = true
			return
		}
		var ok bool
		bests[i], ok = g.bestForFeature(l, g.feats[k])
		l.unsplittable[k] = !ok
	})
	// Reduce in feature order with a strict comparison, so that the result does not
	// depend on the number of workers: ties go to the first feature.
	for c, l := range ls[:nl] {
		var best splitInfo
		for _, b := range bests[c*nf : (c+1)*nf] {
			if b.gain > best.gain {
				best = b
			}
		}
		l.best = best
	}
}

// group is the number of features whose histograms one pass over a leaf's rows builds.
const group = 4

// featureGroup returns the features of group i of the grower's features, four at a
// time, and their bin columns; only whole groups of four are asked for.
func (g *grower) featureGroup(d *Dataset, i int) (fs [group]int, cols [group][]uint8) {
	for j := range group {
		fs[j] = g.feats[group*i+j]
		cols[j] = d.column(fs[j])
	}
	return fs, cols
}

// featureRest returns feature j of those after the grower's whole groups of four, and
// its bin column.
func (g *grower) featureRest(d *Dataset, j int) (f int, col []uint8) {
	f = g.feats[len(g.feats)/group*group+j]
	return f, d.column(f)
}
