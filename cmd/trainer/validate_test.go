package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateCommand(t *testing.T) {
	stdout, _, err := runCmd(t, "validate", "--history", smallHistory)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	for _, s := range []string{"changes: 3 rows read, 3 kept, 0 skipped", "builds: 3 rows read", "pairs: 1 rows read", "problems: 0"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("validate output lacks %q:\n%s", s, stdout)
		}
	}

	// A broken copy: a negative count and a build of an unknown change.
	dir := t.TempDir()
	for _, f := range []string{"changes.csv", "builds.csv"} {
		b, err := os.ReadFile(filepath.Join(smallHistory, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if f == "changes.csv" {
			s = strings.Replace(s, "landed,10,", "landed,-10,", 1)
		} else {
			s += "b4,go,c9,,0,,,,failed,,\n"
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, _, err = runCmd(t, "validate", "--history", dir)
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("strict validate of a broken history = %v, want a non-usage error", err)
	}
	for _, s := range []string{"changes.csv: line 2 (row 0), column lines_added: negative count", "builds.csv: line 5 (row 3), column change_id: unknown change", "problems: 2"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("validate output lacks %q:\n%s", s, stdout)
		}
	}
	stdout, _, err = runCmd(t, "validate", "--history", dir, "--lenient")
	if err != nil {
		t.Fatalf("lenient validate: %v", err)
	}
	// c1 is skipped, so are b1 (its build), b2 and b3 (c1 on their path), and b4.
	for _, s := range []string{"changes: 3 rows read, 2 kept, 1 skipped", "builds: 4 rows read, 0 kept, 4 skipped", "skipped 3: change was skipped", "skipped 1: unknown change"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("lenient validate output lacks %q:\n%s", s, stdout)
		}
	}
	if _, _, err := runCmd(t, "validate"); !errors.Is(err, errUsage) {
		t.Errorf("validate without --history = %v, want a usage error", err)
	}
}

// TestValidateMisspelledColumn is issue 15 item 4: validate of a history whose
// lines_added header reads lines_addded reports a problem suggesting the right name and
// fails, instead of "problems: 0".
func TestValidateMisspelledColumn(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"changes.csv", "builds.csv", "pairs.csv"} {
		b, err := os.ReadFile(filepath.Join(smallHistory, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "changes.csv" {
			b = []byte(strings.Replace(string(b), "lines_added", "lines_addded", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, _, err := runCmd(t, "validate", "--history", dir)
	if err == nil {
		t.Fatalf("validate of a misspelled column succeeded:\n%s", stdout)
	}
	for _, s := range []string{"column lines_addded: unknown column", "did you mean lines_added?", "problems: 1"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("validate output lacks %q:\n%s", s, stdout)
		}
	}
}
