package features

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
)

// cpuTime returns the CPU time (user and system) the process has used. Benchmarks report
// rows per CPU second beside rows per wall second because the machines they run on are
// shared: with -cpu 1 the process uses one core, and its CPU time is what that core spent,
// whatever else the machine was doing.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRows reports rows per wall second and per CPU second since cpu0.
func reportRows(b *testing.B, rows int, cpu0 time.Duration) {
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

// benchConfig is the benchmark history: 90 days of the synthetic go monorepo at its
// default rate, about 100,000 changes and 128,000 builds.
var benchConfig = synth.Config{Profile: "go", Days: 90, Seed: 1}

func benchHistory(b *testing.B) *datasets.History {
	b.Helper()
	h, err := synth.Generate(context.Background(), benchConfig)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

var (
	benchTable *Table
	benchRow   []float64
)

func benchIndex(b *testing.B) (*Index, int) {
	b.Helper()
	h := benchHistory(b)
	ix, err := NewIndex(context.Background(), h)
	if err != nil {
		b.Fatal(err)
	}
	return ix, len(h.Builds)
}

// BenchmarkBuildTimeRows measures building the build-time table of a prepared Index, in
// the calling goroutine (the code is single-threaded whatever GOMAXPROCS is).
func BenchmarkBuildTimeRows(b *testing.B) {
	ix, _ := benchIndex(b)
	b.ReportAllocs()
	rows := 0
	cpu0 := cpuTime()
	for b.Loop() {
		t, err := ix.Table(context.Background(), KindBuildTime)
		if err != nil {
			b.Fatal(err)
		}
		rows += t.NRows()
		benchTable = t
	}
	reportRows(b, rows, cpu0)
}

// BenchmarkBuildTimeIndexAndRows measures the whole path from a history in memory:
// NewIndex (decision times, labels, candidate pairs, developer sweep, speculation state)
// and the build-time table.
func BenchmarkBuildTimeIndexAndRows(b *testing.B) {
	h := benchHistory(b)
	b.ReportAllocs()
	rows := 0
	cpu0 := cpuTime()
	for b.Loop() {
		ix, err := NewIndex(context.Background(), h)
		if err != nil {
			b.Fatal(err)
		}
		t, err := ix.Table(context.Background(), KindBuildTime)
		if err != nil {
			b.Fatal(err)
		}
		rows += t.NRows()
		benchTable = t
	}
	reportRows(b, rows, cpu0)
}

// BenchmarkBuildTimeRow measures the scorer's path: one row from raw inputs.
func BenchmarkBuildTimeRow(b *testing.B) {
	c := change("c", "alice", 0, 10, landed, "t01", "t03", "t07")
	spec := Speculation{Succeeded: 1, Height: 2, ConflictsCount: 1, QueueAhead: 3, PathChanges: 2, PathLinesChanged: 120}
	dev := DevStats{PriorChanges: 12, SuccessRate: 0.8, ConflictRate: 0.1, MeanLogDuration: 6}
	rec := Recent{RepoFailRate5: 0.2, LastDuration: 300, MeanSuccessDuration: 280}
	dst := make([]float64, NBuildTime)
	b.ReportAllocs()
	rows := 0
	cpu0 := cpuTime()
	for b.Loop() {
		benchRow = BuildTime(dst, &c, spec, dev, rec)
		rows++
	}
	reportRows(b, rows, cpu0)
}
