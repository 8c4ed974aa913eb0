package replay

import (
	"context"
	"fmt"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/scoring"
)

// scorerProbs is a probability source from a bundle's scorer, computed once per world.
type scorerProbs struct {
	name   string
	psucc  []float64
	pconf  [][]float64
	mu, sd []float64
	family scoring.BuildFamily
}

func (p *scorerProbs) Name() string                     { return p.name }
func (p *scorerProbs) PSucc(i int) float64              { return p.psucc[i] }
func (p *scorerProbs) PConf(i, t int) float64           { return p.pconf[i][t] }
func (p *scorerProbs) BuildTime(i int) (m, s float64)   { return p.mu[i], p.sd[i] }
func (p *scorerProbs) BuildFamily() scoring.BuildFamily { return p.family }

// NewScorerProbs returns the probability source name whose P-succ, P-conf and build
// times come from sc, the scorer of a bundle, as predictd computes them from the raw
// attributes of the world's changes: P-succ from the change's success row at its
// submission (its speculation state from the history, features.Index), P-conf for every
// conflict edge from the pair of changes, and the build time of the change's first
// build on HEAD (no build of its own before, nothing pending on its path). The
// developer statistics and recency features are the bundle's frozen table, as in
// predictd: a bundle trained on a window that overlaps the replayed one has seen its
// outcomes. family is the finish-order family the plans use, the one predictd serves the
// bundle's build times with.
func NewScorerProbs(ctx context.Context, w *World, name string, sc *scoring.Scorer, family scoring.BuildFamily) (Probs, error) {
	ix, err := features.NewIndex(ctx, w.History)
	if err != nil {
		return nil, fmt.Errorf("replay: probs %s: %w", name, err)
	}
	n := len(w.Traffic.Changes)
	hc := func(i int) *datasets.Change { return &w.History.Changes[w.Index[i]] }
	succ := make([]scoring.SuccessInput, n)
	builds := make([]scoring.BuildInput, n)
	var pairs []scoring.PairInput
	for i := range n {
		succ[i] = scoring.SuccessInput{Change: hc(i), Spec: ix.SuccessSpeculation(w.Index[i])}
		builds[i] = scoring.BuildInput{Change: hc(i)}
		for _, k := range w.Traffic.Changes[i].Ahead {
			pairs = append(pairs, scoring.PairInput{Ahead: hc(k), Behind: hc(i)})
		}
	}
	p := &scorerProbs{name: name, family: family, pconf: make([][]float64, n), mu: make([]float64, n), sd: make([]float64, n)}
	p.psucc = sc.PredictSuccess(nil, succ)
	flat := sc.PredictConflict(nil, pairs)
	bt := sc.PredictBuildTime(nil, builds)
	for i := range n {
		na := len(w.Traffic.Changes[i].Ahead)
		p.pconf[i], flat = flat[:na:na], flat[na:]
		p.mu[i], p.sd[i] = bt[2*i], bt[2*i+1]
		switch {
		case !(p.psucc[i] >= 0 && p.psucc[i] <= 1):
			return nil, fmt.Errorf("replay: probs %s: change %s: P-succ %v", name, hc(i).ChangeID, p.psucc[i])
		case !(p.mu[i] > 0) || !(p.sd[i] >= 0):
			return nil, fmt.Errorf("replay: probs %s: change %s: build time (%v, %v)", name, hc(i).ChangeID, p.mu[i], p.sd[i])
		}
		for t, c := range p.pconf[i] {
			if !(c >= 0 && c <= 1) {
				return nil, fmt.Errorf("replay: probs %s: change %s: P-conf %v with change %s", name, hc(i).ChangeID, c, hc(w.Traffic.Changes[i].Ahead[t]).ChangeID)
			}
		}
	}
	return p, nil
}
