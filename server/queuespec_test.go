package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"google.golang.org/protobuf/proto"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// TestQueueSpeculation checks queueSpeculation against features.SubmissionSpeculation
// over the changes ahead, on random queues with unknown, empty, shared and repeated
// targets and unknown line counts. Issue 15 item 6.
func TestQueueSpeculation(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for trial := range 60 {
		// Trials 0-39 are small queues with whole line counts; 40-49 have fractional
		// ones (summed in queue order); 50-59 are long queues with a hot target.
		n := 1 + rnd.IntN(40)
		if trial >= 50 {
			n = 100 + rnd.IntN(200)
		}
		changes := make([]datasets.Change, n)
		for i := range changes {
			c := &changes[i]
			c.ChangeID = fmt.Sprint("C", i)
			c.LinesAdded, c.LinesRemoved = float64(rnd.IntN(300)), float64(rnd.IntN(50))
			if trial >= 40 && trial < 50 || trial >= 55 {
				c.LinesAdded = rnd.Float64() * 300
			}
			if rnd.IntN(15) == 0 {
				c.LinesRemoved = math.NaN()
			}
			c.RevisionSubmissions = float64(1 + rnd.IntN(2))
			switch rnd.IntN(6) {
			case 0: // unknown targets
			case 1:
				c.AffectedTargets = []string{}
			default:
				for range 1 + rnd.IntN(4) {
					c.AffectedTargets = append(c.AffectedTargets, fmt.Sprint("//t", rnd.IntN(12)))
				}
				if trial >= 50 && rnd.IntN(4) > 0 {
					c.AffectedTargets = append(c.AffectedTargets, "//hot")
				}
			}
		}
		var want []int
		for i := range n {
			if rnd.IntN(3) > 0 {
				want = append(want, i)
			}
		}
		got, err := queueSpeculation(context.Background(), changes, want)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range want {
			ahead := make([]*datasets.Change, i)
			for k := range ahead {
				ahead[k] = &changes[k]
			}
			w := features.SubmissionSpeculation(&changes[i], ahead, 0, 0)
			if changes[i].RevisionSubmissions != 1 {
				w.Succeeded, w.Failed = math.NaN(), math.NaN()
			}
			g := got[i]
			for _, f := range []struct {
				name string
				g, w float64
			}{
				{"succeeded", g.Succeeded, w.Succeeded}, {"failed", g.Failed, w.Failed},
				{"height", g.Height, w.Height}, {"conflicts_count", g.ConflictsCount, w.ConflictsCount},
				{"queue_ahead", g.QueueAhead, w.QueueAhead}, {"path_changes", g.PathChanges, w.PathChanges},
				{"path_lines_changed", g.PathLinesChanged, w.PathLinesChanged},
			} {
				// Same additions in the same order: the values reproduce exactly.
				if !scalar.Same(f.g, f.w) {
					t.Errorf("trial %d: queueSpeculation change %d %s = %v, want %v", trial, i, f.name, f.g, f.w)
				}
			}
		}
	}
}

// TestSpeculationCountsWin checks which counts a ScoreSpeculation row uses: those the
// caller sets win, the others are computed from the queue, and a build-time row counts
// the change's finished builds of the request.
func TestSpeculationCountsWin(t *testing.T) {
	one := 1.0
	req := &pb.ScoreSpeculationRequest{Capacity: 2, Changes: []*pb.QueueChange{
		{Change: &pb.Change{ChangeId: "a", LinesAdded: proto.Float64(10), LinesRemoved: proto.Float64(0), AffectedTargets: &pb.TargetList{Names: []string{"//x"}}}},
		{Change: &pb.Change{ChangeId: "b", LinesAdded: proto.Float64(5), RevisionSubmissions: &one, AffectedTargets: &pb.TargetList{Names: []string{"//x", "//y"}}},
			Speculation: &pb.SpeculationCounts{QueueAhead: proto.Float64(7)}},
	}, Builds: []*pb.StartedBuild{
		{BuildId: "1", ChangeId: "b", Status: pb.BuildStatus_BUILD_STATUS_FAILED},
		{BuildId: "2", ChangeId: "b", PathChangeIds: []string{"a"}, Status: pb.BuildStatus_BUILD_STATUS_RUNNING},
	}}
	in, err := speculationFromProto(req, "", 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.fillSpeculation(context.Background(), req.GetBuilds()); err != nil {
		t.Fatal(err)
	}
	s, b := in.specs[1], in.buildSpecs[1]
	wantS := features.Speculation{Succeeded: 0, Failed: 0, Height: 1, ConflictsCount: 1, QueueAhead: 7, PathChanges: 1, PathLinesChanged: 10}
	wantB := features.Speculation{Succeeded: 0, Failed: 1, Height: 1, ConflictsCount: 1, QueueAhead: 7, PathChanges: 1, PathLinesChanged: 10}
	if s != wantS {
		t.Errorf("success speculation of b = %+v, want %+v", s, wantS)
	}
	if b != wantB {
		t.Errorf("build speculation of b = %+v, want %+v", b, wantB)
	}
	// a's revision_submissions is unknown: its earlier attempts stay unknown.
	if s := in.specs[0]; s.QueueAhead != 0 || s.ConflictsCount != 0 || !math.IsNaN(s.Succeeded) || !math.IsNaN(s.Failed) {
		t.Errorf("success speculation of a = %+v, want nothing ahead and unknown revision counts", s)
	}
}

// BenchmarkQueueSpeculation computes the counts of a 10,000-change queue (the default
// --max-batch) in which every change affects one hot target: the worst case.
func BenchmarkQueueSpeculation(b *testing.B) {
	const n = 10000
	changes := make([]datasets.Change, n)
	want := make([]int, n)
	for i := range changes {
		changes[i] = datasets.Change{LinesAdded: float64(i % 300), LinesRemoved: 1, RevisionSubmissions: 1,
			AffectedTargets: []string{"//hot", fmt.Sprint("//t", i%50)}}
		want[i] = i
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := queueSpeculation(context.Background(), changes, want); err != nil {
			b.Fatal(err)
		}
	}
}

// TestQueueSpeculationContext: a done context stops the computation with its error.
func TestQueueSpeculationContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	changes := make([]datasets.Change, 3)
	if _, err := queueSpeculation(ctx, changes, []int{0, 1, 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("queueSpeculation(cancelled) = %v, want context.Canceled", err)
	}
}
