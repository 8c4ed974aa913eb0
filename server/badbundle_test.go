package server_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/modelset"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
)

// publishDamaged publishes the default bundle with damage applied to its files before
// the registry checksums them (so the checksums match the damage and only the loader
// can refuse it), or, with after set, to the published folder (so the checksums do not
// match). It returns the new version.
func publishDamaged(t *testing.T, e *testEnv, before func(dir string) error, after func(dir string) error, schema string) string {
	t.Helper()
	m, err := defaultbundle.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	m.Version, m.Files, m.FormatVersion = "", nil, 0
	if schema != "" {
		m.FeatureSchemaHash = schema
	}
	write := func(dir string) error {
		if err := defaultbundle.WriteDir(dir); err != nil {
			return err
		}
		if err := os.Remove(filepath.Join(dir, registry.ManifestName)); err != nil {
			return err
		}
		if before != nil {
			return before(dir)
		}
		return nil
	}
	v, err := e.reg.Publish(context.Background(), e.repo, write, m, registry.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after != nil {
		dir := filepath.Join(e.reg.Dir(), e.repo, "versions", v)
		if err := after(dir); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// truncate cuts a file of the folder to half its size (making it writable first:
// published files are read-only).
func truncate(name string) func(dir string) error {
	return func(dir string) error {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := os.Chmod(p, 0o600); err != nil {
			return err
		}
		return os.Truncate(p, fi.Size()/2)
	}
}

// overwrite replaces a file of the folder with data.
func overwrite(name, data string) func(dir string) error {
	return func(dir string) error {
		p := filepath.Join(dir, name)
		os.Chmod(p, 0o600)
		return os.WriteFile(p, []byte(data), 0o600)
	}
}

// TestBadBundlesWhileServing publishes corrupt, truncated, foreign-schema and
// unparsable bundles and points the champion at each while four clients send requests
// without pause: every reload is refused, v1 keeps answering, and no request fails.
func TestBadBundlesWhileServing(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rnd := rand.New(rand.NewPCG(2, 7))
	c := randomChange(rnd, 1)
	req := &pb.PredictBuildTimeRequest{Changes: []*pb.Change{server.ChangeToProto(&c)}, Builds: []*pb.BuildQuery{{ChangeId: c.ChangeID}}}

	bad := []struct {
		name string
		v    string
	}{
		{"truncated after publish (checksum)", publishDamaged(t, e, nil, truncate(modelset.FileBuildTime), "")},
		{"overwritten after publish (checksum)", publishDamaged(t, e, nil, overwrite(modelset.FileSuccess, "{}"), "")},
		{"manifest removed", publishDamaged(t, e, nil, func(dir string) error { return os.Remove(filepath.Join(dir, registry.ManifestName)) }, "")},
		{"foreign feature schema", publishDamaged(t, e, nil, nil, "0123456789abcdef")},
		{"truncated model, checksums match", publishDamaged(t, e, truncate(modelset.FileBuildTime), nil, "")},
		{"model not JSON, checksums match", publishDamaged(t, e, overwrite(modelset.FileSuccess, "not a model"), nil, "")},
		{"model file missing, checksums match", publishDamaged(t, e, func(dir string) error { return os.Remove(filepath.Join(dir, modelset.FileConflict)) }, nil, "")},
	}

	var (
		sent, failed atomic.Int64
		firstErr     atomic.Value
		wg           sync.WaitGroup
	)
	done := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				sent.Add(1)
				resp, err := e.client.PredictBuildTime(ctx, req)
				if err == nil && resp.GetPredictions()[0].GetModel().GetVersion() != e.v1 {
					err = errors.New("answered by " + resp.GetPredictions()[0].GetModel().GetVersion())
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	for _, b := range bad {
		before := sent.Load()
		// The registry itself refuses to point at some of them (no manifest); the
		// reload is tried either way, as after a pointer written by hand.
		if err := e.reg.SetChampion(e.repo, b.v); err != nil {
			t.Logf("%s: SetChampion refused: %v", b.name, err)
		}
		if err := e.reloader.Reload(registry.RoleChampion, b.v); err == nil {
			t.Errorf("%s: reload of %s succeeded, want it refused", b.name, b.v)
		} else {
			t.Logf("%s: refused: %v", b.name, err)
		}
		if got := e.models.Champion().Version; got != e.v1 {
			t.Errorf("%s: champion after the refused reload = %s, want %s", b.name, got, e.v1)
		}
		// Let the clients send a few requests against each refused bundle.
		for sent.Load() < before+20 {
			time.Sleep(time.Millisecond)
		}
	}
	close(done)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed while %d bad bundles were refused; first: %v", n, sent.Load(), len(bad), firstErr.Load())
	}
}
