package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONSummaries checks that with --log-format json, synth, features and eval write
// their run summaries as JSON records and nothing else on stderr (the walkthrough found
// their text summaries there), and that without it the text summaries are printed.
func TestJSONSummaries(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "h")
	dir := t.TempDir()
	steps := []struct {
		msg  string
		text string
		args []string
	}{
		{"synthesized history", "synth: go", []string{"synth", "--profile", "go", "--days", "1", "--seed", "3", "--format", "csv", "--out", hist}},
		{"features written", "features: read", []string{"features", "--history", hist, "--task", "success", "--out", filepath.Join(dir, "s.csv")}},
	}
	for _, s := range steps {
		_, stderr, err := runCmd(t, append([]string{"--log-format", "json"}, s.args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.args[0], err, stderr)
		}
		found := false
		for line := range strings.Lines(stderr) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("%s --log-format json: stderr line %q is not JSON", s.args[0], line)
				continue
			}
			found = found || rec["msg"] == s.msg
		}
		if !found {
			t.Errorf("%s --log-format json: no %q record:\n%s", s.args[0], s.msg, stderr)
		}
		_, stderr, err = runCmd(t, s.args...)
		if err != nil || !strings.Contains(stderr, s.text) {
			t.Errorf("%s: text summary lacks %q (%v):\n%s", s.args[0], s.text, err, stderr)
		}
	}
}
