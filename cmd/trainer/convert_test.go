package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
)

// smallHistory is a hand-made CSV history with truth columns and a pairs table.
const smallHistory = "testdata/datasets/history"

func TestConvertCommand(t *testing.T) {
	want, _, err := datasets.ReadHistory(context.Background(), smallHistory, datasets.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev := smallHistory
	// csv -> parquet -> arrow -> csv: every hop keeps the history.
	for _, format := range []string{"parquet", "arrow", "csv"} {
		out := filepath.Join(t.TempDir(), format)
		stdout, stderr, err := runCmd(t, "convert", "--in", prev, "--out", out, "--format", format)
		if err != nil {
			t.Fatalf("convert --format %s: %v\n%s", format, err, stderr)
		}
		if !strings.Contains(stdout, "3 changes, 3 builds, 1 pairs") {
			t.Errorf("convert --format %s summary = %q", format, stdout)
		}
		if _, err := os.Stat(filepath.Join(out, "builds."+format)); err != nil {
			t.Errorf("convert --format %s: %v", format, err)
		}
		prev = out
	}
	// The end of the chain is byte-identical to writing the original history as CSV.
	direct := filepath.Join(t.TempDir(), "direct")
	if err := datasets.WriteHistory(context.Background(), direct, want, datasets.FormatCSV); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"changes.csv", "builds.csv", "pairs.csv"} {
		a, err1 := os.ReadFile(filepath.Join(direct, table))
		b, err2 := os.ReadFile(filepath.Join(prev, table))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("%s after csv -> parquet -> arrow -> csv differs from a direct write (%v, %v):\n%s\nwant\n%s", table, err1, err2, b, a)
		}
	}
}

func TestConvertUsage(t *testing.T) {
	for _, args := range [][]string{
		{"convert", "--out", "x", "--format", "csv"},
		{"convert", "--in", smallHistory, "--format", "csv"},
		{"convert", "--in", smallHistory, "--out", "x", "--format", "xlsx"},
	} {
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v = %v, want a usage error", args, err)
		}
	}
}
