package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

// TestRollbackRestoresReloadMetric publishes a corrupt version, points the champion at
// it (the load fails, the metric drops to 0), then rolls the pointer back to the served
// version: the metric is 1 again. Issue 15 item 12.
func TestRollbackRestoresReloadMetric(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	var logBuf bytes.Buffer
	e.reloader.Log = slog.New(slog.NewJSONHandler(&logBuf, nil))
	p := filepath.Join(e.reg.Dir(), e.repo, "versions", e.v2, training.FileSuccess)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	events := make(chan registry.Event)
	done := make(chan struct{})
	go func() { defer close(done); e.reloader.Follow(events) }()
	events <- registry.Event{Role: registry.RoleChampion, Version: e.v2}
	events <- registry.Event{Role: registry.RoleChallenger} // a no-op, so that the first event was handled
	if got := gauge(t, e, "predictd_model_last_reload_successful", "champion"); got != 0 {
		t.Errorf("after the corrupt version: predictd_model_last_reload_successful = %v, want 0", got)
	}
	events <- registry.Event{Role: registry.RoleChampion, Version: e.v1}
	events <- registry.Event{Role: registry.RoleChallenger}
	close(events)
	<-done
	if got := gauge(t, e, "predictd_model_last_reload_successful", "champion"); got != 1 {
		t.Errorf("after the rollback: predictd_model_last_reload_successful = %v, want 1", got)
	}
	if got := e.models.Champion().Version; got != e.v1 {
		t.Errorf("champion = %s, want %s", got, e.v1)
	}
	// The JSON log names roles, not their numbers.
	var sawRole bool
	for line := range strings.SplitSeq(strings.TrimSpace(logBuf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r, ok := rec["role"]; ok {
			sawRole = true
			if r != "champion" {
				t.Errorf("log line %q: role %v, want \"champion\"", line, r)
			}
		}
	}
	if !sawRole {
		t.Errorf("no log line names a role:\n%s", logBuf.String())
	}
}

// TestHTTPHealth checks /healthz and /readyz.
func TestHTTPHealth(t *testing.T) {
	var mu sync.Mutex
	ready := false
	mux := http.NewServeMux()
	server.HandleHTTPHealth(mux, func() bool { mu.Lock(); defer mu.Unlock(); return ready })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	for _, tc := range []struct {
		ready bool
		path  string
		code  int
		body  string
	}{
		{false, "/healthz", 200, "ok"},
		{false, "/readyz", 503, "not ready"},
		{true, "/healthz", 200, "ok"},
		{true, "/readyz", 200, "ready"},
	} {
		mu.Lock()
		ready = tc.ready
		mu.Unlock()
		if code, body := get(tc.path); code != tc.code || body != tc.body {
			t.Errorf("GET %s (ready %v) = %d %q, want %d %q", tc.path, tc.ready, code, body, tc.code, tc.body)
		}
	}
}

// TestTracker counts requests served and in flight.
func TestTracker(t *testing.T) {
	var tr server.Tracker
	ic := tr.UnaryInterceptor()
	inside := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := ic(context.Background(), nil, nil, func(context.Context, any) (any, error) {
			close(inside)
			<-release
			return nil, errors.New("boom")
		})
		done <- err
	}()
	<-inside
	if tr.InFlight() != 1 || tr.Served() != 0 {
		t.Errorf("during a request: in flight %d, served %d; want 1, 0", tr.InFlight(), tr.Served())
	}
	close(release)
	<-done
	if tr.InFlight() != 0 || tr.Served() != 1 {
		t.Errorf("after a request: in flight %d, served %d; want 0, 1", tr.InFlight(), tr.Served())
	}
}

// corrupt alters a file of version v of e's registry so that its checksum fails.
func corrupt(t *testing.T, e *testEnv, v string) {
	t.Helper()
	p := filepath.Join(e.reg.Dir(), e.repo, "versions", v, training.FileSuccess)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStartChampionFallback: at start a champion that fails to load is replaced by the
// newest older version that loads (never a newer one), reported by GetModelInfo and a
// metric until the pointer names a version that loads. Issue 14 item 9.
func TestStartChampionFallback(t *testing.T) {
	e := newTestEnv(t, server.Config{}, false)
	ctx := testCtx(t)
	v3 := publishVariant(t, e, nil) // good, newer than the pointer
	corrupt(t, e, e.v2)
	versions, err := e.reg.List(e.repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.reloader.StartChampion(e.v2, versions); err != nil {
		t.Fatalf("StartChampion(corrupt %s) = %v, want a fallback", e.v2, err)
	}
	if got := e.models.Champion().Version; got != e.v1 {
		t.Errorf("champion = %s, want the older good version %s", got, e.v1)
	}
	info, err := e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !info.GetChampionFallback() || info.GetChampionPointerVersion() != e.v2 || info.GetModels()[0].GetModel().GetVersion() != e.v1 {
		t.Errorf("GetModelInfo = fallback %v, pointer %q, serving %s; want true, %s, %s",
			info.GetChampionFallback(), info.GetChampionPointerVersion(), info.GetModels()[0].GetModel().GetVersion(), e.v2, e.v1)
	}
	if got := scalarMetric(t, e, "predictd_model_champion_fallback"); got != 1 {
		t.Errorf("predictd_model_champion_fallback = %v, want 1", got)
	}
	if got := gauge(t, e, "predictd_model_last_reload_successful", "champion"); got != 0 {
		t.Errorf("predictd_model_last_reload_successful = %v, want 0 (the pointer's version failed)", got)
	}
	// The pointer moves to a good version: the fallback ends.
	if err := e.reloader.Reload(registry.RoleChampion, v3); err != nil {
		t.Fatal(err)
	}
	info, err = e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetChampionFallback() || info.GetChampionPointerVersion() != "" {
		t.Errorf("after loading %s: GetModelInfo fallback %v, pointer %q; want none", v3, info.GetChampionFallback(), info.GetChampionPointerVersion())
	}
	if got := scalarMetric(t, e, "predictd_model_champion_fallback"); got != 0 {
		t.Errorf("after loading %s: predictd_model_champion_fallback = %v, want 0", v3, got)
	}
	// Nothing older loads: the pointer's error.
	e2 := newTestEnv(t, server.Config{}, false)
	corrupt(t, e2, e2.v1)
	if err := e2.reloader.StartChampion(e2.v1, []string{e2.v1, e2.v2}); !errors.Is(err, registry.ErrChecksum) {
		t.Errorf("StartChampion with no older good version = %v, want ErrChecksum", err)
	}
	if e2.models.Champion() != nil {
		t.Errorf("champion %s loaded, want none", e2.models.Champion().Version)
	}
}

// scalarMetric returns the value of the unlabelled gauge name.
func scalarMetric(t *testing.T, e *testEnv, name string) float64 {
	t.Helper()
	mfs, err := e.promReg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}
