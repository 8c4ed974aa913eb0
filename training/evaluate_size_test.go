package training

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/features"
)

func TestSizeBuckets(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	rows, labels := sizeBuckets([]float64{1, 1, 2, 3, nan, 4, 5, 6, 7})
	want := [][]int{{0, 1}, {2, 3}, {5, 6}, {7, 8}}
	if !slices.EqualFunc(rows, want, slices.Equal[[]int]) {
		t.Errorf("sizeBuckets rows = %v, want %v", rows, want)
	}
	if wl := []string{"1 target", "2–3 targets", "4–5 targets", "6–7 targets"}; !slices.Equal(labels, wl) {
		t.Errorf("sizeBuckets labels = %q, want %q", labels, wl)
	}
	// Equal sizes stay in one bucket.
	rows, labels = sizeBuckets([]float64{3, 3, 3, 3, 9})
	if len(rows) != 2 || len(rows[0]) != 4 || labels[0] != "3 targets" || labels[1] != "4–9 targets" {
		t.Errorf("sizeBuckets(3, 3, 3, 3, 9) = %v %q", rows, labels)
	}
	if rows, _ := sizeBuckets([]float64{nan, nan}); rows != nil {
		t.Errorf("sizeBuckets(NaN, NaN) = %v, want none", rows)
	}
}

// sizeTable returns a build-time table whose rows have the given sizes and durations and
// every other feature missing.
func sizeTable(size, y []float64) *features.Table {
	s := features.KindBuildTime.Schema()
	nf := s.NFeatures()
	j := slices.Index(s.Names, sizeFeature)
	h := slices.Index(s.Names, "speculation_height")
	x := make([]float64, len(y)*nf)
	for i := range x {
		x[i] = math.NaN()
	}
	for r := range y {
		x[r*nf+j] = size[r]
		x[r*nf+h] = float64(r % 3)
	}
	return &features.Table{Schema: s, X: x, Y: y}
}

// TestSizeBucketMetrics is issue 15 item 16: MAPE and coverage by build size, against
// values known by construction: every mean is 10% above the actual duration and every
// interval far too narrow to hold it.
func TestSizeBucketMetrics(t *testing.T) {
	t.Parallel()
	size := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	y := []float64{100, 200, 300, 400, 500, 600, 700, 800}
	p := eval.Predictive{Family: eval.FamilyNormal, Mu: make([]float64, len(y)), Sigma: make([]float64, len(y))}
	for i, v := range y {
		p.Mu[i], p.Sigma[i] = 1.1*v, 0.01*v
	}
	ms := sizeBucketMetrics(sizeTable(size, y), map[string]eval.Predictive{ModelNGBoost: p})
	if len(ms) != 4*3 {
		t.Fatalf("%d metric rows, want 3 for each of 4 buckets", len(ms))
	}
	const tol = 1e-12 // a mean of four equal ratios
	for _, m := range ms {
		v, ok := m.Values[roleChampion]
		switch {
		case !ok:
			t.Errorf("%s has no champion value", m.Name)
		case strings.HasPrefix(m.Name, "MAPE") && !scalar.EqualWithinAbsOrRel(v, 10, tol, tol):
			t.Errorf("%s = %v, want 10", m.Name, v)
		case strings.Contains(m.Name, "coverage") && v != 0:
			t.Errorf("%s = %v, want 0", m.Name, v)
		}
	}
	plots := buildTimeScatters(sizeTable(size, y), map[string]eval.Predictive{ModelNGBoost: p}, "")
	if len(plots) != 2 {
		t.Fatalf("%d scatters, want residual against height and sigma against size", len(plots))
	}
	res := plots[0].(*report.Scatter).Series[0]
	for i := range res.Y {
		if want := y[i] - 1.1*y[i]; !scalar.EqualWithinAbsOrRel(res.Y[i], want, tol, tol) || res.X[i] != float64(i%3) {
			t.Errorf("residual point %d = (%v, %v), want (%v, %v)", i, res.X[i], res.Y[i], i%3, want)
		}
	}
}

// TestBuildTimeScattersChallenger checks that the scatters show the challenger under its
// own name (ngboost-normal since LogNormal became the champion) beside the champion, and
// leave out a model that is neither.
func TestBuildTimeScattersChallenger(t *testing.T) {
	t.Parallel()
	size := []float64{1, 2, 3, 4, 5, 6}
	y := []float64{100, 200, 300, 400, 500, 600}
	champ := eval.Predictive{Family: eval.FamilyNormal, Mu: make([]float64, len(y)), Sigma: make([]float64, len(y))}
	chal := eval.Predictive{Family: eval.FamilyNormal, Mu: make([]float64, len(y)), Sigma: make([]float64, len(y))}
	for i, v := range y {
		champ.Mu[i], champ.Sigma[i] = 1.1*v, 0.1*v
		chal.Mu[i], chal.Sigma[i] = 0.9*v, 0.3*v
	}
	preds := map[string]eval.Predictive{ModelNGBoost: champ, ModelNGBoostNormal: chal, ModelNGBoostLogNormal: champ}
	plots := buildTimeScatters(sizeTable(size, y), preds, ModelNGBoostNormal)
	if len(plots) != 2 {
		t.Fatalf("%d scatters, want residual against height and sigma against size", len(plots))
	}
	const tol = 1e-12
	for k, plot := range plots {
		series := plot.(*report.Scatter).Series
		if got := len(series); got != 2 || series[0].Model != roleChampion || series[1].Model != roleChallenger {
			t.Fatalf("scatter %d has %d series (%+v), want champion and challenger", k, got, series)
		}
		for i := range y {
			want := y[i] - 0.9*y[i] // residual of the challenger
			if k == 1 {
				want = 0.3 * y[i] // its standard deviation
			}
			if got := series[1].Y[i]; !scalar.EqualWithinAbsOrRel(got, want, tol, tol) {
				t.Errorf("scatter %d challenger point %d = %v, want %v", k, i, got, want)
			}
		}
	}
}
