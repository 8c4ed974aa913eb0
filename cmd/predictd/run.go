package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
)

// run serves until ctx is done or a part fails. It is the only function that starts
// goroutines. The parts, each with its start and stop:
//
//	registry     open (or install the default bundle into a temporary one) / remove it
//	gRPC server  Serve / health.Shutdown, GracefulStop, Stop after the timeout
//	first load   champion (or the newest older version that loads), then challenger;
//	             no champion at all ends run
//	reload loop  registry.Watch + Reloader.Follow / cancel the watch, wait for Follow
//	metrics      HTTP /metrics, /healthz, /readyz / Shutdown
//	pred. log    AsyncLog.Run / Close (drains the queue), then RotatingLog.Close
//
// At stop it logs the requests served, drained and cut off; a stop that cut requests off
// (Stop after --shutdown-timeout) returns an error, so the process exits non-zero.
func run(ctx context.Context, cfg *config, log *slog.Logger) (err error) {
	// Registry.
	regDir, repo := cfg.registry, cfg.repo
	if regDir == "" {
		tmp, err := os.MkdirTemp("", "predictd-registry-")
		if err != nil {
			return fmt.Errorf("predictd: %w", err)
		}
		defer os.RemoveAll(tmp)
		regDir = tmp
	}
	reg, err := registry.Open(regDir)
	if err != nil {
		return err
	}
	if cfg.registry == "" {
		if repo, _, err = defaultbundle.Install(ctx, reg); err != nil {
			return err
		}
		log.Info("serving the default bundle built into the binary", "repo", repo)
	} else if repo == "" {
		repos, err := reg.Repos()
		if err != nil {
			return err
		}
		switch len(repos) {
		case 0:
			return fmt.Errorf("predictd: registry %s holds no bundle yet: publish one with "+
				"`trainer train --history DIR --registry %s` (or run predictd without --registry to serve the built-in bundle)", regDir, regDir)
		case 1:
			repo = repos[0]
		default:
			return fmt.Errorf("predictd: registry %s holds repositories %q: choose one with --repo", regDir, repos)
		}
	}

	// Metrics, models, service.
	promReg := prometheus.NewRegistry()
	promReg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := server.NewMetrics(promReg)
	models := &server.Models{}
	healthSrv, ready := server.NewHealth()
	key, err := features.AuthorKeyFromFlag(cfg.authorKeyFile)
	if err != nil {
		return fmt.Errorf("predictd: --author-key-file: %w", err)
	}
	if key != nil {
		log.Info("author key loaded: bundles with pseudonymised authors are served", "author_key_id", key.ID())
	}
	lo := bundleload.Options{AuthorKey: key}
	reloader := &server.Reloader{Models: models, Load: lo.ChallengerLoader(reg, repo, cfg.challengerModels),
		ChallengerFollowsChampion: len(cfg.challengerModels) > 0, Metrics: metrics, Log: log, OnChampion: ready}

	scfg := server.Config{
		Repo: repo, MaxBatch: cfg.maxBatch, ChallengerShare: cfg.challengerShare, Shadow: cfg.shadow,
		Log: log, Metrics: metrics, Limits: cfg.limits,
	}
	// Prediction log: a rotating file written by one goroutine from a bounded queue.
	// The deferred stops run after the gRPC server's: the queue is drained, then the
	// file flushed and closed.
	if cfg.predictionLog != "" {
		file, err := server.OpenRotatingLog(cfg.predictionLog, cfg.logRetention)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, file.Close()) }()
		queue := server.NewAsyncLog(file, cfg.logQueue, metrics, log)
		go queue.Run()
		defer queue.Close()
		scfg.PredictionLog = queue
	}
	svc, err := server.NewPredictor(scfg, models)
	if err != nil {
		return err
	}

	// gRPC server.
	var tracker server.Tracker
	var stopping atomic.Bool
	isReady := func() bool { return models.Champion() != nil && !stopping.Load() }
	opts, err := server.ServerOptions(cfg.limits, metrics)
	if err != nil {
		return err
	}
	opts = append(opts, grpc.ChainUnaryInterceptor(tracker.UnaryInterceptor(), server.UnaryInterceptor(log, metrics)))
	if cfg.tlsCert != "" {
		tc, err := tlsConfig(cfg.tlsCert, cfg.tlsKey, cfg.tlsClientCA)
		if err != nil {
			return err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	gs := grpc.NewServer(opts...)
	server.RegisterPredictor(gs, svc)
	healthpb.RegisterHealthServer(gs, healthSrv)
	if cfg.reflection {
		reflection.Register(gs)
	}
	lis, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("predictd: %w", err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(lis) }()
	var drained, cut int64
	stopGRPC := func() {
		stopping.Store(true)
		drained, cut = stopServer(gs, healthSrv, &tracker, cfg.shutdownTimeout, log)
	}

	// Metrics HTTP server.
	var metricsAddr string
	var stopMetrics func()
	if cfg.metricsListen != "" {
		mlis, err := net.Listen("tcp", cfg.metricsListen)
		if err != nil {
			stopGRPC()
			return fmt.Errorf("predictd: metrics: %w", err)
		}
		metricsAddr = mlis.Addr().String()
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{Registry: promReg}))
		server.HandleHTTPHealth(mux, isReady)
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := hs.Serve(mlis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server failed", "err", err)
			}
		}()
		stopMetrics = func() {
			sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				log.Warn("metrics server shutdown", "err", err)
			}
		}
	}
	stopAll := func(stopReload func()) {
		stopGRPC()
		if stopReload != nil {
			stopReload()
		}
		if stopMetrics != nil {
			stopMetrics()
		}
	}

	// First load: the champion must load, the challenger may fail (and is retried by the
	// reload loop only when its pointer moves).
	version, err := reg.Champion(repo)
	if err == nil {
		versions, lerr := reg.List(repo)
		if lerr != nil {
			log.Error("listing versions failed; no fallback if the champion fails to load", "err", lerr)
		}
		err = reloader.StartChampion(version, versions)
	}
	if err != nil {
		stopAll(nil)
		switch {
		case cfg.registry == "" && errors.Is(err, registry.ErrSchemaMismatch):
			return fmt.Errorf("predictd: the built-in default bundle was trained with other feature code; run go generate ./internal/defaultbundle and rebuild: %w", err)
		case errors.Is(err, registry.ErrNoPointer) || errors.Is(err, registry.ErrNotFound):
			return fmt.Errorf("predictd: %s has no champion to serve in registry %s: publish one with "+
				"`trainer train --history DIR --registry %s`, or choose a version with "+
				"`trainer registry promote --registry %s --repo %s VERSION` (`trainer registry list` shows them): %w",
				repo, regDir, regDir, regDir, repo, err)
		}
		return fmt.Errorf("predictd: first load of %s: %w", repo, err)
	}
	switch v, err := reg.Challenger(repo); {
	case err == nil && reloader.ChallengerFollowsChampion:
		log.Warn("ignoring the challenger pointer: --challenger-models serves the champion bundle's challenger models", "pointer", v)
	case err == nil:
		_ = reloader.Reload(registry.RoleChallenger, v) // a bad challenger is logged and counted; the champion serves
	case !errors.Is(err, registry.ErrNoPointer):
		log.Error("reading the challenger pointer failed", "err", err)
	}
	if models.Challenger() != nil && cfg.challengerShare == 0 && !cfg.shadow {
		log.Warn("a challenger is loaded but serves nothing: set --challenger-share or --shadow", "challenger", models.Challenger().Version)
	}
	if (cfg.challengerShare > 0 || cfg.shadow) && models.Challenger() == nil {
		fix := "the challenger pointer is set (trainer registry set-challenger)"
		if reloader.ChallengerFollowsChampion {
			fix = "a champion trained with those challengers (trainer train --challengers) is published"
		}
		log.Warn("no challenger is loaded: every request is served by the champion until "+fix,
			"challenger_share", cfg.challengerShare, "shadow", cfg.shadow)
	}

	// Reload loop.
	watchCtx, cancelWatch := context.WithCancel(context.Background())
	followDone := make(chan struct{})
	go func() {
		defer close(followDone)
		reloader.Follow(reg.Watch(watchCtx, repo, cfg.reloadInterval))
	}()
	stopReload := func() { cancelWatch(); <-followDone }

	log.Info("serving", "listen", lis.Addr().String(), "repo", repo, "metrics", metricsAddr,
		"challenger_share", cfg.challengerShare, "shadow", cfg.shadow, "challenger_models", strings.Join(cfg.challengerModels, ","), "reflection", cfg.reflection, "tls", cfg.tlsCert != "", "mtls", cfg.tlsClientCA != "")
	if cfg.exampleOut != nil {
		// Printed as is, not through the logger, so that it can be pasted into a shell.
		fmt.Fprintf(cfg.exampleOut, "example request:\n  %s\n", exampleRequest(lis.Addr().String(), cfg))
	}
	if cfg.onListen != nil {
		cfg.onListen(lis.Addr().String(), metricsAddr)
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down", "in_flight", tracker.InFlight())
		stopAll(stopReload)
		<-serveErr
	case err := <-serveErr:
		stopAll(stopReload)
		return fmt.Errorf("predictd: serving: %w", err)
	}
	log.Info("stopped", "requests_served", tracker.Served(), "drained", drained, "cut_off", cut)
	if cut > 0 {
		return fmt.Errorf("predictd: shutdown cut off %d in-flight requests after --shutdown-timeout %v", cut, cfg.shutdownTimeout)
	}
	return nil
}

// stopServer stops gs in order: health NOT_SERVING so that clients drain, then
// GracefulStop, and Stop once timeout has passed. It returns the requests in flight at
// the start that were drained and those Stop cut off.
func stopServer(gs *grpc.Server, hs *health.Server, tr *server.Tracker, timeout time.Duration, log *slog.Logger) (drained, cut int64) {
	hs.Shutdown()
	before := tr.InFlight()
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cut = tr.InFlight()
		log.Warn("graceful stop timed out, stopping", "timeout", timeout, "in_flight", cut)
		gs.Stop()
		<-done
	}
	return max(before-cut, 0), cut
}
