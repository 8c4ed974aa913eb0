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

// TestRelativeShift gives the relative model of TestRelative's kind a Shift and checks
// that every prediction path adds it to the location, scale unchanged, that the bounds
// file then needs format version 3 (a version 2 reader would drop the shift), and that
// the bundle loads back with the same shift and predictions; a relative model without a
// shift is still written as version 2, which bundles before the shift have.
func TestRelativeShift(t *testing.T) {
	b, m := loadDefault(t)
	a := *m.BuildTime
	a.Relative = nil
	rel, err := modelset.NewRelative(a.Model, 100)
	if err != nil {
		t.Fatal(err)
	}
	plain := a
	plain.Relative = rel
	shifted := a
	sr := *rel
	sr.Shift = -0.25
	shifted.Relative = &sr
	col := -1
	for j, n := range a.FeatureNames() {
		if n == modelset.RelativeColumn {
			col = j
		}
	}
	x := mat.NewDense(3, features.NBuildTime, nil)
	for i, v := range []float64{math.Log1p(300), math.NaN(), math.Log1p(40)} {
		x.Set(i, col, v)
	}
	pp, ps := plain.PredictParams(nil, x), shifted.PredictParams(nil, x)
	for i := range 3 {
		if !scalar.EqualWithinAbsOrRel(ps[2*i], pp[2*i]-0.25, relTol, relTol) || ps[2*i+1] != pp[2*i+1] {
			t.Errorf("row %d: shifted parameters %v, want %v with -0.25 on the location", i, ps[2*i:2*i+2], pp[2*i:2*i+2])
		}
		if d := shifted.PredictRow(x.RawRowView(i)); !scalar.EqualWithinAbsOrRel(d.Loc, ps[2*i], relTol, relTol) {
			t.Errorf("row %d: PredictRow location %v, PredictParams %v", i, d.Loc, ps[2*i])
		}
		if got, want := sr.Offset(x.At(i, col)), math.Log(rel.ReferenceOf(x.At(i, col)))-0.25; !scalar.EqualWithinAbsOrRel(got, want, relTol, relTol) {
			t.Errorf("row %d: Offset = %v, want %v", i, got, want)
		}
	}
	for _, tc := range []struct {
		m       *modelset.BuildTimeModel
		version string
	}{{&plain, `"format_version": 2`}, {&shifted, `"format_version": 3`}} {
		m.BuildTime = tc.m
		files, err := m.Files()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(files[modelset.FileBuildTimeBounds], []byte(tc.version)) {
			t.Errorf("%s with shift %v:\n%s\nwant %s", modelset.FileBuildTimeBounds, tc.m.Relative.Shift, files[modelset.FileBuildTimeBounds], tc.version)
		}
		back, err := modelset.LoadModels(republish(t, b, files))
		if err != nil {
			t.Fatal(err)
		}
		if back.BuildTime.Relative == nil || back.BuildTime.Relative.Shift != tc.m.Relative.Shift {
			t.Fatalf("loaded relative = %+v, want shift %v", back.BuildTime.Relative, tc.m.Relative.Shift)
		}
		want := tc.m.PredictParams(nil, x)
		for i, v := range back.BuildTime.PredictParams(nil, x) {
			if !scalar.EqualWithinAbsOrRel(v, want[i], relTol, relTol) {
				t.Errorf("shift %v: loaded model's parameter %d = %v, before writing %v", tc.m.Relative.Shift, i, v, want[i])
			}
		}
	}
}
