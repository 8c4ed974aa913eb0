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
