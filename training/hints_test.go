package training

import (
	"strings"
	"testing"
	"time"
)

// TestErrorHints checks that the errors of a baseline-gate rejection and of a window
// without enough rows name the fix that applies (walkthrough item 6): --baseline-gate
// serve|off, and no --as-of latest for a window that already ends at the last submission.
func TestErrorHints(t *testing.T) {
	e := &BaselineError{Repo: "go", Failures: []BaselineFailure{{Metric: "success.log_loss", Champion: 0.5, Baseline: BaselinePassRate, Value: 0.4}}}
	if msg := e.Error(); !strings.Contains(msg, "--baseline-gate serve") || !strings.Contains(msg, "--baseline-gate off") {
		t.Errorf("baseline gate error %q does not name --baseline-gate serve and off", msg)
	}
	first := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	last := first.Add(48 * time.Hour)
	if h := spanHint(first, last, last, 10); strings.Contains(h, "--as-of latest") || !strings.Contains(h, "--window") {
		t.Errorf("hint of a window ending at the last submission = %q, want --window and no --as-of latest", h)
	}
	if h := spanHint(first, last, last.Add(30*24*time.Hour), 10); !strings.Contains(h, "--as-of latest") {
		t.Errorf("hint of a window ending after the history = %q, want --as-of latest", h)
	}
}
