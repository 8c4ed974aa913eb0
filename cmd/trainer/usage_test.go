package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUsageLinesListFlags checks that the usage line of predict and schedule names every
// flag the subcommand defines (the walkthrough found --quantiles, --intervals,
// --author-key-file and --baseline-gate missing), and that no flag's help states its
// default twice ("(default all) (default -1)").
func TestUsageLinesListFlags(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range commands {
			if !yield(n) {
				return
			}
		}
	}) {
		out, _, err := runCmd(t, "help", name)
		if err != nil {
			t.Errorf("help %s: %v", name, err)
			continue
		}
		if regexp.MustCompile(`\(default [^)]*\) \(default `).MatchString(out) || strings.Contains(out, "default all) (default") {
			t.Errorf("help %s states a default twice:\n%s", name, out)
		}
		if name != "predict" && name != "schedule" {
			continue
		}
		usage, _, _ := strings.Cut(out, "\n")
		for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
			if !strings.Contains(usage, "--"+m[1]) {
				t.Errorf("help %s: usage line %q lacks --%s", name, usage, m[1])
			}
		}
	}
	out, _, _ := runCmd(t, "help", "compare")
	if !strings.Contains(out, "default: the later of the two bundles' window ends") {
		t.Errorf("compare --from help does not name the later window end:\n%s", out)
	}
}
