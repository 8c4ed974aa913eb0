package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

func TestRoleString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		role     Role
		want     string
		wantFile string
	}{
		{RoleChampion, "champion", "current"},
		{RoleChallenger, "challenger", "challenger"},
		{Role(7), "Role(7)", ""},
	}
	for _, tc := range tests {
		if got := tc.role.String(); got != tc.want {
			t.Errorf("Role(%d).String() = %q, want %q", int(tc.role), got, tc.want)
		}
		if tc.wantFile != "" && tc.role.file() != tc.wantFile {
			t.Errorf("Role(%d).file() = %q, want %q", int(tc.role), tc.role.file(), tc.wantFile)
		}
	}
}

func TestPointers(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	if _, err := r.List(testRepo); !errors.Is(err, ErrNotFound) {
		t.Errorf("List(unknown repo) error = %v, want ErrNotFound", err)
	}
	if _, err := r.Champion(testRepo); !errors.Is(err, ErrNoPointer) {
		t.Errorf("Champion(empty repo) error = %v, want ErrNoPointer", err)
	}
	v1 := publish(t, r, bundleFiles, PublishOptions{})
	v2 := publish(t, r, bundleFiles, PublishOptions{})
	steps := []struct {
		name           string
		do             func() error
		wantErr        error
		wantChampion   string // "" means unset
		wantChallenger string
	}{
		{name: "set champion", do: func() error { return r.SetChampion(testRepo, v1) }, wantChampion: v1},
		{name: "set challenger", do: func() error { return r.SetChallenger(testRepo, v2) },
			wantChampion: v1, wantChallenger: v2},
		{name: "promote", do: func() error { return r.SetChampion(testRepo, v2) },
			wantChampion: v2, wantChallenger: v2},
		{name: "clear challenger", do: func() error { return r.ClearChallenger(testRepo) }, wantChampion: v2},
		{name: "clear again", do: func() error { return r.ClearChallenger(testRepo) }, wantChampion: v2},
		{name: "unknown version", do: func() error { return r.SetChampion(testRepo, "20991121T094000Z-000009") },
			wantErr: ErrNotFound, wantChampion: v2},
		{name: "malformed version", do: func() error { return r.SetChallenger(testRepo, "../x") },
			wantErr: ErrInvalidName, wantChampion: v2},
		{name: "bad repo", do: func() error { return r.SetChampion("a/b", v1) },
			wantErr: ErrInvalidName, wantChampion: v2},
	}
	for _, s := range steps {
		if err := s.do(); !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: error = %v, want %v", s.name, err, s.wantErr)
		}
		for _, c := range []struct {
			role Role
			want string
		}{{RoleChampion, s.wantChampion}, {RoleChallenger, s.wantChallenger}} {
			got, err := r.pointer(testRepo, c.role)
			if c.want == "" && !errors.Is(err, ErrNoPointer) || c.want != "" && (err != nil || got != c.want) {
				t.Errorf("%s: %v = %q, %v, want %q", s.name, c.role, got, err, c.want)
			}
		}
	}
	if left := tmpEntries(t, r, testRepo); len(left) != 0 {
		t.Errorf("temporary entries left after pointer swaps: %q", left)
	}
	// A pointer naming no version is an error that names the file, not a silent "".
	if err := os.WriteFile(filepath.Join(r.repoDir(testRepo), "current"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Champion(testRepo); !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), "current") {
		t.Errorf("Champion(garbage pointer) error = %v, want ErrInvalidName naming the file", err)
	}
	if _, err := r.Load(testRepo, "20991121T094000Z-000009", testSchema); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load(unknown version) error = %v, want ErrNotFound", err)
	}
}

// A crash between writing a bundle and renaming it, or between writing a pointer's
// temporary file and renaming it, leaves the registry readable with the old champion.
func TestCrashLeavesOldChampion(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	old := publish(t, r, bundleFiles, PublishOptions{Champion: true})
	vdir, rdir := r.versionsDir(testRepo), r.repoDir(testRepo)

	// A bundle folder cut off while its files were written: no manifest, a short file.
	partial := filepath.Join(vdir, tmpPrefix+"publish-111")
	crashWrite := writeFiles(map[string]string{"success.json": `{"w":[0.`, "models/build.json": ""})
	// A bundle folder complete but for the rename.
	unrenamed := filepath.Join(vdir, tmpPrefix+"publish-222")
	completeWrite := writeFiles(map[string]string{"success.json": `{}`})
	for _, step := range []struct {
		dir   string
		write WriteFunc
	}{{partial, crashWrite}, {unrenamed, completeWrite}} {
		if err := os.Mkdir(step.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := step.write(step.dir); err != nil {
			t.Fatal(err)
		}
	}
	m := testManifest()
	m.FormatVersion, m.Repo, m.Version = FormatVersion, testRepo, "20261121T094000Z-000002"
	m.Files = map[string]FileInfo{"success.json": {SHA256: sha256Hex("{}"), Size: 2}}
	data, err := m.encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unrenamed, ManifestName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A pointer swap cut off while writing its temporary file.
	ptmp := filepath.Join(rdir, tmpPrefix+"current-333")
	if err := os.WriteFile(ptmp, []byte("20261121T0940"), 0o644); err != nil {
		t.Fatal(err)
	}

	check := func(when string) {
		t.Helper()
		if got, err := r.List(testRepo); err != nil || !slices.Equal(got, []string{old}) {
			t.Errorf("%s: List = %q, %v, want [%s]", when, got, err, old)
		}
		v, err := r.Champion(testRepo)
		if err != nil || v != old {
			t.Fatalf("%s: Champion = %q, %v, want %q", when, v, err, old)
		}
		if _, err := r.Load(testRepo, v, testSchema); err != nil {
			t.Errorf("%s: Load(champion) = %v", when, err)
		}
	}
	check("after crash")

	// The pointer leftover and the publish folders are locked by no writer, so their
	// writers died: Cleanup removes them at once (issue 14 item 10), sorted by folder.
	var wantRemoved []string
	for _, p := range []string{ptmp, partial, unrenamed} {
		rel, _ := filepath.Rel(r.dir, p)
		wantRemoved = append(wantRemoved, filepath.ToSlash(rel))
	}
	if !atomicfile.LocksWork {
		wantRemoved = nil
	}
	if removed, err := r.Cleanup(testRepo); err != nil || !slices.Equal(removed, wantRemoved) {
		t.Errorf("Cleanup of fresh leftovers = %q, %v, want %q removed", removed, err, wantRemoved)
	}
	stale := time.Now().Add(-2 * StaleAge)
	for _, p := range []string{partial, unrenamed, ptmp} {
		if err := os.Chtimes(p, stale, stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	// Publish removes the stale leftovers, and the new version follows the old one.
	v2 := publish(t, r, map[string]string{"success.json": "{}"}, PublishOptions{})
	if want := "20261121T094000Z-000002"; v2 != want {
		t.Errorf("version after crash = %q, want %q", v2, want)
	}
	if left := tmpEntries(t, r, testRepo); len(left) != 0 {
		t.Errorf("temporary entries left after Publish: %q", left)
	}
	if c, err := r.Champion(testRepo); err != nil || c != old {
		t.Errorf("Champion after Publish without options = %q, %v, want %q", c, err, old)
	}
}

// TestCleanupKeepsLivePublish: a Cleanup while a Publish writes (here from its write
// function) leaves that Publish's folder alone, and the Publish completes.
func TestCleanupKeepsLivePublish(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	write := func(dir string) error {
		removed, err := r.Cleanup(testRepo)
		if err != nil || len(removed) != 0 {
			t.Errorf("Cleanup during a Publish = %q, %v, want nothing removed", removed, err)
		}
		return writeFiles(bundleFiles)(dir)
	}
	if _, err := r.Publish(context.Background(), testRepo, write, testManifest(), PublishOptions{}); err != nil {
		t.Fatalf("Publish with a Cleanup inside = %v", err)
	}
}

func TestCleanupReportsRemoved(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	publish(t, r, bundleFiles, PublishOptions{})
	stale := time.Now().Add(-2 * StaleAge)
	paths := []string{
		filepath.Join(r.repoDir(testRepo), tmpPrefix+"challenger-1"),
		filepath.Join(r.versionsDir(testRepo), tmpPrefix+"delete-x"),
	}
	for _, p := range paths {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, stale, stale); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{testRepo + "/" + tmpPrefix + "challenger-1", testRepo + "/versions/" + tmpPrefix + "delete-x"}
	if removed, err := r.Cleanup(testRepo); err != nil || !slices.Equal(removed, want) {
		t.Errorf("Cleanup = %q, %v, want %q", removed, err, want)
	}
}

func TestRetain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		n          int
		champion   int // index of the champion version, -1 for none
		challenger int
		wantKept   []int
	}{
		{name: "keep 3", n: 3, champion: 0, challenger: 1, wantKept: []int{0, 1, 3, 4, 5}},
		{name: "keep 1", n: 1, champion: 2, challenger: -1, wantKept: []int{2, 5}},
		{name: "pointers among newest", n: 2, champion: 5, challenger: 4, wantKept: []int{4, 5}},
		{name: "no pointers", n: 2, champion: -1, challenger: -1, wantKept: []int{4, 5}},
		{name: "keep more than exist", n: 10, champion: -1, challenger: 0, wantKept: []int{0, 1, 2, 3, 4, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t)
			var all []string
			for i := range 6 {
				all = append(all, publish(t, r, map[string]string{"m": strconv.Itoa(i)}, PublishOptions{}))
			}
			if tc.champion >= 0 {
				if err := r.SetChampion(testRepo, all[tc.champion]); err != nil {
					t.Fatal(err)
				}
			}
			if tc.challenger >= 0 {
				if err := r.SetChallenger(testRepo, all[tc.challenger]); err != nil {
					t.Fatal(err)
				}
			}
			var wantKept, wantRemoved []string
			for i, v := range all {
				if slices.Contains(tc.wantKept, i) {
					wantKept = append(wantKept, v)
				} else {
					wantRemoved = append(wantRemoved, v)
				}
			}
			removed, err := r.Retain(testRepo, tc.n)
			if err != nil || !slices.Equal(removed, wantRemoved) {
				t.Errorf("Retain(%d) = %q, %v, want %q", tc.n, removed, err, wantRemoved)
			}
			if got, err := r.List(testRepo); err != nil || !slices.Equal(got, wantKept) {
				t.Errorf("List after Retain(%d) = %q, %v, want %q", tc.n, got, err, wantKept)
			}
			for _, v := range wantKept {
				if _, err := r.Load(testRepo, v, testSchema); err != nil {
					t.Errorf("Load(%s) after Retain = %v", v, err)
				}
			}
			if left := tmpEntries(t, r, testRepo); len(left) != 0 {
				t.Errorf("temporary entries left after Retain: %q", left)
			}
		})
	}
}

func TestRetainRefusesUnreadablePointer(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	for range 3 {
		publish(t, r, bundleFiles, PublishOptions{})
	}
	if err := os.WriteFile(filepath.Join(r.repoDir(testRepo), "challenger"), []byte("?"), 0o644); err != nil {
		t.Fatal(err)
	}
	if removed, err := r.Retain(testRepo, 1); err == nil || len(removed) != 0 {
		t.Errorf("Retain with a broken pointer = %q, %v, want an error and nothing removed", removed, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Retain(0) did not panic")
		}
	}()
	r.Retain(testRepo, 0)
}

// Readers loading the champion while another goroutine publishes and swaps it always
// see a complete, verified bundle whose content matches its manifest.
func TestSwapUnderConcurrentReaders(t *testing.T) {
	t.Parallel()
	const (
		swaps   = 50
		readers = 4
	)
	r := newTestRegistry(t)
	content := func(i int) string { return strings.Repeat(fmt.Sprintf("model %d;", i), 200) }
	publishN := func(i int) {
		m := testManifest()
		m.Metrics = map[string]float64{"index": float64(i)}
		files := writeFiles(map[string]string{"model.bin": content(i), "dev/table.csv": strconv.Itoa(i)})
		if _, err := r.Publish(context.Background(), testRepo, files, m, PublishOptions{Champion: true}); err != nil {
			t.Errorf("Publish %d: %v", i, err)
		}
	}
	publishN(0)

	var done atomic.Bool
	var loads atomic.Int64
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for !done.Load() {
				v, err := r.Champion(testRepo)
				if err != nil {
					t.Errorf("Champion: %v", err)
					return
				}
				b, err := r.Load(testRepo, v, testSchema)
				if err != nil {
					t.Errorf("Load(%s): %v", v, err)
					return
				}
				i := int(b.Manifest.Metrics["index"])
				data, err := b.ReadFile("model.bin")
				if err != nil || string(data) != content(i) {
					t.Errorf("version %s: model.bin is not bundle %d's: %v", v, i, err)
					return
				}
				loads.Add(1)
			}
		})
	}
	for i := 1; i <= swaps; i++ {
		publishN(i)
	}
	done.Store(true)
	wg.Wait()
	if v, err := r.Champion(testRepo); err != nil || !strings.HasSuffix(v, fmt.Sprintf("-%06d", swaps+1)) {
		t.Errorf("final champion = %q, %v, want version number %d", v, err, swaps+1)
	}
	if loads.Load() == 0 {
		t.Error("readers loaded nothing")
	}
	t.Logf("%d verified loads during %d swaps", loads.Load(), swaps)
}
