package modelset_test

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
)

// loadDefault writes the built-in bundle to a folder and loads it and its models.
func loadDefault(t *testing.T) (*registry.Bundle, *modelset.Models) {
	t.Helper()
	dir := t.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := registry.LoadDir(dir, modelset.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	m, err := modelset.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, m
}

// TestLoadDefaultBundle loads the built-in bundle, writes its models back with Files and
// checks that every file reproduces byte for byte.
func TestLoadDefaultBundle(t *testing.T) {
	b, m := loadDefault(t)
	if m.Success == nil || m.Conflict == nil || m.BuildTime == nil || m.DevTable == nil || len(m.Baselines) != len(modelset.BaselineNames()) {
		t.Fatalf("LoadModels = %+v, want the three champions, the developer table and every baseline", m)
	}
	files, err := m.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		want, err := b.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("Files()[%s] differs from the bundle's file", name)
		}
	}
	want, err := b.ReadFile(modelset.FileFeatures)
	if err != nil {
		t.Fatal(err)
	}
	got, err := modelset.FeaturesJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("FeaturesJSON differs from the bundle's %s", modelset.FileFeatures)
	}
}

func TestManifestExtras(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fn      func(map[string]string) (map[string]string, error)
		key     string
		in      string
		want    map[string]string
		wantErr bool
	}{
		{"served none", modelset.ServedBaselines, modelset.ExtraServedBaselines, "", map[string]string{}, false},
		{"served two", modelset.ServedBaselines, modelset.ExtraServedBaselines, "conflict=constant-rate buildtime=zuul-mean10",
			map[string]string{"conflict": "constant-rate", "buildtime": "zuul-mean10"}, false},
		{"served wrong section", modelset.ServedBaselines, modelset.ExtraServedBaselines, "conflict=pass-rate", nil, true},
		{"served unknown", modelset.ServedBaselines, modelset.ExtraServedBaselines, "conflict=median", nil, true},
		{"champions", modelset.Champions, modelset.ExtraChampions, "success=logistic buildtime=ngboost-lognormal",
			map[string]string{"success": "logistic", "buildtime": "ngboost-lognormal"}, false},
		{"champions no model", modelset.Champions, modelset.ExtraChampions, "buildtime=", nil, true},
		{"champions no pair", modelset.Champions, modelset.ExtraChampions, "logistic", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.fn(map[string]string{tc.key: tc.in})
			if tc.wantErr {
				if !errors.Is(err, modelset.ErrBundle) {
					t.Errorf("%q: %v, want ErrBundle", tc.in, err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Errorf("%q = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestNewBaseline checks the parameters a baseline accepts, and that a JSON round trip
// keeps its predictions.
func TestNewBaseline(t *testing.T) {
	success := features.KindSuccess.Schema().Names
	build := features.KindBuildTime.Schema().Names
	for _, tc := range []struct {
		name    string
		names   []string
		p       modelset.BaselineParams
		wantErr bool
	}{
		{modelset.BaselinePassRate, success, modelset.BaselineParams{P: 0.8}, false},
		{modelset.BaselinePassRate, success, modelset.BaselineParams{P: 1}, true},
		{modelset.BaselineLastOutcome, success, modelset.BaselineParams{P: 0.8, PLastSucceeded: 0.9, PLastFailed: 0.5}, false},
		{modelset.BaselineLastOutcome, success, modelset.BaselineParams{P: 0.8, PLastSucceeded: 0.9}, true},
		{modelset.BaselineRepoLogNormal, build, modelset.BaselineParams{Mu: 6, Sigma: 0.5}, false},
		{modelset.BaselineRepoLogNormal, build, modelset.BaselineParams{Mu: 6, Sigma: 0}, true},
		{modelset.BaselineZuulMean10, build, modelset.BaselineParams{Mu: 6, Sigma: 0.5, RelSigma: 0.2}, false},
		{modelset.BaselineZuulMean10, build, modelset.BaselineParams{Mu: 6, Sigma: 0.5}, true},
		{modelset.BaselineZuulMean10, success, modelset.BaselineParams{Mu: 6, Sigma: 0.5, RelSigma: 0.2}, true}, // schema lacks its column
		{"median", build, modelset.BaselineParams{}, true},
	} {
		b, err := modelset.NewBaseline(tc.name, tc.names, tc.p)
		if tc.wantErr {
			if !errors.Is(err, modelset.ErrBundle) {
				t.Errorf("NewBaseline(%s, %+v) = %v, want ErrBundle", tc.name, tc.p, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("NewBaseline(%s, %+v) = %v", tc.name, tc.p, err)
		}
		var buf bytes.Buffer
		if err := b.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		b2, err := modelset.ReadBaseline(&buf)
		if err != nil {
			t.Fatal(err)
		}
		x := mat.NewDense(1, len(tc.names), nil)
		if got, want := b2.Predict(nil, x), b.Predict(nil, x); !slices.Equal(got, want) || b2.Params() != tc.p {
			t.Errorf("%s after JSON: %v %+v, want %v %+v", tc.name, got, b2.Params(), want, tc.p)
		}
	}
}

// TestChampionsText names the champions a bundle holds, and only those.
func TestChampionsText(t *testing.T) {
	_, m := loadDefault(t)
	if got, want := modelset.ChampionsText(m), "success=logistic conflict=logistic buildtime=ngboost-lognormal"; got != want {
		t.Errorf("ChampionsText = %q, want %q", got, want)
	}
	partial := *m
	partial.Conflict = nil
	if got, want := modelset.ChampionsText(&partial), "success=logistic buildtime=ngboost-lognormal"; got != want {
		t.Errorf("ChampionsText without P-conf = %q, want %q", got, want)
	}
	champs, err := modelset.Champions(map[string]string{modelset.ExtraChampions: modelset.ChampionsText(m)})
	if err != nil || champs["buildtime"] != modelset.ModelNGBoostLogNormal {
		t.Errorf("Champions(ChampionsText) = %v, %v", champs, err)
	}
	// The Normal challenger named the champion, as older bundles do.
	normal := *m
	normal.BuildTime, normal.BuildTimeChallenger = m.BuildTimeChallenger, m.BuildTime
	if got, want := modelset.ChampionsText(&normal), "success=logistic conflict=logistic buildtime=ngboost-normal"; got != want {
		t.Errorf("ChampionsText of a Normal champion = %q, want %q", got, want)
	}
}
