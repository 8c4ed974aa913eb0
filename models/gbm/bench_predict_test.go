package gbm

import (
	"fmt"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// benchRows100k holds 100,000 rows of the benchmark data, built once.
var benchRows100k = sync.OnceValue(func() *mat.Dense {
	x, _, _ := benchData(100000, 50)
	return x
})

// BenchmarkPredictRaw500x31 measures PredictRaw of the 500-tree, 31-leaf, 50-feature
// regression model for one row (into a caller's dst, the latency path; each call a
// different row of 1,000) and for batches
// of 1,000 and 100,000 rows; run it with -cpu 1,2 for one core and all cores. ns/row
// and rows/s are per row of the batch.
func BenchmarkPredictRaw500x31(b *testing.B) {
	m, _ := predictModel(b)
	all := benchRows100k()
	for _, n := range []int{1, 1000, 100000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dst := make([]float64, n)
			b.ReportAllocs()
			if n == 1 {
				// A different row each time (of 1,000), so that the branch predictor
				// cannot learn one row's paths.
				rows := make([]*mat.Dense, 1000)
				for i := range rows {
					rows[i] = all.Slice(i, i+1, 0, 50).(*mat.Dense)
				}
				i := 0
				for b.Loop() {
					m.PredictRaw(dst, rows[i])
					i = (i + 1) % len(rows)
				}
			} else {
				x := all.Slice(0, n, 0, 50).(*mat.Dense)
				for b.Loop() {
					m.PredictRaw(dst, x)
				}
			}
			rows := float64(n) * float64(b.N)
			b.ReportMetric(b.Elapsed().Seconds()*1e9/rows, "ns/row")
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			benchSink = dst
		})
	}
}
