package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// killChildEnv, when set to a registry folder, turns TestKillDuringPublish into the
// child process: it publishes bundles there, each made champion, until it is killed.
const killChildEnv = "SQPREDICT_REGISTRY_KILL_CHILD"

// TestKillDuringPublish kills a process that publishes bundles over and over with
// SIGKILL at 20 moments drawn from a fixed seed (before, during and between publishes,
// in every phase: writing files, fsyncs, the rename, the pointer swap), and checks after
// each kill that the registry is readable: every listed version loads with its checksums,
// the champion pointer names a version that loads; then a new publish succeeds and
// removes every folder the killed publishes left. Which
// phase a kill hits depends on the machine's timing, so the test asserts only what must
// hold after any of them.
func TestKillDuringPublish(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		publishForever(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("starts 20 processes; -short skips it")
	}
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(14, 11))
	for i := range 20 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringPublish$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rnd.IntN(400)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait() // the error is the kill
		r, err := Open(dir)
		if err != nil {
			t.Fatalf("kill %d: Open: %v", i, err)
		}
		checkReadable(t, r, fmt.Sprintf("kill %d", i))
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 kills left %d temporary entries behind", len(tmpEntries(t, r, testRepo)))
	v, err := r.Publish(context.Background(), testRepo, writeFiles(killFiles(99)), testManifest(), PublishOptions{Champion: true})
	if err != nil {
		t.Fatalf("Publish after the kills: %v", err)
	}
	if c, err := r.Champion(testRepo); err != nil || c != v {
		t.Fatalf("champion after the last publish = %q, %v; want %q", c, err, v)
	}
	checkReadable(t, r, "after the last publish")
	if left := tmpEntries(t, r, testRepo); len(left) > 0 {
		t.Errorf("after the last publish %d temporary entries of killed publishes remain: %v", len(left), left)
	}
}

// checkReadable fails the test unless every version of testRepo loads with its
// checksums and the champion pointer, when set, names one of them.
func checkReadable(t *testing.T, r *Registry, when string) {
	t.Helper()
	versions, err := r.List(testRepo)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: List: %v", when, err)
	}
	for _, v := range versions {
		if _, err := r.Load(testRepo, v, testSchema); err != nil {
			t.Fatalf("%s: version %s does not load: %v", when, v, err)
		}
	}
	c, err := r.Champion(testRepo)
	if err != nil || c == "" {
		return // no champion yet: the first publish was cut before its pointer swap
	}
	if _, err := r.Load(testRepo, c, testSchema); err != nil {
		t.Fatalf("%s: champion %s does not load: %v", when, c, err)
	}
}

// killFiles is the content of bundle n: a few files of 64 KiB, so that a publish takes
// long enough (writes and fsyncs) to be cut in the middle.
func killFiles(n int) map[string]string {
	files := map[string]string{}
	for k := range 8 {
		files[fmt.Sprintf("model_%d.json", k)] = strings.Repeat(fmt.Sprintf("%d-%d;", n, k), 64<<10/6)
	}
	return files
}

// publishForever is the child of TestKillDuringPublish.
func publishForever(t *testing.T, dir string) {
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		if _, err := r.Publish(context.Background(), testRepo, writeFiles(killFiles(n)), testManifest(), PublishOptions{Champion: true}); err != nil {
			t.Fatal(err)
		}
	}
}
