package server

import (
	"fmt"
	"math"
	"slices"

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
		fam, err := FamilyFromProto(c.GetBuildTimeFamily(), scoring.BuildNormal)
		if err != nil {
			return q, cfg, fmt.Errorf("server: changes[%d].build_time_family: %w: %w", i, err, scoring.ErrInvalidQueue)
		}
		q.Changes[i] = scoring.Change{
			Arrival:     arrival,
			PSucc:       c.GetPSucc(),
			BuildMu:     c.GetBuildTimeMeanSeconds(),
			BuildSigma:  c.GetBuildTimeStddevSeconds(),
			BuildFamily: fam,
		}
	}

	q.Conflicts = make([]scoring.Conflict, len(req.GetConflicts()))
	// pairs maps each edge (ahead, behind) to its index, to refuse duplicates.
	pairs := make(map[[2]int]int, len(req.GetConflicts()))
	for e, c := range req.GetConflicts() {
		a, ok := index[c.GetAheadChangeId()]
		if !ok {
			return q, cfg, fmt.Errorf("server: conflicts[%d].ahead_change_id: %q is not a pending change: %w", e, c.GetAheadChangeId(), scoring.ErrInvalidQueue)
		}
		b, ok := index[c.GetBehindChangeId()]
		if !ok {
			return q, cfg, fmt.Errorf("server: conflicts[%d].behind_change_id: %q is not a pending change: %w", e, c.GetBehindChangeId(), scoring.ErrInvalidQueue)
		}
		switch {
		case a == b:
			return q, cfg, fmt.Errorf("server: conflicts[%d].behind_change_id: %q names the same change as ahead_change_id: %w", e, c.GetBehindChangeId(), scoring.ErrInvalidQueue)
		case a > b:
			// An edge is directed by queue order; a reversed one would silently turn a
			// cycle (a before b before a) into a plan.
			return q, cfg, fmt.Errorf("server: conflicts[%d].ahead_change_id: %q (changes[%d]) is behind %q (changes[%d]) in the queue: %w",
				e, c.GetAheadChangeId(), a, c.GetBehindChangeId(), b, scoring.ErrInvalidQueue)
		}
		if e0, dup := pairs[[2]int{a, b}]; dup {
			return q, cfg, fmt.Errorf("server: conflicts[%d]: duplicates conflicts[%d] (%q ahead of %q): %w", e, e0, c.GetAheadChangeId(), c.GetBehindChangeId(), scoring.ErrInvalidQueue)
		}
		pairs[[2]int{a, b}] = e
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

	// landedConf maps each pending change to the landed changes it conflicts with.
	landedConf := map[int][]string{}
	seenLC := map[[2]string]int{}
	for x, lc := range req.GetLandedConflicts() {
		l, pid := lc.GetLandedChangeId(), lc.GetPendingChangeId()
		if !landed[l] {
			return q, cfg, fmt.Errorf("server: landed_conflicts[%d].landed_change_id: %q is not in landed_change_ids: %w", x, l, scoring.ErrInvalidQueue)
		}
		j, ok := index[pid]
		if !ok {
			return q, cfg, fmt.Errorf("server: landed_conflicts[%d].pending_change_id: %q is not a pending change: %w", x, pid, scoring.ErrInvalidQueue)
		}
		if x0, dup := seenLC[[2]string{l, pid}]; dup {
			return q, cfg, fmt.Errorf("server: landed_conflicts[%d]: duplicates landed_conflicts[%d]: %w", x, x0, scoring.ErrInvalidQueue)
		}
		seenLC[[2]string{l, pid}] = x
		landedConf[j] = append(landedConf[j], l)
	}

	// conflictsAhead[j] marks the pending changes ahead that conflict with j: only they
	// shape the node a build of j decides.
	conflictsAhead := make(map[int]map[int]bool)
	for _, c := range q.Conflicts {
		if conflictsAhead[c.B] == nil {
			conflictsAhead[c.B] = map[int]bool{}
		}
		conflictsAhead[c.B][c.A] = true
	}
	// onPath holds the ids seen on the path being converted, to refuse duplicates.
	onPath := map[string]bool{}
	buildIDs := make(map[string]int, len(req.GetBuilds()))
	// results maps a finished build's change and node (its path over the conflicting
	// changes ahead) to the first such build, to refuse contradicting results.
	results := map[string]int{}
	q.Builds = make([]scoring.Build, len(req.GetBuilds()))
	for x, b := range req.GetBuilds() {
		switch id := b.GetBuildId(); {
		case id == "":
			return q, cfg, fmt.Errorf("server: builds[%d].build_id: empty: %w", x, scoring.ErrInvalidQueue)
		default:
			if x0, dup := buildIDs[id]; dup {
				return q, cfg, fmt.Errorf("server: builds[%d].build_id: duplicate %q, also builds[%d]: %w", x, id, x0, scoring.ErrInvalidQueue)
			}
			buildIDs[id] = x
		}
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
		stale := false
		for _, l := range landedConf[j] {
			if !onPath[l] {
				stale = true
				break
			}
		}
		q.Builds[x] = scoring.Build{Change: j, Path: path, Status: status, StaleBase: stale}
		if status == scoring.BuildRunning || stale {
			continue
		}
		key := nodeKey(j, path, conflictsAhead[j])
		if x0, seen := results[key]; seen && q.Builds[x0].Status != status {
			return q, cfg, fmt.Errorf("server: builds[%d].status: %v contradicts builds[%d] (%v) on the same path of %q: %w",
				x, b.GetStatus(), x0, req.GetBuilds()[x0].GetStatus(), b.GetChangeId(), scoring.ErrInvalidQueue)
		} else if !seen {
			results[key] = x
		}
	}
	return q, cfg, nil
}

// nodeKey names the node of change j that a build on path decides: j and the sorted
// path entries that conflict with j (the others do not shape the node).
func nodeKey(j int, path []int, conflicting map[int]bool) string {
	var rel []int
	for _, k := range path {
		if conflicting[k] {
			rel = append(rel, k)
		}
	}
	slices.Sort(rel)
	return fmt.Sprint(j, rel)
}

// FamilyFromProto returns the scoring family of f, unspecified for BUILD_TIME_FAMILY_UNSPECIFIED,
// and an error for a value the proto does not define.
func FamilyFromProto(f pb.BuildTimeFamily, unspecified scoring.BuildFamily) (scoring.BuildFamily, error) {
	switch f {
	case pb.BuildTimeFamily_BUILD_TIME_FAMILY_UNSPECIFIED:
		return unspecified, nil
	case pb.BuildTimeFamily_BUILD_TIME_FAMILY_NORMAL:
		return scoring.BuildNormal, nil
	case pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL:
		return scoring.BuildLogNormal, nil
	}
	return 0, fmt.Errorf("unknown build-time family %d", f)
}

// FamilyToProto returns the proto form of the scoring family f.
func FamilyToProto(f scoring.BuildFamily) pb.BuildTimeFamily {
	if f == scoring.BuildLogNormal {
		return pb.BuildTimeFamily_BUILD_TIME_FAMILY_LOG_NORMAL
	}
	return pb.BuildTimeFamily_BUILD_TIME_FAMILY_NORMAL
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
		TruncatedBy:      plan.Limit,
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
			node.StaleBase = n.StaleBase
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
