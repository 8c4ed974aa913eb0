package ngboost

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// wide draws n rows of p uniform features of which only the first two matter, with
// μ(x) = 3 sin(2π x₀) + 2 x₁ and σ(x) = 0.3 + 1.5 x₁ as in synth, Normal targets.
func wide(rng *rand.Rand, n, p int) (*mat.Dense, []float64) {
	return uniformRows(rng, n, p, func(row []float64) float64 {
		mu, sd := 3*math.Sin(2*math.Pi*row[0])+2*row[1], 0.3+1.5*row[1]
		return mu + sd*rng.NormFloat64()
	})
}

// uniformRows draws n rows of p features uniform on [0, 1), each followed by its
// target target(row).
func uniformRows(rng *rand.Rand, n, p int, target func(row []float64) float64) (*mat.Dense, []float64) {
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = rng.Float64()
		}
		y[i] = target(row)
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

// TestSplitGainsOfStump checks the gain importance against the squared-error decrease
// computed directly: one iteration of stumps on all rows, whose natural gradients at
// the marginal fit are t - loc (loc) and (z² - 1)/2 (log scale), split into the two
// groups of rows the stump's leaves predict.
func TestSplitGainsOfStump(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 1))
	x, y := wide(rng, 500, 4)
	m, err := Fit(context.Background(), x, y, nil, Config{NEstimators: 1, MaxDepth: 1, LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	init := m.InitParams()
	p := m.PredictParams(nil, x)
	gains, counts := m.SplitGains(), m.SplitCounts()
	for k := range 2 {
		// Group the rows by the stump's prediction and sum their natural gradients.
		sum, n := map[float64]float64{}, map[float64]float64{}
		var all float64
		for i, yi := range y {
			z := (yi - init[0]) / math.Exp(init[1])
			g := yi - init[0]
			if k == 1 {
				g = (z*z - 1) / 2
			}
			sum[p[2*i+k]] += g
			n[p[2*i+k]]++
			all += g
		}
		if len(sum) != 2 {
			t.Fatalf("parameter %d: the stump predicts %d distinct values, want 2", k, len(sum))
		}
		want := -all * all / float64(len(y))
		for v, s := range sum {
			want += s * s / n[v]
		}
		var got float64
		var splits int
		for j := range gains[k] {
			got += gains[k][j]
			splits += counts[k][j]
		}
		// gbm sums the same gradients in another order, and adds 1e-15 to hessians.
		const tol = 1e-9
		if splits != 1 || math.Abs(got-want) > tol*want {
			t.Errorf("parameter %d: %d splits with gain %v, want 1 with the squared-error decrease %v", k, splits, got, want)
		}
	}
}

// TestImportanceFindsTheFeature fits on data where only feature 0 matters, for the
// mean and the spread, and checks that both importances of both parameters rank it
// first, with most of the gain.
func TestImportanceFindsTheFeature(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 1))
	const n, p = 2000, 5
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = rng.Float64()
		}
		y[i] = 4*row[0] + (0.2+2*row[0])*rng.NormFloat64()
	}
	m, err := Fit(context.Background(), x, y, nil, Config{NEstimators: 200, LearningRate: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	gains, counts := m.SplitGains(), m.SplitCounts()
	// minShare is the least share of the gain feature 0 must hold, three times the
	// uniform 1/5. Once the signal is learned the trees fit noise, on any feature, so
	// noise keeps a share: 0.77 (loc) and 0.69 (log scale) go to feature 0 here.
	const minShare = 0.6
	for k := range 2 {
		var total float64
		for j := range p {
			total += gains[k][j]
			if j > 0 && (gains[k][j] >= gains[k][0] || counts[k][j] >= counts[k][0]) {
				t.Errorf("parameter %s: noise feature %d has gain %v and %d splits, feature 0 %v and %d",
					paramNames[k], j, gains[k][j], counts[k][j], gains[k][0], counts[k][0])
			}
		}
		if share := gains[k][0] / total; share < minShare {
			t.Errorf("parameter %s: feature 0 holds %.3f of the gain, want >= %v (gains %v)", paramNames[k], share, minShare, gains[k])
		}
		t.Logf("%s: gains %.4g, splits %v", paramNames[k], gains[k], counts[k])
	}
}

// goroutineMatrix is a mat.Matrix that records the goroutines reading it. It has no
// raw-data methods, so every reader goes through At.
type goroutineMatrix struct {
	x   *mat.Dense
	mu  sync.Mutex
	ids map[string]bool
}

func (g *goroutineMatrix) Dims() (int, int) { return g.x.Dims() }
func (g *goroutineMatrix) T() mat.Matrix    { return mat.Transpose{Matrix: g} }
func (g *goroutineMatrix) At(i, j int) float64 {
	var b [64]byte
	id := strings.Fields(string(b[:runtime.Stack(b[:], false)]))[1] // "goroutine N [running]:"
	g.mu.Lock()
	g.ids[id] = true
	g.mu.Unlock()
	return g.x.At(i, j)
}

// TestNumThreadsBinning checks that NumThreads bounds binning too: with one thread and
// GOMAXPROCS 4, every read of the training matrix, binning's included, is made by the
// goroutine that called Fit (before gbm.NewDatasetThreads, binning read the columns on
// GOMAXPROCS goroutines of its own).
func TestNumThreadsBinning(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	x, y := wide(rand.New(rand.NewPCG(5, 5)), 200, 6)
	g := &goroutineMatrix{x: x, ids: map[string]bool{}}
	if _, err := Fit(context.Background(), g, y, nil, Config{NEstimators: 3, NumThreads: 1}); err != nil {
		t.Fatal(err)
	}
	if len(g.ids) != 1 {
		t.Errorf("with NumThreads 1 the matrix was read by %d goroutines, want 1", len(g.ids))
	}
}
