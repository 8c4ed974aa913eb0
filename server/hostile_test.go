package server_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
)

// hostileSpeculation is the 211 KB request of issue 14: n changes with P-succ and build
// times given, the last conflicting with every other, threshold 0 (every node with
// positive P-needed) and the given capacity.
func hostileSpeculation(repo string, n int, capacity int32) *pb.ScoreSpeculationRequest {
	req := &pb.ScoreSpeculationRequest{Repo: repo, Capacity: capacity}
	for i := range n {
		req.Changes = append(req.Changes, &pb.QueueChange{
			Change: &pb.Change{ChangeId: fmt.Sprintf("C%05d", i)},
			PSucc:  proto.Float64(0.9), BuildTimeMeanSeconds: proto.Float64(600), BuildTimeStddevSeconds: proto.Float64(60),
		})
	}
	for i := range n - 1 {
		req.Conflicts = append(req.Conflicts, &pb.QueueConflict{
			AheadChangeId: fmt.Sprintf("C%05d", i), BehindChangeId: fmt.Sprintf("C%05d", n-1), PConf: proto.Float64(0.5),
		})
	}
	return req
}

// TestHostileSpeculation sends the requests of issue 14 that used to take predictd down:
// each is now answered with a plan cut at a named limit, or refused, and the server
// keeps serving. Memory and time are measured by cmd/predictd-load -mode attack
// (BENCHMARKS.md), not here.
func TestHostileSpeculation(t *testing.T) {
	e := newTestEnv(t, server.Config{}, false) // every value given: no model needed
	ctx := testCtx(t)

	req := hostileSpeculation(e.repo, 3000, server.DefaultMaxCapacity+1)
	_, err := e.client.ScoreSpeculation(ctx, req)
	if f := violationFields(err); len(f) != 1 || f[0] != "capacity" {
		t.Fatalf("capacity over the limit: %v, want a violation of capacity", err)
	}

	req.Capacity = server.DefaultMaxCapacity
	resp, err := e.client.ScoreSpeculation(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	plan := resp.GetPlan()
	if !plan.GetTruncated() || plan.GetTruncatedBy() == "" {
		t.Errorf("3,000-change request: truncated %v by %q, want a named limit", plan.GetTruncated(), plan.GetTruncatedBy())
	}
	ids := 0
	for _, n := range plan.GetNodes() {
		ids += len(n.GetAssumedLandedChangeIds()) + len(n.GetAssumedRejectedChangeIds())
	}
	if ids > server.DefaultMaxNodeIDs {
		t.Errorf("plan names %d change ids, limit %d", ids, server.DefaultMaxNodeIDs)
	}

	// A deadline the search cannot meet ends it with DEADLINE_EXCEEDED, not a late OK.
	big := hostileSpeculation(e.repo, 10000, server.DefaultMaxCapacity)
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := e.client.ScoreSpeculation(short, big); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("10,000 changes in 1 ms: %v, want DeadlineExceeded", err)
	}

	// Fully conflicting changes, threshold 0: a bounded plan.
	full := &pb.ScoreSpeculationRequest{Repo: e.repo, Capacity: server.DefaultMaxCapacity}
	for j := range 40 {
		full.Changes = append(full.Changes, &pb.QueueChange{Change: &pb.Change{ChangeId: fmt.Sprintf("F%02d", j)},
			PSucc: proto.Float64(0.9), BuildTimeMeanSeconds: proto.Float64(600), BuildTimeStddevSeconds: proto.Float64(60)})
		for i := range j {
			full.Conflicts = append(full.Conflicts, &pb.QueueConflict{AheadChangeId: fmt.Sprintf("F%02d", i), BehindChangeId: fmt.Sprintf("F%02d", j), PConf: proto.Float64(0.3)})
		}
	}
	resp, err = e.client.ScoreSpeculation(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetPlan().GetNodes()); n > server.DefaultMaxCapacity {
		t.Errorf("fully conflicting: %d nodes, capacity %d", n, server.DefaultMaxCapacity)
	}

	// A small response limit cuts the least likely nodes and says so.
	small := newTestEnv(t, server.Config{Limits: server.Limits{MaxResponseBytes: 64 << 10}}, false)
	full.Repo = small.repo
	resp, err = small.client.ScoreSpeculation(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetPlan().GetTruncatedBy() != server.LimitMaxResponseBytes || proto.Size(resp) > 64<<10 || len(resp.GetPlan().GetNodes()) == 0 {
		t.Errorf("64 KiB limit: %d bytes, %d nodes, truncated by %q", proto.Size(resp), len(resp.GetPlan().GetNodes()), resp.GetPlan().GetTruncatedBy())
	}
}

// TestModelInfoLimits checks that GetModelInfo reports the limits, defaults filled in.
func TestModelInfoLimits(t *testing.T) {
	e := newTestEnv(t, server.Config{MaxBatch: 123, Limits: server.Limits{MaxCapacity: 7, MaxRecvBytes: 1 << 20, MaxInflight: 3}}, true)
	info, err := e.client.GetModelInfo(testCtx(t), &pb.GetModelInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	l := info.GetLimits()
	if l.GetMaxBatch() != 123 || l.GetMaxCapacity() != 7 || l.GetMaxExplored() != server.DefaultMaxExplored ||
		l.GetMaxPrefixWords() != server.DefaultMaxPrefixWords || l.GetMaxNodeIds() != server.DefaultMaxNodeIDs ||
		l.GetMaxRequestSeconds() != server.DefaultMaxRequestTime.Seconds() || l.GetMaxRecvBytes() != 1<<20 || l.GetMaxInflightPerMethod() != 3 {
		t.Errorf("limits %v", l)
	}
}

// constModel predicts v for every row (and v, v for distributions): a degenerate model
// whose outputs the server must refuse to return.
type constModel struct {
	width, nf int
	val       float64
}

func (m constModel) Predict(dst []float64, x mat.Matrix) []float64 {
	r, _ := x.Dims()
	if dst == nil {
		dst = make([]float64, r*m.width)
	}
	for i := range dst[:r*m.width] {
		dst[i] = m.val
	}
	return dst[:r*m.width]
}

func (m constModel) NFeatures() int { return m.nf }

type noDevs struct{}

func (noDevs) Lookup(string) features.DevStats { return features.DevStats{} }

func (noDevs) Recent(string, *datasets.Change) features.Recent { return features.Recent{} }

func (noDevs) Repos() []string { return nil }

// TestModelFaultIsInternal serves a model that predicts NaN (or an infinite standard
// deviation): requests fail with INTERNAL, never OK and never INVALID_ARGUMENT, and the
// fault is counted.
func TestModelFaultIsInternal(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx := testCtx(t)
	good := e.models.Champion()
	for _, val := range []float64{math.NaN(), math.Inf(1), 1.5} {
		sc, err := scoring.NewScorer(
			constModel{width: 1, nf: features.NSuccess, val: val},
			constModel{width: 1, nf: features.NConflict, val: val},
			constModel{width: 2, nf: features.NBuildTime, val: val}, noDevs{})
		if err != nil {
			t.Fatal(err)
		}
		e.models.Set(registry.RoleChampion, &server.Model{Role: registry.RoleChampion, Version: "bad", Manifest: good.Manifest, Scorer: sc})
		ch := &pb.Change{ChangeId: "C1"}
		_, err = e.client.PredictSuccess(ctx, &pb.PredictSuccessRequest{Repo: e.repo, Changes: []*pb.SuccessQuery{{Change: ch}}})
		if status.Code(err) != codes.Internal {
			t.Errorf("PredictSuccess with a %v model: %v, want Internal", val, err)
		}
		_, err = e.client.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{Repo: e.repo, Changes: []*pb.Change{ch}, Builds: []*pb.BuildQuery{{ChangeId: "C1"}}})
		if val != 1.5 && status.Code(err) != codes.Internal {
			t.Errorf("PredictBuildTime with a %v model: %v, want Internal", val, err)
		}
		_, err = e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Repo: e.repo, Capacity: 1,
			Changes: []*pb.QueueChange{{Change: ch, BuildTimeMeanSeconds: proto.Float64(1), BuildTimeStddevSeconds: proto.Float64(1)}}})
		if status.Code(err) != codes.Internal {
			t.Errorf("ScoreSpeculation with a %v model: %v, want Internal", val, err)
		}
	}
	if got := counter(t, e.promReg, "predictd_model_faults_total"); got < 7 {
		t.Errorf("predictd_model_faults_total = %v, want at least 7", got)
	}
}

// counter sums the counter name of reg over its label sets.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestBuildTimeFaultByFamily: a mean duration of 0 is a valid Normal prediction but a
// fault of a LogNormal model (whose mean is positive), and a negative mean is a fault of
// both; each fault fails the request with INTERNAL instead of blaming the caller.
func TestBuildTimeFaultByFamily(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx := testCtx(t)
	good := e.models.Champion()
	for _, tc := range []struct {
		fam  scoring.BuildFamily
		val  float64
		want codes.Code
	}{
		{scoring.BuildNormal, 0, codes.OK},
		{scoring.BuildNormal, -1, codes.Internal},
		{scoring.BuildLogNormal, 0, codes.Internal},
		{scoring.BuildLogNormal, 3, codes.OK},
	} {
		sc, err := scoring.NewScorer(constModel{width: 1, nf: features.NSuccess, val: 0.5}, constModel{width: 1, nf: features.NConflict, val: 0.1},
			constModel{width: 2, nf: features.NBuildTime, val: tc.val}, noDevs{})
		if err != nil {
			t.Fatal(err)
		}
		e.models.Set(registry.RoleChampion, &server.Model{Role: registry.RoleChampion, Version: "v", Manifest: good.Manifest, Scorer: sc, BuildFamily: tc.fam})
		ch := &pb.Change{ChangeId: "C1"}
		_, err = e.client.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{Changes: []*pb.Change{ch}, Builds: []*pb.BuildQuery{{ChangeId: "C1"}}})
		if status.Code(err) != tc.want {
			t.Errorf("PredictBuildTime with a %v model predicting %v: %v, want %v", tc.fam, tc.val, err, tc.want)
		}
		_, err = e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Capacity: 1,
			Changes: []*pb.QueueChange{{Change: ch, PSucc: proto.Float64(0.5)}}})
		if status.Code(err) != tc.want {
			t.Errorf("ScoreSpeculation with a %v model predicting %v: %v, want %v", tc.fam, tc.val, err, tc.want)
		}
	}
}
