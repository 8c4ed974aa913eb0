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
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
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
	// stdin is what a file flag given as "-" reads (fit --train, predict --data,
	// speculate --in); nil reads nothing.
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	// jsonLog is set by --log-format json: summaries are then log records, not text
	// (see summaryLog).
	jsonLog bool
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
		stdin:      os.Stdin,
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

// logFormatUsage documents the global --log-format flag.
const logFormatUsage = "--log-format text|json (anywhere on the line): log records as text (default) or JSON lines on stderr; " +
	"with json, the run summaries on stderr are JSON records instead of text (output a command writes to stdout, such as validate's report or compare's table, stays text)"

// takeLogFormat removes every --log-format (or -log-format) flag from args and returns
// the rest with the last format given; "" when there is none.
func takeLogFormat(args []string) (rest []string, format string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "log-format" {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, "", fmt.Errorf("%w: --log-format needs a value: text or json", errUsage)
			}
			i++
			val = args[i]
		}
		if val != "text" && val != "json" {
			return nil, "", fmt.Errorf("%w: --log-format %q is not text or json", errUsage, val)
		}
		format = val
	}
	return rest, format, nil
}

// runMain dispatches args[0] to its subcommand, after taking out the global
// --log-format flag.
func runMain(ctx context.Context, e *env, args []string) error {
	args, format, err := takeLogFormat(args)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		ne := *e
		ne.log, ne.jsonLog = slog.New(slog.NewJSONHandler(e.stderr, nil)), true
		e = &ne
	case "text":
		ne := *e
		ne.log = slog.New(slog.NewTextHandler(e.stderr, nil))
		e = &ne
	}
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
			return prefixed(c.name, err)
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
		return prefixed(c.name, err)
	}
	return nil
}

// prefixed returns err with the subcommand name in front, unless its message starts with
// it already (errors of package registry under "registry" printed "registry: registry:").
func prefixed(name string, err error) error {
	if strings.HasPrefix(err.Error(), name+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "usage: trainer <subcommand> [flags]    (trainer help SUBCOMMAND for its flags; trainer --version)")
	fmt.Fprintln(w, "global flag: "+logFormatUsage+"\n\nsubcommands:")
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
		printDefaults(e.stderr, fs)
	}
	return fs
}

// requiredMark ends the usage of a required flag; parseFlags checks those flags and
// printDefaults shows no default for them.
const requiredMark = "(required)"

func isRequired(f *flag.Flag) bool { return strings.HasSuffix(f.Usage, requiredMark) }

// printDefaults is flag.PrintDefaults without the defaults that mean "no value": none
// for a required flag, and none that is NaN or empty (the "(default NaN)" of a
// required number).
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		if b.Len() <= 4 && name == "" {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		def := f.DefValue
		if !isRequired(f) && def != "" && def != "NaN" && def != "false" && def != "0" && def != "[]" {
			if name == "string" {
				def = strconv.Quote(def)
			}
			fmt.Fprintf(&b, " (default %s)", def)
		}
		fmt.Fprintln(w, b.String())
	})
}

// parseFlags parses args into fs and turns a parse failure into an errUsage error. A
// flag whose usage ends in "(required)" must be given: every missing one is named in one
// error.
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
	return checkRequired(fs)
}

// checkRequired returns a usage error naming every required flag of fs that was not
// set, or nil.
func checkRequired(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var missing []string
	fs.VisitAll(func(f *flag.Flag) {
		if isRequired(f) && !set[f.Name] {
			missing = append(missing, "--"+f.Name)
		}
	})
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: %s is required", errUsage, missing[0])
	}
	return fmt.Errorf("%w: %s are required", errUsage, strings.Join(missing, ", "))
}

// openInput opens path for reading; "-" is e.stdin, which is copied into a temporary
// file named stdin.ext (ext without the dot) when the reader needs a path with an
// extension (tables are read by path, their format from the extension). The returned
// cleanup removes that file.
func openInput(e *env, path, ext string) (string, func(), error) {
	if path != "-" {
		return path, func() {}, nil
	}
	if e.stdin == nil {
		return "", nil, fmt.Errorf("%w: - reads standard input, which this run does not have", errUsage)
	}
	dir, err := os.MkdirTemp("", "trainer-stdin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	p := filepath.Join(dir, "stdin."+ext)
	f, err := os.Create(p)
	if err == nil {
		_, err = io.Copy(f, e.stdin)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("reading standard input: %w", err)
	}
	return p, cleanup, nil
}

// summaryLog records a run summary that the command has also written as text: at
// debug level with text logs, so that the summary is printed once, and at info level
// with --log-format json, where the record is the machine-readable summary.
func (e *env) summaryLog(msg string, args ...any) {
	if e.jsonLog {
		e.log.Info(msg, args...)
		return
	}
	e.log.Debug(msg, args...)
}

// summaryText is where a command writes its text run summary: e.stderr, or io.Discard
// with --log-format json, where the command's summaryLog record is the summary, so that
// stderr holds only JSON lines.
func (e *env) summaryText() io.Writer {
	if e.jsonLog {
		return io.Discard
	}
	return e.stderr
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
