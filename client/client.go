package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// Defaults of the Config fields left zero.
const (
	DefaultMaxAttempts    = 4
	DefaultInitialBackoff = 50 * time.Millisecond
	DefaultMaxBackoff     = time.Second
)

// ErrConfig is a Config that cannot be used.
var ErrConfig = errors.New("client: invalid config")

// Config configures a Client.
type Config struct {
	// DialOptions are passed to grpc.NewClient as they are. With none, Dial returns an
	// error: the caller chooses the transport credentials.
	DialOptions []grpc.DialOption
	// MaxAttempts is the number of tries of one call, retries included;
	// zero means DefaultMaxAttempts, 1 disables retries.
	MaxAttempts int
	// InitialBackoff is the wait before the first retry; zero means
	// DefaultInitialBackoff. Each further wait doubles, up to MaxBackoff (zero means
	// DefaultMaxBackoff), and is drawn uniformly from [wait/2, wait] so that clients
	// retrying together spread out.
	InitialBackoff, MaxBackoff time.Duration
	// CallOptions are added to every call, for example grpc.WaitForReady(true).
	CallOptions []grpc.CallOption
}

func (c Config) withDefaults() (Config, error) {
	if c.MaxAttempts < 0 || c.InitialBackoff < 0 || c.MaxBackoff < 0 {
		return c, fmt.Errorf("%w: negative attempts or backoff", ErrConfig)
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.InitialBackoff == 0 {
		c.InitialBackoff = DefaultInitialBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return c, nil
}

// Client calls a predictd server. It is safe for concurrent use.
type Client struct {
	conn *grpc.ClientConn // nil when built by New
	pc   pb.PredictorClient
	cfg  Config
}

// Dial returns a client of the server at target (grpc.NewClient: the connection is made
// lazily, on the first call).
func Dial(target string, cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(cfg.DialOptions) == 0 {
		return nil, fmt.Errorf("%w: no dial options (transport credentials are required)", ErrConfig)
	}
	conn, err := grpc.NewClient(target, cfg.DialOptions...)
	if err != nil {
		return nil, fmt.Errorf("client: dialing %s: %w", target, err)
	}
	return &Client{conn: conn, pc: pb.NewPredictorClient(conn), cfg: cfg}, nil
}

// New returns a client over an existing connection, which the caller closes.
// cfg.DialOptions are ignored.
func New(conn grpc.ClientConnInterface, cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Client{pc: pb.NewPredictorClient(conn), cfg: cfg}, nil
}

// Close closes the connection Dial made; it does nothing for a client made by New.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// PredictSuccess calls Predictor.PredictSuccess, retrying on Unavailable and on load shedding.
func (c *Client) PredictSuccess(ctx context.Context, req *pb.PredictSuccessRequest) (*pb.PredictSuccessResponse, error) {
	return call(ctx, c, req, c.pc.PredictSuccess)
}

// PredictConflict calls Predictor.PredictConflict, retrying on Unavailable and on load shedding.
func (c *Client) PredictConflict(ctx context.Context, req *pb.PredictConflictRequest) (*pb.PredictConflictResponse, error) {
	return call(ctx, c, req, c.pc.PredictConflict)
}

// PredictBuildTime calls Predictor.PredictBuildTime, retrying on Unavailable and on load shedding.
func (c *Client) PredictBuildTime(ctx context.Context, req *pb.PredictBuildTimeRequest) (*pb.PredictBuildTimeResponse, error) {
	return call(ctx, c, req, c.pc.PredictBuildTime)
}

// ScoreSpeculation calls Predictor.ScoreSpeculation, retrying on Unavailable and on load shedding.
func (c *Client) ScoreSpeculation(ctx context.Context, req *pb.ScoreSpeculationRequest) (*pb.ScoreSpeculationResponse, error) {
	return call(ctx, c, req, c.pc.ScoreSpeculation)
}

// GetModelInfo calls Predictor.GetModelInfo, retrying on Unavailable and on load shedding.
func (c *Client) GetModelInfo(ctx context.Context, req *pb.GetModelInfoRequest) (*pb.GetModelInfoResponse, error) {
	return call(ctx, c, req, c.pc.GetModelInfo)
}

// call runs f up to MaxAttempts times while it fails with a retryable error (see
// retryDelay), waiting with backoff in between. It returns the last error, a gRPC
// status, or the context's status when ctx ends during a wait.
func call[Req, Resp any](ctx context.Context, c *Client, req Req, f func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	wait := c.cfg.InitialBackoff
	for attempt := 1; ; attempt++ {
		resp, err := f(ctx, req, c.cfg.CallOptions...)
		floor, retry := retryDelay(err)
		if !retry || attempt >= c.cfg.MaxAttempts {
			return resp, err
		}
		d := max(wait/2+rand.N(wait/2+1), floor)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			var zero Resp
			return zero, status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		}
		wait = min(2*wait, c.cfg.MaxBackoff)
	}
}

// retryDelay reports whether err may be retried and the shortest wait the server asked
// for. Unavailable (no model loaded yet, a server going away) is retried; so is
// ResourceExhausted carrying an errdetails.RetryInfo, which predictd attaches only to
// requests it shed under load (--max-inflight, --max-request-memory), not to requests too large to ever pass.
func retryDelay(err error) (floor time.Duration, ok bool) {
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Unavailable:
		return 0, true
	case codes.ResourceExhausted:
		for _, d := range st.Details() {
			if ri, isRI := d.(*errdetails.RetryInfo); isRI {
				return ri.GetRetryDelay().AsDuration(), true
			}
		}
	}
	return 0, false
}
