package ngboost

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// TestLeafCellsMatchRows checks the line search's sums by leaf pair against the score
// and step norm computed row by row, for both families, with and without weights and a
// minibatch, below and above parallelRows (one and two halves), and that applyStep
// moves the parameters by the leaf values and keeps invVar = exp(-2·log scale).
func TestLeafCellsMatchRows(t *testing.T) {
	t.Parallel()
	// cellTol allows for the sums' different order and the expansion of the square:
	// about ten roundings on sums of positive terms.
	const cellTol = 1e-11
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{300, 5000} {
		for _, f := range allFamilies {
			for _, weighted := range []bool{false, true} {
				for _, minibatch := range []bool{false, true} {
					x, y, _, _ := synth(rng, n, f)
					var w []float64
					if weighted {
						w = make([]float64, n)
						for i := range w {
							w[i] = 2 * rng.Float64()
						}
					}
					cfg, _ := Config{Dist: f}.withDefaults()
					tr, err := newRowData("training set", x, y, w, nil, cfg, false)
					if err != nil {
						t.Fatal(err)
					}
					b := &booster{cfg: cfg, train: tr, grad0: make([]float64, n), grad1: make([]float64, n), hess: tr.w,
						resid: make([]float64, n), invVar: make([]float64, n), fast: true, threads: 2, unitW: !weighted,
						leafOf: [2][]int32{make([]int32, n), make([]int32, n)}}
					init, _ := FitMarginal(f, y, w)
					tr.setParams(init)
					for i := range n {
						tr.param[0][i] += 0.3 * rng.NormFloat64()
						tr.param[1][i] += 0.2 * rng.NormFloat64()
						b.invVar[i] = math.Exp(-2 * tr.param[1][i])
					}
					if minibatch {
						b.batch = sampleSorted(rng, nil, n, n/2)
					}
					rows := b.batch
					if rows == nil {
						rows = b.allRows()
					}
					var sumW float64
					for _, i := range rows {
						sumW += tr.w[i]
					}
					start := b.gradients(sumW)
					vals := [2][]float64{{-0.8, -0.3, 0, 0.2, 0.5, 0.9, 1.4, 2}, {-0.4, -0.1, 0.15, 0.3, 0.6}}
					for i := range n {
						b.leafOf[0][i], b.leafOf[1][i] = int32(rng.IntN(8)), int32(rng.IntN(5))
						tr.out[0][i], tr.out[1][i] = vals[0][b.leafOf[0][i]], vals[1][b.leafOf[1][i]]
					}
					b.cells.fill(b, b.batch, b.leafOf, vals)
					direct := func(step float64) float64 {
						var s float64
						for _, i := range rows {
							p := [2]float64{tr.param[0][i] - step*tr.out[0][i], tr.param[1][i] - step*tr.out[1][i]}
							s += tr.w[i] * LogScore.Score(f, p, y[i])
						}
						return s / sumW
					}
					if !scalar.EqualWithinAbsOrRel(start, direct(0), exactTol, exactTol) {
						t.Errorf("n=%d %v: score from gradients = %v, want %v", n, f, start, direct(0))
					}
					jac := tr.jacMean(b.batch, sumW)
					for _, step := range []float64{0, 0.25, 1, 4, 64} {
						if got, want := b.cells.score(step, sumW)+logSqrt2Pi+jac, direct(step); !scalar.EqualWithinAbsOrRel(got, want, cellTol, cellTol) {
							t.Errorf("n=%d %v weighted=%v minibatch=%v: cell score(%v) = %v, want %v", n, f, weighted, minibatch, step, got, want)
						}
					}
					var norm float64
					for _, i := range rows {
						norm += math.Hypot(tr.out[0][i], tr.out[1][i])
					}
					norm /= float64(len(rows))
					if got := b.cells.stepNorm(); !scalar.EqualWithinAbsOrRel(got, norm, exactTol, exactTol) {
						t.Errorf("n=%d %v: cell step norm %v, want %v", n, f, got, norm)
					}

					b.useCells = true
					const step = 0.37
					before := [2][]float64{append([]float64(nil), tr.param[0]...), append([]float64(nil), tr.param[1]...)}
					b.applyStep(step)
					for i := range n {
						for k := range 2 {
							if want := before[k][i] - step*tr.out[k][i]; tr.param[k][i] != want {
								t.Fatalf("n=%d %v minibatch=%v: row %d parameter %d = %v after the step, want %v", n, f, minibatch, i, k, tr.param[k][i], want)
							}
						}
						if want := math.Exp(-2 * tr.param[1][i]); !scalar.EqualWithinAbsOrRel(b.invVar[i], want, exactTol, exactTol) {
							t.Fatalf("n=%d %v minibatch=%v: row %d invVar = %v after the step, want %v", n, f, minibatch, i, b.invVar[i], want)
						}
					}
				}
			}
		}
	}
}
