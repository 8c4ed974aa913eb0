package main

import (
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/server"
)

// TestChallengerModelsFlag checks that --challenger-models accepts gbm-conflict, which
// trainer train --challengers trains, and that an unknown name is an error naming the
// known ones without the usage text above it (the walkthrough found it buried).
func TestChallengerModelsFlag(t *testing.T) {
	var stderr strings.Builder
	c, err := parseFlags([]string{"--challenger-models", "gbm-success,gbm-conflict"}, &stderr)
	if err != nil || !slices.Equal(c.challengerModels, []string{"gbm-success", "gbm-conflict"}) {
		t.Fatalf("parseFlags(gbm-success,gbm-conflict) = %v, %v", c, err)
	}
	stderr.Reset()
	_, err = parseFlags([]string{"--challenger-models", "gbm"}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--challenger-models") || !strings.Contains(err.Error(), "gbm-conflict") {
		t.Errorf("parseFlags(gbm) = %v, want an error naming the flag and the known models", err)
	}
	if stderr.Len() != 0 {
		t.Errorf("an unknown challenger model printed %q, want the error alone", stderr.String())
	}
}

// TestDocumentedLimitDefaults: each "--flag VALUE" line of the package comment's limit
// table states the flag's real default (VALUE in MiB is converted), so that the
// documentation cannot drift from the code.
func TestDocumentedLimitDefaults(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("predictd", flag.ContinueOnError)
	var c config
	limitFlags(fs, &c.limits)
	fs.IntVar(&c.maxBatch, "max-batch", server.DefaultMaxBatch, "")
	n := 0
	for line := range strings.SplitSeq(string(doc), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "//"))
		if len(f) < 2 || !strings.HasPrefix(f[0], "--") || !strings.HasPrefix(line, "//\t--") {
			continue
		}
		fl := fs.Lookup(strings.TrimPrefix(f[0], "--"))
		if fl == nil {
			t.Errorf("doc.go documents %s, which is not a limit flag", f[0])
			continue
		}
		want := f[1]
		if mib, ok := strings.CutSuffix(want, "MiB"); ok {
			v, err := strconv.Atoi(mib)
			if err != nil {
				t.Fatal(err)
			}
			want = strconv.Itoa(v << 20)
		}
		if fl.DefValue != want {
			t.Errorf("doc.go says %s defaults to %s, the flag to %s", f[0], f[1], fl.DefValue)
		}
		n++
	}
	all := 0
	fs.VisitAll(func(*flag.Flag) { all++ })
	if n != all {
		t.Errorf("doc.go documents %d limit flags, want all %d", n, all)
	}
}
