package training

import (
	"bytes"
	"math"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/features"
)

// handTable returns a table of kind with the given labels or targets and one column set:
// col gets vals, every other column NaN.
func handTable(kind features.Kind, col string, vals, y []float64) *features.Table {
	s := kind.Schema()
	n := s.NFeatures()
	j := slices.Index(s.Names, col)
	t := &features.Table{Schema: s, Y: y, X: make([]float64, len(y)*n)}
	for r := range y {
		for k := range n {
			t.X[r*n+k] = math.NaN()
		}
		if j >= 0 {
			t.X[r*n+j] = vals[r]
		}
		t.SubmittedAt = append(t.SubmittedAt, time.Unix(int64(r), 0))
		t.ChangeID = append(t.ChangeID, "c")
	}
	return t
}

func TestBaselinesByHand(t *testing.T) {
	const tol = 1e-12
	// Success: 6 rows, 4 succeeded. After a success (last failed 0): 3 of 3; after a
	// failure: 0 of 2; no latest outcome: 1 of 1.
	nan := math.NaN()
	last := []float64{0, 0, 0, 1, 1, nan}
	y := []float64{1, 1, 1, 0, 0, 1}
	tb := handTable(features.KindSuccess, "repo_last_failed", last, y)
	pr, err := FitBaseline(BaselinePassRate, tb)
	if err != nil {
		t.Fatal(err)
	}
	p := (4.0 + 1) / (6 + 2)
	if got := pr.Probability(tb.Row(0)); !scalar.EqualWithinAbsOrRel(got, p, tol, tol) {
		t.Errorf("pass-rate = %v, want %v", got, p)
	}
	lo, err := FitBaseline(BaselineLastOutcome, tb)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[int]float64{0: (3 + 2*p) / 5, 3: (0 + 2*p) / 4, 5: (1 + 2*p) / 3} {
		if got := lo.Probability(tb.Row(r)); !scalar.EqualWithinAbsOrRel(got, want, tol, tol) {
			t.Errorf("last-outcome row %d = %v, want %v", r, got, want)
		}
	}
	// Build time: Zuul estimates 100 and 200 s with durations 100·e and 200/e: log
	// ratios +1 and -1, deviation 1, so the LogNormal around an estimate m has mu =
	// log m - 1/2 and mean m.
	e := math.E
	est := []float64{math.Log1p(100), math.Log1p(200), nan}
	bt := handTable(features.KindBuildTime, "log1p_repo_mean10_success_duration", est, []float64{100 * e, 200 / e, 0})
	z, err := FitBaseline(BaselineZuulMean10, bt)
	if err != nil {
		t.Fatal(err)
	}
	mu, s := z.LogNormal(bt.Row(0))
	if !scalar.EqualWithinAbsOrRel(s, 1, tol, tol) || !scalar.EqualWithinAbsOrRel(mu, math.Log(100)-0.5, tol, tol) {
		t.Errorf("zuul-mean10 row 0 = (%v, %v), want (%v, 1)", mu, s, math.Log(100)-0.5)
	}
	// The zero duration is clipped to 1 s: the repository LogNormal of logs
	// {log 100 + 1, log 200 - 1, 0}.
	logs := []float64{math.Log(100) + 1, math.Log(200) - 1, 0}
	m := (logs[0] + logs[1] + logs[2]) / 3
	v := 0.0
	for _, l := range logs {
		v += (l - m) * (l - m)
	}
	rl, err := FitBaseline(BaselineRepoLogNormal, bt)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Baseline{"repo-lognormal": rl, "zuul-mean10 without estimate": z} {
		if mu, s := b.LogNormal(bt.Row(2)); !scalar.EqualWithinAbsOrRel(mu, m, tol, tol) || !scalar.EqualWithinAbsOrRel(s, math.Sqrt(v/3), tol, tol) {
			t.Errorf("%s = (%v, %v), want (%v, %v)", name, mu, s, m, math.Sqrt(v/3))
		}
	}
	// Predict in seconds: zuul's mean is the estimate, its sd mean·sqrt(e^1 - 1).
	out := z.Predict(nil, mat.NewDense(bt.NRows(), bt.Schema.NFeatures(), bt.X))
	if !scalar.EqualWithinAbsOrRel(out[0], 100, tol, tol) || !scalar.EqualWithinAbsOrRel(out[1], 100*math.Sqrt(e-1), tol, tol) {
		t.Errorf("zuul-mean10 Predict row 0 = (%v, %v), want (100, %v)", out[0], out[1], 100*math.Sqrt(e-1))
	}
	// Conflict: 1 of 3 rows conflicted.
	ct := handTable(features.KindConflict, "", nil, []float64{0, 1, 0})
	cr, err := FitBaseline(BaselineConstantRate, ct)
	if err != nil {
		t.Fatal(err)
	}
	if got := cr.Predict(nil, mat.NewDense(3, ct.Schema.NFeatures(), ct.X)); got[2] != 2.0/5 {
		t.Errorf("constant-rate = %v, want 0.4", got)
	}
	// JSON round trip gives the same predictions.
	for _, b := range []*Baseline{pr, lo, z, rl, cr} {
		var buf bytes.Buffer
		if err := b.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		b2, err := ReadBaseline(&buf)
		if err != nil {
			t.Fatalf("%s: %v", b.Name(), err)
		}
		if b2.Params() != b.Params() || b2.Kind() != b.Kind() || !slices.Equal(b2.FeatureNames(), b.FeatureNames()) {
			t.Errorf("%s after JSON = %+v, want %+v", b.Name(), b2.Params(), b.Params())
		}
	}
	// Errors: wrong kind, no rows, unknown name, impossible parameters.
	if _, err := FitBaseline(BaselinePassRate, bt); err == nil {
		t.Error("pass-rate on build-time rows: no error")
	}
	if _, err := FitBaseline(BaselinePassRate, tb.Slice(0, 0)); err == nil {
		t.Error("pass-rate on no rows: no error")
	}
	if _, err := FitBaseline("median", tb); err == nil {
		t.Error("unknown baseline: no error")
	}
	bad := `{"format_version":1,"baseline":"pass-rate","kind":"success","feature_names":` + namesJSON(features.KindSuccess) + `,"params":{"p":1.5}}`
	if _, err := ReadBaseline(bytes.NewReader([]byte(bad))); err == nil {
		t.Error("ReadBaseline(p = 1.5): no error")
	}
}

func namesJSON(k features.Kind) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, n := range k.Schema().Names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + n + `"`)
	}
	b.WriteByte(']')
	return b.String()
}

// TestTrainShowsBaselines checks that a training run evaluates every baseline beside the
// champion, reports the skill over the best one, and publishes the baselines in the
// bundle, where LoadModels reads them back.
func TestTrainShowsBaselines(t *testing.T) {
	h := testHistory(t)
	res := mustTrain(t, h, testConfig())
	m := res.Metrics()
	for _, k := range []string{"success.pass-rate.log_loss", "success.last-outcome.log_loss", "conflict.constant-rate.log_loss",
		"buildtime.zuul-mean10.nll", "buildtime.repo-lognormal.nll", "buildtime.zuul-mean10.mdape", "success.skill_log_loss", "buildtime.skill_nll"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metric %s missing", k)
		}
	}
	_, best := res.Holdout.BestBaseline("success")
	if want := 1 - m["success.log_loss"]/best; !scalar.EqualWithinAbsOrRel(m["success.skill_log_loss"], want, 1e-12, 1e-12) {
		t.Errorf("success.skill_log_loss = %v, want %v", m["success.skill_log_loss"], want)
	}
	for _, name := range []string{BaselinePassRate, BaselineLastOutcome, BaselineConstantRate, BaselineZuulMean10, BaselineRepoLogNormal} {
		if !slices.Contains(res.Holdout.Report.Models, name) {
			t.Errorf("report columns %v lack %s", res.Holdout.Report.Models, name)
		}
	}
	dir := t.TempDir()
	if err := res.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	files, err := res.Models.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range baselineNames() {
		data, ok := files[baselineFile(name)]
		if !ok {
			t.Errorf("bundle lacks %s", baselineFile(name))
			continue
		}
		b, err := ReadBaseline(bytes.NewReader(data))
		if err != nil || b.Params() != res.Models.Baselines[name].Params() {
			t.Errorf("%s: read back %v, %v", name, b, err)
		}
	}
}
