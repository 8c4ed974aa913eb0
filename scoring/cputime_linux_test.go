package scoring

import (
	"runtime"
	"syscall"
)

// threadCPUTime returns the CPU time the calling OS thread has used, in nanoseconds.
// Benchmarks report it besides wall time because the benchmark machines are shared:
// wall time then counts the time other jobs hold the core.
func threadCPUTime() int64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, Linux only
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// lockThread pins the benchmark goroutine to its thread so that threadCPUTime measures
// it alone.
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
