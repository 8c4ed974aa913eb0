package ngboost

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/ngboost/internal/uci"
)

// benchModels fits the power-plant split-0 model with 500 and 1,000 iterations
// (2 × 500 and 2 × 1,000 depth-3 trees) once per benchmark binary, and tiles the
// training rows to 100,000 rows to predict.
var benchModels = sync.OnceValues(func() (map[int]*Model, *mat.Dense) {
	d, err := uci.Load("testdata/uci/power-plant")
	if err != nil {
		panic(err)
	}
	tr, _, err := d.Split(0)
	if err != nil {
		panic(err)
	}
	x, y := d.Rows(tr)
	ms := map[int]*Model{}
	for _, it := range []int{500, 1000} {
		m, err := Fit(context.Background(), x, y, nil, Config{NEstimators: it, LearningRate: 0.01})
		if err != nil {
			panic(err)
		}
		if m.NIterations() != it {
			panic(fmt.Sprintf("benchmark model kept %d of %d iterations", m.NIterations(), it))
		}
		ms[it] = m
	}
	r, c := x.Dims()
	big := mat.NewDense(100000, c, nil)
	for i := range 100000 {
		copy(big.RawRowView(i), x.RawRowView(i%r))
	}
	return ms, big
})

// BenchmarkPredictTrees measures the (mean, standard deviation) prediction of the
// power-plant models with 2 × 500 and 2 × 1,000 depth-3 trees: rows=1 is PredictRow
// (the scorer's per-build path, no allocation), rows=1000 and rows=100000 are Predict
// on a batch; run it with -cpu 1,2 for one core and all cores.
func BenchmarkPredictTrees(b *testing.B) {
	ms, big := benchModels()
	for _, it := range []int{500, 1000} {
		m := ms[it]
		for _, n := range []int{1, 1000, 100000} {
			b.Run(fmt.Sprintf("trees=2x%d/rows=%d", it, n), func(b *testing.B) {
				b.ReportAllocs()
				if n == 1 {
					// A different row each time (of 1,000), so that the branch
					// predictor cannot learn one row's paths.
					var d Dist
					i := 0
					for b.Loop() {
						d = m.PredictRow(big.RawRowView(i))
						i = (i + 1) % 1000
					}
					benchSink = d
				} else {
					x := big.Slice(0, n, 0, m.NFeatures()).(*mat.Dense)
					dst := make([]float64, 2*n)
					for b.Loop() {
						m.Predict(dst, x)
					}
					benchSink = dst
				}
				rows := float64(n) * float64(b.N)
				b.ReportMetric(b.Elapsed().Seconds()*1e9/rows, "ns/row")
				b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
