package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
)

// TestSynthDeterministic runs the command twice with the same flags and compares the
// files byte for byte, in CSV and in Parquet.
func TestSynthDeterministic(t *testing.T) {
	for _, format := range []string{"csv", "parquet"} {
		t.Run(format, func(t *testing.T) {
			var dirs [2]string
			for i := range dirs {
				dirs[i] = filepath.Join(t.TempDir(), "h")
				_, stderr, err := runCmd(t, "synth", "--profile", "go", "--days", "1", "--rate", "10", "--seed", "7",
					"--format", format, "--out", dirs[i])
				if err != nil {
					t.Fatalf("synth = %v\n%s", err, stderr)
				}
				if !strings.Contains(stderr, "changes") || !strings.Contains(stderr, "pairs") || !strings.Contains(stderr, "culprit finding") {
					t.Fatalf("synth printed no summary:\n%s", stderr)
				}
			}
			// The files pass the strict validation of datasets and hold what the generator made.
			h, _, err := datasets.ReadHistory(context.Background(), dirs[0], datasets.ReadOptions{})
			if err != nil {
				t.Fatalf("ReadHistory(synth output) = %v", err)
			}
			want, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 1, ChangesPerHour: 10, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Changes) != len(want.Changes) || len(h.Builds) != len(want.Builds) || len(h.Pairs) != len(want.Pairs) {
				t.Fatalf("read %d changes, %d builds, %d pairs; generated %d, %d, %d",
					len(h.Changes), len(h.Builds), len(h.Pairs), len(want.Changes), len(want.Builds), len(want.Pairs))
			}
			// Times are whole seconds and floats are written exactly, so the files hold
			// the generated history value for value.
			if !reflect.DeepEqual(h, want) {
				t.Errorf("the history read back differs from the generated one")
			}
			for _, table := range []string{"changes", "builds", "pairs"} {
				name := table + "." + format
				a, err := os.ReadFile(filepath.Join(dirs[0], name))
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(dirs[1], name))
				if err != nil {
					t.Fatal(err)
				}
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s differs between two runs with the same seed (%d and %d bytes)", name, len(a), len(b))
				}
			}
		})
	}
}

func TestSynthFlagErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "h")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"synth", "--profile", "go"}, "--out"},
		{"bad profile", []string{"synth", "--profile", "rust", "--out", out}, "rust"},
		{"bad format", []string{"synth", "--format", "xls", "--out", out}, "--format"},
		{"bad start", []string{"synth", "--start", "yesterday", "--out", out}, "--start"},
		{"bad days", []string{"synth", "--days", "-1", "--out", out}, "days"},
		{"bad flaky", []string{"synth", "--flaky", "1.5", "--out", out}, "flaky"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCmd(t, tc.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("trainer %v = %v, want a usage error naming %s", tc.args, err, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed synth wrote %s", out)
	}
}

// TestSynthNoCulpritFinding checks that --no-culprit-finding reaches the generator.
func TestSynthNoCulpritFinding(t *testing.T) {
	for _, off := range []bool{false, true} {
		args := []string{"synth", "--profile", "go", "--days", "1", "--seed", "2", "--format", "csv", "--out", filepath.Join(t.TempDir(), "h")}
		if off {
			args = append(args, "--no-culprit-finding")
		}
		_, stderr, err := runCmd(t, args...)
		if err != nil {
			t.Fatalf("trainer %v = %v\n%s", args, err, stderr)
		}
		if none := strings.Contains(stderr, "culprit finding after a rejection 0 "); none != off {
			t.Errorf("trainer %v: summary says no culprit builds = %v, want %v:\n%s", args, none, off, stderr)
		}
	}
}
