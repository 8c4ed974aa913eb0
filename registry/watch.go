package registry

import (
	"context"
	"errors"
	"time"
)

// Event is a change of a pointer seen by Watch.
type Event struct {
	// Role is the pointer that changed.
	Role Role
	// Version is the version the pointer now names, or "" if it is not set or could
	// not be read.
	Version string
	// Err is why the pointer could not be read, or nil. An unset pointer is not an
	// error: it is an event with an empty Version.
	Err error
}

// Watch polls the champion and challenger pointers of repo every interval and sends an
// Event whenever one changes: a new version, a cleared pointer, or a read error that
// differs from the last one. The first poll reports the state of both pointers, so a
// caller learns where it starts from the same channel. Watch does not load bundles; the
// receiver loads the version and keeps its current one if that fails.
//
// The channel is unbuffered: polling waits while the receiver is busy, and the receiver
// sees the latest state, not every intermediate one. When ctx is cancelled the
// goroutine stops and closes the channel. Watch panics if interval is not positive.
func (r *Registry) Watch(ctx context.Context, repo string, interval time.Duration) <-chan Event {
	if interval <= 0 {
		panic("registry: Watch with a non-positive interval")
	}
	ch := make(chan Event)
	go func() {
		defer close(ch)
		w := watcher{r: r, repo: repo}
		if !w.poll(ctx, ch) {
			return
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !w.poll(ctx, ch) {
					return
				}
			}
		}
	}()
	return ch
}

// watcher holds what Watch last reported for each role. It is used by one goroutine.
type watcher struct {
	r    *Registry
	repo string
	seen [2]bool
	last [2]pointerState
}

// pointerState is what a poll found for one role; comparable so changes are easy to
// spot.
type pointerState struct {
	version string
	err     string
}

// poll reads both pointers and sends an Event for each that changed. It returns false
// if ctx was cancelled while sending.
func (w *watcher) poll(ctx context.Context, ch chan<- Event) bool {
	for _, role := range []Role{RoleChampion, RoleChallenger} {
		version, err := w.r.pointer(w.repo, role)
		if errors.Is(err, ErrNoPointer) {
			err = nil
		}
		st := pointerState{version: version}
		if err != nil {
			st.err = err.Error()
		}
		if w.seen[role] && w.last[role] == st {
			continue
		}
		select {
		case ch <- Event{Role: role, Version: version, Err: err}:
		case <-ctx.Done():
			return false
		}
		w.seen[role], w.last[role] = true, st
	}
	return true
}
