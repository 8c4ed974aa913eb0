package queue

// Truth is the ground truth the engine runs builds against and checks decisions with.
// Implementations must be deterministic: the same arguments give the same answer, so
// that every strategy sees the same draw for the same build.
type Truth interface {
	// Lands reports whether change i truly lands: its build succeeds on the path of the
	// changes of its Ahead that truly land.
	Lands(i int) bool
	// Build returns how a build of change i ends. content holds the changes of
	// Change.Ahead the build includes (ascending); height is the number of them still
	// pending when it started (its speculation height); attempt counts the earlier
	// builds of the same content that ended in an infrastructure failure.
	Build(i int, content []int, height, attempt int) Draw
}

// Draw is how one build ends.
type Draw struct {
	// Succeeds is the build's result when it does not fail for infrastructure reasons.
	Succeeds bool
	// Infra reports an infrastructure failure: the build ends without a result.
	Infra bool
	// Duration is the build's run time in seconds, positive.
	Duration float64
}

// TimedTruth is the ground truth of RunSource: a world that may change while it runs
// (build times that drift, episodes of infrastructure failures), so a build's end
// depends on when it starts and on whether it is a probe. Like a Truth, it must give the
// same answer to the same arguments.
type TimedTruth interface {
	// Lands is Truth.Lands.
	Lands(i int) bool
	// BuildAt returns how the build b ends.
	BuildAt(b BuildStart) Draw
}

// BuildStart describes a build as the engine starts it.
type BuildStart struct {
	// Change, Content, Height and Attempt are Truth.Build's arguments; for a probe,
	// Height is 0 and Attempt counts the earlier probes of the same content that ended in
	// an infrastructure failure.
	Change  int
	Content []int
	Height  int
	Attempt int
	// At is the start time in seconds.
	At float64
	// Probe reports a probe build (see Probe).
	Probe bool
}

// fixedTruth is the TimedTruth of a Truth, for Run.
type fixedTruth struct{ Truth }

// BuildAt implements TimedTruth with Truth.Build.
func (t fixedTruth) BuildAt(b BuildStart) Draw {
	return t.Build(b.Change, b.Content, b.Height, b.Attempt)
}
