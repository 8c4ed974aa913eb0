package ngboost_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/ngboost"
)

// Fit a LogNormal NGBoost model of build times that grow, and spread, with the
// number of changed targets, then read one build's predictive distribution.
func ExampleFit() {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 2000
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		targets := float64(rng.IntN(100))
		x.Set(i, 0, targets)
		// log(seconds) ~ N(log(300) + targets/50, (0.1 + targets/400)²)
		y[i] = math.Exp(math.Log(300) + targets/50 + (0.1+targets/400)*rng.NormFloat64())
	}
	m, err := ngboost.Fit(context.Background(), x, y, nil, ngboost.Config{
		Dist: ngboost.LogNormal, NEstimators: 300, LearningRate: 0.05, NumThreads: 1,
		FeatureNames: []string{"targets_changed"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := m.PredictRow([]float64{80}) // a build changing 80 targets
	lo, hi := d.Interval(0.8)
	fmt.Printf("median %.3g s, mean %.3g s, sd %.3g s\n", d.Quantile(0.5), d.Mean(), d.StdDev())
	// The truth at 80 targets: median 1.49e+03 s, 80% interval [1.01e+03, 2.18e+03] s.
	fmt.Printf("80%% interval [%.3g, %.3g] s\n", lo, hi)
	fmt.Printf("P(build takes longer than 20 minutes) = %.2f\n", 1-d.CDF(1200))
	// Output:
	// median 1.46e+03 s, mean 1.5e+03 s, sd 350 s
	// 80% interval [1.09e+03, 1.96e+03] s
	// P(build takes longer than 20 minutes) = 0.80
}
