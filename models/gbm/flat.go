package gbm

import "math"

// fnode is one entry of a model's compiled node array: an internal node or a leaf,
// 16 bytes. The children of an internal node are adjacent, left at child and right at
// child+1, so a step is child + (x > threshold) with no branch on the comparison. A
// leaf is absorbing: its threshold is +Inf and its child is its own index, so that
// stepping from a leaf stays there and every tree can be walked for a fixed number of
// steps, its depth.
type fnode struct {
	threshold float64
	feature   uint32
	child     int32
}

// flatModel is the compiled form of a model whose trees have only numerical splits with
// missing type None or NaN (the trees this package grows, and most LightGBM models):
// the nodes of all trees in one slice, each tree's nodes contiguous and breadth first.
type flatModel struct {
	nodes []fnode
	// value is the leaf value of each entry, 0 for internal nodes.
	value []float64
	// nanRight is 1 for the entries where NaN goes right (missing type NaN with
	// default right, or missing type None with 0 > threshold), 0 elsewhere.
	nanRight []uint8
	roots    []int32 // entry of each tree's root
	depth    []int32 // number of steps from each tree's root to its deepest leaf
}

// compile returns the flat form of trees, or nil when a tree has a categorical split
// or missing type Zero, which the general Tree.leaf walk handles.
func compile(trees []*Tree) *flatModel {
	size := 0
	for _, t := range trees {
		for i := range t.nodes {
			if t.nodes[i].flags&(flagCategorical|flagMissingZero) != 0 {
				return nil
			}
		}
		size += len(t.nodes) + len(t.leafValues)
	}
	if size > math.MaxInt32 {
		return nil
	}
	f := &flatModel{
		nodes:    make([]fnode, 0, size),
		value:    make([]float64, 0, size),
		nanRight: make([]uint8, 0, size),
		roots:    make([]int32, len(trees)),
		depth:    make([]int32, len(trees)),
	}
	type item struct {
		idx   uint32 // node or leaf index in the tree
		leaf  bool
		depth int32
	}
	var queue []item
	for ti, t := range trees {
		f.roots[ti] = int32(len(f.nodes))
		queue = append(queue[:0], item{idx: 0, leaf: len(t.nodes) == 0})
		// Entries are appended in queue order, so the entry of queue[q] is
		// roots[ti] + q and a node's children get the next two free entries.
		for q := 0; q < len(queue); q++ {
			it := queue[q]
			e := int32(len(f.nodes))
			if it.leaf {
				f.nodes = append(f.nodes, fnode{threshold: math.Inf(1), child: e})
				f.value = append(f.value, t.leafValues[it.idx])
				f.nanRight = append(f.nanRight, 0)
				f.depth[ti] = max(f.depth[ti], it.depth)
				continue
			}
			n := &t.nodes[it.idx]
			child := f.roots[ti] + int32(len(queue))
			th := zeroThreshold(n.threshold) // never 0 or -0, which step relies on
			f.nodes = append(f.nodes, fnode{threshold: th, feature: n.feature, child: child})
			f.value = append(f.value, 0)
			var nr uint8
			switch {
			case n.flags&flagMissingNaN != 0:
				if n.flags&flagDefaultLeft == 0 {
					nr = 1
				}
			case 0 > n.threshold: // missing type None: NaN counts as 0
				nr = 1
			}
			f.nanRight = append(f.nanRight, nr)
			queue = append(queue,
				item{idx: n.left, leaf: n.flags&flagLeafLeft != 0, depth: it.depth + 1},
				item{idx: n.right, leaf: n.flags&flagLeafRight != 0, depth: it.depth + 1})
		}
	}
	return f
}

// step moves from entry i of nodes one level down for the row at data[off:]: to the
// right child when x > threshold, else to the left one (x <= threshold, LightGBM's
// rule). A leaf stays where it is. The row's values must be finite (stepNaN handles
// the others). The direction is the sign bit of threshold - x, with no branch to
// mispredict: for finite x the rounded difference has the sign of the exact one, it is
// zero only when x == threshold, and compile's thresholds are never ±0, so the
// sign bit is 1 exactly when x > threshold; an infinite threshold gives an infinite
// difference of its own sign.
func step(nodes []fnode, i int32, data []float64, off int) int32 {
	n := &nodes[i]
	return n.child + int32(math.Float64bits(n.threshold-data[off+int(n.feature)])>>63)
}

// stepNaN is step for a row that may hold NaN or infinite values: NaN goes to the
// node's NaN side, other values compare with the threshold.
func (f *flatModel) stepNaN(i int32, data []float64, off int) int32 {
	n := &f.nodes[i]
	x := data[off+int(n.feature)]
	if x != x {
		return n.child + int32(f.nanRight[i])
	}
	c := n.child
	if x > n.threshold {
		c++
	}
	return c
}

// nonFinite reports whether one of the first nf values of any of the n rows at
// data[0], data[stride], ... is NaN or infinite.
func nonFinite(data []float64, stride, n, nf int) bool {
	for i := range n {
		for _, v := range data[i*stride : i*stride+nf] {
			if v-v != 0 { // NaN for NaN and ±Inf, 0 otherwise
				return true
			}
		}
	}
	return false
}

// addRow adds the values of every tree for one row to out (tree t to out[t%k]), in
// tree order. It walks four trees at a time in lock step, so that the four
// independent chains of loads overlap, and stops as soon as all four are at their
// leaves (trees of one model differ in depth; one predictable test per step costs
// less than walking every tree to the deepest one's depth).
func (f *flatModel) addRow(out, row []float64, k int) {
	if nonFinite(row, 0, 1, len(row)) {
		for t, a := range f.roots {
			for range f.depth[t] {
				a = f.stepNaN(a, row, 0)
			}
			out[t%k] += f.value[a]
		}
		return
	}
	nodes, value, roots, depth := f.nodes, f.value, f.roots, f.depth
	hi := len(roots)
	t := 0
	for ; t+4 <= hi; t += 4 {
		a, b, c, d := roots[t], roots[t+1], roots[t+2], roots[t+3]
		for s := max(depth[t], depth[t+1], depth[t+2], depth[t+3]); s > 0; s-- {
			na, nb, nc, nd := step(nodes, a, row, 0), step(nodes, b, row, 0), step(nodes, c, row, 0), step(nodes, d, row, 0)
			if (na^a)|(nb^b)|(nc^c)|(nd^d) == 0 {
				break // all four at their leaves
			}
			a, b, c, d = na, nb, nc, nd
		}
		if k == 1 {
			out[0] += value[a]
			out[0] += value[b]
			out[0] += value[c]
			out[0] += value[d]
		} else {
			out[t%k] += value[a]
			out[(t+1)%k] += value[b]
			out[(t+2)%k] += value[c]
			out[(t+3)%k] += value[d]
		}
	}
	for ; t < hi; t++ {
		a := roots[t]
		for s := depth[t]; s > 0; s-- {
			a = step(nodes, a, row, 0)
		}
		out[t%k] += value[a]
	}
}

// addBlock adds the value of every tree to each of the n rows at data[0],
// data[stride], ...: out[i*k+t%k] += value of tree t for row i, in tree order for each
// row. Trees are in the outer loop so that a tree's nodes stay in the L1 cache while
// the block's rows go through it, four rows at a time in lock step for the tree's
// depth: with no test for the end of a walk there is no branch to mispredict, which
// measured twice as fast as stopping when the four rows reach their leaves. nf is the number
// of features, checked for values that are not finite.
func (f *flatModel) addBlock(out, data []float64, stride, n, nf, k int) {
	if nonFinite(data, stride, n, nf) {
		for t, root := range f.roots {
			for i := range n {
				a := root
				for range f.depth[t] {
					a = f.stepNaN(a, data, i*stride)
				}
				out[i*k+t%k] += f.value[a]
			}
		}
		return
	}
	nodes, value := f.nodes, f.value
	for t, root := range f.roots {
		steps := f.depth[t]
		o := t % k
		i := 0
		for ; i+4 <= n; i += 4 {
			o0 := i * stride
			a, b, c, d := walk4(nodes, root, steps, data, o0, stride)
			out[i*k+o] += value[a]
			out[(i+1)*k+o] += value[b]
			out[(i+2)*k+o] += value[c]
			out[(i+3)*k+o] += value[d]
		}
		for ; i < n; i++ {
			a := root
			for s := steps; s > 0; s-- {
				a = step(nodes, a, data, i*stride)
			}
			out[i*k+o] += value[a]
		}
	}
}

// walk4 walks the four rows at data[o0], data[o0+stride], ... from root for steps
// steps in lock step and returns their entries.
func walk4(nodes []fnode, root, steps int32, data []float64, o0, stride int) (a, b, c, d int32) {
	o1 := o0 + stride
	o2 := o1 + stride
	o3 := o2 + stride
	a, b, c, d = root, root, root, root
	for s := steps; s > 0; s-- {
		a, b, c, d = step(nodes, a, data, o0), step(nodes, b, data, o1), step(nodes, c, data, o2), step(nodes, d, data, o3)
	}
	return a, b, c, d
}
