package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/server"
)

// benchBuildRequest returns a PredictBuildTime request of n builds of n random changes.
func benchBuildRequest(n int) *pb.PredictBuildTimeRequest {
	rnd := rand.New(rand.NewPCG(1, 1))
	req := &pb.PredictBuildTimeRequest{}
	for i := range n {
		c := randomChange(rnd, i)
		req.Changes = append(req.Changes, server.ChangeToProto(&c))
		req.Builds = append(req.Builds, &pb.BuildQuery{BuildId: fmt.Sprint("B", i), ChangeId: c.ChangeID, Speculation: server.SpecToProto(randomSpec(rnd))})
	}
	return req
}

// benchSpeculationRequest returns a queue of n changes, each conflicting with up to two
// of the ten changes ahead, everything left to the models.
func benchSpeculationRequest(n int) *pb.ScoreSpeculationRequest {
	rnd := rand.New(rand.NewPCG(1, 1))
	req := &pb.ScoreSpeculationRequest{Capacity: int32(n / 5), Policy: pb.SpeculationPolicy_SPECULATION_POLICY_SQ2024, SpeculationThreshold: 0.01}
	seen := map[[2]int]bool{}
	for i := range n {
		c := randomChange(rnd, i)
		pc := server.ChangeToProto(&c)
		req.Changes = append(req.Changes, &pb.QueueChange{Change: pc, ArrivedAt: pc.GetSubmittedAt(), Speculation: server.SpecToProto(randomSpec(rnd))})
		for range rnd.IntN(3) {
			if a := i - 1 - rnd.IntN(10); a >= 0 && !seen[[2]int{a, i}] {
				seen[[2]int{a, i}] = true
				req.Conflicts = append(req.Conflicts, &pb.QueueConflict{AheadChangeId: req.Changes[a].GetChange().GetChangeId(), BehindChangeId: c.ChangeID})
			}
		}
	}
	return req
}

var benchSink proto.Message

// benchmarkBuildTime times PredictBuildTime of n builds, over loopback gRPC (through the
// options and admission predictd serves with) or by calling the service in process.
// With deadline every request carries a deadline (an hour away) that comes before the
// server's --max-request-time (set to two hours), as merge-queue clients set one.
func benchmarkBuildTime(b *testing.B, n int, loopback, deadline bool) {
	var cfg server.Config
	ctx := context.Background()
	if deadline {
		cfg.Limits.MaxRequestTime = 2 * time.Hour
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Hour)
		defer cancel()
	}
	e := newTestEnv(b, cfg, true)
	req := benchBuildRequest(n)
	cfg.Repo, cfg.Log = e.repo, discard
	svc, err := server.NewPredictor(cfg, e.models)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var resp *pb.PredictBuildTimeResponse
		if loopback {
			resp, err = e.client.PredictBuildTime(ctx, req)
		} else {
			resp, err = svc.PredictBuildTime(ctx, req)
		}
		if err != nil {
			b.Fatal(err)
		}
		benchSink = resp
	}
}

func BenchmarkPredictBuildTime1InProcess(b *testing.B)    { benchmarkBuildTime(b, 1, false, false) }
func BenchmarkPredictBuildTime1Loopback(b *testing.B)     { benchmarkBuildTime(b, 1, true, false) }
func BenchmarkPredictBuildTime1000InProcess(b *testing.B) { benchmarkBuildTime(b, 1000, false, false) }
func BenchmarkPredictBuildTime1000Loopback(b *testing.B)  { benchmarkBuildTime(b, 1000, true, false) }
func BenchmarkPredictBuildTime1DeadlineInProcess(b *testing.B) {
	benchmarkBuildTime(b, 1, false, true)
}
func BenchmarkPredictBuildTime1DeadlineLoopback(b *testing.B) { benchmarkBuildTime(b, 1, true, true) }

func benchmarkSpeculation(b *testing.B, n int, loopback bool) {
	e := newTestEnv(b, server.Config{}, true)
	req := benchSpeculationRequest(n)
	svc, err := server.NewPredictor(server.Config{Repo: e.repo, Log: discard}, e.models)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var resp *pb.ScoreSpeculationResponse
		if loopback {
			resp, err = e.client.ScoreSpeculation(ctx, req)
		} else {
			resp, err = svc.ScoreSpeculation(ctx, req)
		}
		if err != nil {
			b.Fatal(err)
		}
		benchSink = resp
	}
}

func BenchmarkScoreSpeculation500InProcess(b *testing.B) { benchmarkSpeculation(b, 500, false) }
func BenchmarkScoreSpeculation500Loopback(b *testing.B)  { benchmarkSpeculation(b, 500, true) }
