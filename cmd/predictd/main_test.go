package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sqpredict/sqpredict/client"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"full", []string{"-listen", "127.0.0.1:0", "-registry", "/r", "-repo", "ios", "-challenger-share", "0.1", "-shadow", "-max-batch", "10", "-reflection"}, ""},
		{"share above 1", []string{"-challenger-share", "1.5"}, "--challenger-share"},
		{"cert without key", []string{"-tls-cert", "c.pem"}, "--tls-cert"},
		{"negative batch", []string{"-max-batch", "-1"}, "--max-batch"},
		{"zero interval", []string{"-reload-interval", "0s"}, "--reload-interval"},
		{"repo without registry", []string{"-repo", "ios"}, "--repo"},
		{"argument", []string{"extra"}, "unexpected"},
		{"log format", []string{"-log-format", "xml"}, "--log-format"},
		{"challenger models", []string{"-challenger-models", "gbm-success,ngboost-lognormal", "-shadow"}, ""},
		{"unknown challenger model", []string{"-challenger-models", "gbm"}, "challenger model"},
		{"version skips validation", []string{"-version", "-challenger-share", "2"}, ""},
		{"client CA without TLS", []string{"-tls-client-ca", "ca.pem"}, "--tls-client-ca"},
		{"negative inflight", []string{"-max-inflight", "-1"}, "--max-"},
		{"negative keepalive", []string{"-keepalive-time", "-1s"}, "--keepalive-"},
		{"negative request memory", []string{"-max-request-memory", "-1"}, "--max-"},
		{"negative memory limit", []string{"-memory-limit", "-1"}, "--memory-limit"},
		{"no memory limit", []string{"-memory-limit", "0"}, ""},
		{"zero log queue", []string{"-prediction-log-queue", "0"}, "--prediction-log-queue"},
		{"negative log keep", []string{"-prediction-log-keep", "-1"}, "--prediction-log-"},
		{"limits", []string{"-max-inflight", "4", "-max-recv-bytes", "33554432", "-max-concurrent-streams", "10", "-handshake-timeout", "2s"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("parseFlags(%q) = %v, want error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

// TestReflectionDefault: reflection is on for a loopback --listen and off otherwise,
// unless --reflection says otherwise. Issue 15 item 9.
func TestReflectionDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true}, // the default 127.0.0.1:50051
		{[]string{"-listen", "localhost:0"}, true},
		{[]string{"-listen", "[::1]:0"}, true},
		{[]string{"-listen", "0.0.0.0:50051"}, false},
		{[]string{"-listen", ":50051"}, false},
		{[]string{"-listen", "10.1.2.3:50051"}, false},
		{[]string{"-listen", "0.0.0.0:50051", "-reflection"}, true},
		{[]string{"-listen", "127.0.0.1:0", "-reflection=false"}, false},
	} {
		c, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.reflection != tc.want {
			t.Errorf("parseFlags(%q).reflection = %v, want %v", tc.args, c.reflection, tc.want)
		}
	}
}

// TestVersionString names the binary and the Go version.
func TestVersionString(t *testing.T) {
	v := versionString()
	if !strings.HasPrefix(v, "predictd ") || !strings.Contains(v, runtime.Version()) {
		t.Errorf("versionString() = %q, want predictd ... %s", v, runtime.Version())
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRun runs predictd with args on 127.0.0.1:0 and returns the addresses bound, a
// function that stops it and returns run's error.
func startRun(t *testing.T, args ...string) (grpcAddr, metricsAddr string, stop func() error) {
	t.Helper()
	return startRunLog(t, io.Discard, args...)
}

// startRunLog is startRun logging to w in the --log-format of args.
func startRunLog(t *testing.T, w io.Writer, args ...string) (grpcAddr, metricsAddr string, stop func() error) {
	t.Helper()
	cfg, err := parseFlags(append([]string{"-listen", "127.0.0.1:0", "-metrics-listen", "127.0.0.1:0"}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var example bytes.Buffer
	cfg.exampleOut = &example
	addrs := make(chan [2]string, 1)
	cfg.onListen = func(g, m string) { addrs <- [2]string{g, m} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, newLogger(w, cfg.logFormat, slog.LevelInfo)) }()
	select {
	case a := <-addrs:
		if !strings.Contains(example.String(), "sqpredict.v1.Predictor/PredictBuildTime") {
			t.Errorf("example request = %q", example.String())
		}
		return a[0], a[1], func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("run = %v before listening", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("run did not start")
	}
	return "", "", nil
}

// TestRunDefaultBundle serves the embedded bundle: health SERVING, the logged example
// request answered, metrics exported, and a clean shutdown.
func TestRunDefaultBundle(t *testing.T) {
	var logs syncBuffer
	grpcAddr, metricsAddr, stop := startRunLog(t, &logs, "-log-format", "json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hresp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: pb.Predictor_ServiceDesc.ServiceName})
	if err != nil || hresp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v, want SERVING", hresp.GetStatus(), err)
	}
	// Reflection, on by default for a loopback listener, lists the Predictor service.
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	rresp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var services []string
	for _, s := range rresp.GetListServicesResponse().GetService() {
		services = append(services, s.GetName())
	}
	if !slices.Contains(services, pb.Predictor_ServiceDesc.ServiceName) {
		t.Errorf("reflection lists %q, want %s", services, pb.Predictor_ServiceDesc.ServiceName)
	}
	stream.CloseSend()
	// The example request of the log, sent as JSON like grpcurl does.
	line := exampleRequest(grpcAddr, &config{})
	body := line[strings.Index(line, "'")+1 : strings.LastIndex(line, "'")]
	req := &pb.PredictBuildTimeRequest{}
	if err := protojson.Unmarshal([]byte(body), req); err != nil {
		t.Fatalf("example body %s: %v", body, err)
	}
	c, err := client.New(conn, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.PredictBuildTime(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.GetPredictions()[0]; !(p.GetMeanSeconds() > 0 && p.GetStddevSeconds() > 0) || p.GetModel().GetVersion() == "" {
		t.Errorf("example prediction = %v", p)
	}
	hr, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	for _, want := range []string{
		`predictd_model_last_reload_successful{role="champion"} 1`,
		`predictd_requests_total{code="OK",method="PredictBuildTime"} 1`,
		`predictd_predictions_total{kind="buildtime"`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, probe := range []string{"/healthz", "/readyz"} {
		hr, err := http.Get("http://" + metricsAddr + probe)
		if err != nil {
			t.Fatal(err)
		}
		hr.Body.Close()
		if hr.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", probe, hr.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run = %v after cancel, want nil", err)
	}
	// JSON logs, roles by name, and a summary at stop.
	var stopped map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if r, ok := rec["role"]; ok && r != "champion" {
			t.Errorf("log line %q: role %v, want \"champion\"", line, r)
		}
		if rec["msg"] == "stopped" {
			stopped = rec
		}
	}
	// Served: health, reflection, PredictBuildTime (reflection is a stream, not counted).
	if stopped == nil || stopped["requests_served"] != 2.0 || stopped["cut_off"] != 0.0 {
		t.Errorf("stop summary = %v, want 2 requests served, 0 cut off", stopped)
	}
}

// TestRunChallengerWarning: --challenger-share with no challenger is logged.
func TestRunChallengerWarning(t *testing.T) {
	var logs syncBuffer
	_, _, stop := startRunLog(t, &logs, "-challenger-share", "0.5")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"no challenger is loaded") {
		t.Errorf("log lacks the no-challenger warning:\n%s", logs.String())
	}
}

// modelInfo asks the server at grpcAddr for GetModelInfo.
func modelInfo(t *testing.T, grpcAddr string) *pb.GetModelInfoResponse {
	t.Helper()
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	info, err := pb.NewPredictorClient(conn).GetModelInfo(ctx, &pb.GetModelInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestRunLimitFlags: the limit flags reach the server and GetModelInfo reports them,
// the defaults included. Issue 14 item 1.
func TestRunLimitFlags(t *testing.T) {
	grpcAddr, _, stop := startRun(t, "-max-inflight", "5", "-max-recv-bytes", "12345678", "-max-capacity", "99",
		"-max-request-memory", "98765432", "-max-concurrent-streams", "17", "-keepalive-time", "90s")
	l := modelInfo(t, grpcAddr).GetLimits()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if l.GetMaxInflightPerMethod() != 5 || l.GetMaxRecvBytes() != 12345678 || l.GetMaxCapacity() != 99 ||
		l.GetMaxResponseBytes() != server.DefaultMaxResponseBytes || l.GetMaxExplored() != server.DefaultMaxExplored {
		t.Errorf("GetModelInfo limits = %v, want max_inflight 5, max_recv_bytes 12345678, max_capacity 99 and the defaults", l)
	}
	// The admission and connection limits (exact: whole seconds are exact in float64).
	if l.GetMaxRequestMemoryBytes() != 98765432 || l.GetRequestMemoryPerByte() != server.RequestMemoryPerByte ||
		l.GetMaxConcurrentStreams() != 17 || l.GetKeepaliveTimeSeconds() != 90 ||
		l.GetKeepaliveMinTimeSeconds() != server.DefaultKeepaliveMinTime.Seconds() ||
		l.GetKeepaliveTimeoutSeconds() != server.DefaultKeepaliveTimeout.Seconds() ||
		l.GetMaxConnectionIdleSeconds() != server.DefaultMaxConnectionIdle.Seconds() ||
		l.GetHandshakeTimeoutSeconds() != server.DefaultHandshakeTimeout.Seconds() {
		t.Errorf("GetModelInfo limits = %v, want max_request_memory 98765432, max_concurrent_streams 17, keepalive_time 90 s and the default timeouts", l)
	}
}

// TestRunChallengerModelsMissing: --challenger-models on a bundle trained without them
// serves the champion alone and says why.
func TestRunChallengerModelsMissing(t *testing.T) {
	var logs syncBuffer
	grpcAddr, _, stop := startRunLog(t, &logs, "-challenger-models", "gbm-success", "-challenger-share", "0.5")
	info := modelInfo(t, grpcAddr)
	if len(info.GetModels()) != 1 {
		t.Errorf("GetModelInfo lists %d models, want the champion alone", len(info.GetModels()))
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no challenger model gbm-success", "no challenger is loaded"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestStopServerCutOff stops a server whose request outlives the shutdown timeout: the
// request is counted as cut off, not drained.
func TestStopServerCutOff(t *testing.T) {
	var tr server.Tracker
	inside, release := make(chan struct{}), make(chan struct{})
	block := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		close(inside)
		select {
		case <-ctx.Done(): // Stop cancels the request
		case <-release:
		}
		return h(ctx, req)
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(tr.UnaryInterceptor(), block))
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() {
		_, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		done <- err
	}()
	<-inside
	drained, cut := stopServer(gs, hs, &tr, time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	close(release)
	if drained != 0 || cut != 1 {
		t.Errorf("stopServer = %d drained, %d cut off; want 0, 1", drained, cut)
	}
	if err := <-done; err == nil {
		t.Error("the cut-off request succeeded")
	}
}

// TestRunFirstLoadFails: a registry whose champion does not load makes run fail.
func TestRunFirstLoadFails(t *testing.T) {
	dir := t.TempDir()
	if _, err := registry.Open(dir); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"-listen", "127.0.0.1:0", "-registry", dir, "-repo", "ios"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, registry.ErrNoPointer) && !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("run with an empty registry = %v, want a missing champion", err)
	}
	// The error says what to do, with or without --repo.
	if err == nil || !strings.Contains(err.Error(), "trainer train") || !strings.Contains(err.Error(), "trainer registry promote") {
		t.Errorf("run with an empty registry = %v, want it to name trainer train and trainer registry promote", err)
	}
	cfg.repo = ""
	err = run(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "holds no bundle") || !strings.Contains(err.Error(), "trainer train") {
		t.Errorf("run with an empty registry, no --repo = %v, want it to say there is no bundle and name trainer train", err)
	}
}

// TestRunFallsBackToGoodVersion: the champion pointer names a corrupt version; predictd
// starts, serves the older good version and says so in GetModelInfo. Issue 14 item 9.
func TestRunFallsBackToGoodVersion(t *testing.T) {
	dir := t.TempDir()
	reg, err := registry.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	repo, v1, err := defaultbundle.Install(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	_, v2, err := defaultbundle.Install(context.Background(), reg) // now the champion
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, repo, "versions", v2, "success.logistic.json")
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	grpcAddr, _, stop := startRun(t, "-registry", dir)
	defer stop()
	info := modelInfo(t, grpcAddr)
	if got := info.GetModels()[0].GetModel().GetVersion(); got != v1 || !info.GetChampionFallback() || info.GetChampionPointerVersion() != v2 {
		t.Errorf("GetModelInfo: serving %s, fallback %v, pointer %q; want %s, true, %s", got, info.GetChampionFallback(), info.GetChampionPointerVersion(), v1, v2)
	}
}
