package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportCommand(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--source", "travistorrent", "--in", "testdata/datasets/travistorrent.csv"},
			[]string{"travistorrent: 1 files, 5 rows read, 0 merged duplicates, 5 changes and 5 builds written, 0 rows skipped"}},
		{[]string{"--source", "buildfast", "--in", "testdata/datasets/buildfast", "--format", "csv"},
			[]string{"buildfast: 2 files, 7 rows read, 2 merged duplicates, 5 changes and 5 builds written, 0 rows skipped"}},
		{[]string{"--source", "buildfast", "--in", "testdata/datasets/buildfast/relayrides@pushy_newmerge.csv", "--derive-times", "--format", "arrow"},
			[]string{"1 files, 2 rows read, 1 merged duplicates, 1 changes", "times are derived"}},
	}
	for _, tc := range tests {
		out := filepath.Join(t.TempDir(), "h")
		stdout, stderr, err := runCmd(t, append(append([]string{"import"}, tc.args...), "--out", out)...)
		if err != nil {
			t.Fatalf("import %v: %v\n%s", tc.args, err, stderr)
		}
		for _, s := range tc.want {
			if !strings.Contains(stdout, s) {
				t.Errorf("import %v output lacks %q:\n%s", tc.args, s, stdout)
			}
		}
		if _, _, err := runCmd(t, "validate", "--history", out); err != nil {
			t.Errorf("imported history does not validate: %v", err)
		}
	}
	for _, args := range [][]string{
		{"import", "--source", "jenkins", "--in", "x", "--out", "y"},
		{"import", "--source", "travistorrent", "--out", "y"},
		{"import", "--source", "travistorrent", "--in", "x", "--out", "y", "--derive-times"},
	} {
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v = %v, want a usage error", args, err)
		}
	}
}
