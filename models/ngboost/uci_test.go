package ngboost

import (
	"context"
	"flag"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
)

// uciFull switches TestUCIProtocol from its quick form (split 0, fast settings, loose
// bounds) to the NGBoost paper's protocol on splits 0..4 with the published bounds. The
// package documentation gives the command line.
var uciFull = flag.Bool("ngboost.uci-full", false, "run the full UCI protocol (splits 0..4 of kin8nm and power-plant, several minutes)")

// uciMinibatch and uciIterations change the full protocol's minibatch_frac and
// n_estimators: -ngboost.uci-minibatch=1 -ngboost.uci-iterations=2000 is the
// reference's setting of the README (which does not reach the published kin8nm NLL).
var (
	uciMinibatch  = flag.Float64("ngboost.uci-minibatch", 0.5, "minibatch_frac of the full UCI protocol")
	uciIterations = flag.Int("ngboost.uci-iterations", 20000, "n_estimators of the full UCI protocol")
)

// uciCase is one data set of the protocol with the bounds its test metrics must meet.
type uciCase struct {
	name string
	// published is the NGBoost paper's test NLL (mean, std over 20 splits), Table 1.
	published [2]float64
	// quickNLL and quickRMSE bound the test NLL and RMSE of split 0 in the quick form.
	quickNLL, quickRMSE float64
}

var uciCases = []uciCase{
	// The reference implementation with its defaults (2000 iterations) gets -0.419 ±
	// 0.015 on splits 0..4; the quick form gets -0.497 on split 0 (RMSE 0.158).
	{name: "kin8nm", published: [2]float64{-0.49, 0.02}, quickNLL: -0.45, quickRMSE: 0.17},
	// Split 0 is the hardest of the five: test row 724 (y = 438.6) lies 42 MW, 35
	// predicted σ, below the prediction and alone costs 0.64 nats per row in the quick
	// form, which gets 3.27 there (RMSE 3.65); the full protocol gets 2.56..2.84 on
	// splits 1..4.
	{name: "power-plant", published: [2]float64{2.79, 0.11}, quickNLL: 3.35, quickRMSE: 3.9},
}

// uciConfig is the configuration of the protocol runs: the reference's depth-3 trees
// and learning rate, with minibatch_frac 0.5 (stochastic boosting, a reference option)
// and as many iterations as early stopping on the validation part allows.
func uciConfig(full bool) Config {
	if full {
		return Config{NEstimators: *uciIterations, LearningRate: 0.01, MinibatchFrac: *uciMinibatch,
			EarlyStoppingRounds: 300, ValidationFraction: 0.2, Refit: true}
	}
	return Config{NEstimators: 3000, LearningRate: 0.05, MinibatchFrac: 0.5,
		EarlyStoppingRounds: 60, ValidationFraction: 0.2, Refit: true}
}

// TestUCIProtocol runs the NGBoost paper's protocol on the UCI benchmarks: for each
// split, the last 20% of the training rows (index files list them in random order)
// pick the number of iterations by early stopping, the model is refitted on all
// training rows with it, and the test NLL and RMSE are averaged over splits. The
// quick form (default) runs split 0 with learning rate 0.05; -ngboost.uci-full runs
// splits 0..4 with learning rate 0.01 and requires the published NLL within one
// standard deviation.
func TestUCIProtocol(t *testing.T) {
	t.Parallel()
	splits := []int{0}
	if *uciFull {
		splits = []int{0, 1, 2, 3, 4}
	}
	cfg := uciConfig(*uciFull)
	for _, tc := range uciCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var nlls, rmses, iters []float64
			var elapsed time.Duration
			for _, k := range splits {
				x, y, xt, yt := loadSplit(t, tc.name, k)
				start := time.Now()
				c := cfg
				c.RandomState = uint64(k)
				m, err := Fit(context.Background(), x, y, nil, c)
				if err != nil {
					t.Fatal(err)
				}
				elapsed += time.Since(start)
				nll, rmse := testNLL(m, xt, yt)
				t.Logf("%s split %d: %d iterations (best validation iteration %d), test NLL %.4f, RMSE %.4f",
					tc.name, k, m.NIterations(), m.Info().BestIteration, nll, rmse)
				nlls, rmses, iters = append(nlls, nll), append(rmses, rmse), append(iters, float64(m.NIterations()))
			}
			mean, std := stat.MeanStdDev(nlls, nil)
			if len(nlls) == 1 {
				std = 0
			}
			rmean, rstd := stat.MeanStdDev(rmses, nil)
			if len(rmses) == 1 {
				rstd = 0
			}
			t.Logf("%s, splits %v: test NLL %.3f ± %.3f, RMSE %.3f ± %.3f, %.0f iterations on average, %.1f s of fitting; published NLL %.2f ± %.2f",
				tc.name, splits, mean, std, rmean, rstd, stat.Mean(iters, nil), elapsed.Seconds(), tc.published[0], tc.published[1])
			bound := tc.quickNLL
			if *uciFull {
				bound = tc.published[0] + tc.published[1]
			} else if !(rmean <= tc.quickRMSE) {
				t.Errorf("%s: test RMSE %.4f, want at most %.4f", tc.name, rmean, tc.quickRMSE)
			}
			if !(mean <= bound) || math.IsNaN(mean) {
				t.Errorf("%s: mean test NLL %.4f, want at most %.4f", tc.name, mean, bound)
			}
		})
	}
}
