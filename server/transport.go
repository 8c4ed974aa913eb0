package server

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/keepalive"
)

// ServerOptions returns the gRPC server options that enforce the connection limits of
// l (zero fields meaning the defaults): the receive size, the streams per connection,
// the keepalive enforcement policy and server parameters, the handshake timeout, and
// the per-method limit of requests in flight, and the codec that weighs the messages of
// a Predictor registered with RegisterPredictor against l.MaxRequestMemory; sheds of
// both stages are counted in m (nil counts nothing). It returns an error wrapping
// ErrConfig for a negative limit.
func ServerOptions(l Limits, m *Metrics) ([]grpc.ServerOption, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	l = l.withDefaults()
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(l.MaxRecvBytes),
		grpc.MaxConcurrentStreams(uint32(min(l.MaxConcurrentStreams, 1<<31-1))),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime: l.KeepaliveMinTime,
			// Clients that keep a connection warm between bursts may ping it while
			// idle, at the tolerated rate.
			PermitWithoutStream: true,
		}),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: l.MaxConnectionIdle,
			Time:              l.KeepaliveTime,
			Timeout:           l.KeepaliveTimeout,
		}),
		grpc.ConnectionTimeout(l.HandshakeTimeout),
		grpc.InTapHandle(newLimiter(l.MaxInflight, m, newWeigher(l.MaxRequestMemory, m)).tap),
		grpc.ForceServerCodecV2(admitCodec{encoding.GetCodecV2(proto.Name)}),
	}, nil
}
