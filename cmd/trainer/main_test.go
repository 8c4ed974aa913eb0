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
		// Issue 15 item 14: the flags, registry's included, and no "(default NaN)".
		if !strings.Contains(out, "\n  -") {
			t.Errorf("help %s does not list its flags:\n%s", name, out)
		}
		if strings.Contains(out, "(default NaN)") || strings.Contains(out, "(required) (default") {
			t.Errorf("help %s shows a default for a required flag:\n%s", name, out)
		}
	}
	if _, _, err := runCmd(t, "help", "no-such-command"); !errors.Is(err, errUsage) {
		t.Errorf("help no-such-command: err %v, want a usage error", err)
	}
}

// TestMissingRequiredFlags is issue 15 item 14: every missing required flag is named in
// one error.
func TestMissingRequiredFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train"}, "--history, --registry are required"},
		{[]string{"eval", "--history", "h"}, "--bundle, --out are required"},
		{[]string{"compare"}, "--a, --b, --history, --out are required"},
		{[]string{"fit", "--algo", "logistic"}, "--model, --target, --train are required"},
		{[]string{"bypass", "--mu", "1"}, "--ahead-arrival, --ahead-mu, --ahead-sigma, --arrival, --sigma are required"},
		{[]string{"predict", "--model", "m"}, "--data, --out are required"},
		{[]string{"validate"}, "--history is required"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestLogFormat is issue 15 item 14: --log-format json makes the run summary a JSON
// record; with text logs the summary is printed once, as text, not also as a log record.
func TestLogFormat(t *testing.T) {
	_, stderr, err := runCmd(t, "--log-format", "json", "validate", "--history", smallHistory)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, `"msg":"validated history"`) {
		t.Errorf("--log-format json: no JSON summary record:\n%s", stderr)
	}
	stdout, stderr, err := runCmd(t, "validate", "--history", smallHistory, "--log-format=text")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "validated history") || !strings.Contains(stdout, "problems: 0") {
		t.Errorf("--log-format text: summary not printed exactly once:\nstdout %s\nstderr %s", stdout, stderr)
	}
	if _, _, err := runCmd(t, "--log-format", "xml", "validate", "--history", smallHistory); !errors.Is(err, errUsage) {
		t.Errorf("--log-format xml = %v, want a usage error", err)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := runCmd(t, "--version")
	if err != nil || !strings.HasPrefix(out, "trainer ") || !strings.Contains(out, "go1.") {
		t.Fatalf("--version: %q, %v", out, err)
	}
}
