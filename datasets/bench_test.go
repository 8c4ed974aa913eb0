package datasets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchBuilds is the size of the benchmark history: 1M builds, the target
// ("reading 1M builds from Parquet in at most 3 s").
const benchBuilds = 1_000_000

// buildsPerChange is how many builds (speculation-tree nodes) each change has in the
// benchmark history.
const buildsPerChange = 4

var (
	benchOnce sync.Once
	benchHist *History
)

// benchHistory returns a history with n builds and n/buildsPerChange changes whose
// columns are filled like a synthetic history's: every numeric column present, paths of
// up to 3 changes, truth columns.
func benchHistory(n int) *History {
	rng := rand.New(rand.NewPCG(1, 1))
	nc := n / buildsPerChange
	h := &History{Changes: make([]Change, nc), Builds: make([]Build, n)}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	targets := make([]string, 64)
	for i := range targets {
		targets[i] = fmt.Sprintf("//pkg%02d:lib", i)
	}
	for i := range h.Changes {
		c := &h.Changes[i]
		c.ChangeID = fmt.Sprintf("c%07d", i)
		c.Repo = "ios"
		c.RevisionID = fmt.Sprintf("r%07d", i)
		c.Author = fmt.Sprintf("dev%03d", rng.IntN(500))
		c.SubmittedAt = start.Add(time.Duration(i) * 20 * time.Second)
		c.DecidedAt = c.SubmittedAt.Add(time.Duration(rng.IntN(3600)) * time.Second)
		c.Outcome = Outcome(1 + rng.IntN(2))
		for _, p := range []*float64{&c.TargetsChanged, &c.TargetsAdded, &c.TargetsRemoved, &c.LinesAdded,
			&c.LinesRemoved, &c.Hunks, &c.FilesChanged, &c.Commits, &c.BinariesAdded, &c.BinariesRemoved,
			&c.InitialChecksPassed, &c.InitialChecksFailed, &c.RevisionSubmissions} {
			*p = float64(rng.IntN(200))
		}
		k := rng.IntN(4)
		c.AffectedTargets = make([]string, k)
		for j := range k {
			c.AffectedTargets[j] = targets[rng.IntN(len(targets))]
		}
		c.RevisionHasRevertPlan, c.RevisionHasTestPlan = Flag(rng.IntN(3)), Flag(rng.IntN(3))
		c.AuthorTenureDays, c.AuthorLevel = rng.Float64()*2000, float64(rng.IntN(6))
		c.TrueProbSuccess = rng.Float64()
	}
	for i := range h.Builds {
		b := &h.Builds[i]
		ci := i / buildsPerChange
		b.BuildID = fmt.Sprintf("b%07d", i)
		b.Repo = "ios"
		b.ChangeID = h.Changes[ci].ChangeID
		for j := range min(i%buildsPerChange, ci) {
			b.Path = append(b.Path, h.Changes[ci-1-j].ChangeID)
		}
		b.SpeculationHeight = float64(len(b.Path))
		b.StartedAt = h.Changes[ci].SubmittedAt.Add(time.Duration(rng.IntN(600)) * time.Second)
		b.DurationS = 1800 + rng.Float64()*1800
		b.FinishedAt = b.StartedAt.Add(time.Duration(b.DurationS * float64(time.Second)))
		b.Status = Status(1 + rng.IntN(4))
		b.TrueMuS, b.TrueSigmaS = 2400+rng.Float64()*100, 300+rng.Float64()*50
	}
	return h
}

// benchReadHistory writes the 1M-build history in format f outside the timer, then
// reads it back (changes and builds, fully validated) in the timed loop.
func benchReadHistory(b *testing.B, f Format) {
	benchOnce.Do(func() { benchHist = benchHistory(benchBuilds) })
	dir := filepath.Join(b.TempDir(), "h")
	ctx := context.Background()
	if err := WriteHistory(ctx, dir, benchHist, f); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	var h *History
	for b.Loop() {
		var err error
		if h, _, err = ReadHistory(ctx, dir, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if len(h.Builds) != benchBuilds {
		b.Fatalf("read %d builds, want %d", len(h.Builds), benchBuilds)
	}
	benchSink = h
	b.ReportMetric(float64(benchBuilds)*float64(b.N)/b.Elapsed().Seconds(), "builds/s")
	// CPU seconds of the process per read, GC and Parquet decoding goroutines included:
	// on a machine shared with other jobs wall time overstates the cost.
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime returns the user plus system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchSink *History

func BenchmarkReadHistory1MParquet(b *testing.B) { benchReadHistory(b, FormatParquet) }
func BenchmarkReadHistory1MArrow(b *testing.B)   { benchReadHistory(b, FormatArrow) }
func BenchmarkReadHistory1MCSV(b *testing.B)     { benchReadHistory(b, FormatCSV) }
