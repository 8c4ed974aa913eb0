package gbm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// atOnly is a mat.Matrix that does not lend its rows, to test the copying path.
type atOnly struct{ d *mat.Dense }

func (a atOnly) Dims() (int, int)    { return a.d.Dims() }
func (a atOnly) At(i, j int) float64 { return a.d.At(i, j) }
func (a atOnly) T() mat.Matrix       { return mat.Transpose{Matrix: a} }

// testModel fits a small regression model with NaN in the data.
func testModel(t testing.TB, n int) (*Model, *mat.Dense) {
	x, y := friedman(n, 1, 21)
	for i := 0; i < n; i += 9 {
		x.Set(i, 1, math.NaN())
	}
	m, err := Fit(x, y, nil, Config{NumIterations: 30, NumLeaves: 15})
	if err != nil {
		t.Fatal(err)
	}
	return m, x
}

func TestPredictPaths(t *testing.T) {
	t.Parallel()
	m, x := testModel(t, 1000)
	want := make([]float64, 1000)
	for i := range want {
		row := x.RawRowView(i)
		for _, tr := range m.trees {
			want[i] += tr.Predict(row)
		}
	}
	for _, tc := range []struct {
		name string
		x    mat.Matrix
		rows int
	}{
		{"dense parallel", x, 1000},
		{"generic parallel", atOnly{x}, 1000},
		{"dense serial", x.Slice(0, 5, 0, 6), 5},
		{"generic serial", atOnly{mat.DenseCopyOf(x.Slice(0, 5, 0, 6))}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := m.PredictRaw(nil, tc.x)
			if !slices.Equal(got, want[:tc.rows]) {
				t.Errorf("PredictRaw differs from summing Tree.Predict")
			}
			leaves := m.PredictLeaf(nil, tc.x)
			for i := range tc.rows {
				row := x.RawRowView(i)
				for j, tr := range m.trees {
					if l := leaves[i*m.NTrees()+j]; tr.leafValues[l] != tr.Predict(row) || l != int(tr.leaf(row)) {
						t.Fatalf("PredictLeaf row %d tree %d = %d, want %d", i, j, l, tr.leaf(row))
					}
				}
			}
		})
	}
}

func TestPredictPanics(t *testing.T) {
	t.Parallel()
	m, x := testModel(t, 100)
	for _, tc := range []struct {
		name string
		fn   func()
		want string
	}{
		{"short dst", func() { m.Predict(make([]float64, 99), x) }, errDstLength},
		{"long dst", func() { m.PredictRaw(make([]float64, 101), x) }, errDstLength},
		{"leaf dst", func() { m.PredictLeaf(make([]int, 100), x) }, errDstLength},
		{"narrow x", func() { m.Predict(nil, x.Slice(0, 10, 0, 5)) }, errFeatureCount},
		{"narrow x leaf", func() { m.PredictLeaf(nil, x.Slice(0, 10, 0, 5)) }, errFeatureCount},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.fn()
		})
	}
}

func TestPredictSingleRowNoAlloc(t *testing.T) {
	m, x := testModel(t, 300)
	row := mat.NewDense(1, m.NFeatures(), x.RawRowView(0))
	dst := make([]float64, 1)
	if a := testing.AllocsPerRun(100, func() { m.Predict(dst, row) }); a != 0 {
		t.Errorf("Predict of one row allocates %v times, want 0", a)
	}
}

// Benchmarks. The data: benchRows × 50 standard normal features (fixed seed), a
// regression target depending on the first ten and its sign as binary label.

var (
	benchSink []float64
	// benchDataset keeps the benchmarked Dataset alive.
	benchDataset *Dataset
	benchModel   *Model
	benchOnce    sync.Once
	benchX       *mat.Dense
)

func benchData(n, nf int) (*mat.Dense, []float64, []float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, nf, nil)
	y, yb := make([]float64, n), make([]float64, n)
	for i := range n {
		r := x.RawRowView(i)
		s := 0.0
		for j := range r {
			r[j] = rng.NormFloat64()
			if j < 10 {
				s += r[j] * float64(j%3+1)
			}
		}
		s += r[0]*r[1] + math.Sin(3*r[2])
		y[i] = s + rng.NormFloat64()
		if y[i] > 0 {
			yb[i] = 1
		}
	}
	return x, y, yb
}

// predictModel returns a 500-tree, 31-leaf regression model and 10,000 rows to
// predict, built once.
func predictModel(b *testing.B) (*Model, *mat.Dense) {
	benchOnce.Do(func() {
		x, y, _ := benchData(20000, 50)
		m, err := Fit(x, y, nil, Config{NumIterations: 500, NumLeaves: 31, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		benchModel, benchX = m, mat.DenseCopyOf(x.Slice(0, 10000, 0, 50))
	})
	return benchModel, benchX
}

func benchmarkPredictBatch(b *testing.B, procs int) {
	m, x := predictModel(b)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	dst := make([]float64, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchSink = m.Predict(dst, x)
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkPredictBatch500Trees1Core predicts 10,000 rows with GOMAXPROCS=1.
func BenchmarkPredictBatch500Trees1Core(b *testing.B) { benchmarkPredictBatch(b, 1) }

// BenchmarkPredictBatch500TreesAllCores predicts 10,000 rows on every core.
func BenchmarkPredictBatch500TreesAllCores(b *testing.B) {
	benchmarkPredictBatch(b, runtime.NumCPU())
}

// BenchmarkPredictSingleRow500Trees predicts one row into a caller's dst.
func BenchmarkPredictSingleRow500Trees(b *testing.B) {
	m, x := predictModel(b)
	row := mat.NewDense(1, 50, x.RawRowView(0))
	dst := make([]float64, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchSink = m.Predict(dst, row)
	}
}

func benchmarkFit(b *testing.B, n, trees int, objective string) {
	x, y, yb := benchData(n, 50)
	if objective == ObjectiveBinary {
		y = yb
	}
	cfg := Config{Objective: objective, NumIterations: trees, NumLeaves: 31, Seed: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m, err := Fit(x, y, nil, cfg)
		if err != nil {
			b.Fatal(err)
		}
		benchModel = m
	}
}

// The configuration: 500 trees, 31 leaves, 100,000 × 50 dense rows.
func BenchmarkFitRegression100kx50x500(b *testing.B) {
	benchmarkFit(b, 100000, 500, ObjectiveRegression)
}
func BenchmarkFitBinary100kx50x500(b *testing.B) { benchmarkFit(b, 100000, 500, ObjectiveBinary) }

// A smaller configuration for quick comparisons: 100 trees on 20,000 × 50 rows.
func BenchmarkFitRegression20kx50x100(b *testing.B) { benchmarkFit(b, 20000, 100, ObjectiveRegression) }
func BenchmarkFitBinary20kx50x100(b *testing.B)     { benchmarkFit(b, 20000, 100, ObjectiveBinary) }

// BenchmarkNewDataset100kx50 is the binning part of BenchmarkFitRegression100kx50x500,
// so that training time is the difference.
func BenchmarkNewDataset100kx50(b *testing.B) {
	x, _, _ := benchData(100000, 50)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, err := NewDatasetThreads(x, 0, nil, 1)
		if err != nil {
			b.Fatal(err)
		}
		benchDataset = d
	}
}
