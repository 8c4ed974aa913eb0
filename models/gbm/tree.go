package gbm

import (
	"fmt"
	"math"
	"slices"
)

// Node flags. A node's flags say how a value is compared and whether a child index
// names a leaf (an index into Tree.leafValues) or another node.
const (
	flagCategorical uint8 = 1 << iota // bitset membership test instead of x <= threshold
	flagDefaultLeft                   // missing values go left
	flagMissingNaN                    // NaN is the missing value
	flagMissingZero                   // |x| <= kZeroThreshold (and NaN) is the missing value
	flagLeafLeft                      // left is a leaf index
	flagLeafRight                     // right is a leaf index
)

// LightGBM decision_type bits (include/LightGBM/tree.h): bit 0 categorical, bit 1
// default-left, bits 2-3 the missing type.
const (
	lgCategoricalMask = 1
	lgDefaultLeftMask = 2
	lgMissingNone     = 0
	lgMissingZero     = 1
	lgMissingNaN      = 2
)

// kZeroThreshold is LightGBM's kZeroThreshold, declared there as the float literal
// 1e-35f and used as a double, hence the float32 round trip.
var kZeroThreshold = float64(float32(1e-35))

// node is one internal node of a tree, 24 bytes.
type node struct {
	// threshold is the split value of a numerical node (x <= threshold goes left) and
	// the index of the node's bitset in Tree.catBoundaries for a categorical node.
	threshold float64
	feature   uint32
	left      uint32 // node index, or leaf index when flagLeafLeft is set
	right     uint32 // node index, or leaf index when flagLeafRight is set
	flags     uint8
}

// Tree is one regression tree in the flat representation shared by trained and
// imported models: internal nodes in LightGBM's node order (root first) and leaf
// values in their own slice, indexed like LightGBM's leaves. A Tree is immutable and
// safe for concurrent use.
type Tree struct {
	nodes      []node
	leafValues []float64
	// catBoundaries and catThresholds hold the categorical bitsets: the bitset of
	// categorical node n is catThresholds[catBoundaries[k]:catBoundaries[k+1]] with
	// k = n.threshold, and category c goes left when its bit is set.
	catBoundaries []uint32
	catThresholds []uint32

	// The remaining fields are statistics of the LightGBM text format. They do not
	// affect prediction and are kept so that a model written back is complete.
	splitGain      []float64
	internalValue  []float64
	internalWeight []float64
	internalCount  []int
	leafWeight     []float64
	leafCount      []int
	shrinkage      float64
	// nFeatures is the number of columns of the data the tree was grown on, 0 when
	// unknown (imported trees).
	nFeatures int
}

// NLeaves returns the number of leaves of t.
func (t *Tree) NLeaves() int { return len(t.leafValues) }

// Predict returns the value of the leaf that row falls into. row holds raw feature
// values indexed like the training columns, NaN for missing; it must be at least as
// long as the largest split feature index plus one.
func (t *Tree) Predict(row []float64) float64 {
	return t.leafValues[t.leaf(row)]
}

// LeafValue returns the value of leaf i of t, 0 <= i < NLeaves.
func (t *Tree) LeafValue(i int) float64 { return t.leafValues[i] }

// Scaled returns a copy of t with every leaf value (and the internal values kept for
// the text format) multiplied by s. It is how a learning rate is applied.
func (t *Tree) Scaled(s float64) *Tree {
	c := *t
	c.leafValues = slices.Clone(t.leafValues)
	for i := range c.leafValues {
		c.leafValues[i] *= s
	}
	c.internalValue = slices.Clone(t.internalValue)
	for i := range c.internalValue {
		c.internalValue[i] *= s
	}
	c.shrinkage = t.shrinkage * s
	return &c
}

// leaf returns the index of the leaf that row falls into. It walks the flat node
// array with a loop; newTree has checked that every path ends in a leaf.
func (t *Tree) leaf(row []float64) uint32 {
	if len(t.nodes) == 0 {
		return 0
	}
	if t.catBoundaries == nil {
		return t.numericalLeaf(row)
	}
	i := uint32(0)
	for {
		n := &t.nodes[i]
		var left bool
		if n.flags&flagCategorical != 0 {
			left = t.categoricalLeft(n, row[n.feature])
		} else {
			left = numericalLeft(n, row[n.feature])
		}
		if left {
			if n.flags&flagLeafLeft != 0 {
				return n.left
			}
			i = n.left
		} else {
			if n.flags&flagLeafRight != 0 {
				return n.right
			}
			i = n.right
		}
	}
}

// numericalLeaf is leaf for trees without categorical splits, the common case, which
// saves testing every node's categorical flag.
func (t *Tree) numericalLeaf(row []float64) uint32 {
	i := uint32(0)
	for {
		n := &t.nodes[i]
		if numericalLeft(n, row[n.feature]) {
			if n.flags&flagLeafLeft != 0 {
				return n.left
			}
			i = n.left
		} else {
			if n.flags&flagLeafRight != 0 {
				return n.right
			}
			i = n.right
		}
	}
}

// numericalLeft is LightGBM's NumericalDecision (tree.h), applied to the value LightGBM
// would see: its parsers and C API set every value with |x| <= kZeroThreshold to 0
// before walking the trees, so such a value compares as 0. NaN counts as 0 unless the
// missing type is NaN. A missing value (NaN for missing type NaN; a value within
// kZeroThreshold of 0, NaN included, for missing type Zero) follows the default
// direction. Otherwise x goes left when x <= threshold: LightGBM's comparison is
// "less or equal", and thresholds sit between bin values, so a value equal to the
// threshold goes left.
func numericalLeft(n *node, x float64) bool {
	if x != x { // NaN
		if n.flags&flagMissingNaN != 0 {
			return n.flags&flagDefaultLeft != 0
		}
		x = 0
	}
	if n.flags&flagMissingZero != 0 && x >= -kZeroThreshold && x <= kZeroThreshold {
		return n.flags&flagDefaultLeft != 0
	}
	if x >= -kZeroThreshold && x <= kZeroThreshold {
		x = 0
	}
	return x <= n.threshold
}

// zeroThreshold returns the threshold th' for which x <= th' decides like x <= th after
// LightGBM's input rule (|x| <= kZeroThreshold becomes 0), for every x. Only
// thresholds inside the zero band change: for 0 <= th < kZeroThreshold the whole band
// goes left, so th' = kZeroThreshold; for -kZeroThreshold <= th < 0 the band goes
// right, so th' is the float just below -kZeroThreshold. The compiled walks use th' so
// that they need no test of x.
func zeroThreshold(th float64) float64 {
	switch {
	case th >= 0 && th < kZeroThreshold:
		return kZeroThreshold
	case th >= -kZeroThreshold && th < 0:
		return math.Nextafter(-kZeroThreshold, math.Inf(-1))
	}
	return th
}

// categoricalLeft is LightGBM's CategoricalDecision (tree.h): NaN goes right whatever
// the missing type, the value is truncated to an int category, negative categories go
// right, and a category goes left when its bit is set in the node's bitset (bits beyond
// the bitset are unset). Values too large for a C int go right, as on x86, where the
// C++ conversion gives the negative INT_MIN.
func (t *Tree) categoricalLeft(n *node, x float64) bool {
	if !(x > -1 && x < math.MaxInt32+1) { // NaN, x <= -1 (truncates below 0), too large
		return false
	}
	c := uint32(int32(x))
	k := uint32(n.threshold)
	lo, hi := t.catBoundaries[k], t.catBoundaries[k+1]
	w := c / 32
	if w >= hi-lo {
		return false
	}
	return t.catThresholds[lo+w]>>(c%32)&1 != 0
}

// treeSpec is a tree in LightGBM's own array form (one entry per internal node, children
// as node index >= 0 or ^leaf < 0), the form of the text format and of the grower.
type treeSpec struct {
	numLeaves     int
	splitFeature  []int
	threshold     []float64
	decisionType  []int
	leftChild     []int
	rightChild    []int
	leafValue     []float64
	catBoundaries []int
	catThreshold  []uint32

	splitGain      []float64
	internalValue  []float64
	internalWeight []float64
	internalCount  []int
	leafWeight     []float64
	leafCount      []int
	shrinkage      float64
	nFeatures      int
}

// newTree checks s and converts it to the flat representation. Every check here is
// what keeps Tree.leaf from looping or indexing out of range on a corrupt file.
func newTree(s *treeSpec) (*Tree, error) {
	if s.numLeaves < 1 {
		return nil, fmt.Errorf("%w: num_leaves=%d, want at least 1", ErrFormat, s.numLeaves)
	}
	if len(s.leafValue) != s.numLeaves {
		return nil, fmt.Errorf("%w: leaf_value has %d values, want num_leaves=%d", ErrFormat, len(s.leafValue), s.numLeaves)
	}
	for i, v := range s.leafValue {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: leaf_value[%d] is %v", ErrFormat, i, v)
		}
	}
	nInternal := s.numLeaves - 1
	for _, f := range []struct {
		name string
		n    int
	}{
		{"split_feature", len(s.splitFeature)}, {"threshold", len(s.threshold)},
		{"decision_type", len(s.decisionType)}, {"left_child", len(s.leftChild)},
		{"right_child", len(s.rightChild)},
	} {
		if f.n != nInternal {
			return nil, fmt.Errorf("%w: %s has %d values, want num_leaves-1=%d", ErrFormat, f.name, f.n, nInternal)
		}
	}
	optional := func(name string, n, want int) error {
		if n != 0 && n != want {
			return fmt.Errorf("%w: %s has %d values, want %d", ErrFormat, name, n, want)
		}
		return nil
	}
	for _, e := range []error{
		optional("split_gain", len(s.splitGain), nInternal),
		optional("internal_value", len(s.internalValue), nInternal),
		optional("internal_weight", len(s.internalWeight), nInternal),
		optional("internal_count", len(s.internalCount), nInternal),
		optional("leaf_weight", len(s.leafWeight), s.numLeaves),
		optional("leaf_count", len(s.leafCount), s.numLeaves),
	} {
		if e != nil {
			return nil, e
		}
	}
	t := &Tree{
		leafValues:     slices.Clone(s.leafValue),
		splitGain:      s.splitGain,
		internalValue:  s.internalValue,
		internalWeight: s.internalWeight,
		internalCount:  s.internalCount,
		leafWeight:     s.leafWeight,
		leafCount:      s.leafCount,
		shrinkage:      s.shrinkage,
		nFeatures:      s.nFeatures,
	}
	nCat := 0
	if len(s.catBoundaries) > 0 {
		nCat = len(s.catBoundaries) - 1
		if s.catBoundaries[0] != 0 {
			return nil, fmt.Errorf("%w: cat_boundaries must start at 0", ErrFormat)
		}
		for i := 1; i < len(s.catBoundaries); i++ {
			if s.catBoundaries[i] < s.catBoundaries[i-1] {
				return nil, fmt.Errorf("%w: cat_boundaries not increasing at %d", ErrFormat, i)
			}
		}
		if s.catBoundaries[nCat] != len(s.catThreshold) {
			return nil, fmt.Errorf("%w: cat_boundaries ends at %d, cat_threshold has %d values", ErrFormat, s.catBoundaries[nCat], len(s.catThreshold))
		}
		if len(s.catThreshold) > math.MaxUint32 {
			return nil, fmt.Errorf("%w: cat_threshold too long", ErrFormat)
		}
		t.catBoundaries = make([]uint32, len(s.catBoundaries))
		for i, b := range s.catBoundaries {
			t.catBoundaries[i] = uint32(b)
		}
		t.catThresholds = slices.Clone(s.catThreshold)
	} else if len(s.catThreshold) > 0 {
		return nil, fmt.Errorf("%w: cat_threshold without cat_boundaries", ErrFormat)
	}
	if nInternal == 0 {
		return t, nil
	}
	t.nodes = make([]node, nInternal)
	for i := range t.nodes {
		n := &t.nodes[i]
		f := s.splitFeature[i]
		if f < 0 || f > math.MaxInt32 {
			return nil, fmt.Errorf("%w: node %d: split_feature %d out of range", ErrFormat, i, f)
		}
		n.feature = uint32(f)
		dt := s.decisionType[i]
		if dt < 0 || dt > 15 {
			return nil, fmt.Errorf("%w: node %d: decision_type %d out of range", ErrFormat, i, dt)
		}
		if dt&lgDefaultLeftMask != 0 {
			n.flags |= flagDefaultLeft
		}
		switch (dt >> 2) & 3 {
		case lgMissingNone:
		case lgMissingZero:
			n.flags |= flagMissingZero
		case lgMissingNaN:
			n.flags |= flagMissingNaN
		default:
			return nil, fmt.Errorf("%w: node %d: decision_type %d has missing type 3", ErrFormat, i, dt)
		}
		th := s.threshold[i]
		if math.IsNaN(th) {
			return nil, fmt.Errorf("%w: node %d: threshold is NaN", ErrFormat, i)
		}
		if dt&lgCategoricalMask != 0 {
			n.flags |= flagCategorical
			if th != math.Trunc(th) || th < 0 || th >= float64(nCat) {
				return nil, fmt.Errorf("%w: node %d: categorical threshold %v is not a cat_boundaries index below num_cat=%d", ErrFormat, i, th, nCat)
			}
		}
		n.threshold = th
		for side, c := range [2]int{s.leftChild[i], s.rightChild[i]} {
			var idx uint32
			leaf := c < 0
			if leaf {
				if ^c >= s.numLeaves {
					return nil, fmt.Errorf("%w: node %d: child leaf %d out of range", ErrFormat, i, ^c)
				}
				idx = uint32(^c)
			} else {
				if c >= nInternal {
					return nil, fmt.Errorf("%w: node %d: child node %d out of range", ErrFormat, i, c)
				}
				idx = uint32(c)
			}
			if side == 0 {
				n.left = idx
				if leaf {
					n.flags |= flagLeafLeft
				}
			} else {
				n.right = idx
				if leaf {
					n.flags |= flagLeafRight
				}
			}
		}
	}
	if err := t.checkShape(); err != nil {
		return nil, err
	}
	return t, nil
}

// checkShape verifies that the nodes form one tree rooted at node 0 in which every
// node and every leaf is reached exactly once, so that Tree.leaf terminates.
func (t *Tree) checkShape() error {
	seenNode := make([]bool, len(t.nodes))
	seenLeaf := make([]bool, len(t.leafValues))
	stack := []uint32{0}
	seenNode[0] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := t.nodes[i]
		for _, c := range [2]struct {
			idx  uint32
			leaf bool
		}{{n.left, n.flags&flagLeafLeft != 0}, {n.right, n.flags&flagLeafRight != 0}} {
			if c.leaf {
				if seenLeaf[c.idx] {
					return fmt.Errorf("%w: leaf %d reached twice", ErrFormat, c.idx)
				}
				seenLeaf[c.idx] = true
				continue
			}
			if seenNode[c.idx] {
				return fmt.Errorf("%w: node %d reached twice", ErrFormat, c.idx)
			}
			seenNode[c.idx] = true
			stack = append(stack, c.idx)
		}
	}
	for i, ok := range seenNode {
		if !ok {
			return fmt.Errorf("%w: node %d unreachable", ErrFormat, i)
		}
	}
	for i, ok := range seenLeaf {
		if !ok {
			return fmt.Errorf("%w: leaf %d unreachable", ErrFormat, i)
		}
	}
	return nil
}

// maxFeature returns the largest split feature index of t, -1 for a single leaf.
func (t *Tree) maxFeature() int {
	m := -1
	for i := range t.nodes {
		m = max(m, int(t.nodes[i].feature))
	}
	return m
}

// spec converts t back to LightGBM's array form, for the text writer.
func (t *Tree) spec() *treeSpec {
	s := &treeSpec{
		numLeaves:      len(t.leafValues),
		leafValue:      t.leafValues,
		splitGain:      t.splitGain,
		internalValue:  t.internalValue,
		internalWeight: t.internalWeight,
		internalCount:  t.internalCount,
		leafWeight:     t.leafWeight,
		leafCount:      t.leafCount,
		shrinkage:      t.shrinkage,
		catThreshold:   t.catThresholds,
	}
	for _, b := range t.catBoundaries {
		s.catBoundaries = append(s.catBoundaries, int(b))
	}
	for i := range t.nodes {
		n := &t.nodes[i]
		s.splitFeature = append(s.splitFeature, int(n.feature))
		s.threshold = append(s.threshold, n.threshold)
		dt := 0
		if n.flags&flagCategorical != 0 {
			dt |= lgCategoricalMask
		}
		if n.flags&flagDefaultLeft != 0 {
			dt |= lgDefaultLeftMask
		}
		switch {
		case n.flags&flagMissingNaN != 0:
			dt |= lgMissingNaN << 2
		case n.flags&flagMissingZero != 0:
			dt |= lgMissingZero << 2
		}
		s.decisionType = append(s.decisionType, dt)
		l, r := int(n.left), int(n.right)
		if n.flags&flagLeafLeft != 0 {
			l = ^l
		}
		if n.flags&flagLeafRight != 0 {
			r = ^r
		}
		s.leftChild = append(s.leftChild, l)
		s.rightChild = append(s.rightChild, r)
	}
	return s
}
