package queue

// Source produces the traffic of a RunSource as it goes, for traffic that depends on
// what the queue does: a synthetic world draws a change's conflict edges among the
// changes pending at its arrival, and submits a rejected change again some time after
// its decision.
type Source interface {
	// Next returns the arrival time of the next change, and false when none is due
	// now; a decision may make one due later. The engine asks after every instant and
	// may ask several times before the change arrives, so Next must not change the
	// source. The times it returns must not fall before the current time (View.Now).
	Next() (at float64, ok bool)
	// Arrive returns the change arriving now, at the time Next returned; its index in
	// the traffic is the number of changes that arrived before it, and Ahead must list
	// earlier changes only, ascending. v shows the queue just before it arrives, at that
	// time: the changes it may conflict with are among v.Pending().
	Arrive(v *View) Change
}
