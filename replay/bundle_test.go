package replay

import (
	"context"
	"math"
	"testing"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/training"
)

// TestScorerProbs scores a half-day world with the built-in bundle: every change's
// P-succ and build time, and the P-conf of every edge, must be what the scorer gives for
// the change's success row at submission (speculation state from features.Index), its
// pairs and its first build; a replay with the source keeps the mainline green.
func TestScorerProbs(t *testing.T) {
	dir := t.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	m, err := bundleload.FromBundle(b, registry.RoleChampion)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := smallWorld(t, 0.5, 3)
	ctx := context.Background()
	// The built-in bundle's build-time champion is the LogNormal NGBoost, which predictd
	// plans with the log-normal finish order.
	if m.BuildFamily != scoring.BuildLogNormal {
		t.Fatalf("built-in bundle served family %v, want LogNormal", m.BuildFamily)
	}
	src, err := NewScorerProbs(ctx, w, "bundle:default", m.Scorer, m.BuildFamily)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := features.NewIndex(ctx, w.History)
	if err != nil {
		t.Fatal(err)
	}
	edges := 0
	for i := range w.Traffic.Changes {
		c := &w.History.Changes[w.Index[i]]
		ps := m.Scorer.PredictSuccess(nil, []scoring.SuccessInput{{Change: c, Spec: ix.SuccessSpeculation(w.Index[i])}})
		bt := m.Scorer.PredictBuildTime(nil, []scoring.BuildInput{{Change: c}})
		mu, sd := src.BuildTime(i)
		if src.PSucc(i) != ps[0] || mu != bt[0] || sd != bt[1] {
			t.Fatalf("change %d: P-succ %v, build (%v, %v); the scorer gives %v, (%v, %v)", i, src.PSucc(i), mu, sd, ps[0], bt[0], bt[1])
		}
		for tt, k := range w.Traffic.Changes[i].Ahead {
			pc := m.Scorer.PredictConflict(nil, []scoring.PairInput{{Ahead: &w.History.Changes[w.Index[k]], Behind: c}})
			if got := src.PConf(i, tt); got != pc[0] || math.IsNaN(got) {
				t.Fatalf("change %d, edge %d: P-conf %v, the scorer gives %v", i, tt, got, pc[0])
			}
			edges++
		}
	}
	if edges == 0 {
		t.Fatal("the world has no conflict edge")
	}
	if src.BuildFamily() != scoring.BuildLogNormal || src.Name() != "bundle:default" {
		t.Errorf("family %v, name %q", src.BuildFamily(), src.Name())
	}
	res, err := Run(ctx, w, Setting{Strategy: "sq2024", Probs: "bundle:default", Workers: 30, Threshold: 0.05, KeepMargin: 4, Seed: 7}, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Records {
		if !r.Decided || r.Landed != w.Lands[i] {
			t.Fatalf("change %d decided=%v landed=%v, truth %v", i, r.Decided, r.Landed, w.Lands[i])
		}
	}
}
