package training

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/gbm"
)

// GBM for small tables (issue 12 item 5). LightGBM's defaults (31 leaves of at least 20
// rows, 100 rounds of 0.1, no penalty) fit a real repository's ~1,000 success rows to
// probabilities of 0 or 1: on the real histories the gbm-success challenger had pooled
// holdout log loss 8–10. Without configured parameters (Config.GBM empty) the
// challenger is instead chosen like the logistic C: each candidate of SmallGBMGrid is
// fitted on the earlier rows of the training window with early stopping on the latest
// innerValidation of them (by submission time), the candidate with the lowest
// validation log loss wins, and it is refitted on every training row for the number of
// rounds early stopping kept. Small leaves, many rows per leaf, short steps and an L2
// penalty on the leaf values keep the probabilities away from 0 and 1.

// SmallGBMCandidate is one point of SmallGBMGrid.
type SmallGBMCandidate struct {
	NumLeaves, MinDataInLeaf int
	LearningRate             float64
}

// SmallGBMGrid are the gbm-success candidates: 4 to 16 leaves of at least 20 or 60
// rows, steps of 0.05.
var SmallGBMGrid = []SmallGBMCandidate{
	{4, 20, 0.05}, {4, 60, 0.05},
	{8, 20, 0.05}, {8, 60, 0.05},
	{16, 20, 0.05}, {16, 60, 0.05},
}

// Fixed parameters of the small-table GBM: at most smallGBMMaxIterations rounds,
// stopping smallGBMEarlyStopping rounds after the best validation log loss; an L2
// penalty of smallGBMLambdaL2 on the leaf values. A table too small for an inner split
// (fewer than minInnerRows validation rows, or a part with one class) gets
// SmallGBMGrid[0] for smallGBMFallbackIterations rounds.
const (
	smallGBMMaxIterations      = 400
	smallGBMEarlyStopping      = 30
	smallGBMLambdaL2           = 1
	smallGBMFallbackIterations = 50
)

// GBMSelection is the outcome of choosing the gbm-success parameters on validation.
type GBMSelection struct {
	// Chosen is the winning candidate and Iterations the rounds early stopping kept (the
	// rounds of the refit on every row).
	Chosen     SmallGBMCandidate
	Iterations int
	// Losses are the validation log losses of SmallGBMGrid's candidates, nil for the
	// fallback.
	Losses []float64
}

// smallGBMConfig returns the gbm.Config of candidate c.
func smallGBMConfig(c SmallGBMCandidate, names []string, seed uint64) gbm.Config {
	return gbm.Config{
		Objective:          gbm.ObjectiveBinary,
		NumIterations:      smallGBMMaxIterations,
		LearningRate:       c.LearningRate,
		NumLeaves:          c.NumLeaves,
		MinDataInLeaf:      c.MinDataInLeaf,
		LambdaL2:           smallGBMLambdaL2,
		EarlyStoppingRound: smallGBMEarlyStopping,
		FeatureNames:       names,
		Seed:               seed,
	}
}

// SelectSmallGBM chooses the gbm-success parameters for t from SmallGBMGrid on the
// latest innerValidation of its rows in submission order (see the comment above
// SmallGBMCandidate); ties go to the earlier, simpler candidate. It is deterministic
// for a seed.
func SelectSmallGBM(ctx context.Context, t *features.Table, seed uint64) (GBMSelection, error) {
	t = timeOrdered(t)
	cuts := innerFoldCuts(t.NRows(), 1)
	if cuts == nil || unusable(t.Slice(0, cuts[0][0]), true) != "" || unusable(t.Slice(cuts[0][0], cuts[0][1]), true) != "" {
		return GBMSelection{Chosen: SmallGBMGrid[0], Iterations: smallGBMFallbackIterations}, nil
	}
	fitT, validT := t.Slice(0, cuts[0][0]), t.Slice(cuts[0][0], cuts[0][1])
	xf, err := design(fitT)
	if err != nil {
		return GBMSelection{}, err
	}
	xv, err := design(validT)
	if err != nil {
		return GBMSelection{}, err
	}
	sel := GBMSelection{Losses: make([]float64, len(SmallGBMGrid))}
	best := -1
	for i, c := range SmallGBMGrid {
		m, err := gbm.FitContext(ctx, xf, fitT.Y, nil, smallGBMConfig(c, t.Schema.Names, seed), &gbm.Validation{X: xv, Y: validT.Y})
		if err != nil {
			return GBMSelection{}, fmt.Errorf("training: choosing gbm-success parameters: candidate %d (%+v): %w", i, c, err)
		}
		sel.Losses[i] = eval.LogLoss(validT.Y, m.Predict(nil, xv))
		if best < 0 || sel.Losses[i] < sel.Losses[best] {
			best = i
			sel.Chosen, sel.Iterations = c, m.NTrees()
		}
	}
	return sel, nil
}

// fitSmallGBM fits the gbm-success challenger on every row of t with the parameters
// SelectSmallGBM chooses on t.
func fitSmallGBM(ctx context.Context, t *features.Table, seed uint64) (*gbm.Model, error) {
	x, err := design(t)
	if err != nil {
		return nil, err
	}
	sel, err := SelectSmallGBM(ctx, t, seed)
	if err != nil {
		return nil, err
	}
	c := smallGBMConfig(sel.Chosen, t.Schema.Names, seed)
	c.NumIterations, c.EarlyStoppingRound = max(1, sel.Iterations), 0
	m, err := gbm.FitContext(ctx, mat.Matrix(x), t.Y, nil, c, nil)
	if err != nil {
		return nil, fmt.Errorf("training: fitting success gbm on %d rows: %w", t.NRows(), err)
	}
	return m, nil
}
