package server

import (
	"context"
	pathpkg "path"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// LimitMaxInflight names Limits.MaxInflight in the errors of shed requests and in the
// limit label of predictd_requests_shed_total.
const LimitMaxInflight = "max_inflight"

// limiter bounds the requests of each Predictor method running at once. It works as a
// gRPC tap handle: it runs when a stream's headers arrive, before its message is read or
// decoded, so a shed request costs no memory beyond its headers. A slot is released
// when the stream's context ends, which gRPC does for every stream it accepted, however
// the call ends. Safe for concurrent use.
type limiter struct {
	max int64
	m   *Metrics
	// inflight maps every Predictor method's full name to its count; read-only after
	// newLimiter, so lookups need no lock.
	inflight map[string]*atomic.Int64
}

// newLimiter returns a limiter of max requests per Predictor method recording sheds
// in m.
func newLimiter(max int, m *Metrics) *limiter {
	l := &limiter{max: int64(max), m: m, inflight: map[string]*atomic.Int64{}}
	for _, md := range pb.Predictor_ServiceDesc.Methods {
		l.inflight["/"+pb.Predictor_ServiceDesc.ServiceName+"/"+md.MethodName] = new(atomic.Int64)
	}
	return l
}

// tap admits the stream of info when its method has a free slot, and otherwise refuses
// it with RESOURCE_EXHAUSTED naming the limit. Methods of other services (health,
// reflection) are not limited. It runs under the transport's lock: it never blocks.
func (l *limiter) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	n, ok := l.inflight[info.FullMethodName]
	if !ok {
		return ctx, nil
	}
	if n.Add(1) > l.max {
		n.Add(-1)
		method := pathpkg.Base(info.FullMethodName)
		l.m.shed(method, LimitMaxInflight)
		return ctx, status.Errorf(codes.ResourceExhausted,
			"%s: %d requests of the method already in flight, the limit (--max-inflight); retry later", method, l.max)
	}
	context.AfterFunc(ctx, func() { n.Add(-1) })
	return ctx, nil
}

// compile-time check that tap is a tap.ServerInHandle.
var _ tap.ServerInHandle = (*limiter)(nil).tap
