package training

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestSchedule runs a job every second: the first run panics (recovered), the next ones
// count; cancelling the context while a run is in progress returns only after that run
// has finished.
func TestSchedule(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs, finished atomic.Int32
	started := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- Schedule(ctx, "@every 1s", nil, func(ctx context.Context) {
			n := runs.Add(1)
			if n == 1 {
				panic("first run fails")
			}
			started <- struct{}{}
			<-ctx.Done() // a long job: runs until the schedule is stopped
			time.Sleep(50 * time.Millisecond)
			finished.Add(1)
		})
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("no run after a recovered panic within 5 s")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Schedule = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Schedule did not return within 5 s of cancellation")
	}
	if finished.Load() != 1 {
		t.Errorf("Schedule returned with %d finished runs, want the running one finished", finished.Load())
	}
	if runs.Load() != 2 {
		t.Errorf("%d runs, want 2 (the panicking one and the long one; overlapping runs skipped)", runs.Load())
	}
}

func TestScheduleBadSpec(t *testing.T) {
	err := Schedule(context.Background(), "every monday", nil, func(context.Context) {})
	if !errors.Is(err, ErrConfig) {
		t.Errorf("Schedule(bad spec) = %v, want ErrConfig", err)
	}
}
