package server

import (
	"context"
	"log/slog"
	pathpkg "path"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// UnaryInterceptor returns the server's unary interceptor: it recovers a panic in a
// handler as an Internal status (logging the panic and its stack), refuses requests
// whose deadline has already passed, and records every request's status code and
// latency in m and, for errors, in the log.
func UnaryInterceptor(log *slog.Logger, m *Metrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		start := time.Now()
		method := pathpkg.Base(info.FullMethod)
		defer func() {
			if p := recover(); p != nil {
				log.Error("handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, "internal error")
			}
			code := status.Code(err)
			m.request(method, code, time.Since(start))
			if code != codes.OK {
				log.Debug("request failed", "method", method, "code", code.String(), "err", err)
			}
		}()
		if err := ctx.Err(); err != nil {
			return nil, status.FromContextError(err).Err()
		}
		return handler(ctx, req)
	}
}
