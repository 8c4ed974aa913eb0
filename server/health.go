package server

import (
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// NewHealth returns a gRPC health server that reports both the server ("") and the
// sqpredict.v1.Predictor service NOT_SERVING, and a function, fit for
// Reloader.OnChampion, that switches both to SERVING. health.NewServer starts ""
// SERVING; readiness here depends on a loaded model, not on the process being up.
func NewHealth() (*health.Server, func(*Model)) {
	h := health.NewServer()
	set := func(s healthpb.HealthCheckResponse_ServingStatus) {
		h.SetServingStatus("", s)
		h.SetServingStatus(pb.Predictor_ServiceDesc.ServiceName, s)
	}
	set(healthpb.HealthCheckResponse_NOT_SERVING)
	return h, func(*Model) { set(healthpb.HealthCheckResponse_SERVING) }
}
