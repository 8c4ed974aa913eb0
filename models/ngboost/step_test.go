package ngboost

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

// TestStepAndGradientsSameModel checks that moving the parameters and computing the
// next iteration's gradients in one pass (fuse) gives the model the two separate
// passes give, byte for byte, and the same training scores: the Normal and the
// LogNormal, natural and ordinary gradients, on 1 and 2 threads, with enough rows
// (6000) that the row loops run in two halves.
func TestStepAndGradientsSameModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"normal", Config{Dist: Normal, NEstimators: 40, LearningRate: 0.1}},
		{"lognormal", Config{Dist: LogNormal, NEstimators: 40, LearningRate: 0.1}},
		{"normal ordinary 1 thread", Config{Dist: Normal, NEstimators: 40, LearningRate: 0.1, OrdinaryGradient: true, NumThreads: 1}},
		{"lognormal 2 threads", Config{Dist: LogNormal, NEstimators: 40, LearningRate: 0.1, NumThreads: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, y, _, _ := synth(rand.New(rand.NewPCG(7, 7)), 6000, c.cfg.Dist)
			cfg, err := c.cfg.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			var arts [2][]byte
			var scores [2][]float64
			for k, fuse := range []bool{true, false} {
				b, err := newBooster(x, y, nil, nil, nil, nil, nil, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !b.fuse {
					t.Fatal("fuse is not set for the log score on all rows")
				}
				b.fuse = fuse
				m, err := b.run(context.Background(), y, nil)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := m.WriteJSON(&buf); err != nil {
					t.Fatal(err)
				}
				arts[k], scores[k] = buf.Bytes(), m.info.TrainScore
			}
			if !bytes.Equal(arts[0], arts[1]) {
				t.Errorf("the artifacts with and without fuse differ (%d and %d bytes)", len(arts[0]), len(arts[1]))
			}
			if len(scores[0]) != c.cfg.NEstimators || len(scores[1]) != c.cfg.NEstimators {
				t.Fatalf("%d and %d training scores, want %d", len(scores[0]), len(scores[1]), c.cfg.NEstimators)
			}
			for i := range scores[0] {
				if scores[0][i] != scores[1][i] {
					t.Errorf("iteration %d: training score %v with fuse, %v without", i, scores[0][i], scores[1][i])
				}
			}
			if !(scores[0][len(scores[0])-1] < scores[0][0]) {
				t.Errorf("training score did not fall: %v to %v", scores[0][0], scores[0][len(scores[0])-1])
			}
		})
	}
}
