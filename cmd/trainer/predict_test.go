package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPredictIDText checks that predict --id copies numeric ids as the input wrote
// them: issue 12's real-data run got TravisTorrent build ids back as floats
// (103684356 as 1.03684356e+08), which no longer join to the history.
func TestPredictIDText(t *testing.T) {
	model, _ := fitLogisticModel(t, "testdata/logistic_train.csv", "--drop", "id", "--categorical", "color")
	dir := t.TempDir()
	data := filepath.Join(dir, "ids.csv")
	ids := []string{"103684356", "7", "-42", "2.5", "9007199254740993e3", ""}
	want := []string{"103684356", "7", "-42", "2.5", "9.007199254740993e+18", ""}
	var b strings.Builder
	b.WriteString("build_id,lines,tests,color\n")
	for _, id := range ids {
		b.WriteString(id + ",18,9.8,red\n")
	}
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pred.csv")
	if _, _, err := runCmd(t, "predict", "--model", model, "--data", data, "--id", "build_id", "--out", out); err != nil {
		t.Fatalf("predict --id build_id: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != len(ids)+1 {
		t.Fatalf("predictions have %d lines, want a header and %d rows:\n%s", len(lines), len(ids), raw)
	}
	var got []string
	for _, l := range lines[1:] {
		got = append(got, strings.Trim(strings.Split(l, ",")[0], `"`))
	}
	if !slices.Equal(got, want) {
		t.Errorf("predict --id build_id wrote ids %q, want %q", got, want)
	}
}
