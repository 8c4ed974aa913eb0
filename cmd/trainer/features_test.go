package main

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/logistic"
)

// featuresHistory writes a small synthetic history (with truth columns) to a temporary
// folder in CSV and returns the folder.
func featuresHistory(t *testing.T) string {
	t.Helper()
	h, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 0.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hist")
	if err := datasets.WriteHistory(context.Background(), dir, h, datasets.FormatCSV); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFeaturesCommand(t *testing.T) {
	dir := featuresHistory(t)
	ctx := context.Background()
	h, _, err := datasets.ReadHistory(ctx, dir, datasets.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := features.NewIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string][]string{
		"success":   {"true_p_success"},
		"conflict":  {"true_p_conflict", "true_conflicted"},
		"buildtime": {"true_mu_s", "true_sigma_s"},
	}
	for _, task := range []string{"success", "conflict", "buildtime"} {
		for _, ext := range []string{".csv", ".parquet"} {
			out := filepath.Join(t.TempDir(), task+ext)
			_, stderr, err := runCmd(t, "features", "--history", dir, "--task", task, "--out", out)
			if err != nil {
				t.Fatalf("features --task %s: %v\n%s", task, err, stderr)
			}
			kind, _ := features.ParseKind(task)
			want, err := ix.Table(ctx, kind)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr, "wrote ") || !strings.Contains(stderr, want.Schema.Hash()) {
				t.Errorf("features --task %s: summary lacks rows or schema hash:\n%s", task, stderr)
			}
			f, err := datasets.ReadFrame(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			names := append(want.Schema.Names, kind.LabelName())
			names = append(names, truth[task]...)
			// Issue 15 item 13: the row ids after them, not features.
			ids := map[string][]string{
				"success":   {"change_id", "build_id", "submitted_at"},
				"conflict":  {"change_id", "ahead_change_id", "submitted_at"},
				"buildtime": {"change_id", "build_id", "submitted_at"},
			}[task]
			nData := len(names)
			names = append(names, ids...)
			if len(f.Columns) != len(names) {
				t.Fatalf("%s: %d columns, want %d", out, len(f.Columns), len(names))
			}
			if f.NRows() != want.NRows() || want.NRows() == 0 {
				t.Fatalf("%s: %d rows, want %d (> 0)", out, f.NRows(), want.NRows())
			}
			wf := want.Frame()
			for j, n := range names {
				if f.Columns[j].Name != n {
					t.Fatalf("%s: column %d = %s, want %s", out, j, f.Columns[j].Name, n)
				}
				if j >= nData {
					continue
				}
				for r, v := range f.Columns[j].Floats {
					w := wf.Columns[j].Floats[r]
					if v != w && !(math.IsNaN(v) && math.IsNaN(w)) {
						t.Fatalf("%s: row %d %s = %v, want %v", out, r, n, v, w)
					}
				}
			}
			idCol := func(name string) []string {
				return f.Columns[slices.IndexFunc(f.Columns, func(c datasets.Column) bool { return c.Name == name })].Strings
			}
			cid, sub := idCol("change_id"), idCol("submitted_at")
			for r := range want.NRows() {
				if cid[r] != want.ChangeID[r] || sub[r] != want.SubmittedAt[r].UTC().Format(time.RFC3339Nano) {
					t.Fatalf("%s: row %d ids %s %s, want %s %s", out, r, cid[r], sub[r], want.ChangeID[r], want.SubmittedAt[r])
				}
			}
		}
	}
}

func TestFeaturesCommandErrors(t *testing.T) {
	dir := featuresHistory(t)
	out := filepath.Join(t.TempDir(), "x.csv")
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no history", []string{"--task", "success", "--out", out}, true, "--history"},
		{"no out", []string{"--history", dir, "--task", "success"}, true, "--out"},
		{"bad task", []string{"--history", dir, "--task", "speed", "--out", out}, true, "speed"},
		{"bad extension", []string{"--history", dir, "--task", "success", "--out", "x.json"}, true, ".json"},
		{"missing history", []string{"--history", filepath.Join(dir, "nope"), "--task", "success", "--out", out}, false, "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCmd(t, append([]string{"features"}, tc.args...)...)
			if err == nil || errors.Is(err, errUsage) != tc.usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("features %v = %v, want an error naming %q (usage %v)", tc.args, err, tc.want, tc.usage)
			}
		})
	}
}

func TestFeaturesLenient(t *testing.T) {
	dir := featuresHistory(t)
	f, err := os.OpenFile(filepath.Join(dir, "builds.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A build of an unknown status.
	if _, err := f.WriteString("Bbad,go,C0000001,,0,2026-01-05T00:04:49Z,2026-01-05T00:34:44Z,1795,bogus,1,1\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bt.csv")
	if _, _, err := runCmd(t, "features", "--history", dir, "--task", "buildtime", "--out", out); err == nil || !strings.Contains(err.Error(), "builds") {
		t.Errorf("strict read of a bad builds row = %v, want an error naming the builds file", err)
	}
	_, stderr, err := runCmd(t, "features", "--history", dir, "--task", "buildtime", "--out", out, "--lenient")
	if err != nil {
		t.Fatalf("lenient: %v", err)
	}
	if !strings.Contains(stderr, "1 invalid rows skipped") {
		t.Errorf("lenient summary does not count the skipped row:\n%s", stderr)
	}
}

// TestFeaturesEmptyConflict checks that a history without conflict labels (as real CI
// histories are: no affected targets, no queue) writes an empty conflict table in every
// format, with the candidates counted by skip reason.
func TestFeaturesEmptyConflict(t *testing.T) {
	h, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 0.25, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Changes {
		h.Changes[i].AffectedTargets = nil
	}
	h.Pairs = nil
	dir := filepath.Join(t.TempDir(), "hist")
	if err := datasets.WriteHistory(context.Background(), dir, h, datasets.FormatCSV); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".csv", ".parquet", ".arrow"} {
		out := filepath.Join(t.TempDir(), "conflict"+ext)
		_, stderr, err := runCmd(t, "features", "--history", dir, "--task", "conflict", "--out", out)
		if err != nil {
			t.Fatalf("features --task conflict (%s): %v\n%s", ext, err, stderr)
		}
		if !strings.Contains(stderr, "wrote 0 rows") || !strings.Contains(stderr, features.SkipUnknownTargets) {
			t.Errorf("%s: summary lacks the empty table or the skip reason:\n%s", ext, stderr)
		}
		f, err := datasets.ReadFrame(context.Background(), out)
		if err != nil {
			t.Fatal(err)
		}
		if f.NRows() != 0 || len(f.Columns) != features.NConflict+4 {
			t.Errorf("%s: %d rows x %d columns, want 0 x %d (features, label, 3 ids)", out, f.NRows(), len(f.Columns), features.NConflict+4)
		}
	}
}

// TestFeaturesFitPredictIDs is issue 15 item 13: the README's features -> fit -> predict
// route leaves the row ids out of the features, and predict --id passes them through so
// that predictions join back to the history.
func TestFeaturesFitPredictIDs(t *testing.T) {
	dir := featuresHistory(t)
	tmp := t.TempDir()
	table, model, preds := filepath.Join(tmp, "s.csv"), filepath.Join(tmp, "s.json"), filepath.Join(tmp, "p.csv")
	for _, args := range [][]string{
		{"features", "--history", dir, "--task", "success", "--out", table},
		{"fit", "--algo", "logistic", "--train", table, "--target", "label", "--model", model},
		{"predict", "--model", model, "--data", table, "--id", "change_id,submitted_at", "--out", preds},
	} {
		if _, stderr, err := runCmd(t, args...); err != nil {
			t.Fatalf("trainer %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
	}
	m, err := logistic.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range m.FeatureNames() {
		if slices.Contains(idColumnNames, n) {
			t.Errorf("fit used the row id %s as a feature", n)
		}
	}
	in, err := datasets.ReadFrame(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	out, err := datasets.ReadFrame(context.Background(), preds)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range out.Columns {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, []string{"change_id", "submitted_at", "p", "raw"}) {
		t.Fatalf("predict --id columns = %v, want change_id, submitted_at, p, raw", got)
	}
	if !slices.Equal(out.Columns[0].Strings, in.Columns[in.Index("change_id")].Strings) || out.NRows() != in.NRows() {
		t.Errorf("predict --id change_id does not copy the input's ids in order")
	}
	if _, _, err := runCmd(t, "predict", "--model", model, "--data", table, "--id", "chnage_id", "--out", preds); err == nil ||
		!strings.Contains(err.Error(), "did you mean change_id?") {
		t.Errorf("predict --id chnage_id = %v, want an error suggesting change_id", err)
	}
}
