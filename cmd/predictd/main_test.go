package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sqpredict/sqpredict/client"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("parseFlags(%q) = %v, want error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

// startRun runs predictd with args on 127.0.0.1:0 and returns the addresses bound, a
// function that stops it and returns run's error.
func startRun(t *testing.T, args ...string) (grpcAddr, metricsAddr string, stop func() error) {
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
	go func() { done <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
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
	grpcAddr, metricsAddr, stop := startRun(t, "-reflection")
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
	// Reflection (-reflection) lists the Predictor service.
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
	if err := stop(); err != nil {
		t.Errorf("run = %v after cancel, want nil", err)
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
}
