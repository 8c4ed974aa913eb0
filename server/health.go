package server

import (
	"io"
	"net/http"

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

// HandleHTTPHealth registers the HTTP probes of an orchestrator on mux: /healthz answers
// 200 "ok" whenever the process answers HTTP at all (liveness), and /readyz answers 200
// "ready" when ready() reports true and 503 with "not ready" otherwise (readiness: a
// champion is loaded and the server is not shutting down), like the gRPC health service.
func HandleHTTPHealth(mux *http.ServeMux, ready func() bool) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready\n")
			return
		}
		io.WriteString(w, "ready\n")
	})
}
