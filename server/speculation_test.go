package server

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/scoring"
)

func testRequest() *pb.SpeculationRequest {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	return &pb.SpeculationRequest{
		Changes: []*pb.PendingChange{
			{ChangeId: "a", ArrivedAt: timestamppb.New(t0), PSucc: 0.9, BuildTimeMeanSeconds: 3600, BuildTimeStddevSeconds: 600},
			{ChangeId: "b", ArrivedAt: timestamppb.New(t0.Add(90 * time.Second)), PSucc: 0.8, BuildTimeMeanSeconds: 300, BuildTimeStddevSeconds: 30},
		},
		Conflicts: []*pb.ConflictEdge{{AheadChangeId: "a", BehindChangeId: "b", PConf: 0.1}},
		Builds: []*pb.StartedBuild{
			{BuildId: "x", ChangeId: "b", PathChangeIds: []string{"landed-long-ago", "a"}, Status: pb.BuildStatus_BUILD_STATUS_RUNNING},
			{BuildId: "y", ChangeId: "b", Status: pb.BuildStatus_BUILD_STATUS_RUNNING},
		},
		Policy:          pb.SpeculationPolicy_SPECULATION_POLICY_SQ2019,
		Capacity:        2,
		LandedChangeIds: []string{"landed-long-ago"},
	}
}

// TestSpeculationRoundTrip converts a request, scores it and converts the plan back.
func TestSpeculationRoundTrip(t *testing.T) {
	req := testRequest()
	q, cfg, err := SpeculationFromProto(req)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Capacity != 2 || cfg.Policy != scoring.PolicySQ2019 {
		t.Errorf("config = %+v", cfg)
	}
	if got := q.Changes[1].Arrival - q.Changes[0].Arrival; got != 90 {
		t.Errorf("arrival difference = %v s, want 90", got)
	}
	if !slices.Equal(q.Builds[0].Path, []int{0}) {
		t.Errorf("path of build x = %v, want [0] (a landed id is dropped)", q.Builds[0].Path)
	}
	plan, err := scoring.Speculate(q, cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp := SpeculationToProto(req, plan)
	type row struct {
		change, build string
		action        pb.NodeAction
		landed        []string
		p             float64
	}
	want := []row{
		{"a", "", pb.NodeAction_NODE_ACTION_START, nil, 1},
		{"b", "x", pb.NodeAction_NODE_ACTION_KEEP, []string{"a"}, 0.9},
		{"b", "y", pb.NodeAction_NODE_ACTION_ABORT, nil, 0.1},
	}
	if len(resp.GetNodes()) != len(want) {
		t.Fatalf("nodes = %v", resp.GetNodes())
	}
	for i, w := range want {
		n := resp.GetNodes()[i]
		if n.GetChangeId() != w.change || n.GetBuildId() != w.build || n.GetAction() != w.action ||
			!slices.Equal(n.GetAssumedLandedChangeIds(), w.landed) || math.Abs(n.GetPNeeded()-w.p) > 1e-12 {
			t.Errorf("node %d = %v, want %+v", i, n, w)
		}
	}
	if d := resp.GetDecisions(); len(d) != 2 || d[1].GetVerdict() != pb.Verdict_VERDICT_WAIT ||
		d[1].GetWaitReason() != pb.WaitReason_WAIT_REASON_PATHS_PENDING || !slices.Equal(d[1].GetWaitingForChangeIds(), []string{"a"}) {
		t.Errorf("decisions = %v", d)
	}
}

func TestSpeculationFromProtoErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(*pb.SpeculationRequest)
		wantField string
		wantErr   error
	}{
		{"empty id", func(r *pb.SpeculationRequest) { r.Changes[1].ChangeId = "" }, "changes[1].change_id", scoring.ErrInvalidQueue},
		{"duplicate id", func(r *pb.SpeculationRequest) { r.Changes[1].ChangeId = "a" }, "changes[1].change_id", scoring.ErrInvalidQueue},
		{"unknown conflict", func(r *pb.SpeculationRequest) { r.Conflicts[0].BehindChangeId = "zz" }, "conflicts[0].behind_change_id", scoring.ErrInvalidQueue},
		{"unknown build change", func(r *pb.SpeculationRequest) { r.Builds[1].ChangeId = "zz" }, "builds[1].change_id", scoring.ErrInvalidQueue},
		{"path behind", func(r *pb.SpeculationRequest) { r.Builds[0].ChangeId = "a"; r.Builds[0].PathChangeIds = []string{"b"} }, "builds[0].path_change_ids[0]", scoring.ErrInvalidQueue},
		{"no status", func(r *pb.SpeculationRequest) { r.Builds[0].Status = 0 }, "builds[0].status", scoring.ErrInvalidQueue},
		{"no arrival for sq2024", func(r *pb.SpeculationRequest) {
			r.Policy = pb.SpeculationPolicy_SPECULATION_POLICY_SQ2024
			r.Changes[0].ArrivedAt = nil
		}, "changes[0].arrived_at", scoring.ErrInvalidQueue},
		{"bad policy", func(r *pb.SpeculationRequest) { r.Policy = 42 }, "policy", scoring.ErrInvalidConfig},
		// A path id that is neither pending nor listed as landed used to be taken as
		// landed and dropped, so a typo moved the build onto another path.
		{"unknown path id", func(r *pb.SpeculationRequest) { r.Builds[0].PathChangeIds = []string{"landed-long-ago", "A"} },
			`builds[0].path_change_ids[1]: unknown change "A"`, scoring.ErrInvalidQueue},
		{"landed id not listed", func(r *pb.SpeculationRequest) { r.LandedChangeIds = nil },
			`builds[0].path_change_ids[0]: unknown change "landed-long-ago"`, scoring.ErrInvalidQueue},
		{"duplicate pending path id", func(r *pb.SpeculationRequest) { r.Builds[0].PathChangeIds = []string{"a", "a"} },
			`builds[0].path_change_ids[1]: duplicate change "a"`, scoring.ErrInvalidQueue},
		{"duplicate landed path id", func(r *pb.SpeculationRequest) {
			r.Builds[1].PathChangeIds = []string{"landed-long-ago", "a", "landed-long-ago"}
		}, `builds[1].path_change_ids[2]: duplicate change "landed-long-ago"`, scoring.ErrInvalidQueue},
		{"empty landed id", func(r *pb.SpeculationRequest) { r.LandedChangeIds = append(r.LandedChangeIds, "") },
			"landed_change_ids[1]: empty", scoring.ErrInvalidQueue},
		{"duplicate landed id", func(r *pb.SpeculationRequest) { r.LandedChangeIds = append(r.LandedChangeIds, "landed-long-ago") },
			"landed_change_ids[1]: duplicate", scoring.ErrInvalidQueue},
		{"landed id pending", func(r *pb.SpeculationRequest) { r.LandedChangeIds = append(r.LandedChangeIds, "b") },
			"landed_change_ids[1]: \"b\" is a pending change", scoring.ErrInvalidQueue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := testRequest()
			tc.edit(req)
			_, _, err := SpeculationFromProto(req)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("SpeculationFromProto = %v, want %v naming %s", err, tc.wantErr, tc.wantField)
			}
		})
	}
}

func TestBatchProto(t *testing.T) {
	q, err := BatchFromProto(&pb.BatchRequest{CommonPSucc: 0.9, MaxBatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	c, err := scoring.CompareBatching(q)
	if err != nil {
		t.Fatal(err)
	}
	resp := BatchToProto(c)
	if resp.GetOnePhase().GetBestB() != 4 || len(resp.GetTwoPhase().GetByB()) != 8 || resp.GetTwoPhase().GetByB()[7].GetBatchSize() != 8 {
		t.Errorf("BatchToProto = %v", resp)
	}
	if _, err := BatchFromProto(&pb.BatchRequest{MaxBatchSize: -1}); !errors.Is(err, scoring.ErrInvalidBatch) || !strings.Contains(err.Error(), "max_batch_size") {
		t.Errorf("BatchFromProto(max -1) = %v", err)
	}
}
