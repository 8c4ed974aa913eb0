//go:build !linux

package scoring

// threadCPUTime is not available outside Linux; the benchmarks then report 0.
func threadCPUTime() int64 { return 0 }

func lockThread() func() { return func() {} }
