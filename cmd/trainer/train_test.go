package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

// trainHistory writes a small synthetic go history (3 days, 10 changes per hour, about
// a thousand changes) into a temporary folder and returns it.
func trainHistory(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	// A stationary world: with synth's default dynamics this small world has no conflict
	// label the builds can show, and the conflict models need both classes.
	h, err := synth.Generate(ctx, synth.Config{Profile: "go", Days: 3, Seed: 7, ChangesPerHour: 10, NoDynamics: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "history")
	if err := datasets.WriteHistory(ctx, dir, h, datasets.FormatParquet); err != nil {
		t.Fatal(err)
	}
	return dir
}

const (
	testAsOf   = "2026-01-09T00:00:00Z" // synth.DefaultStart + 4 days: 3 days of arrivals and the drain
	testWindow = "7d"
	testSplit  = "2026-01-07T00:00:00Z"
)

// fastConfig writes a config with few NGBoost iterations, to keep the tests short, and
// fastConfig writes a config with few NGBoost iterations, to keep the tests short, the
// baseline gate off (on the 3-day history the build-time champion's holdout NLL against the
// repo-lognormal baseline depends on the draw, which is not what these tests check), and
// the default gates less conflict.auc unless extra sets "gates": the test history's
// holdout may hold no conflict, so that AUC can be NaN, which fails its gate.
func fastConfig(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trainer.json")
	if !strings.Contains(extra, `"gates"`) {
		extra += `, "gates": {"success.log_loss": {"max_rel": 0.02}, "success.auc": {"max_abs": 0.02}, "conflict.log_loss": {"max_rel": 0.05},
			"buildtime.crps": {"max_rel": 0.05}, "buildtime.nll": {"max_abs": 0.05}}`
	}
	js := `{"buildtime": {"n_estimators": 60, "learning_rate": 0.1}, "baseline_gate": "off"` + extra + `}`
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestTrainEvalCompare runs train twice (the second with challengers and a failing gate,
// then without gates), eval and compare, as the commands are documented.
func TestTrainEvalCompare(t *testing.T) {
	hist := trainHistory(t)
	reg := filepath.Join(t.TempDir(), "reg")
	cfg := fastConfig(t, "")
	out, stderr, err := runCmd(t, "train", "--history", hist, "--registry", reg, "--as-of", testAsOf, "--window", testWindow, "--config", cfg)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	v1 := lastLine(out)
	for _, want := range []string{"fit-holdout", "refit", "total", "holdout: success auc"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("train stderr lacks %q:\n%s", want, stderr)
		}
	}
	r, err := registry.Open(reg)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := r.Champion("go"); err != nil || c != v1 {
		t.Fatalf("champion = %q, %v; train printed %q", c, err, v1)
	}

	// The same rows with a success model regularised to a near constant: its log loss
	// must be worse than the champion's, beyond a 0.1% gate.
	strict := fastConfig(t, `, "success": {"c": 1e-6}, "gates": {"success.log_loss": {"max_rel": 0.001}}`)
	_, _, err = runCmd(t, "train", "--history", hist, "--registry", reg, "--as-of", testAsOf, "--window", testWindow, "--config", strict)
	if !errors.Is(err, training.ErrGate) || !strings.Contains(err.Error(), "success.log_loss") {
		t.Fatalf("train with strict gates = %v, want a gate failure naming the metric", err)
	}
	if c, _ := r.Champion("go"); c != v1 {
		t.Fatalf("champion changed to %s after a failed gate", c)
	}

	noGates := fastConfig(t, `, "gates": {}`)
	out, stderr, err = runCmd(t, "train", "--history", hist, "--registry", reg, "--as-of", testAsOf, "--window", testWindow,
		"--challengers", "gbm-success,ngboost-normal", "--config", noGates)
	if err != nil {
		t.Fatalf("train with challengers: %v\n%s", err, stderr)
	}
	v2 := lastLine(out)
	dirA := filepath.Join(reg, "go", "versions", v1)
	dirB := filepath.Join(reg, "go", "versions", v2)
	if _, err := os.Stat(filepath.Join(dirB, training.FileSuccessGBM)); err != nil {
		t.Errorf("challenger bundle lacks %s: %v", training.FileSuccessGBM, err)
	}

	metrics := filepath.Join(t.TempDir(), "metrics.json")
	rep := filepath.Join(t.TempDir(), "report")
	if _, stderr, err := runCmd(t, "eval", "--bundle", dirB, "--history", hist, "--from", testSplit, "--in-sample", "--out", metrics, "--report", rep); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	var m map[string]*float64
	data, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("eval metrics.json: %v", err)
	}
	for _, k := range []string{"success.auc", "success.gbm.auc", "conflict.log_loss", "buildtime.crps", "buildtime.ngboost-normal.nll", "buildtime.truth.nll"} {
		if v, ok := m[k]; !ok || v == nil {
			t.Errorf("eval metrics.json lacks %s", k)
		}
	}
	if html, err := os.ReadFile(filepath.Join(rep, "report.html")); err != nil {
		t.Errorf("eval --report: %v", err)
	} else if !strings.Contains(string(html), "IN-SAMPLE") {
		t.Error("eval --in-sample: the report does not say the scores are in-sample")
	}

	cmpDir := filepath.Join(t.TempDir(), "cmp")
	out, stderr, err = runCmd(t, "compare", "--a", dirA, "--b", dirB, "--history", hist, "--from", testSplit, "--in-sample", "--out", cmpDir, "--resamples", "200")
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
	for _, want := range []string{"log loss", "ROC AUC", "CRPS", "verdict"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"report.html", "metrics.json"} {
		if _, err := os.Stat(filepath.Join(cmpDir, f)); err != nil {
			t.Errorf("compare: %v", err)
		}
	}

	// A bundle with an altered model file is refused, naming the file.
	path := filepath.Join(dirA, training.FileConflict)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCmd(t, "eval", "--bundle", dirA, "--history", hist, "--out", metrics)
	if !errors.Is(err, registry.ErrChecksum) || !strings.Contains(err.Error(), training.FileConflict) {
		t.Errorf("eval of an altered bundle = %v, want a checksum error naming %s", err, training.FileConflict)
	}
}

func TestTrainFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--registry", "r"}, "--history"},
		{[]string{"train", "--history", "h"}, "--registry"},
		{[]string{"train", "--history", "h", "--registry", "r", "--window", "a fortnight"}, "--window"},
		{[]string{"train", "--history", "h", "--registry", "r", "--as-of", "monday"}, "--as-of"},
		{[]string{"train", "--history", "h", "--registry", "r", "--challengers", "svm"}, "svm"},
		{[]string{"eval", "--history", "h", "--out", "m.json"}, "--bundle"},
		{[]string{"compare", "--a", "a", "--history", "h", "--out", "o"}, "--b"},
		{[]string{"schedule", "--history", "h"}, "--registry"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v, want a usage error naming %s", tc.args, err, tc.want)
		}
	}
}

// TestSchedule runs the schedule every second on the test history and stops it with a
// cancelled context, as SIGINT does: at least one run publishes, and the command returns
// after the running job.
func TestSchedule(t *testing.T) {
	hist := trainHistory(t)
	reg := filepath.Join(t.TempDir(), "reg")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	e := &env{stdout: &out, stderr: &errb, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() {
		done <- runMain(ctx, e, []string{"schedule", "--cron", "@every 1s", "--history", hist, "--registry", reg,
			"--as-of", testAsOf, "--window", testWindow, "--config", fastConfig(t, `, "gates": {}`)})
	}()
	deadline := time.After(60 * time.Second)
	for !strings.Contains(out.String(), "go ") {
		select {
		case err := <-done:
			t.Fatalf("schedule returned early: %v\n%s", err, errb.String())
		case <-deadline:
			t.Fatalf("no scheduled run published within 60 s\n%s", errb.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("schedule = %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("schedule did not stop within 60 s of cancellation")
	}
	r, _ := registry.Open(reg)
	if _, err := r.Champion("go"); err != nil {
		t.Errorf("no champion after a scheduled run: %v", err)
	}
	if _, _, err := runCmd(t, "schedule", "--cron", "every monday", "--history", hist, "--registry", reg); !errors.Is(err, errUsage) {
		t.Errorf("schedule with a bad spec = %v, want a usage error", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the writes of a scheduled job and the reads of
// the test.
type syncBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTrainDefaultAsOf trains without --as-of (issue 15 item 7): the window ends at the
// history's last submission, not at the wall clock, so a synthetic history from the past
// trains.
func TestTrainDefaultAsOf(t *testing.T) {
	hist := trainHistory(t)
	h, _, err := datasets.ReadHistory(context.Background(), hist, datasets.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, c := range h.Changes {
		if c.SubmittedAt.After(last) {
			last = c.SubmittedAt
		}
	}
	reg := filepath.Join(t.TempDir(), "reg")
	_, stderr, err := runCmd(t, "train", "--history", hist, "--registry", reg, "--window", testWindow, "--baseline-gate", "off", "--config", fastConfig(t, ""))
	if err != nil {
		t.Fatalf("train without --as-of: %v\n%s", err, stderr)
	}
	if want := "to " + last.UTC().Format(time.RFC3339) + ","; !strings.Contains(stderr, want) {
		t.Errorf("train without --as-of: stderr lacks the window end %q:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "WARNING") {
		t.Errorf("train as of the latest submission warns:\n%s", stderr)
	}
	// A window ending long after the history warns loudly.
	stale := last.AddDate(0, 0, 10).Format(time.RFC3339)
	_, stderr, err = runCmd(t, "train", "--history", hist, "--registry", reg, "--as-of", stale, "--window", "30d", "--baseline-gate", "off", "--config", fastConfig(t, `, "gates": {}`))
	if err != nil {
		t.Fatalf("train --as-of %s: %v\n%s", stale, err, stderr)
	}
	if !strings.Contains(stderr, "WARNING: the history's newest change") {
		t.Errorf("train 10 days after the history's end does not warn:\n%s", stderr)
	}
}

// TestEvalOutOfSample checks that eval and compare score only the rows after the
// bundle's window end by default (issue 15 item 2): the default equals --from at the
// window end, --in-sample scores more rows, and an earlier --from without --in-sample is
// refused.
func TestEvalOutOfSample(t *testing.T) {
	hist := trainHistory(t)
	reg := filepath.Join(t.TempDir(), "reg")
	out, stderr, err := runCmd(t, "train", "--history", hist, "--registry", reg, "--as-of", testSplit, "--window", testWindow,
		"--baseline-gate", "off", "--config", fastConfig(t, `, "gates": {}`))
	if err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	dir := filepath.Join(reg, "go", "versions", lastLine(out))
	read := func(path string) map[string]*float64 {
		t.Helper()
		var m map[string]*float64
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tmp := t.TempDir()
	def, from, in := filepath.Join(tmp, "default.json"), filepath.Join(tmp, "from.json"), filepath.Join(tmp, "in.json")
	rep := filepath.Join(tmp, "report")
	if _, stderr, err := runCmd(t, "eval", "--bundle", dir, "--history", hist, "--out", def, "--report", rep); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	} else if !strings.Contains(stderr, "Out-of-sample: rows submitted from the bundle's window end "+testSplit) {
		t.Errorf("eval does not say which rows it scored:\n%s", stderr)
	}
	if html, err := os.ReadFile(filepath.Join(rep, "report.html")); err != nil || !strings.Contains(string(html), "Out-of-sample") {
		t.Errorf("eval report does not say the rows are out-of-sample (%v)", err)
	}
	if _, stderr, err := runCmd(t, "eval", "--bundle", dir, "--history", hist, "--from", testSplit, "--out", from); err != nil {
		t.Fatalf("eval --from: %v\n%s", err, stderr)
	}
	if _, stderr, err := runCmd(t, "eval", "--bundle", dir, "--history", hist, "--in-sample", "--out", in); err != nil {
		t.Fatalf("eval --in-sample: %v\n%s", err, stderr)
	}
	md, mf, mi := read(def), read(from), read(in)
	if md["success.n"] == nil || mf["success.n"] == nil || *md["success.n"] != *mf["success.n"] || *md["success.log_loss"] != *mf["success.log_loss"] {
		t.Errorf("default eval success n %v log loss %v, want those of --from the window end: %v %v",
			md["success.n"], md["success.log_loss"], mf["success.n"], mf["success.log_loss"])
	}
	if !(*mi["success.n"] > *md["success.n"]) {
		t.Errorf("--in-sample scored %v success rows, the default %v: want more", *mi["success.n"], *md["success.n"])
	}
	early := "2026-01-06T00:00:00Z"
	if _, _, err := runCmd(t, "eval", "--bundle", dir, "--history", hist, "--from", early, "--out", from); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--in-sample") {
		t.Errorf("eval --from inside the window = %v, want a usage error naming --in-sample", err)
	}
	cmp := filepath.Join(tmp, "cmp")
	if _, stderr, err := runCmd(t, "compare", "--a", dir, "--b", dir, "--history", hist, "--out", cmp, "--resamples", "50"); err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	} else if !strings.Contains(stderr, "Out-of-sample") {
		t.Errorf("compare does not say which rows it scored:\n%s", stderr)
	}
}

// cancelOn is a writer that cancels a context once what was written contains marker, so
// that a schedule started with --run-now stops after its first run without a timer.
type cancelOn struct {
	syncBuffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.syncBuffer.Write(p)
	if strings.Contains(c.String(), c.marker) {
		c.cancel()
	}
	return n, err
}

// TestScheduleRunNow is issue 15 item 8: schedule checks its inputs at start, --run-now
// trains at once (with --as-of latest, the default), and a run on the same history and
// config skips publishing.
func TestScheduleRunNow(t *testing.T) {
	hist := trainHistory(t)
	reg := filepath.Join(t.TempDir(), "reg")
	cfg := fastConfig(t, `, "gates": {}, "baseline_gate": "off"`)
	run := func(marker string, onStderr bool) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out, errb := &cancelOn{marker: marker, cancel: cancel}, &cancelOn{marker: marker, cancel: cancel}
		if onStderr {
			out.marker = "\x00never"
		} else {
			errb.marker = "\x00never"
		}
		e := &env{stdout: out, stderr: errb, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		// A weekly spec: only --run-now can train within the test.
		err := runMain(ctx, e, []string{"schedule", "--run-now", "--cron", "0 3 * * 1", "--history", hist, "--registry", reg,
			"--window", testWindow, "--config", cfg})
		if err != nil {
			t.Fatalf("schedule --run-now = %v\n%s", err, errb.String())
		}
		return out.String(), errb.String()
	}
	out, stderr := run("go ", false)
	if !strings.HasPrefix(out, "go ") {
		t.Fatalf("schedule --run-now published nothing: %q\n%s", out, stderr)
	}
	_, stderr = run("skipped", true)
	if !strings.Contains(stderr, "unchanged since version "+strings.TrimSpace(strings.TrimPrefix(out, "go "))) {
		t.Errorf("second run on the same inputs did not skip:\n%s", stderr)
	}
	r, _ := registry.Open(reg)
	if vs, err := r.List("go"); err != nil || len(vs) != 1 {
		t.Errorf("versions = %v, %v; want the one of the first run", vs, err)
	}

	// Inputs are checked at start: a missing history fails at once.
	_, _, err := runCmd(t, "schedule", "--history", filepath.Join(t.TempDir(), "none"), "--registry", reg)
	if !errors.Is(err, datasets.ErrNoHistory) {
		t.Errorf("schedule of a missing history = %v, want ErrNoHistory at start", err)
	}
	_, _, err = runCmd(t, "schedule", "--history", hist, "--registry", reg, "--repo", "ios")
	if !errors.Is(err, training.ErrRepo) {
		t.Errorf("schedule of an unknown repo = %v, want ErrRepo at start", err)
	}
}

// TestAuthorKeyFlags trains with --author-key-file and checks that eval and compare load
// the pseudonymised bundle with that key (given by flag or by $SQPREDICT_AUTHOR_KEY_FILE)
// and refuse it without a key or with another one, naming the key id.
func TestAuthorKeyFlags(t *testing.T) {
	hist := trainHistory(t)
	dir := t.TempDir()
	keyFile, otherFile := filepath.Join(dir, "key"), filepath.Join(dir, "other")
	for p, body := range map[string]string{keyFile: strings.Repeat("k", 32) + "\n", otherFile: strings.Repeat("o", 32)} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key, err := features.ReadAuthorKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(features.AuthorKeyEnv, "")
	reg := filepath.Join(dir, "reg")
	out, stderr, err := runCmd(t, "train", "--history", hist, "--registry", reg, "--as-of", testAsOf, "--window", testWindow,
		"--config", fastConfig(t, ""), "--author-key-file", keyFile)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	bdir := filepath.Join(reg, "go", "versions", lastLine(out))
	b, err := registry.LoadDir(bdir, training.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	if id := b.Manifest.Extra["author_key_id"]; id != key.ID() {
		t.Fatalf("manifest author_key_id = %q, want %s", id, key.ID())
	}
	evalArgs := func(extra ...string) []string {
		return append([]string{"eval", "--bundle", bdir, "--history", hist, "--from", testSplit, "--in-sample",
			"--out", filepath.Join(t.TempDir(), "m.json")}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		ok   bool
	}{
		{"no key", evalArgs(), "", false},
		{"another key", evalArgs("--author-key-file", otherFile), "", false},
		{"the key", evalArgs("--author-key-file", keyFile), "", true},
		{"the key from the environment", evalArgs(), keyFile, true},
		{"compare with the key", []string{"compare", "--a", bdir, "--b", bdir, "--history", hist, "--from", testSplit, "--in-sample",
			"--resamples", "50", "--out", t.TempDir(), "--author-key-file", keyFile}, "", true},
		{"compare without", []string{"compare", "--a", bdir, "--b", bdir, "--history", hist, "--from", testSplit, "--in-sample",
			"--resamples", "50", "--out", t.TempDir()}, "", false},
	} {
		t.Setenv(features.AuthorKeyEnv, tc.env)
		_, stderr, err := runCmd(t, tc.args...)
		if tc.ok && err != nil {
			t.Errorf("%s: %v\n%s", tc.name, err, stderr)
		}
		if !tc.ok && (!errors.Is(err, features.ErrAuthorKey) || !strings.Contains(err.Error(), key.ID())) {
			t.Errorf("%s: %v, want an author key error naming %s", tc.name, err, key.ID())
		}
	}
}
