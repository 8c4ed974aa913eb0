package features_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
)

// Example shows both sides of the extractor: the trainer builds a table from a history
// and freezes a developer table; the scorer reads the developer table back and computes a
// row for a new change from raw inputs.
func Example() {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	change := func(id string, sub, dec int, out datasets.Outcome) datasets.Change {
		return datasets.Change{ChangeID: id, Repo: "go", Author: "alice", SubmittedAt: at(sub), DecidedAt: at(dec),
			Outcome: out, LinesAdded: 40, LinesRemoved: 2, AffectedTargets: []string{"//a", "//b"},
			TargetsChanged: 2, TargetsAdded: math.NaN(), TrueProbSuccess: math.NaN()}
	}
	build := func(id, cid string, start, end int, st datasets.Status) datasets.Build {
		return datasets.Build{BuildID: id, Repo: "go", ChangeID: cid, StartedAt: at(start), FinishedAt: at(end),
			DurationS: float64(60 * (end - start)), Status: st, TrueMuS: math.NaN(), TrueSigmaS: math.NaN()}
	}
	h := &datasets.History{
		Changes: []datasets.Change{change("c1", 0, 20, datasets.OutcomeLanded), change("c2", 30, 50, datasets.OutcomeRejected)},
		Builds: []datasets.Build{build("b1", "c1", 1, 19, datasets.StatusSucceeded),
			build("b2", "c2", 31, 49, datasets.StatusFailed)},
	}

	// Training.
	ctx := context.Background()
	ix, err := features.NewIndex(ctx, h)
	if err != nil {
		fmt.Println(err)
		return
	}
	tb, err := ix.Table(ctx, features.KindSuccess)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("success rows:", tb.NRows(), "labels:", tb.Y, "features:", tb.Schema.NFeatures())
	var bundle bytes.Buffer
	if err := features.WriteDevTable(&bundle, ix.DevTable(at(60))); err != nil {
		fmt.Println(err)
		return
	}

	// Serving: a new change by alice, asked about at its submission.
	devs, err := features.ReadDevTable(&bundle)
	if err != nil {
		fmt.Println(err)
		return
	}
	c3 := change("c3", 70, 0, datasets.OutcomeUnknown)
	c3.DecidedAt = time.Time{} // pending
	dev := devs.Lookup("alice")
	// Nothing is pending ahead of c3 and its revision has no earlier attempt.
	spec := features.SubmissionSpeculation(&c3, nil, 0, 0)
	row := features.Success(make([]float64, features.NSuccess), &c3, spec, dev, devs.Recent(c3.Repo, &c3))
	fmt.Printf("alice: %g prior changes, success rate %.4g\n", dev.PriorChanges, dev.SuccessRate)
	fmt.Printf("row[0:3] = %v, log1p_lines_changed = %.4g\n", row[0:3], row[16])
	// Output:
	// success rows: 2 labels: [1 0] features: 47
	// alice: 2 prior changes, success rate 0.5
	// row[0:3] = [2 NaN 0], log1p_lines_changed = 3.761
}
