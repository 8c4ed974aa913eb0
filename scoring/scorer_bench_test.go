package scoring_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/scoring"
)

// heavyBuildTimeModel fits an NGBoost Normal model with nTrees iterations (two trees
// each) of depth 3 on random build-time rows: the size of a production model, as
// opposed to the default bundle's early-stopped one.
func heavyBuildTimeModel(b *testing.B, nTrees int) *ngboost.Model {
	b.Helper()
	rnd := rand.New(rand.NewPCG(1, 1))
	const rows = 400
	x := mat.NewDense(rows, features.NBuildTime, nil)
	y := make([]float64, rows)
	for i := range rows {
		for j := range features.NBuildTime {
			x.Set(i, j, rnd.Float64()*10)
		}
		y[i] = 600 + 100*x.At(i, 3) + 50*rnd.NormFloat64()
	}
	m, err := ngboost.Fit(context.Background(), x, y, nil, ngboost.Config{NEstimators: nTrees, LearningRate: 0.01, Tol: 1e-300})
	if err != nil {
		b.Fatal(err)
	}
	if m.NIterations() != nTrees {
		b.Fatalf("fitted %d iterations, want %d", m.NIterations(), nTrees)
	}
	return m
}

var benchOut []float64

// benchmarkHeavyBuildTime times Scorer.PredictBuildTime of n builds (features and
// prediction) with a 1,000-iteration NGBoost model.
func benchmarkHeavyBuildTime(b *testing.B, n int) {
	ms := bundleModels(b)
	bt := heavyBuildTimeModel(b, 1000)
	s, err := scoring.NewScorer(ms.Success, ms.Conflict, bt, ms.DevTable)
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	changes := make([]datasets.Change, n)
	in := make([]scoring.BuildInput, n)
	for i := range in {
		changes[i] = testChange(rnd, i%20)
		in[i] = scoring.BuildInput{Change: &changes[i], Spec: features.Speculation{Height: 1, PathLinesChanged: math.NaN()}}
	}
	dst := make([]float64, 2*n)
	b.ReportAllocs()
	for b.Loop() {
		benchOut = s.PredictBuildTime(dst, in)
	}
}

func BenchmarkScorerBuildTime1000Trees1(b *testing.B)    { benchmarkHeavyBuildTime(b, 1) }
func BenchmarkScorerBuildTime1000Trees1000(b *testing.B) { benchmarkHeavyBuildTime(b, 1000) }
