package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/training"
)

// TestEvalFewRows checks that eval and compare of a bundle whose window ends at the
// history's last submission (the README walkthrough, where they scored one row and exited
// 0) fail with an error naming the row counts, the window end and the fixes, and that
// --allow-few-rows scores the rows anyway.
func TestEvalFewRows(t *testing.T) {
	hist := trainHistory(t)
	reg := filepath.Join(t.TempDir(), "reg")
	out, stderr, err := runCmd(t, "train", "--history", hist, "--registry", reg, "--window", testWindow,
		"--baseline-gate", "off", "--config", fastConfig(t, `, "gates": {}`))
	if err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	dir := filepath.Join(reg, "go", "versions", lastLine(out))
	metrics := filepath.Join(t.TempDir(), "m.json")
	_, _, err = runCmd(t, "eval", "--bundle", dir, "--history", hist, "--out", metrics)
	if !errors.Is(err, training.ErrFewRows) {
		t.Fatalf("eval at the history's end = %v, want ErrFewRows", err)
	}
	for _, want := range []string{"success and", "conflict rows", "window end", "--in-sample", "--allow-few-rows", "runs past"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("eval error %q lacks %q", err, want)
		}
	}
	_, _, err = runCmd(t, "compare", "--a", dir, "--b", dir, "--history", hist, "--out", t.TempDir())
	if !errors.Is(err, training.ErrFewRows) || !strings.Contains(err.Error(), "--allow-few-rows") {
		t.Errorf("compare at the history's end = %v, want ErrFewRows naming --allow-few-rows", err)
	}
	// With --allow-few-rows the same rows are scored; --in-sample has enough rows.
	if _, stderr, err := runCmd(t, "eval", "--bundle", dir, "--history", hist, "--out", metrics, "--allow-few-rows"); err != nil {
		t.Errorf("eval --allow-few-rows: %v\n%s", err, stderr)
	}
	if _, stderr, err := runCmd(t, "eval", "--bundle", dir, "--history", hist, "--out", metrics, "--in-sample"); err != nil {
		t.Errorf("eval --in-sample: %v\n%s", err, stderr)
	}
}
