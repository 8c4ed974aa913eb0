package ngboost

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// heteroRows draws n rows of bench/peers' "hetero" data set (the ngboost-1m-2t task):
// p ≥ 6 uniform features on [0, 1) and y = 10·x0 + 5·x1·x2 + 3·x3 + noise with
// standard deviation exp(x4 - x5).
func heteroRows(seed uint64, n, p int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		r := x.RawRowView(i)
		for j := range r {
			r[j] = rng.Float64()
		}
		y[i] = 10*r[0] + 5*r[1]*r[2] + 3*r[3] + math.Exp(r[4]-r[5])*rng.NormFloat64()
	}
	return x, y
}

// BenchmarkFitHetero200k fits a Normal NGBoost (depth-3 trees, learning rate 0.01, 100
// iterations) to 200,000 × 10 rows of the ngboost-1m-2t task's data: a fifth of its
// rows and of its iterations, so 25 times its fit time. Run it with -cpu 1,2; it
// reports the final training score.
func BenchmarkFitHetero200k(b *testing.B) {
	x, y := heteroRows(1, 200_000, 10)
	cfg := Config{NEstimators: 100, LearningRate: 0.01, MaxDepth: 3}
	b.ReportAllocs()
	var m *Model
	for b.Loop() {
		var err error
		if m, err = Fit(context.Background(), x, y, nil, cfg); err != nil {
			b.Fatal(err)
		}
	}
	ts := m.Info().TrainScore
	b.ReportMetric(ts[len(ts)-1], "train-nll")
	benchSink = m
}
