package server

import (
	"context"
	"fmt"
	pathpkg "path"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// LimitMaxInflight names Limits.MaxInflight in the errors of shed requests and in the
// limit label of predictd_requests_shed_total.
const LimitMaxInflight = "max_inflight"

// ShedRetryDelay is the RetryInfo delay of a shed request: a slot of its method is
// likely free again after it, since a request of the largest batch runs for well under
// a second and most for a millisecond. client.Client retries such a request.
const ShedRetryDelay = 10 * time.Millisecond

// limiter bounds the requests of each Predictor method running at once. It works as a
// gRPC tap handle: it runs when a stream's headers arrive, before its message is read or
// decoded, so a shed request costs no memory beyond its headers. A slot is released
// when the stream's context ends, which gRPC does for every stream it accepted, however
// the call ends. Safe for concurrent use.
type limiter struct {
	max int64
	m   *Metrics
	// w weighs the messages of the streams admitted.
	w *weigher
	// inflight maps every Predictor method's full name to its count, and shed to the
	// status its refused requests get; both are read-only after newLimiter, so lookups
	// need no lock.
	inflight map[string]*atomic.Int64
	shed     map[string]*status.Status
}

// newLimiter returns a limiter of max requests per Predictor method recording sheds
// in m, whose streams w weighs.
func newLimiter(max int, m *Metrics, w *weigher) *limiter {
	l := &limiter{max: int64(max), m: m, w: w, inflight: map[string]*atomic.Int64{}, shed: map[string]*status.Status{}}
	predictorMethods(func(name, full string) {
		l.inflight[full] = new(atomic.Int64)
		l.shed[full] = shedStatus(name, LimitMaxInflight, int64(max), "requests of the method already in flight")
	})
	return l
}

// shedStatus is the RESOURCE_EXHAUSTED status of a request of method shed by the
// limit named limit (a Limit constant, whose flag is --limit with dashes) of value:
// msg says why, a QuotaFailure names the limit, and a RetryInfo says that the request
// may be retried (other RESOURCE_EXHAUSTED errors, such as a request over
// --max-recv-bytes, carry none: retrying them cannot help).
func shedStatus(method, limit string, value int64, msg string) *status.Status {
	flag := "--" + strings.ReplaceAll(limit, "_", "-")
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("%s: %s, the limit (%s %d); retry later", method, msg, flag, value))
	withDetails, err := st.WithDetails(
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
			Subject: "method:" + method, Description: fmt.Sprintf("%s %d (%s)", limit, value, flag),
		}}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(ShedRetryDelay)},
	)
	if err != nil {
		panic("server: encoding shed status details: " + err.Error()) // fixed, valid messages
	}
	return withDetails
}

// predictorMethods calls f with the short and full name of every Predictor method.
func predictorMethods(f func(name, full string)) {
	for _, md := range pb.Predictor_ServiceDesc.Methods {
		f(md.MethodName, "/"+pb.Predictor_ServiceDesc.ServiceName+"/"+md.MethodName)
	}
}

// tap admits the stream of info when its method has a free slot, giving it a ticket
// (in its context) that the weigher completes and that gives both back when the stream's
// context ends; otherwise it refuses the stream with RESOURCE_EXHAUSTED naming the
// limit. Methods of other services (health, reflection) are not limited. It runs under
// the transport's lock: it never blocks.
func (l *limiter) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	n, ok := l.inflight[info.FullMethodName]
	if !ok {
		return ctx, nil
	}
	if n.Add(1) > l.max {
		n.Add(-1)
		l.m.shed(pathpkg.Base(info.FullMethodName), LimitMaxInflight)
		return ctx, l.shed[info.FullMethodName].Err()
	}
	t := &ticket{slot: n, w: l.w}
	context.AfterFunc(ctx, t.release)
	return context.WithValue(ctx, ticketKey{}, t), nil
}

// compile-time check that tap is a tap.ServerInHandle.
var _ tap.ServerInHandle = (*limiter)(nil).tap
