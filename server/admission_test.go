package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/server"
)

// sizedPredictor answers PredictBuildTime requests at once, except those whose first
// change id is longer than big, which wait for release after signalling entered.
type sizedPredictor struct {
	pb.UnimplementedPredictorServer
	big     int
	entered chan int
	release chan struct{}
}

func (s *sizedPredictor) PredictBuildTime(ctx context.Context, req *pb.PredictBuildTimeRequest) (*pb.PredictBuildTimeResponse, error) {
	n := len(req.GetChanges()[0].GetChangeId())
	if n <= s.big {
		return &pb.PredictBuildTimeResponse{}, nil
	}
	s.entered <- n
	select {
	case <-s.release:
		return &pb.PredictBuildTimeResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestWeightedAdmission: with a 10 MiB request-memory budget and a 1 MiB request
// (weighing 8 MiB) in flight, a second 1 MiB request is shed before its handler runs,
// with RESOURCE_EXHAUSTED naming --max-request-memory and counted, while small
// requests are admitted all along; the tap's count limit is not what sheds (it is far
// away). Once the big request ends its weight is released, and a request heavier than
// the whole budget runs when nothing else is in flight. Issue 14.
func TestWeightedAdmission(t *testing.T) {
	const budget = 10 << 20
	svc := &sizedPredictor{big: 1 << 10, entered: make(chan int, 4), release: make(chan struct{})}
	c, promReg := startLimited(t, server.Limits{MaxRequestMemory: budget, MaxInflight: 100}, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := func(n int) *pb.PredictBuildTimeRequest {
		return &pb.PredictBuildTimeRequest{Changes: []*pb.Change{{ChangeId: strings.Repeat("x", n)}}}
	}
	first := make(chan error, 1)
	go func() {
		_, err := c.PredictBuildTime(ctx, req(1<<20))
		first <- err
	}()
	if n := <-svc.entered; n != 1<<20 {
		t.Fatalf("first request entered with a change id of %d bytes, want %d", n, 1<<20)
	}
	for i := range 20 {
		if _, err := c.PredictBuildTime(ctx, req(100)); err != nil {
			t.Errorf("small request %d beside a big one = %v, want admitted", i, err)
		}
	}
	_, err := c.PredictBuildTime(ctx, req(1<<20))
	checkShed(t, err, server.LimitMaxRequestMemory)
	select {
	case n := <-svc.entered:
		t.Errorf("a shed request of %d bytes reached the handler", n)
	default:
	}
	if got := counter(t, promReg, "predictd_requests_shed_total"); got != 1 {
		t.Errorf("predictd_requests_shed_total = %v, want 1", got)
	}
	close(svc.release)
	if err := <-first; err != nil {
		t.Fatalf("first big request = %v, want served", err)
	}
	// Its weight comes back when its stream ends, just after the response: retry a
	// request of 2 MiB (16 MiB, over the whole budget) until it is admitted alone.
	for {
		_, err := c.PredictBuildTime(ctx, req(2<<20))
		if err == nil {
			break
		}
		checkShed(t, err, server.LimitMaxRequestMemory)
		if t.Failed() {
			t.FailNow()
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRegisterPredictorNeedsOptions: a Predictor registered with RegisterPredictor on a
// server without ServerOptions' admission refuses every request with INTERNAL instead
// of serving it unweighed.
func TestRegisterPredictorNeedsOptions(t *testing.T) {
	gs := grpc.NewServer()
	server.RegisterPredictor(gs, &sizedPredictor{})
	c := serveClient(t, gs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{Changes: []*pb.Change{{ChangeId: "c"}}})
	if status.Code(err) != codes.Internal {
		t.Errorf("PredictBuildTime without ServerOptions = %v, want INTERNAL", err)
	}
}
