package server

import (
	"sync/atomic"
	"testing"
)

// TestTicket: a ticket gives back its slot and the weight it was admitted with when
// released, and a ticket released before its message is weighed (the stream ended
// first) takes nothing; a message is admitted alone whatever its weight, and refused
// beside others when it does not fit.
func TestTicket(t *testing.T) {
	t.Parallel()
	const budget = 100 * RequestMemoryPerByte
	w := newWeigher(budget, nil)
	var slots atomic.Int64
	newTicket := func() *ticket { slots.Add(1); return &ticket{slot: &slots, w: w} }

	a := newTicket()
	if !a.admit(60) || w.used.Load() != 60*RequestMemoryPerByte {
		t.Fatalf("first ticket of 60 bytes: used %d, want admitted and %d", w.used.Load(), 60*RequestMemoryPerByte)
	}
	if b := newTicket(); b.admit(50) {
		t.Errorf("60 + 50 bytes admitted under a budget of 100")
	} else {
		b.release()
	}
	c := newTicket()
	if !c.admit(40) {
		t.Errorf("60 + 40 bytes refused under a budget of 100")
	}
	a.release()
	c.release()
	if w.used.Load() != 0 || slots.Load() != 0 {
		t.Errorf("after every release: used %d, slots %d, want 0 and 0", w.used.Load(), slots.Load())
	}
	d := newTicket()
	d.release() // the stream ended before its message was weighed
	if d.admit(1) || w.used.Load() != 0 {
		t.Errorf("released ticket admitted, used %d", w.used.Load())
	}
	e := newTicket()
	if !e.admit(1000) {
		t.Errorf("a message over the whole budget refused with nothing else in flight")
	}
	e.release()
	if w.used.Load() != 0 || slots.Load() != 0 {
		t.Errorf("at the end: used %d, slots %d, want 0 and 0", w.used.Load(), slots.Load())
	}
}
