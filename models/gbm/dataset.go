package gbm

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// DefaultMaxBin is LightGBM's default max_bin.
const DefaultMaxBin = 255

// Dataset is a feature matrix quantised into histogram bins, built once and reused for
// every tree of a fit. Each feature has at most maxBin bins for its values, with quantile
// bin edges, plus one bin for NaN when the feature has missing values. A Dataset is
// read-only after NewDataset and safe for concurrent use.
type Dataset struct {
	nRows, nFeatures int
	// bins holds the bin of every value, column-major: bins[f*nRows+i] is row i,
	// feature f. At most 255 value bins plus the NaN bin fit a byte.
	bins  []uint8
	feats []featureBins
	// histOffset[f] is where feature f's bins start in a histogram of all features;
	// histOffset[nFeatures] is the histogram length.
	histOffset []int

	// growers caches the buffers of GrowTree so that boosting many trees does not
	// allocate per tree.
	growers sync.Pool

	// binCounts[histOffset[f]+b] is the number of rows in bin b of feature f: the
	// counts of every histogram of all rows, the same for every tree. allCounts
	// computes it on first use.
	countsOnce sync.Once
	binCounts  []int64
}

// allCounts returns d.binCounts, counting the rows of every bin on first use.
func (d *Dataset) allCounts() []int64 {
	d.countsOnce.Do(func() {
		c := make([]int64, d.histOffset[d.nFeatures])
		for f := range d.nFeatures {
			h := c[d.histOffset[f]:d.histOffset[f+1]]
			for _, b := range d.column(f) {
				h[b]++
			}
		}
		d.binCounts = c
	})
	return d.binCounts
}

// featureBins describes the bins of one feature.
type featureBins struct {
	// upper[b] is the split threshold after value bin b: a value x is in the first bin
	// b with x <= upper[b]. The last value bin's upper bound is +Inf.
	upper []float64
	// hasNaN reports whether the feature had missing values; their bin is len(upper).
	hasNaN bool
	// min and max are the smallest and largest values, for LightGBM's feature_infos;
	// NaN when the feature has no values.
	min, max float64

	// cats is set for a categorical feature: cats[b-1] is the category of bin b >= 1,
	// in LightGBM's order (most frequent first). Bin 0 holds NaN, negative values and
	// the rare categories LightGBM's binning leaves out; upper is then nil.
	cats []int
	// catBin maps a category to its bin (categorical features only).
	catBin map[int]int
	// catNaN reports LightGBM's missing type NaN for a categorical feature: bin 0 is
	// not empty in training, or a category was left out.
	catNaN bool
	// mostFreq is LightGBM's most frequent bin of the feature. LightGBM does not
	// accumulate it when building a histogram but derives it from the leaf's sums
	// (Dataset::FixHistogram), or leaves it out when it is bin 0; the grower does
	// the same so that its sums round as LightGBM's do.
	mostFreq int
}

// lgMostFreqBin returns LightGBM's most_freq_bin for bin counts cnt: the first bin
// with the largest count, replaced by defaultBin (the bin of the value 0) unless it
// holds at least kSparseThreshold = 0.7 of the rows (BinMapper::FindBin).
func lgMostFreqBin(cnt []int, defaultBin int) int {
	total, m := 0, 0
	for b, n := range cnt {
		total += n
		if n > cnt[m] {
			m = b
		}
	}
	if m != defaultBin && float64(cnt[m]) < 0.7*float64(total) {
		m = defaultBin
	}
	return m
}

// isCat reports whether the feature is categorical.
func (fb *featureBins) isCat() bool { return fb.cats != nil }

// nBins returns the number of bins of the feature, the NaN bin included.
func (fb *featureBins) nBins() int {
	if fb.isCat() {
		return len(fb.cats) + 1
	}
	if fb.hasNaN {
		return len(fb.upper) + 1
	}
	return len(fb.upper)
}

// nanBin returns the bin index of NaN values, which is len(upper) whether or not the
// feature had NaN in training (no row is then in it), and 0 for a categorical feature.
func (fb *featureBins) nanBin() int {
	if fb.isCat() {
		return 0
	}
	return len(fb.upper)
}

// NewDataset quantises x into at most maxBin bins per feature (0 means DefaultMaxBin;
// at most 255). NaN values are missing and get a bin of their own; infinite values are
// rejected, since a split threshold between finite values and ±Inf cannot be written in
// the LightGBM text format.
func NewDataset(x mat.Matrix, maxBin int) (*Dataset, error) {
	return NewDatasetCategorical(x, maxBin, nil)
}

// NewDatasetCategorical is NewDataset with the columns listed in categorical binned as
// categories, as LightGBM's categorical_feature does: a value is truncated to an int
// category; NaN and negative values are missing; categories are ranked by count and
// kept, most frequent first, until they cover 99% of the rows and at most maxBin-1
// of them are kept (the rest, and those seen fewer than 3 times once two are kept,
// share the missing bin 0). Trees grown on it split such a column by sets of
// categories.
func NewDatasetCategorical(x mat.Matrix, maxBin int, categorical []int) (*Dataset, error) {
	return NewDatasetThreads(x, maxBin, categorical, 0)
}

// NewDatasetThreads is NewDatasetCategorical on at most threads goroutines (0 means
// GOMAXPROCS), so that a caller's thread limit (Fit's num_threads, models/ngboost's
// NumThreads) bounds binning too. The Dataset does not depend on threads.
func NewDatasetThreads(x mat.Matrix, maxBin int, categorical []int, threads int) (*Dataset, error) {
	if maxBin == 0 {
		maxBin = DefaultMaxBin
	}
	if maxBin < 2 || maxBin > 255 {
		return nil, fmt.Errorf("%w: max_bin=%d, want 2..255", ErrBadConfig, maxBin)
	}
	r, c := x.Dims()
	if r == 0 || c == 0 {
		return nil, fmt.Errorf("%w: empty matrix (%d rows, %d columns)", ErrBadData, r, c)
	}
	d := &Dataset{
		nRows:      r,
		nFeatures:  c,
		bins:       make([]uint8, r*c),
		feats:      make([]featureBins, c),
		histOffset: make([]int, c+1),
	}
	isCat := make([]bool, c)
	for _, f := range categorical {
		if f < 0 || f >= c {
			return nil, fmt.Errorf("%w: categorical feature %d out of range [0, %d)", ErrBadConfig, f, c)
		}
		isCat[f] = true
	}
	errs := make([]error, c)
	workers := threads
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	cols, sorted := make([][]float64, workers), make([]*sortBuf, workers)
	parallelFor(c, workers, func(w, f int) {
		if cols[w] == nil {
			cols[w], sorted[w] = make([]float64, r), newSortBuf(r)
		}
		col := cols[w]
		if rv, ok := x.(mat.RawColViewer); ok {
			copy(col, rv.RawColView(f))
		} else if rm, ok := x.(mat.RawMatrixer); ok {
			raw := rm.RawMatrix()
			for i := range col {
				col[i] = raw.Data[i*raw.Stride+f]
			}
		} else {
			for i := range col {
				col[i] = x.At(i, f)
			}
		}
		if isCat[f] {
			errs[f] = d.binCategorical(f, col, maxBin)
		} else {
			errs[f] = d.binFeature(f, col, sorted[w], maxBin)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for f := range d.feats {
		d.histOffset[f+1] = d.histOffset[f] + d.feats[f].nBins()
	}
	return d, nil
}

// column returns the bins of feature f, one per row.
func (d *Dataset) column(f int) []uint8 { return d.bins[f*d.nRows : (f+1)*d.nRows] }

// NRows returns the number of rows of d.
func (d *Dataset) NRows() int { return d.nRows }

// NFeatures returns the number of features (columns) of d.
func (d *Dataset) NFeatures() int { return d.nFeatures }

// binFeature finds the bin edges of feature f from its values col and fills its column
// of d.bins; sorted is a scratch buffer with capacity for len(col) values.
func (d *Dataset) binFeature(f int, col []float64, sb *sortBuf, maxBin int) error {
	keys, idx := sb.keys[:0], sb.idx[:0]
	for i, v := range col {
		if math.IsInf(v, 0) {
			return fmt.Errorf("%w: row %d, column %d: infinite value", ErrBadData, i, f)
		}
		if v >= -kZeroThreshold && v <= kZeroThreshold {
			// LightGBM's loaders read such values as 0 (and so does prediction).
			v = 0
			col[i] = 0
		}
		if !math.IsNaN(v) {
			keys = append(keys, sortKey(v))
			idx = append(idx, int32(i))
		}
	}
	fb := &d.feats[f]
	fb.hasNaN = len(keys) < len(col)
	keys, idx = radixSort(keys, idx, sb.tmpKeys[:len(keys)], sb.tmpIdx[:len(idx)])
	sorted := sb.sorted[:len(keys)]
	for i, k := range keys {
		sorted[i] = keyValue(k)
	}
	fb.upper = binEdges(sorted, maxBin)
	fb.min, fb.max = math.NaN(), math.NaN()
	if len(sorted) > 0 {
		fb.min, fb.max = sorted[0], sorted[len(sorted)-1]
	}
	// The values in order meet the bin bounds in order: each value's bin is the
	// first b with value <= upper[b], found by one sweep.
	out := d.column(f)
	nan := uint8(fb.nanBin())
	cnt := make([]int, fb.nBins())
	if fb.hasNaN {
		for i, v := range col {
			if math.IsNaN(v) {
				out[i] = nan
			}
		}
		cnt[nan] = len(col) - len(keys)
	}
	b := 0
	idx = idx[:len(sorted)]
	for i, v := range sorted {
		for v > fb.upper[b] {
			b++
		}
		out[idx[i]] = uint8(b)
		cnt[b]++
	}
	fb.mostFreq = lgMostFreqBin(cnt, searchBin(fb.upper, 0))
	return nil
}

// sortBuf holds the buffers binFeature sorts a column's values in.
type sortBuf struct {
	keys, tmpKeys []uint64
	idx, tmpIdx   []int32
	sorted        []float64
}

func newSortBuf(n int) *sortBuf {
	return &sortBuf{
		keys: make([]uint64, 0, n), tmpKeys: make([]uint64, n),
		idx: make([]int32, 0, n), tmpIdx: make([]int32, n),
		sorted: make([]float64, n),
	}
}

// sortKey maps a float64 other than NaN to a uint64 in the same order (negative
// values have every bit flipped, others the sign bit set).
func sortKey(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// keyValue inverts sortKey.
func keyValue(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// radixSort sorts keys ascending, carrying idx along, by least-significant-byte
// radix passes (those where every key has the same byte are skipped); tk and ti are
// scratch of the same lengths. It returns the sorted slices, which are either the
// inputs or the scratch. It is several times faster than a comparison sort on the
// 10^5–10^6 values of a column.
func radixSort(keys []uint64, idx []int32, tk []uint64, ti []int32) ([]uint64, []int32) {
	n := len(keys)
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		clear(count[:])
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if n == 0 || count[byte(keys[0]>>shift)] == n {
			continue
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		tk, ti = tk[:n], ti[:n]
		for i, k := range keys {
			p := &count[byte(k>>shift)]
			tk[*p] = k
			ti[*p] = idx[i]
			*p++
		}
		keys, tk = tk, keys
		idx, ti = ti, idx
	}
	return keys, idx
}

// searchBin returns the first b with v <= upper[b] (sort.SearchFloat64s without its
// closure calls, which binning makes 50 million of at 1M × 50).
func searchBin(upper []float64, v float64) int {
	lo, hi := 0, len(upper)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if upper[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lgMinDataInBin is LightGBM's default min_data_in_bin.
const lgMinDataInBin = 3

// binCategorical bins categorical feature f from its values col as LightGBM's
// BinMapper::FindBin does for a categorical feature (src/io/bin.cpp).
func (d *Dataset) binCategorical(f int, col []float64, maxBin int) error {
	counts := map[int]int{}
	naCnt := 0
	for i, v := range col {
		switch {
		case math.IsNaN(v):
			naCnt++
		case math.IsInf(v, 0) || v >= math.MaxInt32+1:
			return fmt.Errorf("%w: row %d, column %d: categorical value %v is not an int32", ErrBadData, i, f, v)
		case int(v) < 0:
			naCnt++ // LightGBM reads negative categories as missing
		default:
			counts[int(v)]++
		}
	}
	cats := make([]int, 0, len(counts))
	for c := range counts {
		cats = append(cats, c)
	}
	// Ascending values, then a stable sort by count, descending (Common::SortForPair).
	slices.Sort(cats)
	slices.SortStableFunc(cats, func(a, b int) int { return counts[b] - counts[a] })
	total := len(col)
	fb := &d.feats[f]
	fb.catBin = map[int]int{}
	fb.cats = []int{}
	cntInBin := []int{0}
	if rest := total - naCnt; rest > 0 {
		// LightGBM: int cut_cnt = RoundInt((total - na) * 0.99f).
		cutCnt := int(float64(rest)*float64(float32(0.99)) + 0.5)
		distinct := len(cats)
		if naCnt > 0 {
			distinct++
		}
		mb := min(distinct, maxBin)
		used, numBin := 0, 1
		for cur := 0; cur < len(cats) && (used < cutCnt || numBin < mb); cur++ {
			if counts[cats[cur]] < lgMinDataInBin && cur > 1 {
				break
			}
			fb.catBin[cats[cur]] = numBin
			fb.cats = append(fb.cats, cats[cur])
			used += counts[cats[cur]]
			cntInBin = append(cntInBin, counts[cats[cur]])
			numBin++
		}
		if len(fb.cats) > 255 {
			return fmt.Errorf("%w: column %d: %d categories needed to cover 99%% of the rows, at most 255 fit", ErrBadData, f, len(fb.cats))
		}
		fb.catNaN = len(fb.cats) < len(cats) || naCnt > 0
		cntInBin[0] = total - used
	}
	fb.hasNaN = fb.catNaN
	fb.min, fb.max = math.NaN(), math.NaN()
	fb.mostFreq = lgMostFreqBin(cntInBin, fb.catBin[0])
	out := d.column(f)
	for i, v := range col {
		b := 0
		if !math.IsNaN(v) && int(v) >= 0 {
			b = fb.catBin[int(v)]
		}
		out[i] = uint8(b)
	}
	return nil
}

// binEdges returns the upper bounds of at most maxBin quantile bins for the sorted
// finite values v: each distinct value gets its own bin when there are at most maxBin
// of them; otherwise a bin closes once the count so far reaches the next multiple of
// len(v)/maxBin, so heavily repeated values get a bin of their own. Bounds lie midway
// between the last value of a bin and the first of the next, as LightGBM's do. The last
// bound is +Inf. An all-NaN feature has one empty bin.
func binEdges(v []float64, maxBin int) []float64 {
	if len(v) == 0 {
		return []float64{math.Inf(1)}
	}
	distinct := 1
	for i := 1; i < len(v); i++ {
		if v[i] != v[i-1] {
			distinct++
		}
	}
	upper := make([]float64, 0, min(distinct, maxBin))
	if distinct <= maxBin {
		for i := 0; i+1 < len(v); i++ {
			if v[i] != v[i+1] {
				upper = append(upper, midpoint(v[i], v[i+1]))
			}
		}
	} else {
		step := float64(len(v)) / float64(maxBin)
		for i := 0; i < len(v); {
			j := i + 1
			for j < len(v) && v[j] == v[i] {
				j++
			}
			// j rows are at or below v[i]; close the bin after v[i] once they reach
			// the next quantile.
			if j < len(v) && len(upper) < maxBin-1 && float64(j) >= step*float64(len(upper)+1) {
				upper = append(upper, midpoint(v[i], v[j]))
			}
			i = j
		}
	}
	return append(upper, math.Inf(1))
}

// midpoint returns a threshold t with a <= t < b for finite a < b, halfway between
// them when that is representable.
func midpoint(a, b float64) float64 {
	t := a/2 + b/2
	if t >= a && t < b {
		return t
	}
	return a
}

// parallelFor calls fn(worker, i) for i in [0, n) on at most workers goroutines; fn
// calls with the same worker number never run at the same time.
func parallelFor(n, workers int, fn func(worker, i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}

// featureInfos returns LightGBM's feature_infos header for d: "[min:max]" per feature,
// "none" for a feature without two distinct values (LightGBM's trivial features).
func (d *Dataset) featureInfos() []string {
	infos := make([]string, d.nFeatures)
	for f := range d.feats {
		fb := &d.feats[f]
		if fb.isCat() {
			// The categories of the bins, -1 for bin 0, as LightGBM writes them.
			s := "-1"
			for _, c := range fb.cats {
				s += ":" + strconv.Itoa(c)
			}
			infos[f] = s
			continue
		}
		if math.IsNaN(fb.min) || fb.min == fb.max {
			infos[f] = "none"
			continue
		}
		infos[f] = "[" + strconv.FormatFloat(fb.min, 'g', -1, 64) + ":" + strconv.FormatFloat(fb.max, 'g', -1, 64) + "]"
	}
	return infos
}
