package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// runCmd runs the trainer in process with args and returns what it wrote to stdout and
// stderr.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	err = runMain(context.Background(), e, args)
	return out.String(), errb.String(), err
}

func TestUnknownSubcommand(t *testing.T) {
	_, _, err := runCmd(t, "no-such-command")
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "no-such-command") {
		t.Fatalf("runMain(no-such-command) = %v, want a usage error naming it", err)
	}
}

func TestHelpListsCommands(t *testing.T) {
	out, _, err := runCmd(t, "help")
	if err != nil {
		t.Fatalf("runMain(help) = %v", err)
	}
	for name := range commands {
		if !strings.Contains(out, name) {
			t.Errorf("help does not list %q:\n%s", name, out)
		}
	}
}

func TestHelpSubcommand(t *testing.T) {
	for name := range commands {
		out, _, err := runCmd(t, "help", name)
		if err != nil {
			t.Errorf("help %s: %v", name, err)
			continue
		}
		if !strings.Contains(out, "usage: trainer "+name) {
			t.Errorf("help %s does not print its usage on stdout:\n%s", name, out)
		}
	}
	if _, _, err := runCmd(t, "help", "no-such-command"); !errors.Is(err, errUsage) {
		t.Errorf("help no-such-command: err %v, want a usage error", err)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := runCmd(t, "--version")
	if err != nil || !strings.HasPrefix(out, "trainer ") || !strings.Contains(out, "go1.") {
		t.Fatalf("--version: %q, %v", out, err)
	}
}
