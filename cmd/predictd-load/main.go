package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sqpredict/sqpredict/client"
	"github.com/sqpredict/sqpredict/internal/loadgen"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "predictd-load:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("predictd-load", flag.ContinueOnError)
	target := fs.String("target", "127.0.0.1:50051", "predictd address")
	mode := fs.String("mode", "single", "single, batch or speculation")
	rate := fs.Float64("rate", 2000, "requests per second")
	duration := fs.Duration("duration", 10*time.Second, "how long to send")
	batch := fs.Int("batch", 1000, "builds per request in batch mode")
	changes := fs.Int("changes", 500, "pending changes per request in speculation mode")
	concurrency := fs.Int("concurrency", 256, "requests in flight at most")
	attempts := fs.Int("attempts", 1, "tries of each request: retries Unavailable and requests shed under load (RESOURCE_EXHAUSTED with RetryInfo); latencies include the retries")
	acceptShed := fs.Bool("accept-shed", false, "count RESOURCE_EXHAUSTED answers (load shedding) apart instead of as failures")
	tlsCA := fs.String("tls-ca", "", "connect with TLS, trusting the CA certificates of this PEM file")
	tlsCert := fs.String("tls-cert", "", "client certificate (PEM) for a predictd with --tls-client-ca; with --tls-key and --tls-ca")
	tlsKey := fs.String("tls-key", "", "client private key (PEM)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	creds := insecure.NewCredentials()
	if *tlsCA != "" || *tlsCert != "" {
		var err error
		if creds, err = client.TLSCredentials(*tlsCA, *tlsCert, *tlsKey); err != nil {
			return err
		}
	}
	conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(creds), grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		return err
	}
	defer conn.Close()
	// Through client.Client, which retries Unavailable and shed requests up to
	// --attempts times (1: never), the first retry after the server's RetryInfo delay.
	c, err := client.New(conn, client.Config{MaxAttempts: *attempts, InitialBackoff: time.Millisecond})
	if err != nil {
		return err
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	var call func(ctx context.Context, i int) error
	switch *mode {
	case "single":
		reqs := make([]*pb.PredictBuildTimeRequest, 1000)
		for i := range reqs {
			reqs[i] = buildRequest(rnd, i, 1)
		}
		call = func(ctx context.Context, i int) error {
			_, err := c.PredictBuildTime(ctx, reqs[i%len(reqs)])
			return err
		}
	case "batch":
		req := buildRequest(rnd, 0, *batch)
		call = func(ctx context.Context, _ int) error { _, err := c.PredictBuildTime(ctx, req); return err }
	case "speculation":
		req := speculationRequest(rnd, *changes)
		call = func(ctx context.Context, _ int) error { _, err := c.ScoreSpeculation(ctx, req); return err }
	default:
		return fmt.Errorf("--mode %q: want single, batch or speculation", *mode)
	}
	// One warm-up call, so that the connection is up before the clock starts.
	if err := call(ctx, 0); err != nil {
		return fmt.Errorf("warm-up call: %w", err)
	}
	var shed atomic.Int64
	if *acceptShed {
		inner := call
		call = func(ctx context.Context, i int) error {
			err := inner(ctx, i)
			if status.Code(err) == codes.ResourceExhausted {
				shed.Add(1)
				return nil
			}
			return err
		}
	}
	res, err := loadgen.Run(ctx, loadgen.Config{Rate: *rate, Duration: *duration, Concurrency: *concurrency, Call: call})
	if err != nil {
		return err
	}
	fmt.Printf("mode %s rate %.0f/s duration %v: %v", *mode, *rate, *duration, res)
	if *acceptShed {
		fmt.Printf(" shed %d (RESOURCE_EXHAUSTED, counted as answered)", shed.Load())
	}
	fmt.Println()
	if res.FirstError != nil {
		return errors.Join(fmt.Errorf("%d requests failed", res.Errors), res.FirstError)
	}
	return nil
}

// change returns a change with random attributes, change id C<i>.
func change(rnd *rand.Rand, i int) *pb.Change {
	f := func(max int) *float64 { return proto.Float64(float64(rnd.IntN(max))) }
	targets := make([]string, 1+rnd.IntN(4))
	for k := range targets {
		targets[k] = fmt.Sprintf("//team%02d/t%04d", rnd.IntN(20), rnd.IntN(100))
	}
	return &pb.Change{
		ChangeId:       fmt.Sprintf("C%07d", i),
		Author:         fmt.Sprintf("dev%04d", rnd.IntN(300)),
		SubmittedAt:    timestamppb.New(time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)),
		TargetsChanged: f(5), TargetsAdded: f(2), TargetsRemoved: f(2), LinesAdded: f(500), LinesRemoved: f(200),
		Hunks: f(20), FilesChanged: f(15), Commits: proto.Float64(1), InitialChecksPassed: f(10), InitialChecksFailed: f(2),
		RevisionSubmissions: proto.Float64(1), AuthorTenureDays: f(2000), AuthorLevel: f(5),
		AffectedTargets: &pb.TargetList{Names: targets},
	}
}

func counts(rnd *rand.Rand) *pb.SpeculationCounts {
	return &pb.SpeculationCounts{
		Succeeded: proto.Float64(0), Failed: proto.Float64(float64(rnd.IntN(2))), Height: proto.Float64(float64(rnd.IntN(4))),
		ConflictsCount: proto.Float64(float64(rnd.IntN(5))), QueueAhead: proto.Float64(float64(rnd.IntN(30))),
		PathChanges: proto.Float64(0), PathLinesChanged: proto.Float64(0),
	}
}

// buildRequest returns a PredictBuildTime request of n builds of n changes.
func buildRequest(rnd *rand.Rand, first, n int) *pb.PredictBuildTimeRequest {
	req := &pb.PredictBuildTimeRequest{}
	for i := first; i < first+n; i++ {
		c := change(rnd, i)
		req.Changes = append(req.Changes, c)
		req.Builds = append(req.Builds, &pb.BuildQuery{BuildId: fmt.Sprintf("B%07d", i), ChangeId: c.GetChangeId(), Speculation: counts(rnd)})
	}
	return req
}

// speculationRequest returns a queue of n pending changes, each conflicting with up to
// two of the ten changes ahead of it, with nothing predicted by the caller.
func speculationRequest(rnd *rand.Rand, n int) *pb.ScoreSpeculationRequest {
	req := &pb.ScoreSpeculationRequest{Capacity: int32(max(1, n/5)), Policy: pb.SpeculationPolicy_SPECULATION_POLICY_SQ2024, SpeculationThreshold: 0.01}
	for i := range n {
		c := change(rnd, i)
		req.Changes = append(req.Changes, &pb.QueueChange{Change: c, ArrivedAt: c.GetSubmittedAt(), Speculation: counts(rnd)})
		for range rnd.IntN(3) {
			if a := i - 1 - rnd.IntN(10); a >= 0 {
				req.Conflicts = append(req.Conflicts, &pb.QueueConflict{AheadChangeId: fmt.Sprintf("C%07d", a), BehindChangeId: c.GetChangeId()})
			}
		}
	}
	// Edges are unique per (ahead, behind): drop repeats.
	seen := map[[2]string]bool{}
	kept := req.Conflicts[:0]
	for _, e := range req.Conflicts {
		k := [2]string{e.GetAheadChangeId(), e.GetBehindChangeId()}
		if !seen[k] {
			seen[k] = true
			kept = append(kept, e)
		}
	}
	req.Conflicts = kept
	return req
}
