package ngboost

import (
	"context"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/ngboost/internal/uci"
)

// benchSink keeps benchmark results alive.
var benchSink any

// loadSplit returns the training and test rows of split k of a UCI data set in
// testdata/uci.
func loadSplit(tb testing.TB, name string, k int) (x *mat.Dense, y []float64, xt *mat.Dense, yt []float64) {
	tb.Helper()
	d, err := uci.Load("testdata/uci/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	tr, te, err := d.Split(k)
	if err != nil {
		tb.Fatal(err)
	}
	x, y = d.Rows(tr)
	xt, yt = d.Rows(te)
	return x, y, xt, yt
}

// testNLL returns the mean test negative log-likelihood and RMSE of the mean of m.
// It uses Dist directly rather than package eval, which imports this package.
func testNLL(m *Model, xt mat.Matrix, yt []float64) (nll, rmse float64) {
	p := m.PredictParams(nil, xt)
	for i, y := range yt {
		d := distOf(m.Family(), [2]float64{p[2*i], p[2*i+1]})
		nll -= d.LogPDF(y)
		e := d.Mean() - y
		rmse += e * e
	}
	n := float64(len(yt))
	return nll / n, math.Sqrt(rmse / n)
}

// BenchmarkFitPowerPlant fits the benchmark setting: power-plant split 0, 500
// iterations, learning rate 0.01, depth-3 trees, no early stopping. It reports the test
// NLL and RMSE.
func BenchmarkFitPowerPlant(b *testing.B) {
	x, y, xt, yt := loadSplit(b, "power-plant", 0)
	m := benchFit(b, x, y, Config{NEstimators: 500, LearningRate: 0.01, MaxDepth: 3})
	nll, rmse := testNLL(m, xt, yt)
	b.ReportMetric(nll, "test-nll")
	b.ReportMetric(rmse, "test-rmse")
}

// benchFit runs Fit of x, y with cfg in the benchmark loop and returns the last model.
func benchFit(b *testing.B, x mat.Matrix, y []float64, cfg Config) *Model {
	b.ReportAllocs()
	var m *Model
	for b.Loop() {
		var err error
		if m, err = Fit(context.Background(), x, y, nil, cfg); err != nil {
			b.Fatal(err)
		}
	}
	benchSink = m
	return m
}

// benchModel fits the benchmark model once per benchmark binary.
var benchModel = sync.OnceValues(func() (*Model, error) {
	d, err := uci.Load("testdata/uci/power-plant")
	if err != nil {
		return nil, err
	}
	tr, _, err := d.Split(0)
	if err != nil {
		return nil, err
	}
	x, y := d.Rows(tr)
	return Fit(context.Background(), x, y, nil, Config{NEstimators: 500, LearningRate: 0.01})
})

// BenchmarkPredict measures batch prediction (mean and standard deviation of every
// row) of the 500-iteration power-plant model on the 957 test rows of split 0; the
// rows/s metric is the throughput.
func BenchmarkPredict(b *testing.B) {
	m, err := benchModel()
	if err != nil {
		b.Fatal(err)
	}
	_, _, xt, _ := loadSplit(b, "power-plant", 0)
	r, _ := xt.Dims()
	dst := make([]float64, 2*r)
	b.ReportAllocs()
	for b.Loop() {
		m.Predict(dst, xt)
	}
	b.ReportMetric(float64(r*b.N)/b.Elapsed().Seconds(), "rows/s")
	benchSink = dst
}

// BenchmarkPredictRow measures one row's predictive distribution, the scorer's
// per-request path; it must not allocate.
func BenchmarkPredictRow(b *testing.B) {
	m, err := benchModel()
	if err != nil {
		b.Fatal(err)
	}
	_, _, xt, _ := loadSplit(b, "power-plant", 0)
	row := xt.RawRowView(0)
	var d Dist
	b.ReportAllocs()
	for b.Loop() {
		d = m.PredictRow(row)
	}
	benchSink = d
}
