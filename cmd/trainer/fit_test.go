package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/models/logistic"
)

// writeFile writes content to name in a temporary directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFrame reads a table the test needs.
func readFrame(t *testing.T, path string) *datasets.Frame {
	t.Helper()
	f, err := datasets.ReadFrame(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDetectModel(t *testing.T) {
	registerLoader(loader{
		name:   "test-text",
		detect: func(head []byte, kind string) bool { return kind == "" && strings.HasPrefix(string(head), "tree\n") },
		load:   func([]byte) (predictor, error) { return nil, nil },
	})
	t.Cleanup(func() { delete(loaders, "test-text") })
	for _, tc := range []struct {
		name    string
		data    string
		want    string // loader name
		wantErr string // substring of the error
	}{
		{name: "logistic JSON", data: `{"format_version": 1, "kind": "logistic"}`, want: "logistic"},
		{name: "kind not first", data: "\n  {\"a\": [1, 2], \"kind\": \"logistic\"}", want: "logistic"},
		{name: "text header", data: "tree\nversion=v4\n", want: "test-text"},
		{name: "unknown kind", data: `{"kind": "forest"}`, wantErr: `unknown model kind "forest"`},
		{name: "no kind", data: `{"format_version": 1}`, wantErr: "unrecognised model file"},
		{name: "bad JSON", data: `{"kind": `, wantErr: "not valid JSON"},
		{name: "text", data: "hello", wantErr: "unrecognised model file"},
		{name: "empty", data: "", wantErr: "unrecognised model file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := detectModel([]byte(tc.data))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("detectModel(%q) = %v, want error containing %q", tc.data, err, tc.wantErr)
				}
			case err != nil || l.name != tc.want:
				t.Errorf("detectModel(%q) = %q, %v, want %q", tc.data, l.name, err, tc.want)
			}
		})
	}
}

func TestParseParams(t *testing.T) {
	f := fitter{name: "x", params: []param{{key: "a"}, {key: "b"}}}
	for _, tc := range []struct {
		name    string
		args    []string
		want    params
		wantErr string
	}{
		{name: "ok", args: []string{"a=1", "b=x=y"}, want: params{"a": "1", "b": "x=y"}},
		{name: "empty value", args: []string{"a="}, want: params{"a": ""}},
		{name: "unknown", args: []string{"c=1"}, wantErr: `unknown --param "c"`},
		{name: "no equals", args: []string{"a"}, wantErr: `"a": want key=value`},
		{name: "twice", args: []string{"a=1", "a=2"}, wantErr: "a given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseParams(f, tc.args)
			if tc.wantErr != "" {
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("parseParams(%q) = %v, want usage error containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("parseParams(%q) = %v, %v, want %v", tc.args, got, err, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("parseParams(%q)[%s] = %q, want %q", tc.args, k, got[k], v)
				}
			}
		})
	}
}

func TestFitHelpListsParams(t *testing.T) {
	_, stderr, err := runCmd(t, "fit", "-h")
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("fit -h = %v, want flag.ErrHelp", err)
	}
	for name, f := range fitters {
		for _, p := range f.params {
			if !strings.Contains(stderr, p.key) {
				t.Errorf("fit -h does not list --param %s of %s:\n%s", p.key, name, stderr)
			}
		}
	}
}

// TestFitLeavesOutTruthColumns checks that the truth columns "trainer features" writes
// for synthetic data are not features by default, that fit says so, and that
// --features can still name them.
func TestFitLeavesOutTruthColumns(t *testing.T) {
	var b strings.Builder
	b.WriteString("lines,true_p_success,landed,true_mu_s\n")
	for i := range 60 {
		fmt.Fprintf(&b, "%d,%g,%d,%d\n", i%10, 0.2+0.01*float64(i), (i/3+i%10)%2, 100+i)
	}
	train := writeFile(t, "train.csv", b.String())
	for _, tc := range []struct {
		name  string
		extra []string
		want  []string // the model's features
		note  bool     // fit names the left-out truth columns
	}{
		{"default", nil, []string{"lines"}, true},
		{"drop", []string{"--drop", "true_mu_s"}, []string{"lines"}, true},
		{"named", []string{"--features", "lines,true_p_success"}, []string{"lines", "true_p_success"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "model.json")
			args := append([]string{"fit", "--algo", "logistic", "--train", train, "--target", "landed", "--model", model}, tc.extra...)
			_, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("trainer %s: %v", strings.Join(args, " "), err)
			}
			m, err := logistic.LoadFile(model)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.FeatureNames(); !slices.Equal(got, tc.want) {
				t.Errorf("features = %v, want %v", got, tc.want)
			}
			note := strings.Contains(stderr, "left out the truth columns")
			if note != tc.note {
				t.Errorf("stderr names left-out truth columns: %v, want %v:\n%s", note, tc.note, stderr)
			}
			if tc.name == "default" && !strings.Contains(stderr, "true_p_success, true_mu_s") {
				t.Errorf("stderr does not list true_p_success, true_mu_s:\n%s", stderr)
			}
		})
	}
}

// TestFitPredictMistypedColumns is issue 15 item 4: a mistyped --target, --features or
// --drop column, and a model feature missing from predict's data, name the column meant.
func TestFitPredictMistypedColumns(t *testing.T) {
	var b strings.Builder
	b.WriteString("lines_added,hunks,landed\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%d,%d\n", i%10, i%7, (i/3+i%10)%2)
	}
	train := writeFile(t, "train.csv", b.String())
	model := filepath.Join(t.TempDir(), "model.json")
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"target", []string{"--target", "landd"}, "did you mean landed?"},
		{"features", []string{"--target", "landed", "--features", "lines_addded"}, "did you mean lines_added?"},
		{"drop", []string{"--target", "landed", "--drop", "hunk"}, "did you mean hunks?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"fit", "--algo", "logistic", "--train", train, "--model", model}, tc.extra...)
			if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("trainer %s = %v, want an error saying %q", strings.Join(args, " "), err, tc.want)
			}
		})
	}
	if _, stderr, err := runCmd(t, "fit", "--algo", "logistic", "--train", train, "--target", "landed", "--model", model); err != nil {
		t.Fatalf("fit: %v\n%s", err, stderr)
	}
	data := writeFile(t, "data.csv", strings.Replace(b.String(), "lines_added", "lines_addd", 1))
	out := filepath.Join(t.TempDir(), "p.csv")
	if _, _, err := runCmd(t, "predict", "--model", model, "--data", data, "--out", out); err == nil || !strings.Contains(err.Error(), "did you mean lines_addd?") {
		t.Errorf("predict with a misspelled column = %v, want an error suggesting lines_addd", err)
	}
}

// TestFitPredictStdin is issue 15 item 14: fit --train - and predict --data - read CSV
// from standard input and give what the same file gives.
func TestFitPredictStdin(t *testing.T) {
	var b strings.Builder
	b.WriteString("lines_added,hunks,landed\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%d,%d\n", i%10, i%7, (i/3+i%10)%2)
	}
	csv := b.String()
	train := writeFile(t, "train.csv", csv)
	dir := t.TempDir()
	fromFile, fromStdin := filepath.Join(dir, "file.json"), filepath.Join(dir, "stdin.json")
	if _, _, err := runCmd(t, "fit", "--algo", "logistic", "--train", train, "--target", "landed", "--model", fromFile); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		e := &env{stdin: strings.NewReader(csv), stdout: io.Discard, stderr: io.Discard, log: slog.New(slog.DiscardHandler)}
		if err := runMain(context.Background(), e, args); err != nil {
			t.Fatalf("trainer %s: %v", strings.Join(args, " "), err)
		}
	}
	run("fit", "--algo", "logistic", "--train", "-", "--target", "landed", "--model", fromStdin)
	a, err := os.ReadFile(fromFile)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(fromStdin)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(bb) {
		t.Error("the model fitted from standard input differs from the one fitted from the file")
	}
	pFile, pStdin := filepath.Join(dir, "p1.csv"), filepath.Join(dir, "p2.csv")
	if _, _, err := runCmd(t, "predict", "--model", fromFile, "--data", train, "--out", pFile); err != nil {
		t.Fatal(err)
	}
	run("predict", "--model", fromFile, "--data", "-", "--out", pStdin)
	a, _ = os.ReadFile(pFile)
	bb, _ = os.ReadFile(pStdin)
	if len(a) == 0 || string(a) != string(bb) {
		t.Errorf("predictions from standard input differ from those of the file:\n%s\n%s", a, bb)
	}
}
