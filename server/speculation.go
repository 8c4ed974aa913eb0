package server

import (
	"fmt"
	"math"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/scoring"
)

// SpeculationFromProto converts a speculation request into the queue and configuration
// of scoring.Speculate. Changes are indexed in request order; arrival times become
// seconds since the Unix epoch. A path id listed in landed_change_ids is already part
// of HEAD and dropped from the path; any other path id must be a pending change ahead of
// the build's change, and may appear once per path, so that a typo is an error rather
// than a change silently taken as landed. Errors name the request field (as in
// "builds[3].path_change_ids[1]: unknown change "D9"") and wrap scoring.ErrInvalidQueue
// or scoring.ErrInvalidConfig; numeric ranges are checked by scoring.Speculate itself.
func SpeculationFromProto(req *pb.SpeculationRequest) (scoring.Queue, scoring.Config, error) {
	var q scoring.Queue
	var cfg scoring.Config
	switch req.GetPolicy() {
	case pb.SpeculationPolicy_SPECULATION_POLICY_UNSPECIFIED, pb.SpeculationPolicy_SPECULATION_POLICY_SQ2019:
		cfg.Policy = scoring.PolicySQ2019
	case pb.SpeculationPolicy_SPECULATION_POLICY_SQ2024:
		cfg.Policy = scoring.PolicySQ2024
	case pb.SpeculationPolicy_SPECULATION_POLICY_EXPECTED:
		cfg.Policy = scoring.PolicyExpected
	default:
		return q, cfg, fmt.Errorf("server: policy: unknown value %d: %w", req.GetPolicy(), scoring.ErrInvalidConfig)
	}
	cfg.SpeculationThreshold = req.GetSpeculationThreshold()
	cfg.Capacity = int(req.GetCapacity())
	cfg.BLRDThreshold = req.GetBlrdThreshold()
	cfg.FallbackFloor = req.GetFallbackFloor()

	index := make(map[string]int, len(req.GetChanges()))
	q.Changes = make([]scoring.Change, len(req.GetChanges()))
	for i, c := range req.GetChanges() {
		id := c.GetChangeId()
		if id == "" {
			return q, cfg, fmt.Errorf("server: changes[%d].change_id: empty: %w", i, scoring.ErrInvalidQueue)
		}
		if _, dup := index[id]; dup {
			return q, cfg, fmt.Errorf("server: changes[%d].change_id: duplicate %q: %w", i, id, scoring.ErrInvalidQueue)
		}
		index[id] = i
		var arrival float64
		switch at := c.GetArrivedAt(); {
		case at == nil && cfg.Policy != scoring.PolicySQ2019:
			return q, cfg, fmt.Errorf("server: changes[%d].arrived_at: missing, policy %v needs it: %w", i, cfg.Policy, scoring.ErrInvalidQueue)
		case at != nil:
			if err := at.CheckValid(); err != nil {
				return q, cfg, fmt.Errorf("server: changes[%d].arrived_at: %v: %w", i, err, scoring.ErrInvalidQueue)
			}
			arrival = float64(at.GetSeconds()) + float64(at.GetNanos())*1e-9
		}
		q.Changes[i] = scoring.Change{
			Arrival:    arrival,
			PSucc:      c.GetPSucc(),
			BuildMu:    c.GetBuildTimeMeanSeconds(),
			BuildSigma: c.GetBuildTimeStddevSeconds(),
		}
	}

	q.Conflicts = make([]scoring.Conflict, len(req.GetConflicts()))
	for e, c := range req.GetConflicts() {
		a, ok := index[c.GetAheadChangeId()]
		if !ok {
			return q, cfg, fmt.Errorf("server: conflicts[%d].ahead_change_id: %q is not a pending change: %w", e, c.GetAheadChangeId(), scoring.ErrInvalidQueue)
		}
		b, ok := index[c.GetBehindChangeId()]
		if !ok {
			return q, cfg, fmt.Errorf("server: conflicts[%d].behind_change_id: %q is not a pending change: %w", e, c.GetBehindChangeId(), scoring.ErrInvalidQueue)
		}
		q.Conflicts[e] = scoring.Conflict{A: a, B: b, PConf: c.GetPConf()}
	}

	landed := make(map[string]bool, len(req.GetLandedChangeIds()))
	for i, id := range req.GetLandedChangeIds() {
		if id == "" {
			return q, cfg, fmt.Errorf("server: landed_change_ids[%d]: empty: %w", i, scoring.ErrInvalidQueue)
		}
		if _, pending := index[id]; pending {
			return q, cfg, fmt.Errorf("server: landed_change_ids[%d]: %q is a pending change: %w", i, id, scoring.ErrInvalidQueue)
		}
		if landed[id] {
			return q, cfg, fmt.Errorf("server: landed_change_ids[%d]: duplicate %q: %w", i, id, scoring.ErrInvalidQueue)
		}
		landed[id] = true
	}

	// onPath holds the ids seen on the path being converted, to refuse duplicates.
	onPath := map[string]bool{}
	q.Builds = make([]scoring.Build, len(req.GetBuilds()))
	for x, b := range req.GetBuilds() {
		j, ok := index[b.GetChangeId()]
		if !ok {
			return q, cfg, fmt.Errorf("server: builds[%d].change_id: %q is not a pending change: %w", x, b.GetChangeId(), scoring.ErrInvalidQueue)
		}
		var status scoring.BuildStatus
		switch b.GetStatus() {
		case pb.BuildStatus_BUILD_STATUS_RUNNING:
			status = scoring.BuildRunning
		case pb.BuildStatus_BUILD_STATUS_SUCCEEDED:
			status = scoring.BuildSucceeded
		case pb.BuildStatus_BUILD_STATUS_FAILED:
			status = scoring.BuildFailed
		default:
			return q, cfg, fmt.Errorf("server: builds[%d].status: %v is not running, succeeded or failed: %w", x, b.GetStatus(), scoring.ErrInvalidQueue)
		}
		var path []int
		clear(onPath)
		for p, id := range b.GetPathChangeIds() {
			if onPath[id] {
				return q, cfg, fmt.Errorf("server: builds[%d].path_change_ids[%d]: duplicate change %q: %w", x, p, id, scoring.ErrInvalidQueue)
			}
			onPath[id] = true
			k, pending := index[id]
			if !pending {
				if !landed[id] {
					return q, cfg, fmt.Errorf("server: builds[%d].path_change_ids[%d]: unknown change %q (neither pending nor in landed_change_ids): %w", x, p, id, scoring.ErrInvalidQueue)
				}
				continue // part of HEAD already
			}
			if k >= j {
				return q, cfg, fmt.Errorf("server: builds[%d].path_change_ids[%d]: %q is not ahead of %q: %w", x, p, id, b.GetChangeId(), scoring.ErrInvalidQueue)
			}
			path = append(path, k)
		}
		q.Builds[x] = scoring.Build{Change: j, Path: path, Status: status}
	}
	return q, cfg, nil
}

// SpeculationToProto converts the plan that scoring.Speculate made for req into a
// response, naming changes and builds by the ids of req.
func SpeculationToProto(req *pb.SpeculationRequest, plan *scoring.Plan) *pb.SpeculationResponse {
	changes, builds := req.GetChanges(), req.GetBuilds()
	ids := func(idx []int) []string {
		if len(idx) == 0 {
			return nil
		}
		out := make([]string, len(idx))
		for x, i := range idx {
			out[x] = changes[i].GetChangeId()
		}
		return out
	}
	resp := &pb.SpeculationResponse{
		Nodes:            make([]*pb.SpeculationNode, len(plan.Nodes)),
		Decisions:        make([]*pb.ChangeDecision, len(plan.Decisions)),
		ExploredPrefixes: int64(plan.Explored),
		Truncated:        plan.Truncated,
	}
	for x, n := range plan.Nodes {
		node := &pb.SpeculationNode{
			ChangeId:                 changes[n.Change].GetChangeId(),
			AssumedLandedChangeIds:   ids(n.Landed),
			AssumedRejectedChangeIds: ids(n.Rejected),
			PNeeded:                  n.PNeeded,
			LogPNeeded:               n.LogPNeeded,
		}
		switch n.Action {
		case scoring.Start:
			node.Action = pb.NodeAction_NODE_ACTION_START
		case scoring.Keep:
			node.Action = pb.NodeAction_NODE_ACTION_KEEP
		case scoring.Abort:
			node.Action = pb.NodeAction_NODE_ACTION_ABORT
		}
		if n.Build >= 0 {
			node.BuildId = builds[n.Build].GetBuildId()
		}
		resp.Nodes[x] = node
	}
	for x, d := range plan.Decisions {
		dec := &pb.ChangeDecision{
			ChangeId:            changes[d.Change].GetChangeId(),
			BypassedChangeIds:   ids(d.Bypassed),
			WaitingForChangeIds: ids(d.WaitingFor),
			PathsFinished:       int32(min(d.PathsFinished, math.MaxInt32)),
			PathsTotal:          d.PathsTotal,
		}
		switch d.Verdict {
		case scoring.Wait:
			dec.Verdict = pb.Verdict_VERDICT_WAIT
		case scoring.Land:
			dec.Verdict = pb.Verdict_VERDICT_LAND
		case scoring.Reject:
			dec.Verdict = pb.Verdict_VERDICT_REJECT
		}
		switch d.Reason {
		case scoring.WaitDecidingBuild:
			dec.WaitReason = pb.WaitReason_WAIT_REASON_DECIDING_BUILD
		case scoring.WaitPaths:
			dec.WaitReason = pb.WaitReason_WAIT_REASON_PATHS_PENDING
		case scoring.WaitPathsDisagree:
			dec.WaitReason = pb.WaitReason_WAIT_REASON_PATHS_DISAGREE
		}
		resp.Decisions[x] = dec
	}
	return resp
}

// BatchFromProto converts a batch request into a scoring.BatchQuery. A negative
// max_batch_size returns an error naming the field and wrapping scoring.ErrInvalidBatch;
// probabilities are checked by scoring.CompareBatching.
func BatchFromProto(req *pb.BatchRequest) (scoring.BatchQuery, error) {
	if req.GetMaxBatchSize() < 0 {
		return scoring.BatchQuery{}, fmt.Errorf("server: max_batch_size: %d is negative: %w", req.GetMaxBatchSize(), scoring.ErrInvalidBatch)
	}
	return scoring.BatchQuery{
		PSucc:        req.GetPSucc(),
		CommonPSucc:  req.GetCommonPSucc(),
		MaxBatchSize: int(req.GetMaxBatchSize()),
	}, nil
}

// BatchToProto converts the result of scoring.CompareBatching into a response.
func BatchToProto(c scoring.BatchComparison) *pb.BatchResponse {
	scheme := func(s scoring.BatchSizes) *pb.BatchScheme {
		out := &pb.BatchScheme{BestB: int32(s.Best), BuildsPerChange: s.Cost, ByB: make([]*pb.BatchSizeCost, len(s.ByB))}
		for b, cost := range s.ByB {
			out.ByB[b] = &pb.BatchSizeCost{BatchSize: int32(b + 1), BuildsPerChange: cost}
		}
		return out
	}
	return &pb.BatchResponse{OnePhase: scheme(c.OnePhase), TwoPhase: scheme(c.TwoPhase)}
}
