package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// sample is one measured run of a process.
type sample struct {
	wall, user time.Duration
	// maxRSS is the peak resident set size in bytes.
	maxRSS int64
}

// command is a process to run: its arguments and the variables added to the
// environment.
type command struct {
	argv []string
	env  []string
}

// String returns the command as a shell line, for logs.
func (c command) String() string {
	return strings.TrimSpace(strings.Join(c.env, " ") + " " + strings.Join(c.argv, " "))
}

// measure runs c in dir and returns its wall time and the user CPU time and peak RSS
// that wait4 reports for it. A failed run is an error carrying the end of its output.
func measure(ctx context.Context, dir string, c command) (sample, error) {
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w\n%s", c, err, tail(out.Bytes(), 2000))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, fmt.Errorf("%s: no rusage from wait4", c)
	}
	return sample{
		wall:   wall,
		user:   time.Duration(ru.Utime.Nano()),
		maxRSS: ru.Maxrss * 1024, // Linux reports kilobytes
	}, nil
}

// tail returns the last n bytes of b as text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// loadAverage returns the 1, 5 and 15 minute load averages of /proc/loadavg, or the
// reason they could not be read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
