package bundleload_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/modelset"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

// TestExtraAttributes follows an extra attribute (issue 12 item 3) from a history to a
// served prediction: training takes it as a feature of the success and build-time
// models, the bundle records it (manifest, features.json, model columns), the loaded
// scorer asks for it by name, and a request that carries it in Change.extra gets the
// prediction of the history's change, while one that leaves it out gets the models'
// missing value.
func TestExtraAttributes(t *testing.T) {
	h := goHistory(t, 2, 6)
	// signal is the change's true probability of success, missing in every 7th change:
	// an informative attribute the model should use.
	h.Extra = []string{"signal"}
	for i := range h.Changes {
		v := h.Changes[i].TrueProbSuccess
		if i%7 == 3 {
			v = math.NaN()
		}
		h.Changes[i].Extra = datasets.Extra{Names: h.Extra, Values: []float64{v}}
	}
	asOf := lastSubmission(h).Add(time.Hour)
	res, err := training.Train(context.Background(), h, training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
		Seed: 1, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 30}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Models.Extra, h.Extra) {
		t.Fatalf("Models.Extra = %v, want %v", res.Models.Extra, h.Extra)
	}
	if n := res.Models.Success.FeatureNames(); n[len(n)-1] != "x_signal" {
		t.Errorf("success model columns end with %s, want x_signal", n[len(n)-1])
	}
	reg, b := publishAndLoad(t, res)
	if got := b.Manifest.Extra[modelset.ExtraAttributes]; got != "signal" {
		t.Errorf("manifest %s = %q, want signal", modelset.ExtraAttributes, got)
	}
	data, err := b.ReadFile(modelset.FileFeatures)
	if err != nil {
		t.Fatal(err)
	}
	var ff struct {
		Schemas []struct {
			Kind  string   `json:"kind"`
			Names []string `json:"names"`
		} `json:"schemas"`
	}
	if err := json.Unmarshal(data, &ff); err != nil {
		t.Fatal(err)
	}
	for _, s := range ff.Schemas {
		if has := slices.Contains(s.Names, "x_signal"); has != (s.Kind != "conflict") {
			t.Errorf("features.json %s schema has x_signal: %v", s.Kind, has)
		}
	}

	m, err := bundleload.Loader(reg, b.Manifest.Repo)(registry.RoleChampion, b.Manifest.Version)
	if err != nil {
		t.Fatal(err)
	}
	if s, bt := m.Scorer.Extra(); !slices.Equal(s, h.Extra) || !slices.Equal(bt, h.Extra) {
		t.Fatalf("scorer extra attributes = %v, %v, want %v", s, bt, h.Extra)
	}
	c := h.Changes[len(h.Changes)-1]
	c.Extra = datasets.Extra{Names: h.Extra, Values: []float64{0.9}}
	req := &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: server.ChangeToProto(&c)}}}
	if got := req.Changes[0].Change.GetExtra(); len(got) != 1 || got["signal"] != 0.9 {
		t.Fatalf("ChangeToProto extra = %v, want signal 0.9", got)
	}
	in, _, err := server.SuccessFromProto(req, b.Manifest.Repo, 10)
	if err != nil {
		t.Fatal(err)
	}
	predict := func(e datasets.Extra) float64 {
		d := c
		d.Extra = e
		return m.Scorer.PredictSuccess(nil, []scoring.SuccessInput{{Change: &d, Spec: in[0].Spec}})[0]
	}
	viaRequest := m.Scorer.PredictSuccess(nil, in)[0]
	if direct := predict(c.Extra); math.Float64bits(viaRequest) != math.Float64bits(direct) {
		t.Errorf("P-succ through the request = %v, of the history's change %v", viaRequest, direct)
	}
	// Left out, the attribute is missing: the same as NaN, and not the same as a value.
	missing := predict(datasets.Extra{})
	if nan := predict(datasets.Extra{Names: h.Extra, Values: []float64{math.NaN()}}); math.Float64bits(missing) != math.Float64bits(nan) {
		t.Errorf("P-succ without the attribute = %v, with NaN %v", missing, nan)
	}
	low, high := predict(datasets.Extra{Names: h.Extra, Values: []float64{0.05}}), predict(datasets.Extra{Names: h.Extra, Values: []float64{0.95}})
	if !(high > low) || missing == high {
		t.Errorf("P-succ with signal 0.05, 0.95 and missing = %v, %v, %v: the model does not use the attribute", low, high, missing)
	}
	// The build-time model takes it as well.
	bin := []scoring.BuildInput{{Change: &c, Spec: in[0].Spec}}
	if got := m.Scorer.PredictBuildTime(nil, bin); !(got[0] > 0) {
		t.Errorf("build time with the attribute = %v", got)
	}

	// A manifest whose list disagrees with the models' columns, or names a column that
	// leaks the label, is refused.
	for _, bad := range []string{"", "other", "signal,now_label"} {
		editManifest(t, b.Dir, map[string]string{modelset.ExtraAttributes: bad})
		lb, err := registry.LoadDir(b.Dir, modelset.SchemaHash())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := modelset.LoadModels(lb); !errors.Is(err, modelset.ErrBundle) {
			t.Errorf("LoadModels with %s %q = %v, want ErrBundle", modelset.ExtraAttributes, bad, err)
		}
	}
}
