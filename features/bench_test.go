package features

import (
	"context"
	"math/rand/v2"
	"testing"
)

// benchChanges is the size of the benchmark history: about 50,000 changes give about
// 125,000 builds, 96,000 of them build-time rows.
const benchChanges = 50000

var (
	benchTable *Table
	benchRow   []float64
)

func benchIndex(b *testing.B) (*Index, int) {
	b.Helper()
	h := randomHistory(rand.New(rand.NewPCG(1, 1)), benchChanges)
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
	for b.Loop() {
		t, err := ix.Table(context.Background(), KindBuildTime)
		if err != nil {
			b.Fatal(err)
		}
		rows += t.NRows()
		benchTable = t
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkBuildTimeIndexAndRows measures the whole path from a history in memory:
// NewIndex (decision times, labels, candidate pairs, developer sweep, speculation state)
// and the build-time table.
func BenchmarkBuildTimeIndexAndRows(b *testing.B) {
	h := randomHistory(rand.New(rand.NewPCG(1, 1)), benchChanges)
	b.ReportAllocs()
	rows := 0
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
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkBuildTimeRow measures the scorer's path: one row from raw inputs.
func BenchmarkBuildTimeRow(b *testing.B) {
	c := change("c", "alice", 0, 10, landed, "t01", "t03", "t07")
	spec := Speculation{Succeeded: 1, Height: 2, ConflictsCount: 1, QueueAhead: 3, PathChanges: 2, PathLinesChanged: 120}
	dev := DevStats{PriorChanges: 12, SuccessRate: 0.8, ConflictRate: 0.1, MeanLogDuration: 6}
	dst := make([]float64, NBuildTime)
	b.ReportAllocs()
	for b.Loop() {
		benchRow = BuildTime(dst, &c, spec, dev)
	}
}
