// Package queue is sqpredict's merge-queue simulator: an event-driven speculative merge
// queue with a finite pool of workers, pluggable strategies and a ground-truth oracle that
// checks the green-mainline invariant on every decision.
//
// # Model
//
// Traffic is a list of changes in queue (arrival) order. Each change names the earlier
// changes it may conflict with (Change.Ahead, the edges of the conflict graph). A build
// of change C runs on a path: the changes of C's Ahead still pending when the build
// starts that it assumes landed; the pending ones left out are assumed rejected, and
// the changes already landed are part of the mainline (HEAD). The content of a build is
// the set of changes of C's Ahead it includes: those landed when it started plus its
// path. A Truth says, for any content, whether the build succeeds, whether it fails for
// an infrastructure reason and how long it runs, and whether a change truly lands.
//
// The engine processes events in time order: arrivals and build finishes. After all the
// events of one instant it shows the queue to the Strategy (a View) and applies what the
// strategy asks (Actions): decisions first, then aborts, then starts; it calls the
// strategy again at the same instant while the strategy keeps deciding, so decisions
// cascade. A build whose content contradicts a decision (it includes a change that was
// rejected, or leaves out one that landed) is useless: the engine aborts it if it runs
// and hides it from the strategy if it finished. Builds of a decided change are aborted.
// An infrastructure failure says nothing about the change: its build is shown to no one
// and the strategy builds again.
//
// A strategy may also start a batch (Actions.Batches): one build, on one worker, of
// several changes together, each on its own path, as merge queues that batch do. The
// engine keeps one build per change of the batch (so that paths, contradictions and
// the invariant work change by change) and counts them as one build in the metrics.
// The batch succeeds only if every change's build would, and a failed batch does not
// say which change failed.
//
// # Traffic that depends on the queue
//
// Run replays a fixed traffic. RunSource takes the traffic from a Source as the run goes,
// for a world whose changes depend on what the queue does (package datasets/synth: a
// change's conflict edges are the changes pending at its arrival, and a rejected change
// comes back later), with a TimedTruth, whose builds may depend on their start time. A
// strategy may also ask for probes: builds of a decided change on an explicit content of
// decided changes (culprit finding), which take workers like any build but decide
// nothing and are never aborted by a decision. View.Finished lists the builds that ended
// since the previous Plan call, probes included. A RunSource ends once no change is due,
// every change is decided and no build runs.
//
// # The green mainline invariant
//
// Every decision is checked against the truth before it is applied: the change's true
// path is the set of changes of its Ahead that truly land, and a finished build of the
// change whose content is exactly that path must exist, with a result that agrees with
// the decision (succeeded for land, failed for reject); a failed batch speaks for one of
// its changes only once every other change of it has landed. A violation stops the run with
// an *InvariantError naming the change. Since a build's result comes from the truth,
// the invariant also guarantees that every landed change truly lands.
//
// # Metrics
//
// Result holds every change's record and every build; Summarize turns it into the
// queue's metrics (builds per change, CPU hours, aborted share, turnaround quantiles,
// the same for small changes waiting behind large conflicting ones, throughput and the
// BLRD trigger rate of paper 000 §IV). The package does not import scoring: strategies
// that use the speculation math live in package replay.
package queue
