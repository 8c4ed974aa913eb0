package server

import (
	"context"
	"slices"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// LimitMaxRequestMemory names Limits.MaxRequestMemory in the errors of shed requests
// and in the limit label of predictd_requests_shed_total.
const LimitMaxRequestMemory = "max_request_memory"

// weigher is the second stage of admission: it admits a Predictor request by the
// estimated memory it will hold, RequestMemoryPerByte times the size of its message,
// while the requests admitted hold at most budget in all. It weighs a request once
// gRPC has read its message and before the message is decoded, so a shed request
// costs its received bytes only, never its decoded form (about three times larger);
// the tap's count limit bounds how many messages are read before being weighed.
// Safe for concurrent use.
type weigher struct {
	budget int64
	m      *Metrics
	// used is the weight of the requests admitted and not yet finished.
	used atomic.Int64
	// shed maps a Predictor method's full name to the status of its shed requests;
	// read-only after newWeigher.
	shed map[string]*status.Status
}

// newWeigher returns a weigher of budget bytes recording sheds in m.
func newWeigher(budget int64, m *Metrics) *weigher {
	w := &weigher{budget: budget, m: m, shed: map[string]*status.Status{}}
	predictorMethods(func(name, full string) {
		w.shed[full] = shedStatus(name, LimitMaxRequestMemory, budget, "the requests in flight hold the estimated memory allowed")
	})
	return w
}

// acquire reserves weight n and reports whether it fitted. A request is always
// admitted when none is in flight, so that a message of any accepted size can run.
func (w *weigher) acquire(n int64) bool {
	for {
		used := w.used.Load()
		if used > 0 && used+n > w.budget {
			return false
		}
		if w.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// admission is what a Predictor handler registered by RegisterPredictor asks the codec
// to decode: the request message msg, weighed before decoding. The codec sets w, and
// weight when it admits the request or shed when it refuses it.
type admission struct {
	msg    any
	w      *weigher
	weight int64
	shed   bool
}

// admitCodec is the server's codec: the proto codec, except that it weighs an
// *admission in w before decoding its message.
type admitCodec struct {
	encoding.CodecV2
	w *weigher
}

// Unmarshal decodes data into v; an *admission is decoded into its message only when
// w admits its weight, and is marked shed otherwise.
func (c admitCodec) Unmarshal(data mem.BufferSlice, v any) error {
	a, ok := v.(*admission)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	a.w = c.w
	n := RequestMemoryPerByte * int64(data.Len())
	if !c.w.acquire(n) {
		a.shed = true
		return nil
	}
	a.weight = n
	return c.CodecV2.Unmarshal(data, a.msg)
}

// RegisterPredictor registers svc on s like pb.RegisterPredictorServer, except that
// each request's message goes through the weighted admission of ServerOptions before
// it is decoded: s must be a server made with those options (its codec weighs the
// messages; any other codec refuses them, and every request fails with INTERNAL).
// A shed request fails with RESOURCE_EXHAUSTED naming --max-request-memory, with a
// RetryInfo, and is counted in predictd_requests_shed_total; an admitted one holds its
// weight until its stream ends, once its response is sent or its call failed.
func RegisterPredictor(s grpc.ServiceRegistrar, svc pb.PredictorServer) {
	sd := pb.Predictor_ServiceDesc
	sd.Methods = slices.Clone(sd.Methods)
	for i := range sd.Methods {
		name, handler := sd.Methods[i].MethodName, sd.Methods[i].Handler
		full := "/" + sd.ServiceName + "/" + name
		sd.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error {
				a := admission{msg: v}
				if err := dec(&a); err != nil {
					return err
				}
				if a.shed {
					a.w.m.shed(name, LimitMaxRequestMemory)
					return a.w.shed[full].Err()
				}
				if a.weight > 0 {
					w, n := a.w, a.weight
					context.AfterFunc(ctx, func() { w.used.Add(-n) })
				}
				return nil
			}, in)
		}
	}
	s.RegisterService(&sd, svc)
}
