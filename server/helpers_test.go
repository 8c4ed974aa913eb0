package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
)

// testEnv is a predictd service over 127.0.0.1:0 with a registry holding the default
// bundle twice: v1 (champion) and v2 (same models, another version).
type testEnv struct {
	reg      *registry.Registry
	repo     string
	v1, v2   string
	models   *server.Models
	reloader *server.Reloader
	health   healthpb.HealthClient
	client   pb.PredictorClient
	promReg  *prometheus.Registry
	stop     func() // health.Shutdown then GracefulStop
	// healthShutdown is the first step of stop alone.
	healthShutdown func()
}

// discard is a logger that drops everything.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// newTestEnv starts the service with cfg (Repo, Log and Metrics filled in). With load
// set the champion v1 is loaded before it returns.
func newTestEnv(t testing.TB, cfg server.Config, load bool) *testEnv {
	t.Helper()
	reg, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, v1, err := defaultbundle.Install(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	_, v2, err := defaultbundle.Install(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.SetChampion(repo, v1); err != nil {
		t.Fatal(err)
	}
	e := &testEnv{reg: reg, repo: repo, v1: v1, v2: v2, models: &server.Models{}, promReg: prometheus.NewRegistry()}
	metrics := server.NewMetrics(e.promReg)
	hs, ready := server.NewHealth()
	e.reloader = &server.Reloader{Models: e.models, Load: bundleload.Loader(reg, repo), Metrics: metrics, Log: discard, OnChampion: ready}
	cfg.Repo, cfg.Metrics = repo, metrics
	if cfg.Log == nil {
		cfg.Log = discard
	}
	svc, err := server.NewPredictor(cfg, e.models)
	if err != nil {
		t.Fatal(err)
	}
	// The server predictd runs: its limits, admission and interceptor.
	opts, err := server.ServerOptions(cfg.Limits, metrics)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(append(opts, grpc.ChainUnaryInterceptor(server.UnaryInterceptor(discard, metrics)))...)
	server.RegisterPredictor(gs, svc)
	healthpb.RegisterHealthServer(gs, hs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	e.stop = func() { hs.Shutdown(); gs.GracefulStop() }
	e.healthShutdown = hs.Shutdown
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	e.client, e.health = pb.NewPredictorClient(conn), healthpb.NewHealthClient(conn)
	if load {
		if err := e.reloader.Reload(registry.RoleChampion, v1); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// testCtx returns a context with a test deadline: a guard against a hung call, not a
// speed target, so it is generous (TestHostileSpeculation took 21 s under -race on a
// 2-core machine at load average 8, 2.5 s when idle).
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// randomChange returns a change with plausible random attributes; about one attribute in
// ten is missing (NaN), and some authors are unknown to the developer table.
func randomChange(rnd *rand.Rand, i int) datasets.Change {
	num := func(max int) float64 {
		if rnd.IntN(10) == 0 {
			return math.NaN()
		}
		return float64(rnd.IntN(max))
	}
	c := datasets.Change{
		ChangeID:    fmt.Sprintf("C%07d", i),
		RevisionID:  fmt.Sprintf("R%07d", i),
		Author:      fmt.Sprintf("dev%04d", rnd.IntN(300)),
		SubmittedAt: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),

		TargetsChanged: num(5), TargetsAdded: num(2), TargetsRemoved: num(2),
		LinesAdded: num(500), LinesRemoved: num(200), Hunks: num(20), FilesChanged: num(15),
		Commits: num(4), BinariesAdded: num(2), BinariesRemoved: num(2),
		InitialChecksPassed: num(10), InitialChecksFailed: num(3),
		RevisionSubmissions:   num(3) + 1,
		RevisionHasRevertPlan: datasets.Flag(rnd.IntN(3)), RevisionHasTestPlan: datasets.Flag(rnd.IntN(3)),
		AuthorTenureDays: num(2000), AuthorLevel: num(5),
		TrueProbSuccess: math.NaN(),
	}
	if rnd.IntN(10) > 0 {
		for range 1 + rnd.IntN(4) {
			c.AffectedTargets = append(c.AffectedTargets, fmt.Sprintf("//team%02d/t%04d", rnd.IntN(3), rnd.IntN(20)))
		}
	}
	return c
}

// randomSpec returns random speculation counts, some unknown.
func randomSpec(rnd *rand.Rand) features.Speculation {
	num := func(max int) float64 {
		if rnd.IntN(8) == 0 {
			return math.NaN()
		}
		return float64(rnd.IntN(max))
	}
	return features.Speculation{
		Succeeded: num(3), Failed: num(3), Height: num(4), ConflictsCount: num(5),
		QueueAhead: num(20), PathChanges: num(4), PathLinesChanged: num(800),
	}
}
