package ngboost

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkStepGradients times the row passes between two iterations of a Normal fit
// on 1,000,000 × 10 rows of the ngboost-1m-2t task's data, depth-3 trees (8 leaves
// each): "separate" is applyStep then gradients, two passes over the rows; "fused" is
// stepAndGradients, one pass. The step changes sign every time, so the parameters stay
// where they started. Run it with -cpu 1,2.
func BenchmarkStepGradients(b *testing.B) {
	x, y := heteroRows(1, 1_000_000, 10)
	cfg, err := Config{NEstimators: 1, LearningRate: 0.01, MaxDepth: 3}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	bo, err := newBooster(x, y, nil, nil, nil, nil, nil, nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	init, err := FitMarginalCensored(cfg.Dist, y, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	bo.train.setParams(init)
	sumW := bo.sample()
	rng := rand.New(rand.NewPCG(2, 2))
	for k := range 2 {
		for i := range bo.leafOf[k] {
			bo.leafOf[k][i] = int32(rng.IntN(8))
		}
		vals := make([]float64, 8)
		for j := range vals {
			vals[j] = rng.NormFloat64()
		}
		bo.cells.vals[k] = vals
	}
	bo.useCells = true
	for _, c := range []struct {
		name string
		pass func(step float64)
	}{
		{"separate", func(step float64) { bo.applyStep(step); bo.gradients(sumW) }},
		{"fused", func(step float64) { bo.stepAndGradients(step, sumW) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				c.pass(0.001 * float64(1-2*(i%2)))
			}
		})
	}
}
