package gbm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// refFitTol is the tolerance between Fit and the slow reference booster: both add the
// same numbers, in different orders (histogram bins against row loops), so predictions
// agree to rounding error accumulated over the rounds.
const refFitTol = 1e-9

// refTree is a tree of the reference booster, as nested nodes.
type refTree struct {
	leaf        bool
	value       float64
	feature     int
	threshold   float64 // x <= threshold goes left
	nanLeft     bool
	left, right *refTree
}

func (t *refTree) predict(row []float64) float64 {
	for !t.leaf {
		v := row[t.feature]
		if (math.IsNaN(v) && t.nanLeft) || (!math.IsNaN(v) && v <= t.threshold) {
			t = t.left
		} else {
			t = t.right
		}
	}
	return t.value
}

// refGrow grows one tree by exact greedy leaf-wise search: at every step it recomputes,
// from the rows, the gain of every split of every leaf (each feature, each threshold at
// a distinct value, missing values left or right) and applies the best one. Like
// LightGBM, it checks min_data_in_leaf on row counts estimated from hessians: each
// distinct value's rows count as RoundInt(H_v·n/H) (n rows and hessian sum H in the
// leaf), summed on the side LightGBM scans (the right with missing values left, the
// left otherwise), the other side getting the rest of n.
func refGrow(x *mat.Dense, g, h []float64, numLeaves, minData int, minHess, lambda float64) *refTree {
	n, nf := x.Dims()
	type leafRows struct {
		node *refTree
		rows []int
	}
	sums := func(rows []int) (float64, float64) {
		var sg, sh float64
		for _, r := range rows {
			sg += g[r]
			sh += h[r]
		}
		return sg, sh
	}
	score := func(sg, sh float64) float64 { return sg * sg / (sh + lambda) }
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	root := &refTree{leaf: true}
	leaves := []leafRows{{root, all}}
	hasNaN := make([]bool, nf)
	for f := range nf {
		for i := range n {
			hasNaN[f] = hasNaN[f] || math.IsNaN(x.At(i, f))
		}
	}
	// est is LightGBM's estimated row count of the rows with hessian sum hs.
	est := func(hs, cntFactor float64) int { return int(hs*cntFactor + 0.5) }
	for len(leaves) < numLeaves {
		bestGain, bestLeaf := 0.0, -1
		var bestF int
		var bestTh float64
		var bestNaN bool
		for li, l := range leaves {
			G, H := sums(l.rows)
			for f := range nf {
				var vals []float64
				for _, r := range l.rows {
					if v := x.At(r, f); !math.IsNaN(v) {
						vals = append(vals, v)
					}
				}
				slices.Sort(vals)
				vals = slices.Compact(vals)
				cntFactor := float64(len(l.rows)) / H
				// hv[k] is the hessian sum of the rows at vals[k]; hn that of NaN rows.
				hv := make([]float64, len(vals))
				hn := 0.0
				for _, r := range l.rows {
					if v := x.At(r, f); math.IsNaN(v) {
						hn += h[r]
					} else {
						k, _ := slices.BinarySearch(vals, v)
						hv[k] += h[r]
					}
				}
				for k, th := range vals {
					for _, nanLeft := range []bool{false, true} {
						if !nanLeft && !hasNaN[f] {
							continue // LightGBM scans such a feature from the right only
						}
						var left []int
						for _, r := range l.rows {
							v := x.At(r, f)
							if (math.IsNaN(v) && nanLeft) || (!math.IsNaN(v) && v <= th) {
								left = append(left, r)
							}
						}
						lg, lh := sums(left)
						var lc int
						if nanLeft {
							rc := 0
							for j := k + 1; j < len(vals); j++ {
								rc += est(hv[j], cntFactor)
							}
							lc = len(l.rows) - rc
						} else {
							for j := 0; j <= k; j++ {
								lc += est(hv[j], cntFactor)
							}
						}
						if lc < minData || len(l.rows)-lc < minData || lh < minHess || H-lh < minHess {
							continue
						}
						gain := score(lg, lh) + score(G-lg, H-lh) - score(G, H)
						if gain > bestGain {
							bestGain, bestLeaf, bestF, bestTh, bestNaN = gain, li, f, th, nanLeft
						}
					}
				}
			}
		}
		if bestLeaf < 0 {
			break
		}
		l := leaves[bestLeaf]
		var lr, rr []int
		for _, r := range l.rows {
			v := x.At(r, bestF)
			if (math.IsNaN(v) && bestNaN) || (!math.IsNaN(v) && v <= bestTh) {
				lr = append(lr, r)
			} else {
				rr = append(rr, r)
			}
		}
		nd := l.node
		*nd = refTree{feature: bestF, threshold: bestTh, nanLeft: bestNaN, left: &refTree{leaf: true}, right: &refTree{leaf: true}}
		leaves[bestLeaf] = leafRows{nd.left, lr}
		leaves = append(leaves, leafRows{nd.right, rr})
	}
	for _, l := range leaves {
		sg, sh := sums(l.rows)
		l.node.value = -sg / (sh + lambda)
	}
	return root
}

// refBoost is a slow, straightforward gradient booster for the regression and binary
// objectives: initial score from the (weighted) mean, then rounds of refGrow on the
// gradients at the current scores. It returns the training-row raw scores.
func refBoost(x *mat.Dense, y, w []float64, objective string, rounds, numLeaves, minData int, lr, lambda float64) []float64 {
	n, _ := x.Dims()
	// LightGBM keeps labels and weights as float32.
	y32, w32 := make([]float64, n), make([]float64, n)
	for i := range y {
		y32[i], w32[i] = float64(float32(y[i])), float64(float32(w[i]))
	}
	y, w = y32, w32
	var sy, sw float64
	for i := range y {
		sy += w[i] * y[i]
		sw += w[i]
	}
	init := sy / sw
	if objective == ObjectiveBinary {
		init = math.Log(init / (1 - init))
	}
	score := make([]float64, n)
	for i := range score {
		score[i] = init
	}
	g, h := make([]float64, n), make([]float64, n)
	for range rounds {
		for i := range score {
			// Gradients and hessians rounded to float32, as LightGBM stores them.
			if objective == ObjectiveBinary {
				p := 1 / (1 + math.Exp(-score[i]))
				g[i], h[i] = float64(float32(w[i]*(p-y[i]))), float64(float32(w[i]*p*(1-p)))
			} else {
				g[i], h[i] = float64(float32(score[i]-y[i])*float32(w[i])), w[i]
			}
		}
		t := refGrow(x, g, h, numLeaves, minData, DefaultMinSumHessianInLeaf, lambda)
		for i := range score {
			score[i] += lr * t.predict(x.RawRowView(i))
		}
	}
	return score
}

// smallProblem returns 80 rows of 3 features with a few distinct values each (some
// NaN), a continuous regression target, binary labels and random weights.
func smallProblem(seed uint64) (x *mat.Dense, yReg, yBin, w []float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	const n = 80
	x = mat.NewDense(n, 3, nil)
	yReg, yBin, w = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a, b, c := float64(rng.IntN(9)), float64(rng.IntN(6))-2, rng.Float64()
		if rng.Float64() < 0.2 {
			b = math.NaN()
		}
		x.SetRow(i, []float64{a, b, math.Round(c*20) / 20})
		f := 0.5*a - c*3
		if math.IsNaN(b) || b > 0 {
			f += 2
		}
		yReg[i] = f + rng.NormFloat64()
		if rng.Float64() < 1/(1+math.Exp(-(f-1))) {
			yBin[i] = 1
		}
		w[i] = 0.5 + rng.Float64()
	}
	return x, yReg, yBin, w
}

func TestFitMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		objective string
		weighted  bool
		lambda    float64
	}{
		{"regression", ObjectiveRegression, false, 0},
		{"regression weighted lambda", ObjectiveRegression, true, 2},
		{"binary", ObjectiveBinary, false, 0},
		{"binary weighted lambda", ObjectiveBinary, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x, yReg, yBin, w := smallProblem(5)
			y := yReg
			if tc.objective == ObjectiveBinary {
				y = yBin
			}
			var weights []float64
			if tc.weighted {
				weights = w
			} else {
				w = make([]float64, len(y))
				for i := range w {
					w[i] = 1
				}
			}
			const rounds, leaves, minData, lr = 8, 5, 4, 0.3
			m, err := Fit(x, y, weights, Config{
				Objective: tc.objective, NumIterations: rounds, NumLeaves: leaves,
				MinDataInLeaf: minData, LearningRate: lr, LambdaL2: tc.lambda, NumThreads: 2,
			})
			if err != nil {
				t.Fatal(err)
			}
			want := refBoost(x, y, w, tc.objective, rounds, leaves, minData, lr, tc.lambda)
			got := m.PredictRaw(nil, x)
			for i := range want {
				if !scalar.EqualWithinAbsOrRel(got[i], want[i], refFitTol, refFitTol) {
					t.Fatalf("PredictRaw row %d = %v, reference %v", i, got[i], want[i])
				}
			}
			if tc.objective == ObjectiveBinary {
				p := m.Predict(nil, x)
				for i := range p {
					if want := 1 / (1 + math.Exp(-got[i])); !scalar.EqualWithinAbsOrRel(p[i], want, exactTol, exactTol) {
						t.Fatalf("Predict row %d = %v, want sigmoid(raw) = %v", i, p[i], want)
					}
				}
			}
		})
	}
}

// friedman returns n rows of 6 uniform features (the last unused) and Friedman's #1
// function 10 sin(π x0 x1) + 20 (x2 - ½)² + 10 x3 + 5 x4 plus N(0, noise²).
func friedman(n int, noise float64, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 6, nil)
	y := make([]float64, n)
	for i := range n {
		r := x.RawRowView(i)
		for j := range r {
			r[j] = rng.Float64()
		}
		y[i] = 10*math.Sin(math.Pi*r[0]*r[1]) + 20*(r[2]-0.5)*(r[2]-0.5) + 10*r[3] + 5*r[4] + noise*rng.NormFloat64()
	}
	return x, y
}

func mse(m *Model, x mat.Matrix, y []float64) float64 {
	p := m.Predict(nil, x)
	s := 0.0
	for i := range p {
		s += (p[i] - y[i]) * (p[i] - y[i])
	}
	return s / float64(len(p))
}

// prefix returns the model made of the first k iterations of m.
func prefix(t *testing.T, m *Model, k int) *Model {
	t.Helper()
	p, err := NewModel(m.trees[:k*m.nClasses], m.featureNames, m.obj.text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFitErrorFalls(t *testing.T) {
	t.Parallel()
	x, y := friedman(2000, 0.5, 1)
	xt, yt := friedman(1000, 0, 2)
	m, err := Fit(x, y, nil, Config{NumIterations: 200, LearningRate: 0.1, NumLeaves: 15, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	prevTrain, prevTest := math.Inf(1), math.Inf(1)
	for _, k := range []int{1, 5, 20, 50, 200} {
		pm := prefix(t, m, k)
		train, test := mse(pm, x, y), mse(pm, xt, yt)
		if !(train < prevTrain && test < prevTest) {
			t.Errorf("%d trees: train MSE %v, test MSE %v; want below %v, %v", k, train, test, prevTrain, prevTest)
		}
		prevTrain, prevTest = train, test
	}
	// The function's variance is about 24; 200 trees should explain most of it.
	if prevTest > 2 {
		t.Errorf("test MSE with 200 trees = %v, want < 2", prevTest)
	}
}

func TestFitNaNRouting(t *testing.T) {
	t.Parallel()
	// y depends on whether x0 is missing: missing rows have y = 5, others y = x0.
	rng := rand.New(rand.NewPCG(4, 4))
	const n = 600
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		v := rng.Float64()
		x.Set(i, 1, rng.Float64())
		y[i] = v
		if i%4 == 0 {
			v = math.NaN()
			y[i] = 5
		}
		x.Set(i, 0, v)
	}
	m, err := Fit(x, y, nil, Config{NumIterations: 100, LearningRate: 0.2, MinDataInLeaf: 5})
	if err != nil {
		t.Fatal(err)
	}
	got := m.Predict(nil, mat.NewDense(3, 2, []float64{math.NaN(), 0.5, 0.2, 0.5, 0.9, 0.5}))
	for i, want := range []float64{5, 0.2, 0.9} {
		if math.Abs(got[i]-want) > 0.1 {
			t.Errorf("Predict row %d = %v, want %v ± 0.1", i, got[i], want)
		}
	}
}

func TestFitDeterministic(t *testing.T) {
	t.Parallel()
	x, y := friedman(1500, 1, 5)
	cfg := Config{NumIterations: 30, FeatureFraction: 0.5, BaggingFraction: 0.7, BaggingFreq: 2, Seed: 42, NumLeaves: 10}
	fit := func(c Config) []float64 {
		m, err := Fit(x, y, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		return m.PredictRaw(nil, x)
	}
	a := fit(cfg)
	cfg.NumThreads = 1
	b := fit(cfg)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different models (GOMAXPROCS and 1 thread)")
	}
	// A matrix that does not lend its rows goes through the copying paths.
	m, err := Fit(atOnly{x}, y, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.PredictRaw(nil, x); !slices.Equal(a, c) {
		t.Error("Fit on a generic mat.Matrix differs from Fit on *mat.Dense")
	}
	cfg.Seed = 43
	if c := fit(cfg); slices.Equal(a, c) {
		t.Error("seeds 42 and 43 gave the same model despite sampling")
	}
}

func TestFitEarlyStopping(t *testing.T) {
	t.Parallel()
	x, y := friedman(400, 3, 6)
	vx, vy := friedman(400, 3, 7)
	cfg := Config{NumIterations: 300, LearningRate: 0.3, NumLeaves: 31, MinDataInLeaf: 2, Seed: 1}
	full, err := Fit(x, y, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.EarlyStoppingRound = 10
	es, err := FitContext(context.Background(), x, y, nil, cfg, &Validation{X: vx, Y: vy})
	if err != nil {
		t.Fatal(err)
	}
	if es.NTrees() >= full.NTrees() {
		t.Fatalf("early stopping kept %d of %d trees", es.NTrees(), full.NTrees())
	}
	// The kept model is the prefix of the full fit with the least validation loss
	// among the prefixes up to ten rounds past it.
	best := math.Inf(1)
	bestK := 0
	for k := 1; k <= es.NTrees()+10; k++ {
		if l := mse(prefix(t, full, k), vx, vy); l < best {
			best, bestK = l, k
		}
	}
	if es.NTrees() != bestK {
		t.Errorf("early stopping kept %d trees, best prefix has %d", es.NTrees(), bestK)
	}
	if got := mse(es, vx, vy); !scalar.EqualWithinAbsOrRel(got, best, exactTol, exactTol) {
		t.Errorf("validation MSE = %v, want %v", got, best)
	}
}

func TestFitCustomGradient(t *testing.T) {
	t.Parallel()
	x, y := friedman(500, 1, 8)
	// The regression objective starts from the mean of the labels, rounded to
	// float32 as LightGBM keeps them, and rounds gradients to float32; this custom L2
	// does the same from a zero start, so both fit the same trees and the custom
	// model's predictions plus init are the regression model's.
	init := 0.0
	for _, v := range y {
		init += float64(float32(v))
	}
	init /= float64(len(y))
	l2 := func(grad, hess, score, y, w []float64) {
		for i := range score {
			grad[i], hess[i] = float64(float32(score[i]+init-float64(float32(y[i])))), w[i]
		}
	}
	custom, err := Fit(x, y, nil, Config{Gradient: l2, NumIterations: 20})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Fit(x, y, nil, Config{NumIterations: 20})
	if err != nil {
		t.Fatal(err)
	}
	if custom.Objective() != "" {
		t.Errorf("custom objective model has objective %q, want \"\"", custom.Objective())
	}
	a, b := custom.Predict(nil, x), reg.Predict(nil, x)
	for i := range a {
		if !scalar.EqualWithinAbsOrRel(a[i]+init, b[i], refFitTol, refFitTol) {
			t.Fatalf("row %d: custom L2 %v, regression %v", i, a[i], b[i])
		}
	}
}

func TestFitErrors(t *testing.T) {
	t.Parallel()
	x, y := friedman(50, 1, 9)
	yb := make([]float64, 50)
	yb[3] = 2
	nanY := slices.Clone(y)
	nanY[0] = math.NaN()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		y, w    []float64
		cfg     Config
		valid   *Validation
		wantErr error
	}{
		{"short y", nil, y[:10], nil, Config{}, nil, ErrBadData},
		{"NaN target", nil, nanY, nil, Config{}, nil, ErrBadData},
		{"binary label 2", nil, yb, nil, Config{Objective: ObjectiveBinary}, nil, ErrBadData},
		{"negative weight", nil, y, append(make([]float64, 49), -1), Config{}, nil, ErrBadData},
		{"zero weights", nil, y, make([]float64, 50), Config{}, nil, ErrBadData},
		{"unknown objective", nil, y, nil, Config{Objective: "tweedie"}, nil, ErrBadConfig},
		{"objective and gradient", nil, y, nil, Config{Objective: "binary", Gradient: func(_, _, _, _, _ []float64) {}}, nil, ErrBadConfig},
		{"learning rate", nil, y, nil, Config{LearningRate: -1}, nil, ErrBadConfig},
		{"feature fraction", nil, y, nil, Config{FeatureFraction: 1.5}, nil, ErrBadConfig},
		{"bagging fraction", nil, y, nil, Config{BaggingFraction: -0.5}, nil, ErrBadConfig},
		{"max bin", nil, y, nil, Config{MaxBin: 300}, nil, ErrBadConfig},
		{"num leaves", nil, y, nil, Config{NumLeaves: 1}, nil, ErrBadConfig},
		{"early stopping without validation", nil, y, nil, Config{EarlyStoppingRound: 5}, nil, ErrBadConfig},
		{"validation width", nil, y, nil, Config{EarlyStoppingRound: 2}, &Validation{X: mat.NewDense(2, 3, nil), Y: []float64{1, 2}}, ErrBadData},
		{"early stopping custom without loss", nil, y, nil, Config{EarlyStoppingRound: 2, Gradient: func(_, _, _, _, _ []float64) {}}, &Validation{X: x, Y: y}, ErrBadConfig},
		{"feature names", nil, y, nil, Config{FeatureNames: []string{"a"}}, nil, ErrBadConfig},
		{"feature name with space", nil, y, nil, Config{FeatureNames: []string{"a", "b c", "d", "e", "f", "g"}}, nil, ErrBadConfig},
		{"cancelled", cancelled, y, nil, Config{}, nil, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			_, err := FitContext(ctx, x, tc.y, tc.w, tc.cfg, tc.valid)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("FitContext() error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestParseParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		params  map[string]string
		want    Config
		wantErr error
	}{
		{"empty", nil, Config{}, nil},
		{"names", map[string]string{
			"objective": "binary", "num_iterations": "50", "learning_rate": "0.05", "num_leaves": "15",
			"max_depth": "6", "min_data_in_leaf": "10", "min_sum_hessian_in_leaf": "0.1", "lambda_l2": "2",
			"max_bin": "63", "feature_fraction": "0.8", "bagging_fraction": "0.7", "bagging_freq": "1",
			"num_threads": "2", "seed": "7", "early_stopping_round": "5",
		}, Config{
			Objective: ObjectiveBinary, NumIterations: 50, LearningRate: 0.05, NumLeaves: 15, MaxDepth: 6,
			MinDataInLeaf: 10, MinSumHessianInLeaf: 0.1, LambdaL2: 2, MaxBin: 63, FeatureFraction: 0.8,
			BaggingFraction: 0.7, BaggingFreq: 1, NumThreads: 2, Seed: 7, EarlyStoppingRound: 5,
		}, nil},
		{"aliases", map[string]string{
			"application": "mse", "n_estimators": "20", "eta": "0.3", "max_leaves": "7",
			"min_child_samples": "3", "min_child_weight": "0.5", "reg_lambda": "1", "max_bins": "15",
			"colsample_bytree": "0.5", "subsample": "0.9", "subsample_freq": "3", "n_jobs": "1",
			"random_state": "9", "early_stopping_rounds": "4",
		}, Config{
			Objective: ObjectiveRegression, NumIterations: 20, LearningRate: 0.3, NumLeaves: 7,
			MinDataInLeaf: 3, MinSumHessianInLeaf: 0.5, LambdaL2: 1, MaxBin: 15, FeatureFraction: 0.5,
			BaggingFraction: 0.9, BaggingFreq: 3, NumThreads: 1, Seed: 9, EarlyStoppingRound: 4,
		}, nil},
		{"no depth limit", map[string]string{"max_depth": "-1"}, Config{}, nil},
		{"zero minimums", map[string]string{"min_data_in_leaf": "0", "min_sum_hessian_in_leaf": "0"}, Config{MinDataInLeaf: 1, MinSumHessianInLeaf: -1}, nil},
		{"unknown key", map[string]string{"boosting": "dart"}, Config{}, ErrBadConfig},
		{"alias twice", map[string]string{"eta": "0.1", "learning_rate": "0.2"}, Config{}, ErrBadConfig},
		{"bad number", map[string]string{"num_leaves": "many"}, Config{}, ErrBadConfig},
		{"fraction above 1", map[string]string{"subsample": "1.5"}, Config{}, ErrBadConfig},
		{"zero learning rate", map[string]string{"eta": "0"}, Config{}, ErrBadConfig},
		{"max_bin 256", map[string]string{"max_bin": "256"}, Config{}, ErrBadConfig},
		{"unsupported objective", map[string]string{"objective": "tweedie"}, Config{}, ErrBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseParams(tc.params)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("ParseParams() error = %v, want %v", err, tc.wantErr)
			}
			if err == nil && !configEqual(got, tc.want) {
				t.Errorf("ParseParams() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// configEqual compares the comparable fields of two Configs (not the functions).
func configEqual(a, b Config) bool {
	a.Gradient, a.Loss, b.Gradient, b.Loss = nil, nil, nil, nil
	return a.Objective == b.Objective && a.NumIterations == b.NumIterations &&
		a.LearningRate == b.LearningRate && a.NumLeaves == b.NumLeaves && a.MaxDepth == b.MaxDepth &&
		a.MinDataInLeaf == b.MinDataInLeaf && a.MinSumHessianInLeaf == b.MinSumHessianInLeaf &&
		a.LambdaL2 == b.LambdaL2 && a.MaxBin == b.MaxBin && a.FeatureFraction == b.FeatureFraction &&
		a.BaggingFraction == b.BaggingFraction && a.BaggingFreq == b.BaggingFreq &&
		a.NumThreads == b.NumThreads && a.Seed == b.Seed && a.EarlyStoppingRound == b.EarlyStoppingRound &&
		slices.Equal(a.FeatureNames, b.FeatureNames)
}

func TestFitBaggingStillLearns(t *testing.T) {
	t.Parallel()
	// Out-of-bag rows get their scores by prediction rather than from the partition; if
	// that went wrong, their gradients would be stale and the fit would degrade.
	x, y := friedman(2000, 0.5, 13)
	xt, yt := friedman(1000, 0, 14)
	base := Config{NumIterations: 150, NumLeaves: 15, Seed: 3}
	bagged := base
	bagged.BaggingFraction, bagged.BaggingFreq, bagged.FeatureFraction = 0.5, 1, 0.8
	var errs [2]float64
	for i, cfg := range []Config{base, bagged} {
		m, err := Fit(x, y, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		errs[i] = mse(m, xt, yt)
	}
	if errs[1] > 1.5*errs[0] {
		t.Errorf("test MSE with bagging %v, without %v; want within 1.5×", errs[1], errs[0])
	}
}

func TestNewModelErrors(t *testing.T) {
	t.Parallel()
	x, g, h := randomProblem(100, 17)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := GrowTree(d, g, h, nil, nil, TreeConfig{NumLeaves: 4, MinDataInLeaf: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		trees     []*Tree
		names     []string
		objective string
		wantErr   error
	}{
		{"ok", []*Tree{tree}, []string{"a", "b", "c", "d"}, "binary", nil},
		{"default names", []*Tree{tree}, nil, "regression", nil},
		{"multiclass", []*Tree{tree, tree, tree}, nil, "multiclass num_class:3", nil},
		{"multiclass tree count", []*Tree{tree, tree}, nil, "multiclass num_class:3", ErrFormat},
		{"too few names", []*Tree{tree}, []string{"a", "b"}, "regression", ErrFormat},
		{"name with space", []*Tree{tree}, []string{"a", "b c", "d", "e"}, "regression", ErrBadConfig},
		{"empty name", []*Tree{tree}, []string{"a", "", "d", "e"}, "regression", ErrBadConfig},
		{"unsupported objective", []*Tree{tree}, nil, "lambdarank", ErrUnsupportedObjective},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewModel(tc.trees, tc.names, tc.objective)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("NewModel() error = %v, want %v", err, tc.wantErr)
			}
			if err == nil && m.NFeatures() != 4 {
				t.Errorf("NFeatures() = %d, want 4", m.NFeatures())
			}
		})
	}
}

func TestGrowTreeConcurrent(t *testing.T) {
	t.Parallel()
	// ngboost grows several trees on one Dataset at once; each call has its own buffers.
	x, g, h := randomProblem(2000, 19)
	d, err := NewDataset(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := TreeConfig{NumLeaves: 12, MinDataInLeaf: 5}
	want, err := GrowTree(d, g, h, nil, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantPred := make([]float64, 2000)
	for i := range wantPred {
		wantPred[i] = want.Predict(x.RawRowView(i))
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				tr, err := GrowTree(d, g, h, nil, nil, cfg)
				if err != nil {
					errs[w] = err
					return
				}
				for i := range wantPred {
					if tr.Predict(x.RawRowView(i)) != wantPred[i] {
						errs[w] = errors.New("concurrent GrowTree grew a different tree")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestFitStopsWhenHessiansVanish: with learning rate 60 the first tree moves the raw
// scores of this separable data to ±120 (leaf outputs ∓2 at p = ½), where the float32
// hessians p(1-p) round to 0. No split is possible then, and Fit stops, as LightGBM
// does, with the one tree instead of failing.
func TestFitStopsWhenHessiansVanish(t *testing.T) {
	t.Parallel()
	const n = 100
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		x.Set(i, 0, float64(i))
		if i >= n/2 {
			y[i] = 1
		}
	}
	m, err := Fit(x, y, nil, Config{Objective: ObjectiveBinary, NumIterations: 50, LearningRate: 60, MinDataInLeaf: 1, NumLeaves: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.NTrees() != 1 {
		t.Errorf("NTrees() = %d, want 1", m.NTrees())
	}
	raw := m.PredictRaw(nil, x)
	for i := range n {
		want := -120.0
		if y[i] == 1 {
			want = 120
		}
		if !scalar.EqualWithinAbsOrRel(raw[i], want, 1e-9, 1e-9) {
			t.Fatalf("row %d (label %v): raw score %v, want %v", i, y[i], raw[i], want)
		}
	}
}

// TestNewDatasetThreads checks that the number of binning goroutines does not change
// the Dataset: one, three and GOMAXPROCS threads bin a matrix with NaNs and a
// categorical column identically.
func TestNewDatasetThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	const n, p = 500, 7
	x := mat.NewDense(n, p, nil)
	for i := range n {
		for j := range p {
			v := rng.NormFloat64()
			switch {
			case j == 0:
				v = float64(rng.IntN(6))
			case rng.IntN(10) == 0:
				v = math.NaN()
			}
			x.Set(i, j, v)
		}
	}
	want, err := NewDatasetThreads(x, 0, []int{0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{3, 0} {
		got, err := NewDatasetThreads(x, 0, []int{0}, threads)
		if err != nil {
			t.Fatal(err)
		}
		// fmt prints NaN (a categorical feature's bounds) as itself and maps sorted,
		// where reflect.DeepEqual would find NaN unequal to itself.
		if g, w := fmt.Sprintf("%v %+v %v", got.bins, got.feats, got.histOffset), fmt.Sprintf("%v %+v %v", want.bins, want.feats, want.histOffset); g != w {
			t.Errorf("NewDatasetThreads on %d threads differs from one thread", threads)
		}
	}
}
