package training

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/models/logistic"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/modelset"
)

// brokenLogistic returns m with the coefficients of its selected columns, alternately of opposite sign, set to ±1e308 (and their means to 0), the
// degenerate model of issue 14: on rows where both features are large the margin is
// +Inf − Inf, and the probability NaN.
func brokenLogistic(t *testing.T, m *logistic.Model) *logistic.Model {
	t.Helper()
	var b bytes.Buffer
	if err := m.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	if err := json.Unmarshal(b.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	sel := a["selected"].([]any)
	var cols []int
	for j, s := range sel {
		if s.(bool) {
			cols = append(cols, j)
		}
	}
	// beta0 = intercept − Σ w_j·mean_j/scale_j: with the means of the planted columns
	// set to 0, their old terms leave the original intercept.
	w, beta, scale, mean := a["coefficients"].([]any), a["original_coefficients"].([]any), a["scales"].([]any), a["means"].([]any)
	b0 := a["original_intercept"].(float64)
	for i, j := range cols {
		sc := scale[j].(float64)
		b0 += w[j].(float64) * mean[j].(float64) / sc
		c := 1e308 * float64(1-2*(i%2)) * min(1, sc)
		w[j], beta[j], mean[j] = c, c/sc, 0.0
	}
	a["original_intercept"] = b0
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	bm, err := logistic.ReadJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return bm
}

// infiniteScale returns bt with bounds that pin its log scale at 800: every scale is
// exp(800) = +Inf.
func infiniteScale(bt *modelset.BuildTimeModel) *modelset.BuildTimeModel {
	return &modelset.BuildTimeModel{Model: bt.Model, Bounds: &modelset.ParamBounds{Loc: bt.Bounds.Loc, LogScale: [2]float64{800, 800}}}
}

// TestBrokenChampionRefused plants a degenerate success logistic (NaN on some rows) and
// then a build-time champion with infinite scales: Train refuses both with an
// *OutputError naming the model and a holdout row, so nothing can be published.
func TestBrokenChampionRefused(t *testing.T) {
	h := testHistory(t)
	t.Cleanup(func() { afterFit = nil })
	for _, tc := range []struct {
		model, what, id string
		plant           func(m *Models)
	}{
		{"success.logistic", "probability NaN", "change ", func(m *Models) { m.Success = brokenLogistic(t, m.Success) }},
		{"buildtime.ngboost-lognormal", "scale +Inf", "build ", func(m *Models) { m.BuildTime = infiniteScale(m.BuildTime) }},
	} {
		afterFit = tc.plant
		_, err := Train(context.Background(), h, testConfig())
		var oe *OutputError
		if !errors.As(err, &oe) || !errors.Is(err, ErrGate) {
			t.Fatalf("%s: Train = %v, want an *OutputError", tc.model, err)
		}
		if oe.Model != tc.model || !strings.HasPrefix(oe.What, tc.what) || !strings.HasPrefix(oe.ID, tc.id) ||
			!strings.Contains(err.Error(), tc.model) || !strings.Contains(err.Error(), "row") {
			t.Errorf("%s: error %q (%+v), want the model, row and %q", tc.model, err, oe, tc.what)
		}
	}
}

// TestBrokenChallengerDropped plants an infinite-scale Normal challenger: it is dropped
// from both model sets with a warning, its metrics leave the evaluation, and the
// champions publish with the manifest saying why.
func TestBrokenChallengerDropped(t *testing.T) {
	h := testHistory(t)
	t.Cleanup(func() { afterFit = nil })
	afterFit = func(m *Models) {
		if m.BuildTimeChallenger != nil {
			m.BuildTimeChallenger = infiniteScale(m.BuildTimeChallenger)
		}
	}
	res := mustTrain(t, h, testConfig(ChallengerNGBoostNormal))
	if res.Models.BuildTimeChallenger != nil || res.HoldoutModels.BuildTimeChallenger != nil {
		t.Fatal("the broken challenger was kept")
	}
	if res.Models.BuildTime == nil {
		t.Fatal("the champion was dropped")
	}
	for k, v := range res.Metrics() {
		if strings.HasPrefix(k, "buildtime.ngboost-normal.") {
			t.Errorf("dropped challenger has metric %s = %v", k, v)
		}
	}
	if v := res.Metrics()["buildtime.nll"]; math.IsNaN(v) {
		t.Error("champion NLL missing")
	}
	b := publishAndLoad(t, res)
	if d := b.Manifest.Extra[ExtraDroppedChallengers]; !strings.Contains(d, FileBuildTime) || !strings.Contains(d, "scale +Inf") || !strings.Contains(d, "holdout row") {
		t.Errorf("manifest %s = %q, want %s, the row and the scale", ExtraDroppedChallengers, d, FileBuildTime)
	}
}

// TestScreenOutputs checks the range checks on hand-made outputs.
func TestScreenOutputs(t *testing.T) {
	for _, tc := range []struct {
		p    []float64
		want int
	}{{[]float64{0, 0.5, 1}, -1}, {[]float64{0.5, math.NaN()}, 1}, {[]float64{1.0000001}, 0}, {[]float64{0.2, -1e-9}, 1}} {
		if got, _ := badProbability(tc.p); got != tc.want {
			t.Errorf("badProbability(%v) = %d, want %d", tc.p, got, tc.want)
		}
	}
}

// TestBadDistribution checks the range checks on hand-made build-time outputs: a
// LogNormal whose mean (exp(800)) or standard deviation (σ = 30: √(e^900 − 1)·e^450)
// overflows is out of range although its location and scale are finite.
func TestBadDistribution(t *testing.T) {
	for _, tc := range []struct {
		p    eval.Predictive
		want int
	}{
		{eval.Predictive{Family: eval.FamilyNormal, Mu: []float64{100, 1e300}, Sigma: []float64{10, 1e300}}, -1},
		{eval.Predictive{Family: eval.FamilyNormal, Mu: []float64{100, 100}, Sigma: []float64{10, 0}}, 1},
		{eval.Predictive{Family: eval.FamilyLogNormal, Mu: []float64{5, 5, 800}, Sigma: []float64{1, 1, 0.1}}, 2},
		{eval.Predictive{Family: eval.FamilyLogNormal, Mu: []float64{5, 0}, Sigma: []float64{1, 30}}, 1},
		{eval.Predictive{Family: eval.FamilyLogNormal, Mu: []float64{math.NaN()}, Sigma: []float64{1}}, 0},
	} {
		if got, what := badDistribution(tc.p); got != tc.want {
			t.Errorf("badDistribution(%v %v %v) = %d (%s), want %d", tc.p.Family, tc.p.Mu, tc.p.Sigma, got, what, tc.want)
		}
	}
}

// tinyBuildTime fits a five-tree NGBoost of family fam on a hand-made table.
func tinyBuildTime(t *testing.T, fam ngboost.Family) *modelset.BuildTimeModel {
	t.Helper()
	const n = 100
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		x.Set(i, 0, float64(i%10))
		y[i] = 60 + 10*float64(i%10) + float64(i%7)
	}
	m, err := ngboost.Fit(t.Context(), x, y, nil, ngboost.Config{Dist: fam, NEstimators: 5, NumThreads: 1, RandomState: 1})
	if err != nil {
		t.Fatal(err)
	}
	bt, err := modelset.NewBuildTimeModel(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// TestDropFilesBuildTime drops build-time files from a LogNormal champion with a
// Normal challenger, and from an older bundle's Normal champion with a LogNormal
// challenger: only the challenger's own file drops it, never the champion's.
func TestDropFilesBuildTime(t *testing.T) {
	normal, logNormal := tinyBuildTime(t, ngboost.Normal), tinyBuildTime(t, ngboost.LogNormal)
	for _, tc := range []struct {
		champion, challenger *modelset.BuildTimeModel
		file                 string
		dropped              bool
	}{
		{logNormal, normal, FileBuildTimeLogNormal, false},
		{logNormal, normal, FileBuildTime, true},
		{normal, logNormal, FileBuildTime, false},
		{normal, logNormal, FileBuildTimeLogNormal, true},
	} {
		m := &Models{BuildTime: tc.champion, BuildTimeChallenger: tc.challenger, LeftOut: map[string]string{}}
		dropFiles(m, []string{tc.file}, map[string]string{tc.file: "why"})
		if m.BuildTime != tc.champion || (m.BuildTimeChallenger == nil) != tc.dropped || m.LeftOut[tc.file] != "why" {
			t.Errorf("champion %s, challenger %s, drop %s: champion kept %v, challenger dropped %v (want %v), left out %q",
				tc.champion.Name(), tc.challenger.Name(), tc.file, m.BuildTime == tc.champion, m.BuildTimeChallenger == nil, tc.dropped, m.LeftOut)
		}
	}
}
