package replay

import (
	"context"
	"fmt"

	"github.com/sqpredict/sqpredict/queue"
	"github.com/sqpredict/sqpredict/scoring"
)

// Strategies lists the strategy names NewStrategy accepts.
var Strategies = []string{"oracle", "oracle-bypass", "single", "optimistic", "speculate-all", "sq2019", "sq2024", "expected", "batch"}

// NewStrategy returns the strategy st.Strategy for world w with probabilities probs;
// st.Threshold is the speculation threshold of sq2024 and expected (paper 000 §VIII;
// sq2019 has none), st.KeepMargin the keep margin of sq2019, sq2024 and expected, and
// st.BatchSize the batch size of batch.
func NewStrategy(w *World, probs Probs, st Setting) (queue.Strategy, error) {
	name, threshold := st.Strategy, st.Threshold
	switch name {
	case "oracle":
		return NewOracle(w), nil
	case "oracle-bypass":
		return NewOracleBypass(w), nil
	case "single":
		return NewSingle(), nil
	case "optimistic":
		return NewOptimistic(), nil
	case "speculate-all":
		half := constProbs{w: w, name: "constant:0.5,0", psucc: 0.5}
		return NewSpeculative(name, w, half, scoring.Config{Policy: scoring.PolicySQ2019}), nil
	case "sq2019":
		return st.learning(NewSpeculative(name, w, probs, scoring.Config{Policy: scoring.PolicySQ2019, KeepMargin: st.KeepMargin})), nil
	case "sq2024":
		return st.learning(NewSpeculative(name, w, probs, scoring.Config{Policy: scoring.PolicySQ2024, SpeculationThreshold: threshold, KeepMargin: st.KeepMargin})), nil
	case "expected":
		return st.learning(NewSpeculative(name, w, probs, scoring.Config{Policy: scoring.PolicyExpected, SpeculationThreshold: threshold, KeepMargin: st.KeepMargin})), nil
	case "batch":
		n := len(w.Traffic.Changes)
		switch b := st.BatchSize; {
		case b == 0:
			return NewBatch(n, DefaultBatchSize), nil
		case b == BatchAuto:
			return NewBatchAuto(n, probs, scoring.DefaultMaxBatchSize), nil
		case b > 0:
			return NewBatch(n, b), nil
		}
		return nil, fmt.Errorf("replay: batch size %d, want at least 1 or BatchAuto", st.BatchSize)
	}
	return nil, fmt.Errorf("replay: unknown strategy %q (want one of %v)", name, Strategies)
}

// Setting is one configuration of a replay.
type Setting struct {
	// Strategy is a name of Strategies; Probs a source for ParseProbs.
	Strategy, Probs string
	// Workers is the pool size.
	Workers int
	// Rate, when positive, re-times the arrivals to that many changes per hour (see
	// World.Retime); zero keeps the history's times.
	Rate float64
	// Threshold is the speculation threshold of sq2024 and expected.
	Threshold float64
	// KeepMargin is scoring.Config.KeepMargin of sq2019, sq2024 and expected: a
	// running build is kept unless a new node is more than KeepMargin times as likely
	// to be needed. Zero aborts every running build the plan does not select.
	KeepMargin float64
	// NoLearning turns off what sq2019, sq2024 and expected learn from their finished
	// builds (Speculative.Learn): they then plan with the source's probabilities at
	// submission all along.
	NoLearning bool
	// BatchSize is the batch size of batch: 0 means DefaultBatchSize and BatchAuto a
	// size chosen for each batch from the probabilities.
	BatchSize int
	// Seed keys the draws of the truth and of the re-timed arrivals.
	Seed uint64
}

// learning returns s learning from its finished builds unless st.NoLearning.
func (st Setting) learning(s *Speculative) *Speculative {
	if st.NoLearning {
		return s
	}
	return s.Learn()
}

// Run replays w under setting st. probs, when not nil, overrides st.Probs (a source the
// caller built, such as a bundle). progress may be nil.
func Run(ctx context.Context, w *World, st Setting, probs Probs, progress func(float64)) (*queue.Result, error) {
	if probs == nil {
		var err error
		if probs, err = ParseProbs(w, st.Probs); err != nil {
			return nil, err
		}
	}
	s, err := NewStrategy(w, probs, st)
	if err != nil {
		return nil, err
	}
	tr := &w.Traffic
	if st.Rate > 0 {
		r := w.Retime(st.Rate, st.Seed)
		tr = &r
	}
	res, err := queue.Run(ctx, tr, w.Truth(st.Seed), s, queue.Config{Workers: st.Workers, Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("replay: %s with %s, %d workers, seed %d: %w", st.Strategy, probs.Name(), st.Workers, st.Seed, err)
	}
	return res, nil
}
