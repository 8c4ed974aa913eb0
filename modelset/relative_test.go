package modelset_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/modelset"
)

// relTol is for predictions that differ only by an added log and one exp: a few ulps.
const relTol = 1e-12

// TestRelative makes the built-in bundle's LogNormal champion's trees relative to the
// recent mean and checks that its location moves by the log of each row's reference (the
// recent mean, MinReference for a mean of 0 s, the fallback without one) with the scale
// unchanged, the same through PredictParams, PredictRow and Predict, and that a bundle
// written with it loads back relative, with the same predictions.
func TestRelative(t *testing.T) {
	b, m := loadDefault(t)
	a := *m.BuildTime // the same trees without a reference, whatever the bundle holds
	a.Relative = nil
	abs := &a
	const fallback = 100.0
	rel, err := modelset.NewRelative(abs.Model, fallback)
	if err != nil {
		t.Fatal(err)
	}
	r := *abs
	r.Relative = rel
	col := -1
	for j, n := range abs.FeatureNames() {
		if n == modelset.RelativeColumn {
			col = j
		}
	}
	refs := []struct{ v, want float64 }{{math.Log1p(300), 300}, {math.NaN(), fallback}, {0, modelset.MinReference}, {math.Log1p(2.5), 2.5}}
	x := mat.NewDense(len(refs), features.NBuildTime, nil)
	for i, c := range refs {
		x.Set(i, col, c.v)
		if got := rel.ReferenceOf(c.v); !scalar.EqualWithinAbsOrRel(got, c.want, relTol, relTol) {
			t.Errorf("ReferenceOf(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	pa, pr := abs.PredictParams(nil, x), r.PredictParams(nil, x)
	mean := r.Predict(nil, x)
	for i, c := range refs {
		if !scalar.EqualWithinAbsOrRel(pr[2*i], pa[2*i]+math.Log(c.want), relTol, relTol) || pr[2*i+1] != pa[2*i+1] {
			t.Errorf("row %d: relative parameters %v, want the absolute %v with log(%v) added to the location", i, pr[2*i:2*i+2], pa[2*i:2*i+2], c.want)
		}
		d := r.PredictRow(x.RawRowView(i))
		if !scalar.EqualWithinAbsOrRel(d.Loc, pr[2*i], relTol, relTol) || !scalar.EqualWithinAbsOrRel(math.Log(d.Scale), pr[2*i+1], relTol, relTol) {
			t.Errorf("row %d: PredictRow = %+v, PredictParams %v", i, d, pr[2*i:2*i+2])
		}
		if !scalar.EqualWithinAbsOrRel(mean[2*i], d.Mean(), relTol, relTol) {
			t.Errorf("row %d: Predict mean %v, PredictRow's %v", i, mean[2*i], d.Mean())
		}
	}
	m.BuildTime = &r
	files, err := m.Files()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(files[modelset.FileBuildTimeBounds], []byte(`"format_version": 2`)) {
		t.Errorf("%s of a relative model:\n%s\nwant format_version 2", modelset.FileBuildTimeBounds, files[modelset.FileBuildTimeBounds])
	}
	back, err := modelset.LoadModels(republish(t, b, files))
	if err != nil {
		t.Fatal(err)
	}
	if back.BuildTime.Relative == nil || back.BuildTime.Relative.FallbackS != fallback {
		t.Fatalf("loaded relative = %+v, want fallback %v", back.BuildTime.Relative, fallback)
	}
	for i, v := range back.BuildTime.PredictParams(nil, x) {
		if !scalar.EqualWithinAbsOrRel(v, pr[i], relTol, relTol) {
			t.Errorf("loaded model's parameter %d = %v, before writing %v", i, v, pr[i])
		}
	}
}

// TestNewRelativeErrors checks the models a reference cannot be attached to.
func TestNewRelativeErrors(t *testing.T) {
	_, m := loadDefault(t)
	x := mat.NewDense(20, 1, nil)
	y := make([]float64, 20)
	for i := range y {
		x.Set(i, 0, float64(i%4))
		y[i] = 10 + float64(i)
	}
	noColumn, err := ngboost.Fit(t.Context(), x, y, nil, ngboost.Config{Dist: ngboost.LogNormal, NEstimators: 2, NumThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	normal, err := ngboost.Fit(t.Context(), x, y, nil, ngboost.Config{Dist: ngboost.Normal, NEstimators: 2, NumThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		m        *ngboost.Model
		fallback float64
	}{
		{"nil", nil, 100},
		{"normal", normal, 100},
		{"no column", noColumn, 100},
		{"fallback below 1 s", m.BuildTime.Model, 0.5},
		{"fallback nan", m.BuildTime.Model, math.NaN()},
		{"fallback inf", m.BuildTime.Model, math.Inf(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := modelset.NewRelative(tc.m, tc.fallback); !errors.Is(err, modelset.ErrBundle) {
				t.Errorf("NewRelative = %+v, %v; want ErrBundle", r, err)
			}
		})
	}
}
