package registry

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// watchTimeout bounds every wait for an event so a broken watcher fails the test
// instead of hanging it; the watcher polls every watchInterval, far more often.
const (
	watchInterval = 2 * time.Millisecond
	watchTimeout  = 10 * time.Second
)

// nextEvent receives one event or fails the test.
func nextEvent(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed early")
		}
		return ev
	case <-time.After(watchTimeout):
		t.Fatal("no watch event")
	}
	panic("unreachable")
}

func TestWatch(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	v1 := publish(t, r, bundleFiles, PublishOptions{Champion: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := r.Watch(ctx, testRepo, watchInterval)

	// Each step changes the registry, then expects exactly these events in order.
	var v2 string
	steps := []struct {
		name   string
		change func() error
		want   []Event
	}{
		{name: "initial state", change: func() error { return nil },
			want: []Event{{Role: RoleChampion, Version: v1}, {Role: RoleChallenger}}},
		{name: "new champion", change: func() error {
			var err error
			v2, err = r.Publish(ctx, testRepo, writeFiles(bundleFiles), testManifest(), PublishOptions{Champion: true})
			return err
		}, want: []Event{{Role: RoleChampion, Version: "20261121T094000Z-000002"}}},
		{name: "challenger", change: func() error { return r.SetChallenger(testRepo, v1) },
			want: []Event{{Role: RoleChallenger, Version: v1}}},
		{name: "cleared challenger", change: func() error { return r.ClearChallenger(testRepo) },
			want: []Event{{Role: RoleChallenger}}},
		{name: "broken champion pointer", change: func() error {
			// Atomically, so the watcher cannot see a partial write as another error.
			return writeFileAtomic(filepath.Join(r.repoDir(testRepo), "current"), []byte("junk"))
		}, want: []Event{{Role: RoleChampion, Err: ErrInvalidName}}},
		{name: "repaired", change: func() error { return r.SetChampion(testRepo, v2) },
			want: []Event{{Role: RoleChampion, Version: "20261121T094000Z-000002"}}},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for _, want := range s.want {
			got := nextEvent(t, ch)
			if got.Role != want.Role || got.Version != want.Version || !errors.Is(got.Err, want.Err) ||
				(want.Err == nil) != (got.Err == nil) {
				t.Fatalf("%s: event = %+v, want %+v", s.name, got, want)
			}
		}
	}
	// No change, no event.
	select {
	case ev := <-ch:
		t.Fatalf("event %+v without a change", ev)
	case <-time.After(20 * watchInterval):
	}
	cancel()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("event %+v after cancel, want the channel closed", ev)
		}
	case <-time.After(watchTimeout):
		t.Fatal("watch channel not closed after cancel")
	}
}

// A watcher whose receiver never reads still stops on cancel.
func TestWatchStopsWhileBlocked(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := r.Watch(ctx, testRepo, watchInterval)
	time.Sleep(10 * watchInterval) // let it block on its first send
	cancel()
	deadline := time.After(watchTimeout)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch channel not closed after cancel")
		}
	}
}
