package server

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"
)

// Tracker counts the unary requests of a gRPC server: those answered and those in
// flight. A shutdown reads it to say how many requests it drained and how many it cut
// off. The zero value is ready to use and safe for concurrent use.
type Tracker struct {
	served, inflight atomic.Int64
}

// UnaryInterceptor returns an interceptor that counts every request in t: in flight
// while its handler runs, then served.
func (t *Tracker) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		t.inflight.Add(1)
		defer func() {
			t.inflight.Add(-1)
			t.served.Add(1)
		}()
		return handler(ctx, req)
	}
}

// Served returns the number of requests answered (with any status).
func (t *Tracker) Served() int64 { return t.served.Load() }

// InFlight returns the number of requests whose handler is running.
func (t *Tracker) InFlight() int64 { return t.inflight.Load() }
