package training

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/modelset"
)

// levelShiftTable returns a build-time table of n rows in submission order whose
// durations are a level times LogNormal(0, 0.2) noise, the level rising as factor^k in
// steps over time, and whose recent-mean column holds that level with 10% noise: the
// real histories' level shifts (issue 12). factor 1 gives a stable repository. The
// other features are noise.
func levelShiftTable(n int, factor float64, seed uint64) *features.Table {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := features.KindBuildTime.Schema()
	nf := s.NFeatures()
	col := slices.Index(s.Names, modelset.RelativeColumn)
	t := &features.Table{Schema: s, X: make([]float64, n*nf), Y: make([]float64, n)}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range n {
		level := 300 * math.Pow(factor, math.Floor(8*float64(r)/float64(n)))
		for j := range nf {
			t.X[r*nf+j] = rng.NormFloat64()
		}
		t.X[r*nf+col] = math.Log1p(level * math.Exp(0.1*rng.NormFloat64()))
		t.Y[r] = level * math.Exp(0.2*rng.NormFloat64())
		t.SubmittedAt = append(t.SubmittedAt, t0.Add(time.Duration(r)*time.Minute))
		t.ChangeID = append(t.ChangeID, "c")
	}
	return t
}

// TestSelectRelative checks the choice on validation: with durations that keep rising
// to levels the earlier rows never had, the relative form wins on the latest rows and
// the champion is fitted relative; forced on or off, it is what the configuration says;
// a table too small for an inner split stays absolute.
func TestSelectRelative(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	shift := levelShiftTable(800, 1.5, 1)
	sel, err := SelectRelative(ctx, shift, nil, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Relative || !(sel.RelativeNLL < sel.AbsoluteNLL) || sel.Rows != 160 {
		t.Errorf("SelectRelative(level shifts) = %+v, want the relative form, better on 160 rows", sel)
	}
	m, err := fitBuildTimeChampion(ctx, shift, nil, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Relative == nil || m.Relative.FallbackS < modelset.MinReference {
		t.Errorf("champion on level shifts: relative %+v, want relative with a fallback", m.Relative)
	}
	for _, tc := range []struct {
		mode string
		want bool
	}{{RelativeOn, true}, {RelativeOff, false}} {
		c := cfg
		c.BuildTime.Relative = tc.mode
		m, err := fitBuildTimeChampion(ctx, shift, nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		if (m.Relative != nil) != tc.want {
			t.Errorf("relative %q: champion relative = %v, want %v", tc.mode, m.Relative != nil, tc.want)
		}
	}
	small, err := SelectRelative(ctx, levelShiftTable(20, 1.5, 2), nil, &cfg)
	if err != nil || small.Relative || !math.IsNaN(small.AbsoluteNLL) {
		t.Errorf("SelectRelative(20 rows) = %+v, %v; want the absolute form without a validation score", small, err)
	}
}
