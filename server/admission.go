package server

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
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
// the streams per connection and the tap's count bound how many messages are read
// before being weighed.
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

// ticket is one Predictor stream's hold on the admission limits, from its headers to
// the end of its stream: its method's slot, taken by the limiter's tap, then the weight
// the weigher admits. The tap puts it in the stream's context and releases it with one
// context.AfterFunc. Its handler passes the ticket itself to the codec to decode, as
// the carrier of the message.
type ticket struct {
	slot *atomic.Int64
	w    *weigher
	mu   sync.Mutex
	// weight is what the ticket holds in w, -1 once released; protected by mu (the
	// stream may end while its message is weighed).
	weight int64
	// msg is the request message to decode into, and shed says the weigher refused
	// it; only the handler's goroutine touches them.
	msg  any
	shed bool
}

// ticketKey is the context key of a stream's ticket.
type ticketKey struct{}

// admit takes the weight of a message of size bytes in t's weigher, and reports whether
// it fitted; a ticket already released takes nothing and is refused.
func (t *ticket) admit(size int) bool {
	n := RequestMemoryPerByte * int64(size)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.weight < 0 || !t.w.acquire(n) {
		return false
	}
	t.weight = n
	return true
}

// release gives back t's slot and weight.
func (t *ticket) release() {
	t.slot.Add(-1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.weight > 0 {
		t.w.used.Add(-t.weight)
	}
	t.weight = -1
}

// admitCodec is the server's codec: the proto codec, except that it decodes a *ticket
// into its message only when the ticket's weigher admits the message's size, and marks
// it shed otherwise, before decoding anything.
type admitCodec struct {
	encoding.CodecV2
}

// Unmarshal decodes data into v, or into the message of a *ticket that admits it.
func (c admitCodec) Unmarshal(data mem.BufferSlice, v any) error {
	t, ok := v.(*ticket)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	if !t.admit(data.Len()) {
		t.shed = true
		return nil
	}
	return c.CodecV2.Unmarshal(data, t.msg)
}

// errNoTicket fails a request that reached a handler of RegisterPredictor without the
// tap of ServerOptions.
var errNoTicket = status.Error(codes.Internal, "server: request not admitted: RegisterPredictor needs the options of ServerOptions")

// RegisterPredictor registers svc on s like pb.RegisterPredictorServer, except that
// each request's message goes through the weighted admission of ServerOptions before
// it is decoded: s must be a server made with those options (every request fails with
// INTERNAL otherwise). A shed request fails with RESOURCE_EXHAUSTED naming
// --max-request-memory, with a RetryInfo, and is counted in
// predictd_requests_shed_total; an admitted one holds its weight until its stream ends,
// once its response is sent or its call failed.
func RegisterPredictor(s grpc.ServiceRegistrar, svc pb.PredictorServer) {
	sd := pb.Predictor_ServiceDesc
	sd.Methods = slices.Clone(sd.Methods)
	for i := range sd.Methods {
		name, handler := sd.Methods[i].MethodName, sd.Methods[i].Handler
		full := "/" + sd.ServiceName + "/" + name
		sd.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error {
				t, ok := ctx.Value(ticketKey{}).(*ticket)
				if !ok {
					return errNoTicket
				}
				t.msg = v
				if err := dec(t); err != nil {
					return err
				}
				if t.shed {
					t.w.m.shed(name, LimitMaxRequestMemory)
					return t.w.shed[full].Err()
				}
				return nil
			}, in)
		}
	}
	s.RegisterService(&sd, svc)
}
