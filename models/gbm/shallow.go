package gbm

import (
	"math"
	"sync"
)

// Shallow trees (depth at most shallowDepth, such as NGBoost's depth-3 base learners)
// on at most shallowFeatures features get a leaner walk than flatModel's: each tree is
// padded to a perfect binary tree in fixed-size arrays, children found by index
// arithmetic (node i has children 2i+1 and 2i+2), and rows are read from fixed-size
// arrays indexed by a uint8 feature, so that the compiler removes every bounds check
// and a step is a handful of instructions with no branch.
const (
	shallowDepth    = 3
	shallowNodes    = 1<<shallowDepth - 1 // internal nodes of a perfect tree
	shallowFeatures = 256
	// shallowBlock is the number of rows of a batch block.
	shallowBlock = predictBatchRows
)

// ptree is a tree padded to a perfect tree of depth shallowDepth. A leaf above the
// last level becomes a chain of nodes with threshold +Inf, which every finite value
// passes to the left, down to the last level; the leaf's value is copied to all the
// leaves below it. Index 7 of th and feat is unused.
type ptree struct {
	th   [shallowNodes + 1]float64
	feat [shallowNodes + 1]uint8
	val  [shallowNodes + 1]float64 // by leaf position on the last level, left to right
}

// shallowModel is the shallow form of a model; like flatModel it covers finite rows,
// and rows with NaN or infinite values go through the flatModel's checked walk.
type shallowModel struct {
	trees  []ptree
	blocks sync.Pool // *[shallowBlock][shallowFeatures]float64, the copy of a block
}

// compileShallow returns the shallow form of the trees of f, or nil when a tree is
// deeper than shallowDepth or the model has more than shallowFeatures features.
func compileShallow(f *flatModel, nFeatures int) *shallowModel {
	if f == nil || nFeatures > shallowFeatures {
		return nil
	}
	for _, d := range f.depth {
		if d > shallowDepth {
			return nil
		}
	}
	s := &shallowModel{trees: make([]ptree, len(f.roots))}
	s.blocks.New = func() any { return new([shallowBlock][shallowFeatures]float64) }
	for t, root := range f.roots {
		p := &s.trees[t]
		// fill sets position pos (a node below shallowNodes, else a leaf) at depth
		// depth from flat entry e.
		var fill func(pos int, e int32, depth int)
		fill = func(pos int, e int32, depth int) {
			n := f.nodes[e]
			if depth == shallowDepth {
				// Only leaves reach the last level (depth <= shallowDepth).
				p.val[pos-shallowNodes] = f.value[e]
				return
			}
			if n.child == e { // a leaf above the last level
				p.th[pos] = math.Inf(1)
				fill(2*pos+1, e, depth+1)
				fill(2*pos+2, e, depth+1)
				return
			}
			p.th[pos], p.feat[pos] = n.threshold, uint8(n.feature)
			fill(2*pos+1, n.child, depth+1)
			fill(2*pos+2, n.child+1, depth+1)
		}
		fill(0, root, 0)
	}
	return s
}

// right is 1 when x > th, else 0, for finite x: the sign bit of th - x (see step).
func right(th, x float64) uint {
	return uint(math.Float64bits(th-x) >> 63)
}

// addRow adds the value of every tree for one row of finite values to out (tree t to
// out[t%k]), in tree order.
func (s *shallowModel) addRow(out, row []float64, k int) {
	var r [shallowFeatures]float64
	copy(r[:], row)
	s.addTrees(out, &r, 0, len(s.trees), k)
}

// addTrees adds the values of trees [lo, hi) for the row r to out, tree t to
// out[t%k], in tree order. One and two outputs (NGBoost's two parameters) keep their
// sums in registers: through memory, every addition would wait for the previous
// one's store.
func (s *shallowModel) addTrees(out []float64, r *[shallowFeatures]float64, lo, hi, k int) {
	trees := s.trees[lo:hi]
	switch k {
	case 1:
		s0 := out[0]
		for t := range trees {
			s0 += trees[t].leaf(r)
		}
		out[0] = s0
	case 2:
		// a sums the trees at even offsets from lo, b those at odd ones.
		e, o := 0, 1
		if lo%2 == 1 {
			e, o = 1, 0
		}
		a, b := out[e], out[o]
		t := 0
		for ; t+2 <= len(trees); t += 2 {
			a += trees[t].leaf(r)
			b += trees[t+1].leaf(r)
		}
		if t < len(trees) {
			a += trees[t].leaf(r)
		}
		out[e], out[o] = a, b
	default:
		c := lo % k // the output of tree t, without a division per tree
		for t := range trees {
			out[c] += trees[t].leaf(r)
			if c++; c == k {
				c = 0
			}
		}
	}
}

// leaf returns the value of the leaf that the finite row r falls into.
func (p *ptree) leaf(r *[shallowFeatures]float64) float64 {
	i := right(p.th[0], r[p.feat[0]]) + 1
	i = 2*i + 1 + right(p.th[i&7], r[p.feat[i&7]])
	i = 2*i + 1 + right(p.th[i&7], r[p.feat[i&7]])
	return p.val[(i-shallowNodes)&7]
}

// shallowTreeGroup is the number of trees addBlock walks for every row of a block
// before the next trees: 64 trees of 136 bytes stay in the L1 cache. It must be even
// (see addTrees2x2).
const shallowTreeGroup = 64

// addBlock adds the value of every tree to each of the n <= shallowBlock finite rows
// at data[0], data[stride], ...: out[i*k+t%k] += value of tree t for row i, in tree
// order for each row. The rows are copied into arrays of shallowFeatures values, the
// walk's bounds-check-free form; groups of shallowTreeGroup trees are in the outer
// loop, rows in the middle one (two at a time for two outputs), so that a group stays
// in the L1 cache while the block's rows go through it.
func (s *shallowModel) addBlock(out, data []float64, stride, n, nf, k int) {
	b := s.blocks.Get().(*[shallowBlock][shallowFeatures]float64)
	defer s.blocks.Put(b)
	for i := range n {
		copy(b[i][:], data[i*stride:i*stride+nf])
	}
	for lo := 0; lo < len(s.trees); lo += shallowTreeGroup {
		hi := min(lo+shallowTreeGroup, len(s.trees))
		i := 0
		if k == 2 {
			for ; i+2 <= n; i += 2 {
				s.addTrees2x2(out[i*2:(i+2)*2], &b[i], &b[i+1], lo, hi)
			}
		}
		for ; i < n; i++ {
			s.addTrees(out[i*k:(i+1)*k], &b[i], lo, hi, k)
		}
	}
}

// addTrees2x2 is addTrees for two outputs and two rows r and q at once (out holds
// r's two sums, then q's): four independent sums give the processor more to overlap,
// which measured about 10% faster than one row at a time. lo and hi must be even, as
// they are for a model with two outputs (an even number of trees) and groups of
// shallowTreeGroup trees.
func (s *shallowModel) addTrees2x2(out []float64, r, q *[shallowFeatures]float64, lo, hi int) {
	trees := s.trees[lo:hi]
	a, b, c, d := out[0], out[1], out[2], out[3]
	for t := 0; t+2 <= len(trees); t += 2 {
		p0, p1 := &trees[t], &trees[t+1]
		a += p0.leaf(r)
		c += p0.leaf(q)
		b += p1.leaf(r)
		d += p1.leaf(q)
	}
	out[0], out[1], out[2], out[3] = a, b, c, d
}
