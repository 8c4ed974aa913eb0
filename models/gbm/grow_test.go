package gbm

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// exactTol is for sums that the code under test and the check compute from the same
// numbers in possibly different order: a few ulps of relative error.
const exactTol = 1e-12

// step returns n rows of one uniform feature and the step function target
// y = -2 for x <= 0.6, 1 above.
func stepData(n int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		v := rng.Float64()
		x.Set(i, 0, v)
		y[i] = -2
		if v > 0.6 {
			y[i] = 1
		}
	}
	return x, y
}

// l2Grad returns the gradients and hessians of the squared error ½(s-y)² at score 0.
func l2Grad(y []float64) (g, h []float64) {
	g, h = make([]float64, len(y)), make([]float64, len(y))
	for i := range y {
		g[i], h[i] = -y[i], 1
	}
	return g, h
}

func TestGrowTreeStep(t *testing.T) {
	t.Parallel()
	x, y := stepData(200)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, h := l2Grad(y)
	tree, err := GrowTree(d, g, h, nil, nil, TreeConfig{NumLeaves: 2, MinDataInLeaf: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tree.NLeaves() != 2 {
		t.Fatalf("NLeaves() = %d, want 2", tree.NLeaves())
	}
	// The split must lie between the largest x <= 0.6 and the smallest x above it.
	lo, hi := math.Inf(-1), math.Inf(1)
	for i := range y {
		v := x.At(i, 0)
		if v <= 0.6 {
			lo = max(lo, v)
		} else {
			hi = min(hi, v)
		}
	}
	th := tree.nodes[0].threshold
	if !(th >= lo && th < hi) {
		t.Errorf("threshold = %v, want in [%v, %v)", th, lo, hi)
	}
	for _, tc := range []struct{ x, want float64 }{{0.1, -2}, {lo, -2}, {hi, 1}, {0.99, 1}} {
		if got := tree.Predict([]float64{tc.x}); !scalar.EqualWithinAbsOrRel(got, tc.want, exactTol, exactTol) {
			t.Errorf("Predict(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// randomProblem returns a matrix with a few features, some with NaN and few distinct
// values (so that every distinct value has a bin and histogram splits are exact
// splits), with random gradients and positive hessians.
func randomProblem(n int, seed uint64) (*mat.Dense, []float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const nf = 4
	x := mat.NewDense(n, nf, nil)
	g, h := make([]float64, n), make([]float64, n)
	for i := range n {
		for f := range nf {
			v := float64(rng.IntN(12 + 10*f))
			if f%2 == 1 && rng.Float64() < 0.15 {
				v = math.NaN()
			}
			x.Set(i, f, v)
		}
		x0, x1 := x.At(i, 0), x.At(i, 1)
		mean := 0.3 * x0
		if math.IsNaN(x1) || x1 > 8 {
			mean += 2
		}
		g[i] = rng.NormFloat64() - mean
		h[i] = 0.5 + rng.Float64()
	}
	return x, g, h
}

// bruteBestSplit finds the best first split by trying every feature, every threshold
// between distinct values and both sides for the missing values.
func bruteBestSplit(x mat.Matrix, g, h []float64, lambda float64, minData int) (feature int, gain float64) {
	n, nf := x.Dims()
	var G, H float64
	for i := range n {
		G += g[i]
		H += h[i]
	}
	score := func(a, b float64) float64 { return a * a / (b + lambda) }
	feature = -1
	for f := range nf {
		var vals []float64
		for i := range n {
			if v := x.At(i, f); !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		vals = slices.Compact(vals)
		for k := 0; k < len(vals); k++ {
			for _, nanLeft := range []bool{false, true} {
				var lg, lh float64
				ln := 0
				for i := range n {
					v := x.At(i, f)
					if (math.IsNaN(v) && nanLeft) || (!math.IsNaN(v) && v <= vals[k]) {
						lg += g[i]
						lh += h[i]
						ln++
					}
				}
				if ln < minData || n-ln < minData {
					continue
				}
				gn := score(lg, lh) + score(G-lg, H-lh) - score(G, H)
				if gn > gain {
					feature, gain = f, gn
				}
			}
		}
	}
	return feature, gain
}

func TestGrowTreeMatchesBruteForce(t *testing.T) {
	t.Parallel()
	const lambda = 0.7
	for seed := uint64(1); seed <= 5; seed++ {
		x, g, h := randomProblem(300, seed)
		d, err := NewDataset(x, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg := TreeConfig{NumLeaves: 8, MinDataInLeaf: 5, LambdaL2: lambda, NumThreads: 2}
		tree, err := GrowTree(d, g, h, nil, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantF, wantGain := bruteBestSplit(x, g, h, lambda, cfg.MinDataInLeaf)
		if got := int(tree.nodes[0].feature); got != wantF {
			t.Errorf("seed %d: root feature = %d, want %d", seed, got, wantF)
		}
		if got := tree.splitGain[0]; !scalar.EqualWithinAbsOrRel(got, wantGain, exactTol, exactTol) {
			t.Errorf("seed %d: root gain = %v, want %v", seed, got, wantGain)
		}
		// Every leaf value is the Newton step of the rows that land in it, and every
		// leaf holds at least MinDataInLeaf rows (GrowTree counts rows; Fit would
		// estimate them from hessians, as LightGBM does).
		nl := tree.NLeaves()
		G, H, N := make([]float64, nl), make([]float64, nl), make([]int, nl)
		for i := range g {
			l := tree.leaf(x.RawRowView(i))
			G[l] += g[i]
			H[l] += h[i]
			N[l]++
		}
		for l := range nl {
			want := -G[l] / (H[l] + lambda)
			if got := tree.leafValues[l]; !scalar.EqualWithinAbsOrRel(got, want, exactTol, exactTol) {
				t.Errorf("seed %d: leaf %d value = %v, want %v", seed, l, got, want)
			}
			if N[l] < cfg.MinDataInLeaf {
				t.Errorf("seed %d: leaf %d has %d rows, want >= %d", seed, l, N[l], cfg.MinDataInLeaf)
			}
			if N[l] != tree.leafCount[l] {
				t.Errorf("seed %d: leaf %d count = %d, routed rows %d", seed, l, tree.leafCount[l], N[l])
			}
		}
		if nl != cfg.NumLeaves {
			t.Errorf("seed %d: NLeaves() = %d, want %d", seed, nl, cfg.NumLeaves)
		}
	}
}

func TestGrowTreeMissingToBetterSide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		nanTarget float64 // target of the rows with missing x
		wantLeft  bool
	}{
		{"with the low side", -1, true},
		{"with the high side", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 300
			x := mat.NewDense(n, 1, nil)
			y := make([]float64, n)
			for i := range n {
				v := float64(i%100) / 100
				y[i] = -1
				if v > 0.5 {
					y[i] = 1
				}
				if i%10 == 0 {
					v = math.NaN()
					y[i] = tc.nanTarget
				}
				x.Set(i, 0, v)
			}
			d, err := NewDataset(x, 0)
			if err != nil {
				t.Fatal(err)
			}
			g, h := l2Grad(y)
			tree, err := GrowTree(d, g, h, nil, nil, TreeConfig{NumLeaves: 2, MinDataInLeaf: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := tree.nodes[0].flags&flagDefaultLeft != 0; got != tc.wantLeft {
				t.Errorf("default left = %v, want %v", got, tc.wantLeft)
			}
			if got := tree.Predict([]float64{math.NaN()}); !scalar.EqualWithinAbsOrRel(got, tc.nanTarget, exactTol, exactTol) {
				t.Errorf("Predict(NaN) = %v, want %v", got, tc.nanTarget)
			}
		})
	}
}

func TestGrowTreeLimits(t *testing.T) {
	t.Parallel()
	x, g, h := randomProblem(400, 7)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		cfg       TreeConfig
		rows      []int
		features  []int
		maxLeaves int
		onlyFeat  int // -1: any
	}{
		{"depth 1", TreeConfig{MaxDepth: 1, MinDataInLeaf: 1}, nil, nil, 2, -1},
		{"depth 2", TreeConfig{MaxDepth: 2, MinDataInLeaf: 1}, nil, nil, 4, -1},
		{"feature subset", TreeConfig{NumLeaves: 6, MinDataInLeaf: 1}, nil, []int{2}, 6, 2},
		{"row subset", TreeConfig{NumLeaves: 4, MinDataInLeaf: 30}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil, 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := GrowTree(d, g, h, tc.rows, tc.features, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tree.NLeaves() > tc.maxLeaves {
				t.Errorf("NLeaves() = %d, want <= %d", tree.NLeaves(), tc.maxLeaves)
			}
			for _, n := range tree.nodes {
				if tc.onlyFeat >= 0 && int(n.feature) != tc.onlyFeat {
					t.Errorf("split on feature %d, want only %d", n.feature, tc.onlyFeat)
				}
			}
		})
	}
}

func TestGrowTreeErrors(t *testing.T) {
	t.Parallel()
	x, g, h := randomProblem(50, 3)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	nanG := slices.Clone(g)
	nanG[3] = math.NaN()
	negH := slices.Clone(h)
	negH[4] = -1
	for _, tc := range []struct {
		name     string
		g, h     []float64
		rows     []int
		features []int
		cfg      TreeConfig
		wantErr  error
	}{
		{"short gradients", g[:10], h, nil, nil, TreeConfig{}, ErrBadData},
		{"NaN gradient", nanG, h, nil, nil, TreeConfig{}, ErrBadData},
		{"negative hessian", g, negH, nil, nil, TreeConfig{}, ErrBadData},
		{"row out of range", g, h, []int{0, 50}, nil, TreeConfig{}, ErrBadData},
		{"no rows", g, h, []int{}, nil, TreeConfig{}, ErrBadData},
		{"feature out of range", g, h, nil, []int{4}, TreeConfig{}, ErrBadData},
		{"one leaf", g, h, nil, nil, TreeConfig{NumLeaves: 1}, ErrBadConfig},
		{"negative lambda", g, h, nil, nil, TreeConfig{LambdaL2: -1}, ErrBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GrowTree(d, tc.g, tc.h, tc.rows, tc.features, tc.cfg)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("GrowTree() error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestNewDataset(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		x       *mat.Dense
		maxBin  int
		wantErr error
	}{
		{"infinite value", mat.NewDense(2, 1, []float64{1, math.Inf(1)}), 0, ErrBadData},
		{"max_bin 1", mat.NewDense(2, 1, []float64{1, 2}), 1, ErrBadConfig},
		{"max_bin 256", mat.NewDense(2, 1, []float64{1, 2}), 256, ErrBadConfig},
		{"ok", mat.NewDense(2, 1, []float64{1, math.NaN()}), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewDataset(tc.x, tc.maxBin)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("NewDataset() error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestBinEdgesQuantiles(t *testing.T) {
	t.Parallel()
	// 1000 distinct values into 10 bins: every bin gets 100 values.
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i)
	}
	upper := binEdges(v, 10)
	if len(upper) != 10 {
		t.Fatalf("len(binEdges) = %d, want 10", len(upper))
	}
	for b := 0; b < 9; b++ {
		if want := float64(100*(b+1)) - 0.5; upper[b] != want {
			t.Errorf("upper[%d] = %v, want %v", b, upper[b], want)
		}
	}
	if !math.IsInf(upper[9], 1) {
		t.Errorf("last bound = %v, want +Inf", upper[9])
	}
	// A value repeated in half of the rows gets a bin of its own.
	v = v[:0]
	for i := range 500 {
		v = append(v, float64(i))
	}
	for range 500 {
		v = append(v, 1000)
	}
	upper = binEdges(v, 8)
	if got := upper[len(upper)-2]; !(got < 1000 && got > 499) {
		t.Errorf("bound before the repeated value = %v, want in (499, 1000)", got)
	}
}

func TestTreeScaledAndModel(t *testing.T) {
	t.Parallel()
	x, g, h := randomProblem(300, 11)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	t1, err := GrowTree(d, g, h, nil, nil, TreeConfig{NumLeaves: 5, MinDataInLeaf: 3})
	if err != nil {
		t.Fatal(err)
	}
	t2 := t1.Scaled(0.1)
	m, err := NewModel([]*Tree{t1, t2}, nil, "regression")
	if err != nil {
		t.Fatal(err)
	}
	if m.NFeatures() != 4 {
		t.Errorf("NFeatures() = %d, want 4", m.NFeatures())
	}
	raw := m.PredictRaw(nil, x)
	pred := m.Predict(nil, x)
	for i := range raw {
		row := x.RawRowView(i)
		want := t1.Predict(row) + 0.1*t1.Predict(row)
		if !scalar.EqualWithinAbsOrRel(raw[i], want, exactTol, exactTol) {
			t.Fatalf("PredictRaw row %d = %v, want %v", i, raw[i], want)
		}
		if pred[i] != raw[i] {
			t.Fatalf("Predict row %d = %v, want raw %v (identity link)", i, pred[i], raw[i])
		}
		if got, want := t2.Predict(row), 0.1*t1.Predict(row); !scalar.EqualWithinAbsOrRel(got, want, exactTol, exactTol) {
			t.Fatalf("Scaled(0.1).Predict row %d = %v, want %v", i, got, want)
		}
	}
	if t1.leafValues[0] == t2.leafValues[0] && t1.leafValues[0] != 0 {
		t.Error("Scaled modified the original tree")
	}
}

func TestRadixSortMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 17, 1000} {
		vals := make([]float64, n)
		for i := range vals {
			switch rng.IntN(5) {
			case 0:
				vals[i] = 0
			case 1:
				vals[i] = -rng.ExpFloat64() * 1e300
			case 2:
				vals[i] = float64(rng.IntN(7) - 3)
			default:
				vals[i] = rng.NormFloat64()
			}
		}
		keys, idx := make([]uint64, n), make([]int32, n)
		for i, v := range vals {
			keys[i], idx[i] = sortKey(v), int32(i)
		}
		keys, idx = radixSort(keys, idx, make([]uint64, n), make([]int32, n))
		want := slices.Clone(vals)
		slices.Sort(want)
		for i := range want {
			if got := keyValue(keys[i]); got != want[i] || vals[idx[i]] != got {
				t.Fatalf("n=%d: sorted[%d] = %v (row %d holds %v), want %v", n, i, got, idx[i], vals[idx[i]], want[i])
			}
		}
	}
}

// TestGrowTreeSingleFeatureTasks checks the histograms of the features left over after
// the groups of four against those of a group: growing on features 0-2 (a two-feature
// task and a one-feature task) must give the tree grown on the columns x0 x1 x2 x0
// (one group, the repeated column losing every tie), and growing on features 0-1 (a
// two-feature task) the tree grown on x0 x1 x0 x1, with and without constant
// hessians, on all rows and on a sample.
func TestGrowTreeSingleFeatureTasks(t *testing.T) {
	t.Parallel()
	const n = 400
	x, g, h := randomProblem(n, 11)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	var sample []int
	for i := 0; i+1 < n; i += 3 {
		sample = append(sample, i, i+1)
	}
	cfg := TreeConfig{NumLeaves: 12, MinDataInLeaf: 5, NumThreads: 2}
	for _, tc := range []struct {
		feats []int
		group [4]int // the columns of x in the one-group data set
	}{
		{[]int{0, 1, 2}, [4]int{0, 1, 2, 0}},
		{[]int{0, 1}, [4]int{0, 1, 0, 1}},
	} {
		dup := mat.NewDense(n, 4, nil)
		for i := range n {
			for j, c := range tc.group {
				dup.Set(i, j, x.At(i, c))
			}
		}
		dd, err := NewDataset(dup, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, hess := range [][]float64{h, ones} {
			for _, rows := range [][]int{nil, sample} {
				got, err := GrowTree(d, g, hess, rows, tc.feats, cfg)
				if err != nil {
					t.Fatal(err)
				}
				want, err := GrowTree(dd, g, hess, rows, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.leafValues, want.leafValues) || !slices.Equal(got.splitGain, want.splitGain) {
					t.Errorf("features %v, constant hessians %v, sample %v: leftover tasks grew leaves %v gains %v, the group %v %v",
						tc.feats, hess[0] == hess[1], rows != nil, got.leafValues, got.splitGain, want.leafValues, want.splitGain)
				}
			}
		}
	}
}

// TestCheckSumGradients compares the fused check and sums of a tree's root with their
// definition: the first row whose gradient is NaN or ±Inf or whose hessian is not a
// finite number >= 0 (found with math.IsNaN and math.IsInf), and otherwise the sums in
// row order and whether every hessian equals the first.
func TestCheckSumGradients(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name    string
		at      int // the row to spoil, -1 for none
		g, h    float64
		noConst bool
	}{
		{"clean, constant hessian", -1, 0, 0, false},
		{"clean, varying hessian", -1, 0, 0, true},
		{"NaN gradient", 7, nan, 1, false},
		{"+Inf gradient", 0, inf, 1, false},
		{"-Inf gradient", 99, -inf, 1, false},
		{"NaN hessian", 42, 0.5, nan, false},
		{"+Inf hessian", 13, 0.5, inf, false},
		{"negative hessian", 5, 0.5, -1e-300, false},
		{"zero hessian", -1, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			g, h := make([]float64, 100), make([]float64, 100)
			for i := range g {
				g[i] = rng.NormFloat64() * 1e3
				h[i] = 2
				if tc.noConst {
					h[i] = rng.Float64()
				}
			}
			if tc.at >= 0 {
				g[tc.at], h[tc.at] = tc.g, tc.h
			}
			if tc.name == "zero hessian" {
				h[10] = 0
			}
			wantBad, wantConst := -1, true
			var wantG, wantH float64
			for i := range g {
				if math.IsNaN(g[i]) || math.IsInf(g[i], 0) || math.IsNaN(h[i]) || math.IsInf(h[i], 0) || h[i] < 0 {
					wantBad = i
					break
				}
				wantConst = wantConst && h[i] == h[0]
				wantG += g[i]
				wantH += h[i]
			}
			bad, constHess, sg, sh := checkSumGradients(g, h)
			if bad != wantBad {
				t.Fatalf("bad row %d, want %d", bad, wantBad)
			}
			if cb, _ := checkGradients(g, h, h[0]); cb != wantBad {
				t.Errorf("checkGradients: bad row %d, want %d", cb, wantBad)
			}
			if bad >= 0 {
				return
			}
			// Same additions in the same order: the sums are equal to the last bit.
			if constHess != wantConst || sg != wantG || sh != wantH {
				t.Errorf("got const %v, sums %v %v; want %v, %v %v", constHess, sg, sh, wantConst, wantG, wantH)
			}
		})
	}
}
