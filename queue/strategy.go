package queue

// Strategy decides what the queue does. The engine calls Plan after every instant at
// which something happened (an arrival, a build finish), and again at the same instant
// while the previous call decided something.
type Strategy interface {
	// Name is the strategy's name in outputs.
	Name() string
	// Plan returns what to do now. The view is valid only during the call.
	Plan(v *View) (Actions, error)
}

// Actions is what a strategy asks the engine to do at one instant. The engine applies
// the decisions first (in order; each is checked against the truth), then the aborts,
// then the starts, then the batches, then the probes.
type Actions struct {
	Decisions []Decision
	// Abort holds build ids to stop; ids of builds that no longer run are ignored.
	Abort []int
	Start []Start
	// Batches holds batch builds to start: each is one build, on one worker, of the
	// changes of its Starts together, as merge queues that batch build them (see
	// Build.Batch for what it shows and what it proves).
	Batches [][]Start
	// Probes holds probe builds to start (see Probe).
	Probes []Probe
}

// Decision lands or rejects a pending change.
type Decision struct {
	Change int
	Land   bool
}

// Start asks for a build of Change on Path: the pending changes of its Ahead it assumes
// landed (any order); the other pending ones are assumed rejected.
type Start struct {
	Change int
	Path   []int
}

// Probe asks for a build of a decided change on an explicit content: Content holds
// changes of its Ahead, every one decided, that the build includes (any order), whether
// they landed or not. A probe finds out something about a change after its decision
// (culprit finding: which change of a failing path it conflicts with); it takes a
// worker like any build, has height 0, never decides anything, is shown only through
// View.Finished and Result.Builds (Build.Probe), and no decision aborts it.
type Probe struct {
	Change  int
	Content []int
}

// View is what a strategy sees of the queue: the pending changes, their conflict edges
// and their live builds (running, or finished with a result and still consistent with
// every decision). Strategies must not modify what it returns.
type View struct {
	e *engine
}

// Now returns the current time in seconds.
func (v *View) Now() float64 { return v.e.now }

// Workers returns the size of the worker pool.
func (v *View) Workers() int { return v.e.cfg.Workers }

// Free returns the number of idle workers.
func (v *View) Free() int { return v.e.free }

// Pending returns the arrived, undecided changes in queue order.
func (v *View) Pending() []int {
	v.e.compactPending()
	return v.e.pending
}

// Change returns change i of the traffic.
func (v *View) Change(i int) *Change { return &v.e.tr.Changes[i] }

// IsPending reports whether change i has arrived and is undecided.
func (v *View) IsPending(i int) bool { return v.e.state[i] == statePending }

// Landed reports whether change i was decided and landed.
func (v *View) Landed(i int) bool { return v.e.state[i] == stateLanded }

// PendingAhead appends to dst the changes of change i's Ahead still pending, ascending,
// and returns it.
func (v *View) PendingAhead(i int, dst []int) []int {
	for _, k := range v.e.tr.Changes[i].Ahead {
		if v.e.state[k] == statePending {
			dst = append(dst, k)
		}
	}
	return dst
}

// Builds returns the ids of change i's live builds, oldest first.
func (v *View) Builds(i int) []int { return v.e.live[i] }

// Build returns build id.
func (v *View) Build(id int) *Build { return &v.e.builds[id] }

// Path appends to dst the path of live build id as it stands now: the changes its content
// includes that are still pending (the others of its content have landed), and returns it.
func (v *View) Path(id int, dst []int) []int {
	for _, k := range v.e.builds[id].Content {
		if v.e.state[k] == statePending {
			dst = append(dst, k)
		}
	}
	return dst
}

// Finished returns the ids of the builds, probes included, that ended with a result or
// an infrastructure failure since the previous Plan call, in the order they ended.
func (v *View) Finished() []int { return v.e.ended }
