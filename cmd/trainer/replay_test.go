package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/internal/defaultbundle"
)

// TestReplayBundleSource replays a small synthetic world with the truth, with the
// built-in bundle and with the truth but the bundle's P-conf as probability sources, as a
// queue owner would compare them, and
// checks that both sources reach summary.json and that the bundle source is planned with
// the build-time family predictd serves for it (the built-in bundle's LogNormal).
func TestReplayBundleSource(t *testing.T) {
	bundle := t.TempDir()
	if err := defaultbundle.WriteDir(bundle); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, stderr, err := runCmd(t, "replay", "--synth", "ios", "--days", "1", "--strategies", "sq2024",
		"--probs", "truth", "--probs", "bundle:"+bundle, "--probs", "pconf:bundle:"+bundle, "--seeds", "1", "--out", out)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var summary any
	if err := json.Unmarshal(data, &summary); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, want := range []string{`"truth"`, `"bundle:` + bundle + `"`, `"pconf:bundle:` + bundle + `"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("summary.json lacks the source %s", want)
		}
	}
	if !strings.Contains(string(data), "lognormal") {
		t.Errorf("summary.json does not say the bundle source plans with LogNormal build times")
	}
}

// TestReplayBatch replays a small synthetic world under batch with the size chosen from
// the built-in bundle's P-succ, and with a fixed size: both reach summary.json and the
// table; a size that is neither a positive integer nor auto is a usage error.
func TestReplayBatch(t *testing.T) {
	bundle := t.TempDir()
	if err := defaultbundle.WriteDir(bundle); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ size, want string }{{"auto", `"batch_size": -1`}, {"6", `"batch_size": 6`}} {
		out := t.TempDir()
		stdout, stderr, err := runCmd(t, "replay", "--synth", "ios", "--days", "0.5", "--strategies", "batch",
			"--batch-size", c.size, "--probs", "bundle:"+bundle, "--seeds", "1", "--out", out)
		if err != nil {
			t.Fatalf("replay --batch-size %s: %v\n%s", c.size, err, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"strategy": "batch"`) || !strings.Contains(string(data), c.want) {
			t.Errorf("--batch-size %s: summary.json lacks the batch cell with %s", c.size, c.want)
		}
		if !strings.Contains(stdout, "batch ") {
			t.Errorf("--batch-size %s: the table lacks batch:\n%s", c.size, stdout)
		}
	}
	for _, bad := range []string{"0", "x"} {
		if _, _, err := runCmd(t, "replay", "--synth", "ios", "--days", "0.5", "--strategies", "batch",
			"--batch-size", bad, "--seeds", "1", "--out", t.TempDir()); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--batch-size") {
			t.Errorf("--batch-size %s: %v, want a usage error naming the flag", bad, err)
		}
	}
}
