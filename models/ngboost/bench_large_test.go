package ngboost

import (
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
	return uniformRows(rng, n, p, func(r []float64) float64 {
		return 10*r[0] + 5*r[1]*r[2] + 3*r[3] + math.Exp(r[4]-r[5])*rng.NormFloat64()
	})
}

// BenchmarkFitHetero200k fits a Normal NGBoost (depth-3 trees, learning rate 0.01, 100
// iterations) to 200,000 × 10 rows of the ngboost-1m-2t task's data: a fifth of its
// rows and of its iterations, so about 1/25 of its fit time. Run it with -cpu 1,2; it
// reports the last iteration's training score.
func BenchmarkFitHetero200k(b *testing.B) {
	x, y := heteroRows(1, 200_000, 10)
	m := benchFit(b, x, y, Config{NEstimators: 100, LearningRate: 0.01, MaxDepth: 3})
	ts := m.Info().TrainScore
	b.ReportMetric(ts[len(ts)-1], "train-nll")
}
