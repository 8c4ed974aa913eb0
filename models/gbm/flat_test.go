package gbm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomTree returns a tree of at most nLeaves leaves grown by splitting random leaves
// above depth maxDepth (0 = no limit), as LightGBM numbers them, with numerical splits on features below nf, missing types
// None and NaN, both default directions, and thresholds drawn from special values
// (0, -0, ±Inf, ±1e300) as well as ordinary ones.
func randomTree(t *testing.T, rng *rand.Rand, nLeaves, nf, maxDepth int) *Tree {
	t.Helper()
	s := &treeSpec{numLeaves: nLeaves, shrinkage: 1}
	// parent[l] is the node whose child slot holds leaf l, and which slot, -1 for
	// the root leaf.
	type slot struct{ node, side int }
	parent := []slot{{-1, 0}}
	depth := []int{0}
	for l := 1; l < nLeaves; l++ {
		var open []int
		for i, d := range depth {
			if maxDepth == 0 || d < maxDepth {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			break
		}
		split := open[rng.IntN(len(open))] // the leaf to split; it keeps its index on the left
		depth[split]++
		depth = append(depth, depth[split])
		n := len(s.splitFeature)
		if p := parent[split]; p.node >= 0 {
			if p.side == 0 {
				s.leftChild[p.node] = n
			} else {
				s.rightChild[p.node] = n
			}
		}
		specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1e300, -1e300}
		th := rng.NormFloat64()
		if rng.IntN(4) == 0 {
			th = specials[rng.IntN(len(specials))]
		}
		dt := rng.IntN(2) * lgDefaultLeftMask
		if rng.IntN(2) == 0 {
			dt |= lgMissingNaN << 2
		}
		s.splitFeature = append(s.splitFeature, rng.IntN(nf))
		s.threshold = append(s.threshold, th)
		s.decisionType = append(s.decisionType, dt)
		s.leftChild = append(s.leftChild, ^split)
		s.rightChild = append(s.rightChild, ^l)
		parent[split] = slot{n, 0}
		parent = append(parent, slot{n, 1})
	}
	s.numLeaves = len(depth)
	for range s.numLeaves {
		s.leafValue = append(s.leafValue, rng.NormFloat64())
	}
	tr, err := newTree(s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// randomRows returns n rows of nf values, some of them NaN, ±Inf, 0, -0 or equal to a
// threshold of the trees.
func randomRows(rng *rand.Rand, n, nf int, trees []*Tree) *mat.Dense {
	x := mat.NewDense(n, nf, nil)
	for i := range n {
		for j := range nf {
			v := rng.NormFloat64()
			switch rng.IntN(20) {
			case 0:
				v = math.NaN()
			case 1:
				v = math.Inf(1)
			case 2:
				v = math.Inf(-1)
			case 3:
				v = 0
			case 4:
				v = math.Copysign(0, -1)
			case 5, 6, 7:
				tr := trees[rng.IntN(len(trees))]
				if len(tr.nodes) > 0 {
					v = tr.nodes[rng.IntN(len(tr.nodes))].threshold
				}
			}
			x.Set(i, j, v)
		}
	}
	return x
}

// TestFlatMatchesTreeWalk checks the compiled predictors (flat, and shallow for trees
// of depth <= 3) against the general walk of each tree (Tree.leaf, LightGBM's
// NumericalDecision) summed in model order, bit for bit, on every path: one row,
// blocks below and above the four-row lock step with tails, the parallel batch, a
// matrix that does not lend its data, PredictRawRow and AddRawRow, for one output and
// for three interleaved classes.
func TestFlatMatchesTreeWalk(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	const nf = 7
	for _, tc := range []struct{ k, maxDepth int }{{1, 0}, {3, 0}, {1, 3}, {2, 3}, {1, 2}} {
		k := tc.k
		var trees []*Tree
		// 150 trees: more than two of the shallow walk's groups of 64, with a tail.
		for i := range 150 {
			trees = append(trees, randomTree(t, rng, 1+i%17, nf, tc.maxDepth))
		}
		obj := "regression"
		if k > 1 {
			obj = fmt.Sprintf("multiclass num_class:%d", k)
		}
		m, err := NewModel(trees, nil, obj)
		if err != nil {
			t.Fatal(err)
		}
		if m.flat == nil {
			t.Fatal("model of numerical trees was not compiled")
		}
		if shallow := tc.maxDepth > 0; (m.shallow != nil) != shallow {
			t.Fatalf("max depth %d: shallow form %v, want %v", tc.maxDepth, m.shallow != nil, shallow)
		}
		x := randomRows(rng, 300, nf, trees)
		// A finite copy, for the fast path of every block.
		xf := mat.DenseCopyOf(x)
		for i := range 300 {
			for j, v := range xf.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					xf.Set(i, j, rng.NormFloat64())
				}
			}
		}
		for _, data := range []*mat.Dense{x, xf} {
			want := make([]float64, 300*k)
			for i := range 300 {
				row := data.RawRowView(i)
				for j, tr := range trees {
					want[i*k+j%k] += tr.leafValues[tr.leaf(row)]
				}
			}
			for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 130, 300} {
				sub := data.Slice(0, n, 0, nf)
				if got := m.PredictRaw(nil, sub); !slices.Equal(got, want[:n*k]) {
					t.Errorf("k=%d: PredictRaw of %d rows differs from the tree walk", k, n)
				}
				if got := m.PredictRaw(nil, atOnly{mat.DenseCopyOf(sub)}); !slices.Equal(got, want[:n*k]) {
					t.Errorf("k=%d: PredictRaw of %d rows of a generic matrix differs from the tree walk", k, n)
				}
			}
			for i := range 300 {
				row := data.RawRowView(i)
				if got := m.PredictRawRow(nil, row); !slices.Equal(got, want[i*k:(i+1)*k]) {
					t.Fatalf("k=%d: PredictRawRow of row %d = %v, want %v", k, i, got, want[i*k:(i+1)*k])
				}
				// AddRawRow adds to what dst holds, tree by tree.
				dst := make([]float64, k)
				want := make([]float64, k)
				for c := range k {
					dst[c], want[c] = float64(c)+0.1, float64(c)+0.1
				}
				for j, tr := range trees {
					want[j%k] += tr.leafValues[tr.leaf(row)]
				}
				m.AddRawRow(dst, row)
				if !slices.Equal(dst, want) {
					t.Fatalf("k=%d: AddRawRow of row %d = %v, want %v", k, i, dst, want)
				}
			}
		}
	}
}

// TestFlatNotForCategorical checks that models with categorical splits or missing type
// Zero are not compiled (the general walk predicts them).
func TestFlatNotForCategorical(t *testing.T) {
	t.Parallel()
	zero := &treeSpec{numLeaves: 2, splitFeature: []int{0}, threshold: []float64{0.5},
		decisionType: []int{lgMissingZero << 2}, leftChild: []int{^0}, rightChild: []int{^1},
		leafValue: []float64{1, 2}}
	cat := &treeSpec{numLeaves: 2, splitFeature: []int{0}, threshold: []float64{0},
		decisionType: []int{lgCategoricalMask}, leftChild: []int{^0}, rightChild: []int{^1},
		leafValue: []float64{1, 2}, catBoundaries: []int{0, 1}, catThreshold: []uint32{5}}
	for _, s := range []*treeSpec{zero, cat} {
		tr, err := newTree(s)
		if err != nil {
			t.Fatal(err)
		}
		if f := compile([]*Tree{tr}); f != nil {
			t.Errorf("decision_type %d compiled", s.decisionType[0])
		}
	}
}

// TestPredictRawRowPanics checks the misuse panics of the row methods.
func TestPredictRawRowPanics(t *testing.T) {
	t.Parallel()
	m, x := testModel(t, 50)
	row := x.RawRowView(0)
	for name, f := range map[string]func(){
		"short row":       func() { m.PredictRawRow(nil, row[:len(row)-1]) },
		"long dst":        func() { m.PredictRawRow(make([]float64, 2), row) },
		"AddRawRow dst":   func() { m.AddRawRow(nil, row) },
		"AddRawRow short": func() { m.AddRawRow(make([]float64, 1), row[:1]) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestPredictRawRowNoAlloc checks that the scorer's row path does not allocate.
func TestPredictRawRowNoAlloc(t *testing.T) {
	m, x := testModel(t, 50)
	row := x.RawRowView(3)
	dst := make([]float64, 1)
	if a := testing.AllocsPerRun(100, func() { m.PredictRawRow(dst, row) }); a != 0 {
		t.Errorf("PredictRawRow allocates %v times, want 0", a)
	}
}

// TestGrowTreeLeaves checks the leaf GrowTreeLeaves reports for each row against the
// leaf the grown tree's walk gives for the row's raw values (NaN included), for all
// rows and for a sample with repeats, and that rows outside the sample keep their
// entries.
func TestGrowTreeLeaves(t *testing.T) {
	t.Parallel()
	x, y := friedman(600, 1, 5)
	for i := 0; i < 600; i += 7 {
		x.Set(i, 2, math.NaN())
	}
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	hess := make([]float64, 600)
	for i := range hess {
		hess[i] = 1
	}
	grad := make([]float64, 600)
	for i := range grad {
		grad[i] = -y[i]
	}
	sample := []int{3, 3, 10, 11, 50, 51, 52, 200, 201, 202, 203, 300, 301, 599}
	// Depth-3 trees (NGBoost's) label the rows of their last level instead of
	// partitioning them; the 12-leaf trees do so for their last split only.
	for _, cfg := range []TreeConfig{{NumLeaves: 12, MinDataInLeaf: 1}, {NumLeaves: 8, MaxDepth: 3, MinDataInLeaf: 1}} {
		for _, rows := range [][]int{nil, sample} {
			leafOf := make([]int32, 600)
			for i := range leafOf {
				leafOf[i] = -1
			}
			tr, err := GrowTreeLeaves(d, grad, hess, rows, nil, cfg, leafOf)
			if err != nil {
				t.Fatal(err)
			}
			if tr.NLeaves() < 2 {
				t.Fatalf("tree has %d leaves", tr.NLeaves())
			}
			// Each leaf's count is the number of its rows (repeats included).
			count := make([]int, tr.NLeaves())
			if rows == nil {
				for r := range 600 {
					count[leafOf[r]]++
				}
			}
			for _, r := range rows {
				count[leafOf[r]]++
			}
			if !slices.Equal(count, tr.leafCount) {
				t.Errorf("%+v, sample %v: leaf counts %v, rows per leaf %v", cfg, rows != nil, tr.leafCount, count)
			}
			in := make([]bool, 600)
			for _, r := range rows {
				in[r] = true
			}
			for r := range 600 {
				switch {
				case rows != nil && !in[r]:
					if leafOf[r] != -1 {
						t.Errorf("row %d outside the sample: leafOf = %d, want unchanged", r, leafOf[r])
					}
				case int(leafOf[r]) != int(tr.leaf(x.RawRowView(r))):
					t.Errorf("row %d: leafOf = %d, tree walk gives leaf %d", r, leafOf[r], tr.leaf(x.RawRowView(r)))
				case tr.LeafValue(int(leafOf[r])) != tr.Predict(x.RawRowView(r)):
					t.Errorf("row %d: LeafValue differs from Predict", r)
				}
			}
		}
	}
	if _, err := GrowTreeLeaves(d, grad, hess, nil, nil, TreeConfig{}, make([]int32, 5)); err == nil {
		t.Error("leafOf of the wrong length accepted")
	}
}
