package ngboost

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

// TestStepAndGradientsSameModel checks that moving the parameters and computing the
// next iteration's gradients in one pass (fuse) gives the model the two separate
// passes give, byte for byte, and the same training scores, and so does taking every
// weight as 1 without loading it (unitW) against loading the weights of 1: the Normal
// and the LogNormal, natural and ordinary gradients, on 1 and 2 threads, with enough
// rows (6000) that the row loops run in two halves.
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
			// The four runs: fused or not, weights loaded or taken as 1.
			var arts [4][]byte
			var scores [4][]float64
			for k := range 4 {
				b, err := newBooster(x, y, nil, nil, nil, nil, nil, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !b.fuse || !b.unitW {
					t.Fatalf("fuse %v and unitW %v, want both set for the log score on all unweighted rows", b.fuse, b.unitW)
				}
				b.fuse, b.unitW = k&1 == 0, k&2 == 0
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
			for k := 1; k < 4; k++ {
				if !bytes.Equal(arts[0], arts[k]) {
					t.Errorf("run %d (fuse %v, unitW %v): the artifact differs from the fused unit-weight one (%d and %d bytes)",
						k, k&1 == 0, k&2 == 0, len(arts[k]), len(arts[0]))
				}
				for i := range scores[0] {
					if i < len(scores[k]) && scores[0][i] != scores[k][i] {
						t.Errorf("run %d, iteration %d: training score %v, want %v", k, i, scores[k][i], scores[0][i])
					}
				}
			}
			for k := range scores {
				if len(scores[k]) != c.cfg.NEstimators {
					t.Fatalf("run %d: %d training scores, want %d", k, len(scores[k]), c.cfg.NEstimators)
				}
			}
			if !(scores[0][len(scores[0])-1] < scores[0][0]) {
				t.Errorf("training score did not fall: %v to %v", scores[0][0], scores[0][len(scores[0])-1])
			}
		})
	}
}

// TestUnitWeights checks that unitW is set only when every training weight is 1.
func TestUnitWeights(t *testing.T) {
	t.Parallel()
	x, y, _, _ := synth(rand.New(rand.NewPCG(8, 8)), 50, Normal)
	cfg, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ones, other := make([]float64, len(y)), make([]float64, len(y))
	for i := range ones {
		ones[i], other[i] = 1, 1
	}
	other[len(other)-1] = 2
	for _, c := range []struct {
		name string
		w    []float64
		want bool
	}{{"nil", nil, true}, {"ones", ones, true}, {"one weight of 2", other, false}} {
		b, err := newBooster(x, y, c.w, nil, nil, nil, nil, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if b.unitW != c.want {
			t.Errorf("%s: unitW %v, want %v", c.name, b.unitW, c.want)
		}
	}
}
