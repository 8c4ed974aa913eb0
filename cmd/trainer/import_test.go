package main

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
		{"import", "--source", "travistorrent", "--in", "x", "--out", "y", "--errored", "skip"},
		{"import", "--source", "buildfast", "--in", "x", "--out", "y", "--errored", "infra"},
		{"import", "--source", "travistorrent", "--in", "x", "--out", "y", "--imputed-duration", "0s"},
	} {
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v = %v, want a usage error", args, err)
		}
	}
}

// TestImportErroredAndImputedFinish imports a hand-made TravisTorrent file (six builds
// of one repository, see datasets/testdata/README.md) with each --errored choice and
// imputed build time, and reads the point-in-time features of the result: an outcome
// counts only once its imputed finish has passed, and errored builds are failures or
// carry no label. The expected values are worked out by hand from the file's times.
func TestImportErroredAndImputedFinish(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		args []string
		// rows is the change ids with a success row; rate5 the repo_fail_rate_5 of
		// changes 102, 103 and 104 (started 10:10, 10:20 and 12:30; the first build,
		// 101, failed at 10:00 and 102 errored).
		rows  []string
		rate5 [3]float64
	}{
		// Default: errored = failed, finishes an hour after the start. At 10:10 and
		// 10:20 nothing has finished; at 12:30 101, 102 and 103 have.
		{nil, []string{"101", "102", "103", "104", "106"}, [3]float64{nan, nan, 2.0 / 3}},
		// Errored builds carry no label: at 12:30 only 101 (failed) and 103 (passed).
		{[]string{"--errored", "infra"}, []string{"101", "103", "104"}, [3]float64{nan, nan, 1.0 / 2}},
		// Five-minute builds: at 10:10 101 has finished, at 10:20 102 too.
		{[]string{"--imputed-duration", "5m"}, []string{"101", "102", "103", "104", "106"}, [3]float64{1, 1, 2.0 / 3}},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		hist, table := filepath.Join(dir, "h"), filepath.Join(dir, "success.csv")
		args := append([]string{"import", "--source", "travistorrent", "--in", "../../datasets/testdata/travistorrent_errored.csv", "--out", hist}, tc.args...)
		if _, stderr, err := runCmd(t, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if _, stderr, err := runCmd(t, "features", "--history", hist, "--task", "success", "--out", table); err != nil {
			t.Fatalf("features after import %v: %v\n%s", tc.args, err, stderr)
		}
		rate5 := readColumn(t, table, "change_id", "repo_fail_rate_5")
		var ids []string
		for id := range rate5 {
			ids = append(ids, id)
		}
		if got := strings.Join(slices.Sorted(slices.Values(ids)), ","); got != strings.Join(tc.rows, ",") {
			t.Errorf("import %v: success rows for changes %s, want %s", tc.args, got, strings.Join(tc.rows, ","))
		}
		for k, id := range []string{"102", "103", "104"} {
			got, ok := rate5[id]
			if !ok {
				continue // 102 has no row under --errored infra
			}
			if want := tc.rate5[k]; !(math.IsNaN(want) && math.IsNaN(got)) && math.Abs(got-want) > 1e-12 {
				t.Errorf("import %v: change %s repo_fail_rate_5 = %v, want %v", tc.args, id, got, want)
			}
		}
	}
}

// readColumn reads a feature table CSV and returns the value column (NaN when empty)
// by the key column.
func readColumn(t *testing.T, path, key, value string) map[string]float64 {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ki, vi := -1, -1
	for j, n := range recs[0] {
		switch n {
		case key:
			ki = j
		case value:
			vi = j
		}
	}
	if ki < 0 || vi < 0 {
		t.Fatalf("%s lacks column %q or %q", path, key, value)
	}
	out := map[string]float64{}
	for _, r := range recs[1:] {
		v := math.NaN()
		if r[vi] != "" {
			if v, err = strconv.ParseFloat(r[vi], 64); err != nil {
				t.Fatalf("%s: %s = %q: %v", path, value, r[vi], err)
			}
		}
		out[r[ki]] = v
	}
	return out
}
