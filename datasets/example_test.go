package datasets_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// Write a tiny history as CSV, show the builds file, and read it back, validated.
func Example() {
	dir, err := os.MkdirTemp("", "history")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	nan := math.NaN()
	h := &datasets.History{
		Changes: []datasets.Change{
			{ChangeID: "c1", Repo: "go", RevisionID: "r1", Author: "alice", SubmittedAt: t0, LinesAdded: 12, TrueProbSuccess: nan},
			{ChangeID: "c2", Repo: "go", RevisionID: "r2", Author: "bob", SubmittedAt: t0.Add(time.Minute), TrueProbSuccess: nan},
		},
		Builds: []datasets.Build{
			{BuildID: "b1", Repo: "go", ChangeID: "c1", StartedAt: t0, FinishedAt: t0.Add(10 * time.Minute),
				DurationS: 600, Status: datasets.StatusSucceeded, TrueMuS: nan, TrueSigmaS: nan},
			{BuildID: "b2", Repo: "go", ChangeID: "c2", Path: []string{"c1"}, SpeculationHeight: 1,
				StartedAt: t0.Add(time.Minute), DurationS: nan, Status: datasets.StatusAborted, TrueMuS: nan, TrueSigmaS: nan},
		},
	}
	// Numeric fields left out are 0, not missing: unknown values must be set to NaN.
	if err := datasets.WriteHistory(ctx, dir, h, datasets.FormatCSV); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "builds.csv"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))

	got, rep, err := datasets.ReadHistory(ctx, dir, datasets.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(got.Changes), "changes,", len(got.Builds), "builds,", rep.NProblems, "problems")
	fmt.Println(got.Builds[1].Path, got.Builds[1].Status, math.IsNaN(got.Builds[1].DurationS))
	// Output:
	// build_id,repo,change_id,path,speculation_height,started_at,finished_at,duration_s,status
	// b1,go,c1,,0,2026-03-02T09:30:00Z,2026-03-02T09:40:00Z,600,succeeded
	// b2,go,c2,c1,1,2026-03-02T09:31:00Z,,,aborted
	// 2 changes, 2 builds, 0 problems
	// [c1] aborted true
}
