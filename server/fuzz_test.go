package server_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

// FuzzRequestToScoring feeds arbitrary bytes, read as each request message, through
// the service in process (validation, conversion to datasets and features values,
// scoring, planning, batching). It must never panic; an error must be InvalidArgument, and an
// answer must hold one finite prediction per item, probabilities in [0, 1].
func FuzzRequestToScoring(f *testing.F) {
	dir := f.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		f.Fatal(err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if err != nil {
		f.Fatal(err)
	}
	m, err := bundleload.FromBundle(b, registry.RoleChampion)
	if err != nil {
		f.Fatal(err)
	}
	models := &server.Models{}
	models.Set(registry.RoleChampion, m)
	svc, err := server.NewPredictor(server.Config{Repo: b.Manifest.Repo, MaxBatch: 64, Log: discard}, models)
	if err != nil {
		f.Fatal(err)
	}

	rnd := rand.New(rand.NewPCG(1, 1))
	var changes []*pb.Change
	for i := range 4 {
		c := randomChange(rnd, i)
		changes = append(changes, server.ChangeToProto(&c))
	}
	spec := server.SpecToProto(randomSpec(rnd))
	seeds := []proto.Message{
		&pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: changes[0], Speculation: spec}, {Change: changes[1]}}},
		&pb.PredictConflictRequest{Changes: changes, Pairs: []*pb.ConflictQuery{{AheadChangeId: changes[0].GetChangeId(), BehindChangeId: changes[2].GetChangeId()}}},
		&pb.PredictBuildTimeRequest{Changes: changes[:2], Builds: []*pb.BuildQuery{{BuildId: "B1", ChangeId: changes[1].GetChangeId(), Speculation: spec}}},
		&pb.ScoreSpeculationRequest{Capacity: 3, Changes: []*pb.QueueChange{{Change: changes[0], PSucc: proto.Float64(0.7)}, {Change: changes[1]}, {Change: changes[2]}},
			Conflicts: []*pb.QueueConflict{{AheadChangeId: changes[0].GetChangeId(), BehindChangeId: changes[2].GetChangeId()}},
			Builds:    []*pb.StartedBuild{{BuildId: "B1", ChangeId: changes[2].GetChangeId(), PathChangeIds: []string{changes[0].GetChangeId()}, Status: pb.BuildStatus_BUILD_STATUS_RUNNING}}},
	}
	for _, s := range seeds {
		bs, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bs)
	}
	bs, err := proto.Marshal(&pb.BatchRequest{PSucc: []float64{0.9, 0.8}, MaxBatchSize: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bs)
	f.Add([]byte{})

	ctx := context.Background()
	check := func(t *testing.T, what string, err error) bool {
		t.Helper()
		if err != nil && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("%s: %v, want nil or InvalidArgument", what, err)
		}
		return err == nil
	}
	prob := func(t *testing.T, what string, p float64) {
		t.Helper()
		if !(p >= 0 && p <= 1) {
			t.Fatalf("%s = %v, not a probability", what, p)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var sreq pb.PredictSuccessRequest
		if proto.Unmarshal(data, &sreq) == nil {
			resp, err := svc.PredictSuccess(ctx, &sreq)
			if check(t, "PredictSuccess", err) {
				if len(resp.GetPredictions()) != len(sreq.GetChanges()) {
					t.Fatalf("PredictSuccess: %d predictions for %d changes", len(resp.GetPredictions()), len(sreq.GetChanges()))
				}
				for _, p := range resp.GetPredictions() {
					prob(t, "p_succ", p.GetPSucc())
				}
			}
		}
		var creq pb.PredictConflictRequest
		if proto.Unmarshal(data, &creq) == nil {
			resp, err := svc.PredictConflict(ctx, &creq)
			if check(t, "PredictConflict", err) {
				for _, p := range resp.GetPredictions() {
					prob(t, "p_conf", p.GetPConf())
				}
			}
		}
		var breq pb.PredictBuildTimeRequest
		if proto.Unmarshal(data, &breq) == nil {
			resp, err := svc.PredictBuildTime(ctx, &breq)
			if check(t, "PredictBuildTime", err) {
				for _, p := range resp.GetPredictions() {
					if math.IsNaN(p.GetMeanSeconds()) || !(p.GetStddevSeconds() > 0) {
						t.Fatalf("build time (%v, %v)", p.GetMeanSeconds(), p.GetStddevSeconds())
					}
				}
			}
		}
		var bq pb.BatchRequest
		if proto.Unmarshal(data, &bq) == nil {
			resp, err := svc.CompareBatching(ctx, &bq)
			if check(t, "CompareBatching", err) && !(resp.GetOnePhase().GetBestB() >= 1) {
				t.Fatalf("CompareBatching: best batch size %d", resp.GetOnePhase().GetBestB())
			}
		}
		var qreq pb.ScoreSpeculationRequest
		if proto.Unmarshal(data, &qreq) == nil {
			resp, err := svc.ScoreSpeculation(ctx, &qreq)
			if check(t, "ScoreSpeculation", err) {
				if len(resp.GetChanges()) != len(qreq.GetChanges()) {
					t.Fatalf("ScoreSpeculation: %d scored changes for %d", len(resp.GetChanges()), len(qreq.GetChanges()))
				}
				for _, n := range resp.GetPlan().GetNodes() {
					prob(t, "p_needed", n.GetPNeeded())
				}
			}
		}
	})
}
