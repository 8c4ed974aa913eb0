package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/server"
)

// blockingPredictor answers PredictBuildTime once release is closed, signalling each
// arrival on entered, so that a test controls how many requests are in flight.
type blockingPredictor struct {
	pb.UnimplementedPredictorServer
	entered chan struct{}
	release chan struct{}
}

func (b *blockingPredictor) PredictBuildTime(ctx context.Context, _ *pb.PredictBuildTimeRequest) (*pb.PredictBuildTimeResponse, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
		return &pb.PredictBuildTimeResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startLimited serves svc on 127.0.0.1:0 with ServerOptions(l) and returns a client and
// the metrics registry.
func startLimited(t *testing.T, l server.Limits, svc pb.PredictorServer) (pb.PredictorClient, *prometheus.Registry) {
	t.Helper()
	promReg := prometheus.NewRegistry()
	opts, err := server.ServerOptions(l, server.NewMetrics(promReg))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(opts...)
	server.RegisterPredictor(gs, svc)
	return serveClient(t, gs), promReg
}

// serveClient serves gs on 127.0.0.1:0 until the test ends and returns a client of it.
func serveClient(t *testing.T, gs *grpc.Server) pb.PredictorClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewPredictorClient(conn)
}

// TestLimiterSheds: with --max-inflight 2 and two requests of a method in flight, a
// third is shed with RESOURCE_EXHAUSTED naming the limit and counted; once the two
// finish, the method serves again. Issue 14 item 4.
func TestLimiterSheds(t *testing.T) {
	svc := &blockingPredictor{entered: make(chan struct{}, 4), release: make(chan struct{})}
	c, promReg := startLimited(t, server.Limits{MaxInflight: 2}, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{})
			errs <- err
		}()
	}
	for range 2 {
		<-svc.entered
	}
	_, err := c.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{})
	checkShed(t, err, server.LimitMaxInflight)
	// Another method has its own slots: it is not shed. The test server registers
	// only PredictBuildTime, so PredictSuccess reaches gRPC's Unimplemented answer.
	if _, err := c.PredictSuccess(ctx, &pb.PredictSuccessRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("PredictSuccess with PredictBuildTime full = %v, want Unimplemented", err)
	}
	if got := counter(t, promReg, "predictd_requests_shed_total"); got != 1 {
		t.Errorf("predictd_requests_shed_total{PredictBuildTime} = %v, want 1", got)
	}
	close(svc.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("request in flight = %v, want served", err)
		}
	}
	// The slots come back when the streams end, just after the responses: retry
	// until one is admitted.
	for {
		_, err := c.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{})
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("request after the others finished = %v", err)
		}
	}
}

// checkShed fails t unless err is the RESOURCE_EXHAUSTED of a request shed by limit:
// its message names the flag, and its details say which limit and that a retry may
// pass (client.Client retries).
func checkShed(t *testing.T, err error, limit string) {
	t.Helper()
	flag := "--" + strings.ReplaceAll(limit, "_", "-")
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), flag) {
		t.Errorf("shed request = %v, want RESOURCE_EXHAUSTED naming %s", err, flag)
	}
	var retry, quota bool
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			retry = d.GetRetryDelay().AsDuration() == server.ShedRetryDelay
		case *errdetails.QuotaFailure:
			quota = len(d.GetViolations()) == 1 && strings.Contains(d.GetViolations()[0].GetDescription(), limit)
		}
	}
	if !retry || !quota {
		t.Errorf("shed status details %v, want a RetryInfo of %v and a QuotaFailure naming %s", status.Convert(err).Details(), server.ShedRetryDelay, limit)
	}
}

// TestMaxRecvBytes: a request above MaxRecvBytes is refused with RESOURCE_EXHAUSTED, and
// one above gRPC's former 4 MiB default but under the limit is read. Issue 14 item 4.
func TestMaxRecvBytes(t *testing.T) {
	svc := &blockingPredictor{entered: make(chan struct{}, 4), release: make(chan struct{})}
	close(svc.release)
	c, _ := startLimited(t, server.Limits{MaxRecvBytes: 6 << 20}, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := func(n int) *pb.PredictBuildTimeRequest {
		return &pb.PredictBuildTimeRequest{Changes: []*pb.Change{{ChangeId: strings.Repeat("x", n)}}}
	}
	if _, err := c.PredictBuildTime(ctx, req(5<<20), grpc.MaxCallSendMsgSize(16<<20)); err != nil {
		t.Errorf("5 MiB request under a 6 MiB limit = %v, want served", err)
	}
	if _, err := c.PredictBuildTime(ctx, req(7<<20), grpc.MaxCallSendMsgSize(16<<20)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("7 MiB request over a 6 MiB limit = %v, want RESOURCE_EXHAUSTED", err)
	}
}

// TestServerOptionsInvalid: a negative limit is a configuration error.
func TestServerOptionsInvalid(t *testing.T) {
	for _, l := range []server.Limits{{MaxInflight: -1}, {MaxRequestMemory: -1}, {MaxConcurrentStreams: -1}, {KeepaliveTime: -time.Second}, {HandshakeTimeout: -1}} {
		if _, err := server.ServerOptions(l, nil); err == nil {
			t.Errorf("ServerOptions(%+v) = nil error, want ErrConfig", l)
		}
	}
}
