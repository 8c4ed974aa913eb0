package server

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/scoring"
)

// Defaults of Limits, chosen so that one request of the largest accepted size costs at
// most about 64 MB and well under a second of CPU (BENCHMARKS.md, "predictd hardening
// (issue 14)").
const (
	// DefaultMaxCapacity is the largest speculation capacity accepted: more builds than
	// any CI fleet runs for one queue, and a bound on the nodes a plan selects.
	DefaultMaxCapacity = 4096
	// DefaultMaxExplored bounds the prefixes one speculation expands: the search heap
	// holds at most two 32-byte items per prefix, 16 MiB.
	DefaultMaxExplored = 1 << 18
	// DefaultMaxPrefixWords bounds the prefix assignments one speculation stores:
	// 1<<22 words, 32 MiB.
	DefaultMaxPrefixWords = scoring.DefaultMaxPrefixWords
	// DefaultMaxNodeIDs bounds the change ids the nodes of one plan name: 1<<18 ids
	// are about 10 MB once converted to strings in a response.
	DefaultMaxNodeIDs = 1 << 18
	// DefaultMaxResponseBytes is the largest response: gRPC clients refuse messages
	// above 4 MiB unless configured otherwise.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultMaxRequestTime is the longest a request may run when its deadline is
	// later or unset.
	DefaultMaxRequestTime = 10 * time.Second
	// DefaultMaxRecvBytes is the largest request message: a PredictBuildTime request of
	// DefaultMaxBatch builds encodes in about 3 MB (cmd/predictd-load --mode batch), so
	// any list of DefaultMaxBatch items fits, where gRPC's own 4 MiB stopped batches at
	// about 14,000 builds whatever --max-batch said.
	DefaultMaxRecvBytes = 8 << 20
	// DefaultMaxInflight is the number of requests of one method in flight at once,
	// counted from their headers, over all connections; more are shed with
	// RESOURCE_EXHAUSTED before their message is read. It only bounds the streams whose
	// messages are read before they are weighed (MaxRequestMemory bounds the rest), so
	// it is high: 2,000 single-build requests/s need one or two in flight, but a
	// process stalled for 25 ms (this VM does that several times a second) finds 50
	// arrived at once, and 16 shed 470 of 120,000 such requests (BENCHMARKS.md).
	DefaultMaxInflight = 256
	// DefaultMaxRequestMemory is the estimated memory the admitted requests may hold at
	// once: 64 MiB is two 10,000-build batches (2.8 MB each on the wire, 22 MB of
	// weight), as many as two cores score at once, or 25,000 single-build requests. It
	// leaves room under 512 MB for the process (about 30 MB), for the messages of
	// streams read but not yet weighed, and for the garbage of finished requests: 128
	// concurrent 10,000-build batches on one connection peaked at 282–311 MB with it
	// (and predictd's --memory-limit), and at 351–906 MB with 128 MiB (BENCHMARKS.md,
	// "Memory-weighted admission").
	DefaultMaxRequestMemory = 64 << 20
	// RequestMemoryPerByte is the estimated memory a request holds per byte of its
	// message: the decoded message (about 3 bytes per wire byte for builds and
	// changes), the features and outputs, the response and its encoding, and the
	// garbage collector's headroom over them. A 10,000-build batch of 2.8 MB took about
	// 20 MB of predictd's RSS in flight (BENCHMARKS.md), 7 per byte; 8 rounds up. It
	// leaves out the garbage a finished request leaves until the next collection, which
	// DefaultMaxRequestMemory's margin covers.
	RequestMemoryPerByte = 8
	// DefaultMaxConcurrentStreams is the number of streams one connection may open at
	// once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); a gRPC client above it waits for a
	// stream to end instead of failing. It bounds the messages one client has read at
	// once before they are weighed, where MaxInflight bounds all clients': with 256
	// streams and MaxInflight 128, one connection sending 128 concurrent 10,000-build
	// batches peaked at 767–805 MB, and with 32 (and the other defaults) at 282–311 MB;
	// 2,000 single requests/s on one connection lost none to shedding (BENCHMARKS.md,
	// "Memory-weighted admission").
	DefaultMaxConcurrentStreams = 32
	// DefaultKeepaliveMinTime is the shortest interval between client pings the
	// server tolerates; a client pinging more often is disconnected (GOAWAY
	// too_many_pings). gRPC's own default is 5 minutes.
	DefaultKeepaliveMinTime = 10 * time.Second
	// DefaultKeepaliveTime is how long a connection may be silent before the server
	// pings it, and DefaultKeepaliveTimeout how long the server then waits for the ack
	// before closing it: dead clients' connections go within 80 s, not gRPC's 2 hours.
	DefaultKeepaliveTime    = time.Minute
	DefaultKeepaliveTimeout = 20 * time.Second
	// DefaultMaxConnectionIdle is how long a connection with no request may stay open
	// (then GOAWAY; clients reconnect on their next call).
	DefaultMaxConnectionIdle = 15 * time.Minute
	// DefaultHandshakeTimeout bounds the setup of a new connection (TLS handshake and
	// HTTP/2 preface); gRPC's own default is 120 s.
	DefaultHandshakeTimeout = 10 * time.Second
)

// Limits bound the work of one request and of the connections. Zero fields mean the
// defaults above. The Predictor enforces the request limits; MaxRecvBytes, MaxInflight,
// MaxRequestMemory and the connection limits are enforced by the options of
// ServerOptions. GetModelInfo reports every limit.
type Limits struct {
	// MaxCapacity is the largest capacity a speculation request may ask for; a larger
	// one is refused naming the field.
	MaxCapacity int
	// MaxExplored, MaxPrefixWords and MaxNodeIDs are scoring.Config's limits of the
	// same names; a plan cut by one is returned with truncated_by naming it.
	MaxExplored, MaxPrefixWords, MaxNodeIDs int
	// MaxResponseBytes bounds the encoded size of a response: a plan above it loses
	// its least likely selected nodes (truncated_by "max_response_bytes"), and any
	// other response above it is refused with RESOURCE_EXHAUSTED.
	MaxResponseBytes int
	// MaxRequestTime is the longest a request runs whatever its deadline; past it the
	// request ends with DEADLINE_EXCEEDED.
	MaxRequestTime time.Duration
	// MaxRecvBytes is the largest request message the server accepts; a larger one
	// fails with RESOURCE_EXHAUSTED before it is decoded.
	MaxRecvBytes int
	// MaxInflight is the number of requests of one Predictor method that may be in
	// flight at once, counted from their headers; more are shed with RESOURCE_EXHAUSTED
	// naming the limit, before their message is read, and counted in
	// predictd_requests_shed_total.
	MaxInflight int
	// MaxRequestMemory is the estimated memory, in bytes, that the admitted Predictor
	// requests may hold at once. A request weighs RequestMemoryPerByte times the size
	// of its message, and is weighed once its message is read, before it is decoded: one
	// that would take the total above MaxRequestMemory is shed like one over
	// MaxInflight (a request is always admitted when none is, so a message of any
	// accepted size can run). Enforced by the options of ServerOptions together with
	// RegisterPredictor.
	MaxRequestMemory int64
	// MaxConcurrentStreams is the number of streams one connection may have open.
	MaxConcurrentStreams int
	// KeepaliveMinTime is the shortest interval between client pings tolerated.
	KeepaliveMinTime time.Duration
	// KeepaliveTime and KeepaliveTimeout: the server pings a connection silent for
	// KeepaliveTime and closes it when the ack does not come within KeepaliveTimeout.
	KeepaliveTime, KeepaliveTimeout time.Duration
	// MaxConnectionIdle is how long a connection with no request stays open.
	MaxConnectionIdle time.Duration
	// HandshakeTimeout bounds the setup of a connection.
	HandshakeTimeout time.Duration
}

// withDefaults returns l with zero fields set to their defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxCapacity == 0 {
		l.MaxCapacity = DefaultMaxCapacity
	}
	if l.MaxExplored == 0 {
		l.MaxExplored = DefaultMaxExplored
	}
	if l.MaxPrefixWords == 0 {
		l.MaxPrefixWords = DefaultMaxPrefixWords
	}
	if l.MaxNodeIDs == 0 {
		l.MaxNodeIDs = DefaultMaxNodeIDs
	}
	if l.MaxResponseBytes == 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.MaxRequestTime == 0 {
		l.MaxRequestTime = DefaultMaxRequestTime
	}
	if l.MaxRecvBytes == 0 {
		l.MaxRecvBytes = DefaultMaxRecvBytes
	}
	if l.MaxInflight == 0 {
		l.MaxInflight = DefaultMaxInflight
	}
	if l.MaxRequestMemory == 0 {
		l.MaxRequestMemory = DefaultMaxRequestMemory
	}
	if l.MaxConcurrentStreams == 0 {
		l.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if l.KeepaliveMinTime == 0 {
		l.KeepaliveMinTime = DefaultKeepaliveMinTime
	}
	if l.KeepaliveTime == 0 {
		l.KeepaliveTime = DefaultKeepaliveTime
	}
	if l.KeepaliveTimeout == 0 {
		l.KeepaliveTimeout = DefaultKeepaliveTimeout
	}
	if l.MaxConnectionIdle == 0 {
		l.MaxConnectionIdle = DefaultMaxConnectionIdle
	}
	if l.HandshakeTimeout == 0 {
		l.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return l
}

// Validate returns an error wrapping ErrConfig when a limit of l is negative.
func (l Limits) Validate() error {
	switch {
	case l.MaxCapacity < 0, l.MaxExplored < 0, l.MaxPrefixWords < 0, l.MaxNodeIDs < 0, l.MaxResponseBytes < 0,
		l.MaxRecvBytes < 0, l.MaxInflight < 0, l.MaxRequestMemory < 0, l.MaxConcurrentStreams < 0:
		return fmt.Errorf("%w: negative limit in %+v", ErrConfig, l)
	case l.MaxRequestTime < 0:
		return fmt.Errorf("%w: max request time %v is negative", ErrConfig, l.MaxRequestTime)
	case l.KeepaliveMinTime < 0, l.KeepaliveTime < 0, l.KeepaliveTimeout < 0, l.MaxConnectionIdle < 0, l.HandshakeTimeout < 0:
		return fmt.Errorf("%w: negative connection timeout in %+v", ErrConfig, l)
	}
	return nil
}

// toProto returns the limits as GetModelInfo reports them, with maxBatch.
func (l Limits) toProto(maxBatch int) *pb.ServerLimits {
	return &pb.ServerLimits{
		MaxBatch:                 int32(maxBatch),
		MaxCapacity:              int32(l.MaxCapacity),
		MaxExplored:              int64(l.MaxExplored),
		MaxPrefixWords:           int64(l.MaxPrefixWords),
		MaxNodeIds:               int64(l.MaxNodeIDs),
		MaxRequestSeconds:        l.MaxRequestTime.Seconds(),
		MaxRecvBytes:             int64(l.MaxRecvBytes),
		MaxInflightPerMethod:     int32(l.MaxInflight),
		MaxResponseBytes:         int64(l.MaxResponseBytes),
		MaxRequestMemoryBytes:    l.MaxRequestMemory,
		RequestMemoryPerByte:     RequestMemoryPerByte,
		MaxConcurrentStreams:     int32(min(l.MaxConcurrentStreams, 1<<31-1)),
		KeepaliveMinTimeSeconds:  l.KeepaliveMinTime.Seconds(),
		KeepaliveTimeSeconds:     l.KeepaliveTime.Seconds(),
		KeepaliveTimeoutSeconds:  l.KeepaliveTimeout.Seconds(),
		MaxConnectionIdleSeconds: l.MaxConnectionIdle.Seconds(),
		HandshakeTimeoutSeconds:  l.HandshakeTimeout.Seconds(),
	}
}

// LimitMaxResponseBytes names the limit in SpeculationResponse.truncated_by when a plan
// lost nodes to Limits.MaxResponseBytes.
const LimitMaxResponseBytes = "max_response_bytes"

// fitResponse drops the least likely selected nodes of resp's plan until the response
// encodes in at most max bytes, marking the plan truncated. It returns an error
// wrapping ErrResponseTooLarge when the rest (decisions, aborts, scored values) alone
// is too large.
func fitResponse(resp *pb.ScoreSpeculationResponse, max int) error {
	size := proto.Size(resp)
	if size <= max {
		return nil
	}
	plan := resp.GetPlan()
	nodes := plan.GetNodes()
	// Selected nodes come first, by decreasing P-needed; aborts follow.
	sel := 0
	for sel < len(nodes) && nodes[sel].GetAction() != pb.NodeAction_NODE_ACTION_ABORT {
		sel++
	}
	cut := sel
	for cut > 0 && size > max {
		cut--
		n := proto.Size(nodes[cut])
		size -= n + protowire.SizeTag(1) + protowire.SizeBytes(n) - n
	}
	aborts := nodes[sel:]
	plan.Truncated, plan.TruncatedBy = true, LimitMaxResponseBytes
	// The estimate ignores the shorter length prefixes of the enclosing messages: check
	// the real size and cut further if needed.
	for {
		plan.Nodes = append(nodes[:cut:cut], aborts...)
		if size = proto.Size(resp); size <= max {
			return nil
		}
		if cut == 0 {
			return fmt.Errorf("%w: %d bytes without any selected node, limit %d (--max-response-bytes)", ErrResponseTooLarge, size, max)
		}
		cut--
	}
}
