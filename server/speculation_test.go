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
		// Issue 14: a reversed edge was silently turned around, so a cycle planned.
		{"reversed edge", func(r *pb.SpeculationRequest) { r.Conflicts[0].AheadChangeId, r.Conflicts[0].BehindChangeId = "b", "a" },
			`conflicts[0].ahead_change_id: "b" (changes[1]) is behind "a"`, scoring.ErrInvalidQueue},
		{"two-way cycle", func(r *pb.SpeculationRequest) {
			r.Conflicts = append(r.Conflicts, &pb.ConflictEdge{AheadChangeId: "b", BehindChangeId: "a", PConf: 0.2})
		}, "conflicts[1].ahead_change_id", scoring.ErrInvalidQueue},
		{"self edge", func(r *pb.SpeculationRequest) { r.Conflicts[0].BehindChangeId = "a" }, "conflicts[0].behind_change_id", scoring.ErrInvalidQueue},
		{"duplicate edge", func(r *pb.SpeculationRequest) {
			r.Conflicts = append(r.Conflicts, &pb.ConflictEdge{AheadChangeId: "a", BehindChangeId: "b", PConf: 0.2})
		}, "conflicts[1]: duplicates conflicts[0]", scoring.ErrInvalidQueue},
		{"duplicate build id", func(r *pb.SpeculationRequest) { r.Builds[1].BuildId = "x" }, `builds[1].build_id: duplicate "x", also builds[0]`, scoring.ErrInvalidQueue},
		{"empty build id", func(r *pb.SpeculationRequest) { r.Builds[1].BuildId = "" }, "builds[1].build_id: empty", scoring.ErrInvalidQueue},
		{"contradictory results", func(r *pb.SpeculationRequest) {
			r.Builds[0].Status = pb.BuildStatus_BUILD_STATUS_SUCCEEDED
			r.Builds = append(r.Builds, &pb.StartedBuild{BuildId: "z", ChangeId: "b", PathChangeIds: []string{"a"}, Status: pb.BuildStatus_BUILD_STATUS_FAILED})
		}, "builds[2].status: BUILD_STATUS_FAILED contradicts builds[0]", scoring.ErrInvalidQueue},
		{"landed conflict unknown landed", func(r *pb.SpeculationRequest) {
			r.LandedConflicts = []*pb.LandedConflict{{LandedChangeId: "nope", PendingChangeId: "b"}}
		}, "landed_conflicts[0].landed_change_id", scoring.ErrInvalidQueue},
		{"landed conflict unknown pending", func(r *pb.SpeculationRequest) {
			r.LandedConflicts = []*pb.LandedConflict{{LandedChangeId: "landed-long-ago", PendingChangeId: "zz"}}
		}, "landed_conflicts[0].pending_change_id", scoring.ErrInvalidQueue},
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

// TestSameResultsAccepted checks that two finished builds agreeing on one path, or
// differing only by changes that do not conflict with the build's change, are accepted.
func TestSameResultsAccepted(t *testing.T) {
	req := testRequest()
	req.Changes = append(req.Changes, &pb.PendingChange{ChangeId: "c", PSucc: 0.9})
	req.Conflicts = append(req.Conflicts, &pb.ConflictEdge{AheadChangeId: "b", BehindChangeId: "c", PConf: 0.1})
	succ := pb.BuildStatus_BUILD_STATUS_SUCCEEDED
	req.Builds = []*pb.StartedBuild{
		{BuildId: "x", ChangeId: "c", PathChangeIds: []string{"b"}, Status: succ},
		{BuildId: "y", ChangeId: "c", PathChangeIds: []string{"a", "b"}, Status: succ}, // a does not conflict with c
	}
	if _, _, err := SpeculationFromProto(req); err != nil {
		t.Fatal(err)
	}
	req.Builds[1].Status = pb.BuildStatus_BUILD_STATUS_FAILED
	if _, _, err := SpeculationFromProto(req); err == nil || !strings.Contains(err.Error(), "builds[1].status") {
		t.Errorf("results differing only off the node: %v, want builds[1].status refused", err)
	}
}

// TestStaleBaseBuild is the scenario of issue 14: X landed and conflicts with J; J's
// finished build ran on a base without X. Without landed_conflicts the build decides
// (J lands); with it J waits, the build is not used and J's node is started again; a
// build whose path names X is current and decides.
func TestStaleBaseBuild(t *testing.T) {
	req := &pb.SpeculationRequest{
		Changes:         []*pb.PendingChange{{ChangeId: "J", PSucc: 0.9}},
		Builds:          []*pb.StartedBuild{{BuildId: "old", ChangeId: "J", Status: pb.BuildStatus_BUILD_STATUS_SUCCEEDED}},
		Capacity:        4,
		LandedChangeIds: []string{"X"},
	}
	plan := func() *pb.SpeculationResponse {
		t.Helper()
		q, cfg, err := SpeculationFromProto(req)
		if err != nil {
			t.Fatal(err)
		}
		p, err := scoring.Speculate(q, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return SpeculationToProto(req, p)
	}
	if v := plan().GetDecisions()[0].GetVerdict(); v != pb.Verdict_VERDICT_LAND {
		t.Fatalf("without landed_conflicts: %v, want LAND (the old behaviour)", v)
	}
	req.LandedConflicts = []*pb.LandedConflict{{LandedChangeId: "X", PendingChangeId: "J"}}
	resp := plan()
	if v := resp.GetDecisions()[0].GetVerdict(); v != pb.Verdict_VERDICT_WAIT {
		t.Errorf("stale build: verdict %v, want WAIT", v)
	}
	if n := resp.GetNodes(); len(n) != 1 || n[0].GetAction() != pb.NodeAction_NODE_ACTION_START {
		t.Errorf("stale build: nodes %v, want J started again", n)
	}
	req.Builds[0].Status = pb.BuildStatus_BUILD_STATUS_RUNNING
	resp = plan()
	var aborted bool
	for _, n := range resp.GetNodes() {
		if n.GetAction() == pb.NodeAction_NODE_ACTION_ABORT && n.GetBuildId() == "old" && n.GetStaleBase() {
			aborted = true
		}
	}
	if !aborted {
		t.Errorf("running stale build: nodes %v, want it aborted with stale_base", resp.GetNodes())
	}
	req.Builds[0].Status = pb.BuildStatus_BUILD_STATUS_SUCCEEDED
	req.Builds[0].PathChangeIds = []string{"X"}
	if v := plan().GetDecisions()[0].GetVerdict(); v != pb.Verdict_VERDICT_LAND {
		t.Errorf("build on a base with X: %v, want LAND", v)
	}
}
