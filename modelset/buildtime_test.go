package modelset_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
)

// TestBoundsOf checks the bounds of hand-made parameter lists: the range of the finite
// pairs without the BoundsTrim share of them at each end, so that a parameter only one
// row reached (a single-row leaf) is not a bound.
func TestBoundsOf(t *testing.T) {
	// bulk returns n pairs with locs 0..1 and log scales -2..-1 in steps, then extra.
	bulk := func(n int, extra ...float64) []float64 {
		p := make([]float64, 0, 2*n+len(extra))
		for i := range n {
			f := float64(i) / float64(n-1)
			p = append(p, f, -2+f)
		}
		return append(p, extra...)
	}
	for _, tc := range []struct {
		name   string
		params []float64
		want   modelset.ParamBounds
		ok     bool
	}{
		{"two pairs: the whole range", []float64{1, -2, 3, 0.5}, modelset.ParamBounds{Loc: [2]float64{1, 3}, LogScale: [2]float64{-2, 0.5}}, true},
		{"non-finite pairs ignored, one trimmed at each end of four", []float64{1, -2, 3, 0.5, math.NaN(), 9, -1, math.Inf(1), 2, -3, 5, 7},
			modelset.ParamBounds{Loc: [2]float64{2, 3}, LogScale: [2]float64{-2, 0.5}}, true},
		// Issue 12: one training row of 1,000 (a 2 s failed build isolated by the source
		// columns) got a log scale of 3.74 and a location of -1.1; the bounds keep the
		// 1,000 - 2·5 middle values of each parameter.
		{"one isolated row of 1000", bulk(999, -1.1, 3.74),
			modelset.ParamBounds{Loc: [2]float64{4.0 / 998, 993.0 / 998}, LogScale: [2]float64{-2 + 5.0/998, -2 + 994.0/998}}, true},
		{"no finite pair", []float64{math.NaN(), 1}, modelset.ParamBounds{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := modelset.BoundsOf(tc.params)
			if ok != tc.ok {
				t.Fatalf("BoundsOf ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			for k, pair := range [][2][2]float64{{b.Loc, tc.want.Loc}, {b.LogScale, tc.want.LogScale}} {
				for e := range 2 {
					if !scalar.EqualWithinAbsOrRel(pair[0][e], pair[1][e], boundsTol, boundsTol) {
						t.Errorf("BoundsOf parameter %d end %d = %v, want %v (bounds %+v)", k, e, pair[0][e], pair[1][e], b)
					}
				}
			}
		})
	}
}

// boundsTol is the tolerance of TestBoundsOf: its bounds are inputs picked out, but the
// expected values are written as fractions.
const boundsTol = 1e-12

// TestBadBounds plants bounds files that a loader must refuse, naming the file: a
// reversed interval, a model the bundle lacks and a foreign format version.
func TestBadBounds(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"reversed", `{"format_version":1,"models":{"%s":{"loc":[2,1],"log_scale":[0,1]}}}`},
		{"unknown model", `{"format_version":1,"models":{"gbm":{"loc":[1,2],"log_scale":[0,1]}}}`},
		{"version", `{"format_version":9,"models":{}}`},
		{"relative in version 1", `{"format_version":1,"models":{},"relative":{"%s":{"column":"log1p_repo_mean10_success_duration","fallback_s":100}}}`},
		{"relative unknown model", `{"format_version":2,"models":{},"relative":{"gbm":{"column":"log1p_repo_mean10_success_duration","fallback_s":100}}}`},
		{"relative column", `{"format_version":2,"models":{},"relative":{"%s":{"column":"speculation_height","fallback_s":100}}}`},
		{"relative fallback", `{"format_version":2,"models":{},"relative":{"%s":{"column":"log1p_repo_mean10_success_duration","fallback_s":0}}}`},
		{"shift in version 2", `{"format_version":2,"models":{},"relative":{"%s":{"column":"log1p_repo_mean10_success_duration","fallback_s":100,"log_shift":0.1}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, m := loadDefault(t)
			body := strings.ReplaceAll(tc.body, "%s", m.BuildTime.Name())
			files, err := m.Files()
			if err != nil {
				t.Fatal(err)
			}
			files[modelset.FileBuildTimeBounds] = []byte(body)
			nb := republish(t, b, files)
			if _, err := modelset.LoadModels(nb); err == nil || !strings.Contains(err.Error(), modelset.FileBuildTimeBounds) {
				t.Errorf("LoadModels = %v, want an error naming %s", err, modelset.FileBuildTimeBounds)
			}
		})
	}
}

// republish publishes files with b's manifest into a new registry, checksummed as a
// publish would, and returns the loaded bundle.
func republish(t *testing.T, b *registry.Bundle, files map[string][]byte) *registry.Bundle {
	t.Helper()
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v, err := reg.Publish(t.Context(), "x", func(d string) error {
		for n, data := range files {
			if err := os.WriteFile(filepath.Join(d, n), data, 0o600); err != nil {
				return err
			}
		}
		return nil
	}, b.Manifest, registry.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nb, err := reg.Load("x", v, modelset.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	return nb
}

// TestNewBuildTimeModel fits a small NGBoost of every family: the Normal and the
// LogNormal become build-time models with their own name and file, and the Exponential
// and the Gamma, whose parameters are not (Loc, log Scale), are refused.
func TestNewBuildTimeModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 200
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		v := float64(rng.IntN(10))
		x.Set(i, 0, v)
		y[i] = 60 + 10*v + 5*rng.ExpFloat64()
	}
	for _, tc := range []struct {
		fam        ngboost.Family
		name, file string // "" when refused
	}{
		{ngboost.Normal, modelset.ModelNGBoostNormal, modelset.FileBuildTime},
		{ngboost.LogNormal, modelset.ModelNGBoostLogNormal, modelset.FileBuildTimeLogNormal},
		{ngboost.Exponential, "", ""},
		{ngboost.Gamma, "", ""},
	} {
		nm, err := ngboost.Fit(t.Context(), x, y, nil, ngboost.Config{Dist: tc.fam, NEstimators: 5, NumThreads: 1, RandomState: 1})
		if err != nil {
			t.Fatalf("%s: Fit: %v", tc.fam, err)
		}
		bounds := &modelset.ParamBounds{Loc: [2]float64{0, 10}, LogScale: [2]float64{-1, 1}}
		bt, err := modelset.NewBuildTimeModel(nm, bounds)
		if tc.name == "" {
			if !errors.Is(err, modelset.ErrBuildTimeFamily) || bt != nil || !strings.Contains(err.Error(), tc.fam.String()) {
				t.Errorf("%s: NewBuildTimeModel = %v, %v; want an ErrBuildTimeFamily naming the family", tc.fam, bt, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: NewBuildTimeModel: %v", tc.fam, err)
		}
		if bt.Model != nm || bt.Bounds != bounds || bt.Name() != tc.name || bt.File() != tc.file {
			t.Errorf("%s: model %s file %s, want %s %s with the model and bounds given", tc.fam, bt.Name(), bt.File(), tc.name, tc.file)
		}
	}
	if _, err := modelset.NewBuildTimeModel(nil, nil); !errors.Is(err, modelset.ErrBuildTimeFamily) {
		t.Errorf("NewBuildTimeModel(nil) = %v, want ErrBuildTimeFamily", err)
	}
}
