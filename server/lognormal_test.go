package server_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/modelset"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

// publishVariant publishes the default bundle into e's registry with the manifest extra
// keys of extra added, without moving a pointer, and returns its version.
func publishVariant(t *testing.T, e *testEnv, extra map[string]string) string {
	t.Helper()
	m, err := defaultbundle.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	m.Version, m.Files, m.FormatVersion = "", nil, 0
	m.Extra = maps.Clone(m.Extra)
	maps.Copy(m.Extra, extra)
	write := func(dir string) error {
		if err := defaultbundle.WriteDir(dir); err != nil {
			return err
		}
		return os.Remove(filepath.Join(dir, registry.ManifestName))
	}
	v, err := e.reg.Publish(context.Background(), e.repo, write, m, registry.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// normalChampion is the manifest extra that makes a variant of the default bundle serve
// its Normal NGBoost challenger as the build-time champion, as bundles published before
// LogNormal became the champion do.
var normalChampion = map[string]string{modelset.ExtraChampions: "success=logistic conflict=logistic buildtime=" + modelset.ModelNGBoostNormal}

// TestLogNormalBundle serves a bundle whose build-time model is LogNormal (the default
// bundle with its build time served by the repo-lognormal baseline): GetModelInfo and
// PredictBuildTime say so, and ScoreSpeculation plans with the log-normal finish order,
// exactly the plan of scoring.Speculate with BuildLogNormal changes, not the Phi(Z) one.
func TestLogNormalBundle(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx := testCtx(t)
	v := publishVariant(t, e, map[string]string{training.ExtraServedBaselines: "buildtime=" + training.BaselineRepoLogNormal})

	// The default bundle's champion is the NGBoost LogNormal.
	info, err := e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := info.GetModels()[0].GetBuildTimeFamily(); got != pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL {
		t.Errorf("GetModelInfo of the default bundle: build_time_family %v, want LOG_NORMAL", got)
	}
	if got := info.GetModels()[0].GetServedModels()["buildtime"]; got != modelset.ModelNGBoostLogNormal {
		t.Errorf("GetModelInfo of the default bundle: served buildtime %q, want %s", got, modelset.ModelNGBoostLogNormal)
	}

	// A Normal champion: Phi(Z) and a Normal family everywhere.
	if err := e.reloader.Reload(registry.RoleChampion, publishVariant(t, e, normalChampion)); err != nil {
		t.Fatal(err)
	}
	if info, err = e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := info.GetModels()[0].GetBuildTimeFamily(); got != pb.BuildTimeFamily_BUILD_TIME_FAMILY_NORMAL {
		t.Errorf("GetModelInfo of the Normal variant: build_time_family %v, want NORMAL", got)
	}
	if got := info.GetModels()[0].GetServedModels()["buildtime"]; got != modelset.ModelNGBoostNormal {
		t.Errorf("GetModelInfo of the Normal variant: served buildtime %q, want %s", got, modelset.ModelNGBoostNormal)
	}

	if err := e.reloader.Reload(registry.RoleChampion, v); err != nil {
		t.Fatal(err)
	}
	info, err = e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mi := info.GetModels()[0]
	if mi.GetModel().GetVersion() != v || mi.GetBuildTimeFamily() != pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL {
		t.Errorf("GetModelInfo = %v %v, want %s LOG_NORMAL", mi.GetModel().GetVersion(), mi.GetBuildTimeFamily(), v)
	}
	want := map[string]string{"success": "logistic", "conflict": "logistic", "buildtime": "baseline:" + training.BaselineRepoLogNormal}
	if got := mi.GetServedModels(); !maps.Equal(got, want) {
		t.Errorf("GetModelInfo served_models = %v, want %v", got, want)
	}

	bt, err := e.client.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{
		Changes: []*pb.Change{{ChangeId: "C1"}}, Builds: []*pb.BuildQuery{{BuildId: "b1", ChangeId: "C1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := bt.GetPredictions()[0].GetBuildTimeFamily(); got != pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL {
		t.Errorf("PredictBuildTime build_time_family = %v, want LOG_NORMAL", got)
	}

	// Change b arrives 100 s after a and its build is much shorter: under the expected policy a is
	// bypassed with P(FT_b < FT_a), which differs between the families (checked below).
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	times := [][2]float64{{1000, 900}, {250, 200}, {400, 350}}
	req := &pb.ScoreSpeculationRequest{
		Policy: pb.SpeculationPolicy_SPECULATION_POLICY_EXPECTED, Capacity: 6, BlrdThreshold: 0.9,
	}
	lib := &pb.SpeculationRequest{Policy: req.Policy, Capacity: req.Capacity, BlrdThreshold: req.BlrdThreshold}
	for i, id := range []string{"a", "b", "c"} {
		at := timestamppb.New(t0.Add(time.Duration(100*i) * time.Second))
		req.Changes = append(req.Changes, &pb.QueueChange{
			Change: &pb.Change{ChangeId: id}, ArrivedAt: at, PSucc: proto.Float64(0.8),
			BuildTimeMeanSeconds: proto.Float64(times[i][0]), BuildTimeStddevSeconds: proto.Float64(times[i][1]),
		})
		lib.Changes = append(lib.Changes, &pb.PendingChange{
			ChangeId: id, ArrivedAt: at, PSucc: 0.8,
			BuildTimeMeanSeconds: times[i][0], BuildTimeStddevSeconds: times[i][1],
		})
	}
	for _, pr := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}} {
		req.Conflicts = append(req.Conflicts, &pb.QueueConflict{AheadChangeId: pr[0], BehindChangeId: pr[1], PConf: proto.Float64(0.3)})
		lib.Conflicts = append(lib.Conflicts, &pb.ConflictEdge{AheadChangeId: pr[0], BehindChangeId: pr[1], PConf: 0.3})
	}
	// The case must tell the families apart.
	ln := scoring.BuildTime{Family: scoring.BuildLogNormal, Mean: times[0][0], StdDev: times[0][1]}
	lnB := scoring.BuildTime{Family: scoring.BuildLogNormal, Mean: times[1][0], StdDev: times[1][1]}
	pLN := scoring.FinishBeforeProbOf(0, ln, 100, lnB)
	pN := scoring.FinishBeforeProb(0, times[0][0], times[0][1], 100, times[1][0], times[1][1])
	if math.Abs(pLN-pN) < 0.01 {
		t.Fatalf("P(FT_b < FT_a) = %v log-normal, %v Normal: the case does not tell the families apart", pLN, pN)
	}

	resp, err := e.client.ScoreSpeculation(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range resp.GetChanges() {
		if c.GetBuildTimeFamily() != pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL {
			t.Errorf("changes[%d].build_time_family = %v, want LOG_NORMAL", i, c.GetBuildTimeFamily())
		}
	}
	plan := func(fam pb.BuildTimeFamily) *pb.SpeculationResponse {
		t.Helper()
		r := proto.Clone(lib).(*pb.SpeculationRequest)
		for _, c := range r.Changes {
			c.BuildTimeFamily = fam
		}
		q, cfg, err := server.SpeculationFromProto(r)
		if err != nil {
			t.Fatal(err)
		}
		p, err := scoring.Speculate(q, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return server.SpeculationToProto(r, p)
	}
	wantLN, normal := plan(pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL), plan(pb.BuildTimeFamily_BUILD_TIME_FAMILY_NORMAL)
	if !proto.Equal(resp.GetPlan(), wantLN) {
		t.Errorf("ScoreSpeculation plan with a LogNormal bundle:\n%v\nwant the library's BuildLogNormal plan:\n%v", resp.GetPlan(), wantLN)
	}
	if proto.Equal(wantLN, normal) {
		t.Errorf("the BuildLogNormal and BuildNormal plans are equal; the case must tell them apart:\n%v", normal)
	}

	// A caller-stated family wins over the bundle's.
	for _, c := range req.Changes {
		c.BuildTimeFamily = pb.BuildTimeFamily_BUILD_TIME_FAMILY_NORMAL
	}
	resp, err = e.client.ScoreSpeculation(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(resp.GetPlan(), normal) {
		t.Errorf("ScoreSpeculation plan with build_time_family NORMAL:\n%v\nwant the library's Phi(Z) plan:\n%v", resp.GetPlan(), normal)
	}
}

// TestMixedFamilies routes half the changes to a LogNormal challenger beside a Normal
// champion: each change gets the family of the bundle that serves it, and the plan is
// the library's with those families.
func TestMixedFamilies(t *testing.T) {
	e := newTestEnv(t, server.Config{ChallengerShare: 0.5}, true)
	ctx := testCtx(t)
	if err := e.reloader.Reload(registry.RoleChampion, publishVariant(t, e, normalChampion)); err != nil {
		t.Fatal(err)
	}
	v := publishVariant(t, e, map[string]string{training.ExtraServedBaselines: "buildtime=" + training.BaselineRepoLogNormal})
	if err := e.reloader.Reload(registry.RoleChallenger, v); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	req := &pb.ScoreSpeculationRequest{Policy: pb.SpeculationPolicy_SPECULATION_POLICY_EXPECTED, Capacity: 8}
	lib := &pb.SpeculationRequest{Policy: req.Policy, Capacity: req.Capacity}
	var sawLN, sawN bool
	for i := range 8 {
		id := fmt.Sprintf("C%d", i)
		at := timestamppb.New(t0.Add(time.Duration(60*i) * time.Second))
		mean, sd := 300+100*float64(i%3), 150+50*float64(i%2)
		req.Changes = append(req.Changes, &pb.QueueChange{Change: &pb.Change{ChangeId: id}, ArrivedAt: at, PSucc: proto.Float64(0.85),
			BuildTimeMeanSeconds: proto.Float64(mean), BuildTimeStddevSeconds: proto.Float64(sd)})
		fam := pb.BuildTimeFamily_BUILD_TIME_FAMILY_NORMAL
		if server.RouteChallenger(id, 0.5) {
			fam, sawLN = pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL, true
		} else {
			sawN = true
		}
		lib.Changes = append(lib.Changes, &pb.PendingChange{ChangeId: id, ArrivedAt: at, PSucc: 0.85,
			BuildTimeMeanSeconds: mean, BuildTimeStddevSeconds: sd, BuildTimeFamily: fam})
		if i > 0 {
			prev := fmt.Sprintf("C%d", i-1)
			req.Conflicts = append(req.Conflicts, &pb.QueueConflict{AheadChangeId: prev, BehindChangeId: id, PConf: proto.Float64(0.2)})
			lib.Conflicts = append(lib.Conflicts, &pb.ConflictEdge{AheadChangeId: prev, BehindChangeId: id, PConf: 0.2})
		}
	}
	if !sawLN || !sawN {
		t.Fatalf("the ids do not split between the bundles (challenger %v, champion %v)", sawLN, sawN)
	}
	resp, err := e.client.ScoreSpeculation(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range resp.GetChanges() {
		if want := lib.Changes[i].GetBuildTimeFamily(); c.GetBuildTimeFamily() != want {
			t.Errorf("changes[%d] (%s): build_time_family %v, want %v", i, c.GetChangeId(), c.GetBuildTimeFamily(), want)
		}
	}
	q, cfg, err := server.SpeculationFromProto(lib)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := scoring.Speculate(q, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := server.SpeculationToProto(lib, plan); !proto.Equal(resp.GetPlan(), want) {
		t.Errorf("plan:\n%v\nwant the library's with per-change families:\n%v", resp.GetPlan(), want)
	}
}
