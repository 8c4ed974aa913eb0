package ngboost

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// wide draws n rows of p uniform features of which only the first two matter, with
// μ(x) = 3 sin(2π x₀) + 2 x₁ and σ(x) = 0.3 + 1.5 x₁ as in synth, Normal targets.
func wide(rng *rand.Rand, n, p int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = rng.Float64()
		}
		mu, sd := 3*math.Sin(2*math.Pi*row[0])+2*row[1], 0.3+1.5*row[1]
		y[i] = mu + sd*rng.NormFloat64()
	}
	return x, y
}

// TestNumThreadsSameModel checks that the fitted model does not depend on NumThreads:
// the artifacts of fits on 1 and 2 threads are byte-identical. The data is large
// enough (6000 rows, a minibatch of 3600 rows, 64 features) that the row loops split
// their rows in halves and models/gbm builds its histograms on several goroutines.
func TestNumThreadsSameModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := wide(rng, 6000, 64)
	xv, yv := wide(rng, 2500, 64)
	for _, base := range []struct {
		name string
		cfg  Config
	}{
		{"nll minibatch colsample", Config{NEstimators: 25, LearningRate: 0.1, MinibatchFrac: 0.6, ColSample: 0.8, RandomState: 3}},
		{"crps lognormal", Config{NEstimators: 25, LearningRate: 0.1, Score: CRPScore}},
	} {
		t.Run(base.name, func(t *testing.T) {
			var arts [2][]byte
			for k, threads := range []int{1, 2} {
				cfg := base.cfg
				cfg.NumThreads = threads
				fy, fyv := y, yv
				if cfg.Score == CRPScore {
					cfg.Dist = LogNormal
					fy, fyv = expAll(y), expAll(yv)
				}
				m, err := FitValidate(context.Background(), x, fy, nil, xv, fyv, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := m.WriteJSON(&b); err != nil {
					t.Fatal(err)
				}
				arts[k] = b.Bytes()
			}
			if !bytes.Equal(arts[0], arts[1]) {
				t.Errorf("the artifacts fitted on 1 and 2 threads differ (%d and %d bytes)", len(arts[0]), len(arts[1]))
			}
		})
	}
}

func expAll(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = math.Exp(v / 4)
	}
	return out
}
