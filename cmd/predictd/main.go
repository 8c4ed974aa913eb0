package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
)

// config is what the flags say.
type config struct {
	// memoryLimit is the Go runtime's soft memory limit main sets (--memory-limit);
	// 0 leaves GOMEMLIMIT's or none.
	memoryLimit     int64
	listen          string
	registry        string
	repo            string
	metricsListen   string
	challengerShare float64
	shadow          bool
	// challengerModels are the champion bundle's challenger models served as the
	// challenger (--challenger-models); empty means the challenger pointer's bundle.
	challengerModels []string
	// authorKeyFile names the author key of bundles with pseudonymised authors
	// (--author-key-file; "" means $SQPREDICT_AUTHOR_KEY_FILE, then none).
	authorKeyFile   string
	predictionLog   string
	logRetention    server.LogRetention
	logQueue        int
	tlsCert, tlsKey string
	// tlsClientCA, when set, names the PEM CA bundle client certificates must chain
	// to (--tls-client-ca): mutual TLS.
	tlsClientCA     string
	maxBatch        int
	limits          server.Limits
	reloadInterval  time.Duration
	shutdownTimeout time.Duration
	reflection      bool
	logLevel        slog.Level
	logFormat       string
	// version asks for the version to be printed instead of serving.
	version bool

	// exampleOut, when not nil, receives a ready-to-paste example request.
	exampleOut io.Writer
	// onListen, when set (by tests), is called with the addresses bound.
	onListen func(grpcAddr, metricsAddr string)
}

func (c *config) validate() error {
	switch {
	case c.listen == "":
		return errors.New("--listen is empty")
	case !(c.challengerShare >= 0 && c.challengerShare <= 1):
		return fmt.Errorf("--challenger-share %v is not in [0, 1]", c.challengerShare)
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case c.tlsClientCA != "" && c.tlsCert == "":
		return errors.New("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)")
	case c.memoryLimit < 0:
		return fmt.Errorf("--memory-limit %d is negative", c.memoryLimit)
	case c.maxBatch < 0:
		return fmt.Errorf("--max-batch %d is negative", c.maxBatch)
	case c.reloadInterval <= 0:
		return fmt.Errorf("--reload-interval %v is not positive", c.reloadInterval)
	case c.shutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout %v is not positive", c.shutdownTimeout)
	case c.registry == "" && c.repo != "":
		return errors.New("--repo needs --registry (the default bundle names its own repository)")
	case c.logFormat != "text" && c.logFormat != "json":
		return fmt.Errorf("--log-format %q is not text or json", c.logFormat)
	}
	if c.logQueue <= 0 {
		return fmt.Errorf("--prediction-log-queue %d is not positive", c.logQueue)
	}
	if err := c.logRetention.Validate(); err != nil {
		return fmt.Errorf("--prediction-log-*: %w", err)
	}
	if err := c.limits.Validate(); err != nil {
		return fmt.Errorf("limit flags (--max-*, --keepalive-*, --handshake-timeout): %w", err)
	}
	return nil
}

// parseFlags fills a config from args.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("predictd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:50051", "gRPC address to listen on")
	fs.StringVar(&c.registry, "registry", "", "model registry folder (default: serve the bundle built into the binary)")
	fs.StringVar(&c.repo, "repo", "", "repository to serve (default: the registry's only one)")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "HTTP address for Prometheus /metrics (default: none)")
	fs.Float64Var(&c.challengerShare, "challenger-share", 0, "share of changes, in [0, 1], routed to the challenger by a hash of the change id")
	fs.BoolVar(&c.shadow, "shadow", false, "score every request with the challenger too, log both, return the champion's")
	fs.StringVar(&c.authorKeyFile, "author-key-file", "", "file holding the operator's author key, the one the trainer pseudonymised "+
		"the bundles' authors with; incoming authors are hashed with it (default $"+features.AuthorKeyEnv+"; none: bundles in clear only)")
	// --challenger-models is checked after Parse, so that an unknown name is reported on
	// its own rather than above the whole usage text, as a flag.Func error would be.
	challengerModels := fs.String("challenger-models", "", "serve the champion bundle's own challenger models as the challenger, in place of the challenger pointer's bundle: "+
		"a comma-separated list of gbm-success (success), gbm-conflict (P-conf) and ngboost-normal (build time; ngboost-lognormal for older bundles whose champion is Normal), trained by trainer train --challengers; "+
		"routed by --challenger-share or run in --shadow")
	fs.StringVar(&c.predictionLog, "prediction-log", "", "folder of rotating JSON-lines prediction logs (default: none)")
	fs.Int64Var(&c.logRetention.FileBytes, "prediction-log-file-bytes", server.DefaultMaxLogBytes, "size at which the prediction log starts a new file")
	fs.IntVar(&c.logRetention.Keep, "prediction-log-keep", server.DefaultLogKeep, "rotated prediction log files kept (the oldest are removed)")
	fs.Int64Var(&c.logRetention.TotalBytes, "prediction-log-max-bytes", server.DefaultLogTotalBytes, "bytes all prediction log files may hold together (the oldest are removed)")
	fs.IntVar(&c.logQueue, "prediction-log-queue", server.DefaultLogQueue, "prediction records waiting for the disk at most; more are dropped and counted, requests never wait")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "CA certificates file (PEM): require client certificates signed by one of them (mutual TLS; needs --tls-cert)")
	fs.IntVar(&c.maxBatch, "max-batch", server.DefaultMaxBatch, "largest number of items in any list of a request")
	limitFlags(fs, &c.limits)
	fs.Int64Var(&c.memoryLimit, "memory-limit", defaultMemoryLimit, "the Go runtime's soft memory limit in bytes: the garbage collector works harder as the heap nears it "+
		"(0 leaves $GOMEMLIMIT's or none)")
	fs.DurationVar(&c.reloadInterval, "reload-interval", 10*time.Second, "how often to poll the registry's pointers")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long to drain requests before stopping hard")
	fs.BoolVar(&c.reflection, "reflection", false, "register gRPC server reflection (default: on when --listen is a loopback address, off otherwise)")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if c.challengerModels, err = bundleload.ParseChallengerModels(*challengerModels); err != nil {
		return nil, fmt.Errorf("--challenger-models: %w", err)
	}
	if c.version {
		return c, nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["reflection"] {
		// Reflection lets grpcurl list the services with no .proto at hand: on by
		// default where only this machine can reach the server.
		c.reflection = loopback(c.listen)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// limitFlags defines the flags of l's fields, with server's defaults.
func limitFlags(fs *flag.FlagSet, l *server.Limits) {
	fs.IntVar(&l.MaxCapacity, "max-capacity", server.DefaultMaxCapacity, "largest speculation capacity a request may ask for")
	fs.IntVar(&l.MaxExplored, "max-explored", server.DefaultMaxExplored, "tree prefixes one speculation may expand (a plan cut by it says truncated_by)")
	fs.IntVar(&l.MaxPrefixWords, "max-prefix-words", server.DefaultMaxPrefixWords, "64-bit words of prefix assignments one speculation may store")
	fs.IntVar(&l.MaxNodeIDs, "max-node-ids", server.DefaultMaxNodeIDs, "change ids the nodes of one plan may name in all")
	fs.IntVar(&l.MaxResponseBytes, "max-response-bytes", server.DefaultMaxResponseBytes, "largest response in bytes; a plan above it loses its least likely nodes")
	fs.DurationVar(&l.MaxRequestTime, "max-request-time", server.DefaultMaxRequestTime, "longest a request may run whatever its deadline")
	fs.IntVar(&l.MaxRecvBytes, "max-recv-bytes", server.DefaultMaxRecvBytes, "largest request message in bytes (RESOURCE_EXHAUSTED above)")
	fs.IntVar(&l.MaxInflight, "max-inflight", server.DefaultMaxInflight, "requests of one method in flight at once; more are shed with RESOURCE_EXHAUSTED before being read")
	fs.Int64Var(&l.MaxRequestMemory, "max-request-memory", server.DefaultMaxRequestMemory, fmt.Sprintf("estimated bytes the admitted requests may hold at once (%d per byte of a message); more are shed with RESOURCE_EXHAUSTED before being decoded", server.RequestMemoryPerByte))
	fs.IntVar(&l.MaxConcurrentStreams, "max-concurrent-streams", server.DefaultMaxConcurrentStreams, "streams one connection may have open at once")
	fs.DurationVar(&l.KeepaliveMinTime, "keepalive-min-time", server.DefaultKeepaliveMinTime, "shortest interval between client pings tolerated (a client pinging faster is disconnected)")
	fs.DurationVar(&l.KeepaliveTime, "keepalive-time", server.DefaultKeepaliveTime, "ping a connection silent for this long")
	fs.DurationVar(&l.KeepaliveTimeout, "keepalive-timeout", server.DefaultKeepaliveTimeout, "close a connection whose ping is not acknowledged within this")
	fs.DurationVar(&l.MaxConnectionIdle, "max-connection-idle", server.DefaultMaxConnectionIdle, "close a connection with no request for this long")
	fs.DurationVar(&l.HandshakeTimeout, "handshake-timeout", server.DefaultHandshakeTimeout, "longest a new connection may take to set up (TLS handshake, HTTP/2 preface)")
}

// defaultMemoryLimit is --memory-limit's default, 384 MiB. Admission releases a request's
// weight when its stream ends, but its memory is garbage until the next collection, and
// with the collector's default pacing (GOGC=100) the heap may grow to twice what is live
// first (BENCHMARKS.md, "Memory-weighted admission").
const defaultMemoryLimit = 384 << 20

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "predictd:", err)
		os.Exit(2)
	}
	if cfg.version {
		fmt.Println(versionString())
		return
	}
	cfg.exampleOut = os.Stderr
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(cfg.memoryLimit) // process-wide, so here and not in run
	}
	log := newLogger(os.Stderr, cfg.logFormat, cfg.logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("predictd failed", "err", err)
		os.Exit(1)
	}
}

// loopback reports whether the listen address addr binds only loopback interfaces:
// "localhost" or a loopback IP. An empty host (all interfaces) is not loopback.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newLogger returns the logger of --log-format (text or json) and --log-level writing to
// w.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// versionString returns "predictd VERSION (revision REV, GOVERSION)" from the build
// information: the module version ("(devel)" for a build of a checkout) and the VCS
// revision (registry.VCSRevision, "+dirty" for a modified work tree; "unknown" when the
// build did not record it).
func versionString() string {
	version, goVersion := "(unknown)", runtime.Version()
	rev := registry.VCSRevision()
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
	}
	if rev == "" {
		rev = "unknown"
	}
	return fmt.Sprintf("predictd %s (revision %s, %s)", version, rev, goVersion)
}
