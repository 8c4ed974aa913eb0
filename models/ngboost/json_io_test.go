package ngboost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestArtifactRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, f := range allFamilies {
		x, y, _, _ := synth(rng, 500, f)
		xv, yv, _, _ := synth(rng, 200, f)
		m, err := FitValidate(context.Background(), x, y, nil, xv, yv, nil, Config{
			Dist: f, Score: CRPScore, NEstimators: 80, LearningRate: 0.1, MinibatchFrac: 0.8,
			EarlyStoppingRounds: 10, FeatureNames: []string{"a", "b", "noise"},
		})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "model.json")
		if err := m.SaveFile(path); err != nil {
			t.Fatal(err)
		}
		got, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The trees are written with 17 significant digits and summed in the same
		// order, so predictions reproduce exactly.
		want, have := m.PredictParams(nil, xv), got.PredictParams(nil, xv)
		for i := range want {
			if want[i] != have[i] {
				t.Fatalf("%v: param %d after a round trip = %v, want %v", f, i, have[i], want[i])
			}
		}
		if d, e := got.PredictRow(xv.RawRowView(3)), m.PredictRow(xv.RawRowView(3)); d != e {
			t.Errorf("%v: PredictRow after a round trip = %+v, want %+v", f, d, e)
		}
		if !reflect.DeepEqual(got.Info(), m.Info()) || got.Family() != f || !reflect.DeepEqual(got.FeatureNames(), m.FeatureNames()) || got.InitParams() != m.InitParams() {
			t.Errorf("%v: model after a round trip:\n%+v\nwant\n%+v", f, got.Info(), m.Info())
		}
	}
}

// A validation score that is not finite (a validation row whose likelihood underflowed)
// must not make a finished fit unsavable: it is written as null and read back as NaN.
func TestArtifactNonFiniteValScore(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	x, y, _, _ := synth(rng, 300, Normal)
	xv, yv, _, _ := synth(rng, 100, Normal)
	m, err := FitValidate(context.Background(), x, y, nil, xv, yv, nil, Config{NEstimators: 5, LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	m.info.ValScore[1] = math.Inf(1)
	m.info.ValScore[3] = math.NaN()
	path := filepath.Join(t.TempDir(), "model.json")
	if err := m.SaveFile(path); err != nil {
		t.Fatalf("SaveFile with a non-finite validation score = %v, want nil", err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.Info().ValScore {
		want := m.info.ValScore[i]
		if i == 1 || i == 3 {
			if !math.IsNaN(v) {
				t.Errorf("ValScore[%d] after a round trip = %v, want NaN", i, v)
			}
		} else if v != want {
			t.Errorf("ValScore[%d] after a round trip = %v, want %v", i, v, want)
		}
	}
}

func TestReadJSONErrors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	x, y, _, _ := synth(rng, 200, Normal)
	m, err := Fit(context.Background(), x, y, nil, Config{NEstimators: 5})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	edit := func(fn func(a map[string]any)) string {
		var a map[string]any
		if err := json.Unmarshal(buf.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		fn(a)
		b, _ := json.Marshal(a)
		return string(b)
	}
	cases := []struct {
		name    string
		input   string
		wantErr error
		wantMsg string
	}{
		{"not json", "tree\nversion=v4", ErrFormat, ""},
		{"version", edit(func(a map[string]any) { a["format_version"] = 2 }), ErrUnsupportedVersion, "format_version 2"},
		{"kind", edit(func(a map[string]any) { a["kind"] = "gbm" }), ErrFormat, "kind"},
		{"dist", edit(func(a map[string]any) { a["dist"] = "weibull" }), ErrFormat, "dist"},
		// A gamma model's parameters are log_alpha and log_beta.
		{"dist params", edit(func(a map[string]any) { a["dist"] = "gamma" }), ErrFormat, "log_alpha"},
		{"param count", edit(func(a map[string]any) { a["dist"] = "exponential"; a["init_params"] = []float64{1, 0} }), ErrFormat, "2 params for dist exponential"},
		{"unused init param", edit(func(a map[string]any) { a["dist"] = "exponential" }), ErrFormat, "unused"},
		{"score", edit(func(a map[string]any) { a["score"] = "mse" }), ErrFormat, "score"},
		{"iterations", edit(func(a map[string]any) { a["n_iterations"] = 4 }), ErrFormat, "n_iterations"},
		{"unknown field", edit(func(a map[string]any) { a["extra"] = 1 }), ErrFormat, "extra"},
		{"param name", edit(func(a map[string]any) { a["params"].([]any)[1].(map[string]any)["name"] = "scale" }), ErrFormat, "params[1]"},
		{"trees", edit(func(a map[string]any) { a["params"].([]any)[0].(map[string]any)["lightgbm"] = "tree\nnonsense" }), ErrFormat, "trees of loc"},
		{"feature names", edit(func(a map[string]any) { a["feature_names"] = []string{"x", "y", "z"} }), ErrFormat, "feature names"},
		{"best iteration", edit(func(a map[string]any) { a["training"].(map[string]any)["best_iteration"] = 3 }), ErrFormat, "best_iteration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tc.input))
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("ReadJSON(%s) = %v, want %v naming %q", tc.name, err, tc.wantErr, tc.wantMsg)
			}
		})
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("LoadFile(missing) = %v, want an error naming the file", err)
	}
}
