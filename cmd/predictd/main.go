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
	tlsCert, tlsKey string
	maxBatch        int
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
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.IntVar(&c.maxBatch, "max-batch", server.DefaultMaxBatch, "largest number of items in any list of a request")
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
