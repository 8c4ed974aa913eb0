package client_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sqpredict/sqpredict/client"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// flaky answers GetModelInfo with code for its first fails calls, then OK. With
// retryInfo the errors carry an errdetails.RetryInfo, as predictd's shed requests do.
type flaky struct {
	pb.UnimplementedPredictorServer
	fails     int32
	code      codes.Code
	retryInfo bool
	calls     atomic.Int32
}

func (f *flaky) GetModelInfo(context.Context, *pb.GetModelInfoRequest) (*pb.GetModelInfoResponse, error) {
	if f.calls.Add(1) <= f.fails {
		st := status.New(f.code, "not now")
		if f.retryInfo {
			var err error
			if st, err = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Millisecond)}); err != nil {
				return nil, err
			}
		}
		return nil, st.Err()
	}
	return &pb.GetModelInfoResponse{ChallengerShare: 0.25}, nil
}

func dial(t *testing.T, srv pb.PredictorServer, cfg client.Config) *client.Client {
	t.Helper()
	gs := grpc.NewServer()
	pb.RegisterPredictorServer(gs, srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	cfg.DialOptions = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	c, err := client.Dial(lis.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fails     int32
		code      codes.Code
		retryInfo bool
		attempts  int
		wantCode  codes.Code
		wantCalls int32
	}{
		{"succeeds after retries", 2, codes.Unavailable, false, 3, codes.OK, 3},
		{"gives up after max attempts", 5, codes.Unavailable, false, 3, codes.Unavailable, 3},
		{"no retry on invalid argument", 5, codes.InvalidArgument, false, 3, codes.InvalidArgument, 1},
		{"one attempt", 1, codes.Unavailable, false, 1, codes.Unavailable, 1},
		// Issue 14: a request shed under load says it may be retried; one too large
		// to pass does not.
		{"retry on a shed request", 2, codes.ResourceExhausted, true, 3, codes.OK, 3},
		{"no retry on resource exhausted without retry info", 2, codes.ResourceExhausted, false, 3, codes.ResourceExhausted, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &flaky{fails: tc.fails, code: tc.code, retryInfo: tc.retryInfo}
			c := dial(t, srv, client.Config{MaxAttempts: tc.attempts, InitialBackoff: time.Millisecond})
			resp, err := c.GetModelInfo(context.Background(), &pb.GetModelInfoRequest{})
			if status.Code(err) != tc.wantCode || srv.calls.Load() != tc.wantCalls {
				t.Errorf("GetModelInfo = %v after %d calls, want %v after %d", err, srv.calls.Load(), tc.wantCode, tc.wantCalls)
			}
			if err == nil && resp.GetChallengerShare() != 0.25 {
				t.Errorf("response = %v", resp)
			}
		})
	}
}

// TestRetryHonoursContext: a context that ends during the backoff ends the call.
func TestRetryHonoursContext(t *testing.T) {
	srv := &flaky{fails: 100, code: codes.Unavailable}
	c := dial(t, srv, client.Config{MaxAttempts: 100, InitialBackoff: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("GetModelInfo = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("GetModelInfo returned after %v, want soon after the deadline", d)
	}
}

func TestDialNeedsOptions(t *testing.T) {
	if _, err := client.Dial("127.0.0.1:1", client.Config{}); err == nil {
		t.Error("Dial without dial options succeeded")
	}
}
