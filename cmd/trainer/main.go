package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"
)

// command is one trainer subcommand. Each lives in its own file and adds itself to
// commands with register from an init function, so subcommands do not touch each other.
type command struct {
	name    string
	summary string // one line for "trainer help"
	// run executes the subcommand with its own arguments (after the name). It writes
	// results to env.stdout and progress and logs to env.stderr.
	run func(ctx context.Context, env *env, args []string) error
}

// env is what a subcommand may use of the process, so that tests can run commands in
// process and capture their output.
type env struct {
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	// isTerminal reports whether stderr is a terminal, where progress is drawn.
	isTerminal bool
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("trainer: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks an error in the command line; main exits with status 2 for it.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		log:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
		isTerminal: isTerminal(os.Stderr),
	}
	err := runMain(ctx, e, os.Args[1:])
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "trainer:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "trainer:", err)
		os.Exit(1)
	}
}

// runMain dispatches args[0] to its subcommand.
func runMain(ctx context.Context, e *env, args []string) error {
	if len(args) >= 2 && args[0] == "help" {
		c, ok := commands[args[1]]
		if !ok {
			return fmt.Errorf("%w: unknown subcommand %q (run \"trainer help\")", errUsage, args[1])
		}
		// A subcommand prints its usage and flags for -h; send them to stdout, where
		// help was asked for.
		he := *e
		he.stderr = e.stdout
		if err := c.run(ctx, &he, []string{"-h"}); err != nil && !errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		return nil
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintln(e.stdout, "trainer", versionString())
		return nil
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(e.stdout)
		if len(args) == 0 {
			return fmt.Errorf("%w: no subcommand", errUsage)
		}
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown subcommand %q (run \"trainer help\")", errUsage, args[0])
	}
	if err := c.run(ctx, e, args[1:]); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "usage: trainer <subcommand> [flags]    (trainer help SUBCOMMAND for its flags; trainer --version)\n\nsubcommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}

// newFlagSet returns a flag set for a subcommand that reports errors instead of exiting
// and prints its usage to e.stderr.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: trainer %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs and turns a parse failure into an errUsage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// versionString returns the module version and VCS revision the binary was built from,
// as far as the build recorded them.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	out := v + " " + bi.GoVersion
	if rev != "" {
		out += " revision " + rev + dirty
		if when != "" {
			out += " (" + when + ")"
		}
	}
	return out
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
