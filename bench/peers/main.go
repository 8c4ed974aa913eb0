package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	tasks, work, peers, uci, repo, python string
	reps                                  int
	list                                  bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.tasks, "tasks", "all", "comma-separated tasks or groups to run (see -list), or all")
	flag.IntVar(&cfg.reps, "reps", 3, "repetitions of every task")
	flag.StringVar(&cfg.work, "work", filepath.Join(os.TempDir(), "sqpredict-peers"), "folder for the generated data sets (kept and reused) and outputs")
	flag.StringVar(&cfg.peers, "peers", "../shared/peers", "folder of the reference tools (lightgbm-4.6.0/, ngboost-reference/)")
	flag.StringVar(&cfg.uci, "uci", "../shared/testdata/uci", "folder of the UCI data sets")
	flag.StringVar(&cfg.repo, "repo", ".", "the sqpredict repository, whose cmd/trainer is built")
	flag.StringVar(&cfg.python, "python", "/usr/bin/python3", "Python with scikit-learn and pandas")
	flag.BoolVar(&cfg.list, "list", false, "list the tasks and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

// run selects the tasks, builds the trainer, prepares the data and measures every task
// cfg.reps times, then writes the table to stdout (after a failed run, the table of the
// runs before it); progress goes to log.
func run(ctx context.Context, cfg config, stdout, log io.Writer) error {
	all := allTasks()
	if cfg.list {
		for _, t := range all {
			fmt.Fprintf(stdout, "%-24s %d thread(s), peer %s: %s\n", t.name, t.threads, t.peerName(), t.about)
		}
		return nil
	}
	tasks, err := selectTasks(all, cfg.tasks)
	if err != nil {
		return err
	}
	if cfg.reps < 1 {
		return fmt.Errorf("-reps %d: want at least 1", cfg.reps)
	}
	ws := &workspace{
		dir:      cfg.work,
		lightgbm: filepath.Join(cfg.peers, "lightgbm-4.6.0", "lightgbm"),
		python:   cfg.python,
		ngboost:  filepath.Join(cfg.peers, "ngboost-reference"),
		uci:      cfg.uci,
	}
	for _, p := range []*string{&ws.dir, &ws.lightgbm, &ws.ngboost, &ws.uci} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(ws.dir, "out"), 0o755); err != nil {
		return err
	}
	bin, err := os.MkdirTemp("", "sqpredict-peers-bin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	ws.trainer = filepath.Join(bin, "trainer")
	fmt.Fprintln(log, "building cmd/trainer")
	build := exec.CommandContext(ctx, "go", "build", "-o", ws.trainer, "./cmd/trainer")
	build.Dir, build.Stdout, build.Stderr = cfg.repo, log, log
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/trainer in %s: %w", cfg.repo, err)
	}
	for _, t := range tasks {
		fmt.Fprintf(log, "preparing %s\n", t.name)
		if err := t.prepare(ctx, ws); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}

	results := make([]result, len(tasks))
	for i, t := range tasks {
		results[i].task = t
	}
	start, loadStart := time.Now(), loadAverage()
	// report writes the table of the runs so far: all of them, or those before a
	// failure.
	report := func() {
		writeHeader(stdout, start, time.Now(), loadStart, loadAverage(), cfg.reps)
		writeTable(stdout, results)
	}
	for rep := range cfg.reps {
		for i, t := range tasks {
			runs := []struct {
				name string
				cmd  func(*workspace) command
				dst  *[]sample
			}{{"sqpredict", t.ours, &results[i].ours}, {t.peer, t.theirs, &results[i].peer}}
			if rep%2 == 1 {
				runs[0], runs[1] = runs[1], runs[0]
			}
			for _, r := range runs {
				if r.cmd == nil {
					continue
				}
				c := r.cmd(ws)
				fmt.Fprintf(log, "rep %d/%d %s, %s: %s\n", rep+1, cfg.reps, t.name, r.name, c)
				s, err := measure(ctx, ws.dir, c)
				if err != nil {
					report()
					return fmt.Errorf("%s: %w", t.name, err)
				}
				fmt.Fprintf(log, "  wall %.2f s, user %.2f s, peak RSS %.0f MB\n", s.wall.Seconds(), s.user.Seconds(), float64(s.maxRSS)/1e6)
				*r.dst = append(*r.dst, s)
			}
		}
	}
	report()
	return nil
}
