package queue

import "fmt"

// BuildStatus is the state of a build.
type BuildStatus uint8

// The states of a build.
const (
	// Running is a build still executing.
	Running BuildStatus = iota
	// Succeeded and Failed are finished builds with a result.
	Succeeded
	Failed
	// InfraFailed is a build that ended for an infrastructure reason, without a result.
	InfraFailed
	// Aborted is a build stopped by the strategy or made useless by a decision.
	Aborted
)

// String returns "running", "succeeded", "failed", "infra_failed" or "aborted".
func (s BuildStatus) String() string {
	switch s {
	case Running:
		return "running"
	case Succeeded:
		return "succeeded"
	case Failed:
		return "failed"
	case InfraFailed:
		return "infra_failed"
	case Aborted:
		return "aborted"
	}
	return fmt.Sprintf("BuildStatus(%d)", uint8(s))
}

// Build is one build the engine started.
type Build struct {
	// Change is the change the build decides.
	Change int
	// Content holds the changes of the change's Ahead the build includes (those landed
	// when it started and its path), ascending.
	Content []int
	// Height is the number of changes of Content still pending when it started.
	Height int
	// Start and End are its start and end times in seconds; End is the finish or abort
	// time, and meaningless while Running.
	Start, End float64
	// Status is its state.
	Status BuildStatus
	// Stale reports a finished build whose content a later decision contradicted.
	Stale bool
	// Batch is the id of the first build of the batch this build is part of, and
	// BatchSize the number of its builds: one per change of the batch, with consecutive
	// ids, sharing one worker, start, end and status. A build started alone is a batch
	// of one (Batch its own id, BatchSize 1). A batch runs for as long as the longest
	// of its changes' builds would, fails for an infrastructure reason when its first
	// change's build would, and succeeds only when every change's build would: a failed
	// batch does not say which change failed. So a succeeded batch proves each of its
	// changes on its content, and a failed one proves a change failing only once every
	// other change of the batch has landed on its content (see the package
	// documentation).
	Batch, BatchSize int
	// Probe reports a probe build (see Probe).
	Probe bool

	draw Draw
}

// Record is what happened to one change.
type Record struct {
	// Decided, Landed and DecidedAt give the decision; DecidedAt is in seconds.
	Decided   bool
	Landed    bool
	DecidedAt float64
	// Deciding is the id of the build on the change's true path the decision rested
	// on, -1 while undecided.
	Deciding int
	// Builds counts the change's builds (probes included), Aborted the aborted ones
	// among them.
	Builds, Aborted int
	// BehindLarge reports that at arrival a change of its Ahead was pending whose
	// MeanBuild was at least Config.LargeRatio times its own.
	BehindLarge bool
	// Waited reports that a build of the change finished while a change of its Ahead
	// was pending; Bypassed that it was decided while one was (BLRD, paper 000 §IV).
	Waited, Bypassed bool
}

// Result is the outcome of a run.
type Result struct {
	// Strategy is the strategy's name and Workers the pool size.
	Strategy string
	Workers  int
	// Traffic is the traffic replayed.
	Traffic *Traffic
	// Records holds one record per change, in traffic order.
	Records []Record
	// Builds holds every build in start order; ids index it. The builds of a batch
	// (Build.Batch) are one build of the queue: Summarize counts them once.
	Builds []Build
	// End is the time of the last decision.
	End float64
	// Calls is the number of Plan calls.
	Calls int
}

// InvariantError reports a decision the truth contradicts: the green mainline
// invariant (see the package documentation) would break.
type InvariantError struct {
	// Change is the offending change's index and ID its id.
	Change int
	ID     string
	// Land is the decision that was asked.
	Land bool
	// Reason says what is wrong.
	Reason string
	// At is the time of the decision in seconds.
	At float64
}

// Error describes the violation.
func (e *InvariantError) Error() string {
	verb := "reject"
	if e.Land {
		verb = "land"
	}
	return fmt.Sprintf("queue: green mainline invariant: %s change %d (%s) at %.0fs: %s", verb, e.Change, e.ID, e.At, e.Reason)
}
