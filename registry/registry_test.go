package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

const (
	testRepo   = "ios"
	testSchema = "schema-hash-a"
)

// t0 is the fixed publication time of the test clock.
var t0 = time.Date(2026, 11, 21, 9, 40, 0, 0, time.UTC)

// newTestRegistry opens a registry in a fresh folder with a clock that stands still at
// t0, so version names are predictable.
func newTestRegistry(t testing.TB) *Registry {
	t.Helper()
	r, err := Open(filepath.Join(t.TempDir(), "reg"))
	if err != nil {
		t.Fatal(err)
	}
	r.now = func() time.Time { return t0 }
	return r
}

// testManifest returns a manifest with every caller field set.
func testManifest() Manifest {
	return Manifest{
		TrainedAt:            t0.Add(-time.Hour),
		Window:               Window{From: t0.AddDate(0, 0, -90), To: t0.Add(-2 * time.Hour)},
		FeatureSchemaHash:    testSchema,
		FeatureSchemaVersion: 3,
		Metrics:              map[string]float64{"success.auc": 0.8125, "buildtime.crps": 4.5},
		Extra:                map[string]string{"seed": "1"},
	}
}

// writeFiles returns a WriteFunc writing the given slash-separated paths and contents.
func writeFiles(files map[string]string) WriteFunc {
	return func(dir string) error {
		for name, content := range files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

// publish publishes files to testRepo and fails the test on error.
func publish(t testing.TB, r *Registry, files map[string]string, opts PublishOptions) string {
	t.Helper()
	v, err := r.Publish(context.Background(), testRepo, writeFiles(files), testManifest(), opts)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return v
}

// sha256Hex is the independent truth for checksums.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// tmpEntries returns the names of the temporary entries in the repository folders.
func tmpEntries(t *testing.T, r *Registry, repo string) []string {
	t.Helper()
	var names []string
	for _, dir := range []string{r.repoDir(repo), r.versionsDir(repo)} {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), tmpPrefix) {
				names = append(names, e.Name())
			}
		}
	}
	return names
}

func TestPublishListLoad(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	files1 := map[string]string{
		"success.json":        `{"w":[1,2]}`,
		"models/build.json":   "mu sigma",
		"developers.csv":      "id,rate\n1,0.5\n",
		"report/empty.txt":    "",
		"report/deep/a/b.txt": "deep",
	}
	files2 := map[string]string{"success.json": `{"w":[3]}`}
	v1 := publish(t, r, files1, PublishOptions{Champion: true})
	v2 := publish(t, r, files2, PublishOptions{Challenger: true})
	if want := "20261121T094000Z-000001"; v1 != want {
		t.Errorf("first version = %q, want %q", v1, want)
	}
	if want := "20261121T094000Z-000002"; v2 != want {
		t.Errorf("second version = %q, want %q", v2, want)
	}
	got, err := r.List(testRepo)
	if err != nil || !slices.Equal(got, []string{v1, v2}) {
		t.Errorf("List = %q, %v, want %q", got, err, []string{v1, v2})
	}
	if repos, err := r.Repos(); err != nil || !slices.Equal(repos, []string{testRepo}) {
		t.Errorf("Repos = %q, %v, want [%s]", repos, err, testRepo)
	}
	if c, err := r.Champion(testRepo); err != nil || c != v1 {
		t.Errorf("Champion = %q, %v, want %q", c, err, v1)
	}
	if c, err := r.Challenger(testRepo); err != nil || c != v2 {
		t.Errorf("Challenger = %q, %v, want %q", c, err, v2)
	}
	if left := tmpEntries(t, r, testRepo); len(left) != 0 {
		t.Errorf("temporary entries left after Publish: %q", left)
	}

	b, err := r.Load(testRepo, v1, testSchema)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	m, want := b.Manifest, testManifest()
	if m.FormatVersion != FormatVersion || m.Repo != testRepo || m.Version != v1 ||
		!m.TrainedAt.Equal(want.TrainedAt) || !m.Window.From.Equal(want.Window.From) ||
		!m.Window.To.Equal(want.Window.To) || m.FeatureSchemaHash != testSchema ||
		m.FeatureSchemaVersion != want.FeatureSchemaVersion || m.Extra["seed"] != "1" {
		t.Errorf("manifest = %+v, want the published fields of %+v", m, want)
	}
	// Metrics go through JSON, which prints float64 exactly, so they survive unchanged.
	for name, v := range want.Metrics {
		if m.Metrics[name] != v {
			t.Errorf("metric %q = %v, want %v", name, m.Metrics[name], v)
		}
	}
	if len(m.Metrics) != len(want.Metrics) {
		t.Errorf("metrics = %v, want %v", m.Metrics, want.Metrics)
	}
	wantNames := sortedKeys(files1)
	if !slices.Equal(b.Files(), wantNames) {
		t.Errorf("Files() = %q, want %q", b.Files(), wantNames)
	}
	for name, content := range files1 {
		fi := m.Files[name]
		if fi.SHA256 != sha256Hex(content) || fi.Size != int64(len(content)) {
			t.Errorf("manifest file %q = %+v, want sha256 %s size %d", name, fi,
				sha256Hex(content), len(content))
		}
		data, err := b.ReadFile(name)
		if err != nil || string(data) != content {
			t.Errorf("ReadFile(%q) = %q, %v, want %q", name, data, err, content)
		}
		path, err := b.Path(name)
		if err != nil {
			t.Fatal(err)
		}
		if disk, err := os.ReadFile(path); err != nil || string(disk) != content {
			t.Errorf("file at Path(%q) = %q, %v, want %q", name, disk, err, content)
		}
		f, err := b.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Path("nope.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Path(unlisted) error = %v, want ErrNotFound", err)
	}
	if _, err := b.ReadFile("nope.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadFile(unlisted) error = %v, want ErrNotFound", err)
	}
	// The manifest on disk reads back the same through the exported reader.
	rm, err := ReadManifest(b.Dir)
	if err != nil || rm.Version != v1 || len(rm.Files) != len(files1) {
		t.Errorf("ReadManifest = %+v, %v", rm, err)
	}
}

func TestPublishCopyFS(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	fsys := fstest.MapFS{
		"a.txt":     {Data: []byte("alpha")},
		"sub/b.txt": {Data: []byte("beta")},
	}
	v, err := r.Publish(context.Background(), testRepo, CopyFS(fsys), testManifest(), PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Load(testRepo, v, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range fsys {
		if got := b.Manifest.Files[name].SHA256; got != sha256Hex(string(f.Data)) {
			t.Errorf("sha256 of %q = %s, want %s", name, got, sha256Hex(string(f.Data)))
		}
	}
	if _, err := r.Champion(testRepo); !errors.Is(err, ErrNoPointer) {
		t.Errorf("Champion after Publish without options: error = %v, want ErrNoPointer", err)
	}
}

func TestVersionNames(t *testing.T) {
	t.Parallel()
	// The clock steps forward, stays, jumps back, then forward again.
	clock := []time.Time{
		t0,
		t0.Add(1500 * time.Millisecond),
		t0.Add(1500 * time.Millisecond),
		t0.Add(-time.Hour),
		t0.Add(48 * time.Hour),
	}
	want := []string{
		"20261121T094000Z-000001",
		"20261121T094001Z-000002",
		"20261121T094001Z-000003",
		"20261121T094001Z-000004", // never below the latest version's time
		"20261123T094000Z-000005",
	}
	r := newTestRegistry(t)
	for i, now := range clock {
		r.now = func() time.Time { return now }
		if got := publish(t, r, map[string]string{"m": fmt.Sprint(i)}, PublishOptions{}); got != want[i] {
			t.Errorf("publish %d at %v: version %q, want %q", i, now, got, want[i])
		}
	}
	if got, err := r.List(testRepo); err != nil || !slices.Equal(got, want) {
		t.Errorf("List = %q, %v, want %q", got, err, want)
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		wantSeq int
		wantErr bool
	}{
		{name: "valid", input: "20261121T094000Z-000001", wantSeq: 1},
		{name: "max", input: "20261121T094000Z-999999", wantSeq: 999999},
		{name: "empty", input: "", wantErr: true},
		{name: "temporary", input: ".tmp-publish-123", wantErr: true},
		{name: "short seq", input: "20261121T094000Z-01", wantErr: true},
		{name: "signed seq", input: "20261121T094000Z-+00001", wantErr: true},
		{name: "bad month", input: "20261321T094000Z-000001", wantErr: true},
		{name: "no zone", input: "20261121T094000-000001", wantErr: true},
		{name: "path", input: "../20261121T094000Z-000001", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, seq, err := parseVersion(tc.input)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidName) {
					t.Errorf("parseVersion(%q) error = %v, want ErrInvalidName", tc.input, err)
				}
				return
			}
			if err != nil || seq != tc.wantSeq {
				t.Errorf("parseVersion(%q) = %d, %v, want %d", tc.input, seq, err, tc.wantSeq)
			}
		})
	}
}

func TestPublishRefused(t *testing.T) {
	t.Parallel()
	files := writeFiles(map[string]string{"a": "x"})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	errWrite := errors.New("disk full")
	tests := []struct {
		name    string
		ctx     context.Context
		repo    string
		write   WriteFunc
		edit    func(m *Manifest)
		wantErr error
		wantMsg string
	}{
		{name: "empty schema hash", edit: func(m *Manifest) { m.FeatureSchemaHash = "" },
			wantErr: ErrInvalidManifest, wantMsg: "feature_schema_hash"},
		{name: "zero trained_at", edit: func(m *Manifest) { m.TrainedAt = time.Time{} },
			wantErr: ErrInvalidManifest, wantMsg: "trained_at"},
		{name: "reversed window", edit: func(m *Manifest) { m.Window.From, m.Window.To = m.Window.To, m.Window.From },
			wantErr: ErrInvalidManifest, wantMsg: "window"},
		{name: "NaN metric", edit: func(m *Manifest) { m.Metrics["conflict.brier"] = math.NaN() },
			wantErr: ErrInvalidManifest, wantMsg: `"conflict.brier"`},
		{name: "Inf metric", edit: func(m *Manifest) { m.Metrics["x"] = math.Inf(-1) },
			wantErr: ErrInvalidManifest, wantMsg: `"x"`},
		{name: "bad repo", repo: "../etc", wantErr: ErrInvalidName, wantMsg: "../etc"},
		{name: "hidden repo", repo: ".ios", wantErr: ErrInvalidName, wantMsg: ".ios"},
		{name: "reserved manifest name", write: writeFiles(map[string]string{ManifestName: "{}"}),
			wantErr: ErrInvalidManifest, wantMsg: ManifestName},
		{name: "symlink", write: func(dir string) error {
			return os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
		}, wantErr: ErrInvalidManifest, wantMsg: `"link"`},
		{name: "writer fails", write: func(string) error { return errWrite },
			wantErr: errWrite, wantMsg: "disk full"},
		{name: "cancelled", ctx: cancelled, wantErr: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t)
			ctx, repo, write, m := context.Background(), testRepo, files, testManifest()
			if tc.ctx != nil {
				ctx = tc.ctx
			}
			if tc.repo != "" {
				repo = tc.repo
			}
			if tc.write != nil {
				write = tc.write
			}
			if tc.edit != nil {
				tc.edit(&m)
			}
			v, err := r.Publish(ctx, repo, write, m, PublishOptions{Champion: true})
			if !errors.Is(err, tc.wantErr) || !strings.Contains(fmt.Sprint(err), tc.wantMsg) ||
				!strings.HasPrefix(fmt.Sprint(err), "registry: ") {
				t.Fatalf("Publish = %q, %v, want error %v mentioning %q", v, err, tc.wantErr, tc.wantMsg)
			}
			if validRepo(repo) != nil {
				return
			}
			if got, err := r.List(repo); len(got) != 0 {
				t.Errorf("List after refused Publish = %q, %v, want none", got, err)
			}
			if left := tmpEntries(t, r, repo); len(left) != 0 {
				t.Errorf("temporary entries left after refused Publish: %q", left)
			}
		})
	}
}

func TestPublishBothRolesPanics(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	defer func() {
		if recover() == nil {
			t.Error("Publish with Champion and Challenger did not panic")
		}
	}()
	r.Publish(context.Background(), testRepo, writeFiles(nil), testManifest(),
		PublishOptions{Champion: true, Challenger: true})
}

func TestRevisionOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{name: "none", want: ""},
		{name: "clean", settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "dd4cf6b"},
			{Key: "vcs.modified", Value: "false"}}, want: "dd4cf6b"},
		{name: "dirty", settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"},
			{Key: "vcs.revision", Value: "dd4cf6b"}}, want: "dd4cf6b+dirty"},
		{name: "dirty without revision", settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := revisionOf(tc.settings); got != tc.want {
				t.Errorf("revisionOf(%v) = %q, want %q", tc.settings, got, tc.want)
			}
		})
	}
}

// Publish records the binary's VCS revision unless the caller set one, and leaves the
// caller's Extra map alone.
func TestPublishRecordsRevision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{name: "nil extra", extra: nil, want: "abc123+dirty"},
		{name: "other keys", extra: map[string]string{"seed": "7"}, want: "abc123+dirty"},
		{name: "caller's revision", extra: map[string]string{ExtraVCSRevision: "mine"}, want: "mine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t)
			r.revision = func() string { return "abc123+dirty" }
			m := testManifest()
			m.Extra = tc.extra
			before := maps.Clone(tc.extra)
			v, err := r.Publish(context.Background(), testRepo, writeFiles(bundleFiles), m, PublishOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(tc.extra, before) {
				t.Errorf("Publish changed the caller's Extra to %v", tc.extra)
			}
			b, err := r.Load(testRepo, v, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Manifest.Extra[ExtraVCSRevision]; got != tc.want {
				t.Errorf("manifest %s = %q, want %q", ExtraVCSRevision, got, tc.want)
			}
			for k, v := range tc.extra {
				if b.Manifest.Extra[k] != v {
					t.Errorf("manifest extra %q = %q, want %q", k, b.Manifest.Extra[k], v)
				}
			}
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(base, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		wantErr bool
	}{
		{name: "new folder", dir: filepath.Join(base, "a", "reg")},
		{name: "existing folder", dir: existing},
		{name: "a file", dir: file, wantErr: true},
		{name: "under a file", dir: filepath.Join(file, "reg"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(tc.dir)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), file) {
					t.Errorf("Open(%q) = %v, want an error naming the path", tc.dir, err)
				}
				return
			}
			if err != nil || r.Dir() != tc.dir {
				t.Errorf("Open(%q) = %v, %v", tc.dir, r, err)
			}
			if repos, err := r.Repos(); err != nil || len(repos) != 0 {
				t.Errorf("Repos of a new registry = %q, %v, want none", repos, err)
			}
		})
	}
}

// TestModes checks that everything Publish and the pointer setters write is readable
// by its owner only (files 0600, folders 0700), whatever the umask and the modes the
// WriteFunc chose: bundles hold per-author statistics (issue 14 item 8), and the trainer
// and predictd run as the same user. (Issue 15 had made them readable by every user.)
// It is not parallel because it changes the process umask.
func TestModes(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	r := newTestRegistry(t)
	private := func(dir string) error {
		if err := os.Mkdir(filepath.Join(dir, "models"), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "models", "build.json"), []byte("{}"), 0o666); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "success.json"), []byte("{}"), 0o644)
	}
	v1, err := r.Publish(context.Background(), testRepo, private, testManifest(), PublishOptions{Champion: true})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	v2 := publish(t, r, bundleFiles, PublishOptions{})
	if err := r.SetChallenger(testRepo, v2); err != nil {
		t.Fatal(err)
	}
	if err := r.SetChampion(testRepo, v2); err != nil {
		t.Fatal(err)
	}
	vdir := r.versionDir(testRepo, v1)
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{r.repoDir(testRepo), 0o700},
		{r.versionsDir(testRepo), 0o700},
		{vdir, 0o700},
		{filepath.Join(vdir, "models"), 0o700},
		{filepath.Join(vdir, "models", "build.json"), 0o600},
		{filepath.Join(vdir, "success.json"), 0o600},
		{filepath.Join(vdir, ManifestName), 0o600},
		{r.versionDir(testRepo, v2), 0o700},
		{filepath.Join(r.versionDir(testRepo, v2), ManifestName), 0o600},
		{filepath.Join(r.repoDir(testRepo), RoleChampion.file()), 0o600},
		{filepath.Join(r.repoDir(testRepo), RoleChallenger.file()), 0o600},
	} {
		info, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != tc.want {
			rel, _ := filepath.Rel(r.dir, tc.path)
			t.Errorf("mode of %s = %v, want %v", rel, got, tc.want)
		}
	}
	if _, err := r.Load(testRepo, v1, testSchema); err != nil {
		t.Errorf("Load(%s) after the mode changes: %v", v1, err)
	}
}
