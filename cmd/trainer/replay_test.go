package main

import (
	"encoding/json"
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
