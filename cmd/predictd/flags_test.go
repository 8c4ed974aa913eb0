package main

import (
	"slices"
	"strings"
	"testing"
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
