package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sqpredict/sqpredict/scoring"
)

// Probs gives a strategy its probabilities: P-succ, P-conf and the build time of the
// changes of a world, by traffic index.
type Probs interface {
	// Name is the source's name as given on the command line.
	Name() string
	// PSucc returns P-succ of change i.
	PSucc(i int) float64
	// PConf returns P-conf of edge t of change i (the change Ahead[t] ahead of it).
	PConf(i, t int) float64
	// BuildTime returns the combined build time (mean, standard deviation) of change i
	// in seconds.
	BuildTime(i int) (mu, sigma float64)
	// BuildFamily is the shape of the build times, which sets the finish-order math of
	// the plan (scoring.Change.BuildFamily): the world's true family for the truth and
	// the constant source (which uses the truth's build times), the model's family as
	// predictd serves it for a bundle.
	BuildFamily() scoring.BuildFamily
}

// trueProbs is the world's truth.
type trueProbs struct{ w *World }

func (p trueProbs) Name() string                     { return "truth" }
func (p trueProbs) PSucc(i int) float64              { return p.w.PSucc[i] }
func (p trueProbs) PConf(i, t int) float64           { return p.w.PConf[i][t] }
func (p trueProbs) BuildTime(i int) (m, s float64)   { return p.w.Mu[i], p.w.Sigma[i] }
func (p trueProbs) BuildFamily() scoring.BuildFamily { return p.w.Family }

// constProbs is one P-succ and one P-conf for everything; build times are the truth's.
type constProbs struct {
	w            *World
	name         string
	psucc, pconf float64
}

func (p constProbs) Name() string                     { return p.name }
func (p constProbs) PSucc(int) float64                { return p.psucc }
func (p constProbs) PConf(int, int) float64           { return p.pconf }
func (p constProbs) BuildTime(i int) (m, s float64)   { return p.w.Mu[i], p.w.Sigma[i] }
func (p constProbs) BuildFamily() scoring.BuildFamily { return p.w.Family }

// pconfProbs is the truth with the P-conf of another source: it measures what a
// P-conf model is worth to the queue with everything else known.
type pconfProbs struct {
	trueProbs
	name string
	src  Probs
}

func (p pconfProbs) Name() string           { return p.name }
func (p pconfProbs) PConf(i, t int) float64 { return p.src.PConf(i, t) }

// PConfFrom returns the source named name ("pconf:SRC") that gives the truth of w for
// P-succ and build times and src's P-conf, so that replays with the truth, with
// pconf:constant:P,C and with pconf:bundle:DIR isolate what the conflict model is worth.
func PConfFrom(w *World, name string, src Probs) Probs {
	return pconfProbs{trueProbs: trueProbs{w}, name: name, src: src}
}

// ParseProbs returns the source named by spec: "truth", "constant:PSUCC,PCONF" or
// "pconf:SRC" (the truth with SRC's P-conf, SRC itself parsed by ParseProbs). A bundle's
// source needs its loaded scorer: see NewScorerProbs.
func ParseProbs(w *World, spec string) (Probs, error) {
	switch {
	case strings.HasPrefix(spec, "pconf:"):
		src, err := ParseProbs(w, strings.TrimPrefix(spec, "pconf:"))
		if err != nil {
			return nil, err
		}
		return PConfFrom(w, spec, src), nil
	case spec == "truth":
		return trueProbs{w}, nil
	case strings.HasPrefix(spec, "constant:"):
		parts := strings.Split(strings.TrimPrefix(spec, "constant:"), ",")
		if len(parts) != 2 {
			return nil, fmt.Errorf("replay: probs %q: want constant:PSUCC,PCONF", spec)
		}
		var v [2]float64
		for k, s := range parts {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(x >= 0 && x <= 1) {
				return nil, fmt.Errorf("replay: probs %q: %q is not a probability", spec, s)
			}
			v[k] = x
		}
		return constProbs{w: w, name: spec, psucc: v[0], pconf: v[1]}, nil
	}
	if strings.HasPrefix(spec, "bundle:") {
		return nil, fmt.Errorf("replay: probs %q: a bundle source is built by the caller (NewScorerProbs; trainer replay loads bundle:DIR)", spec)
	}
	return nil, fmt.Errorf("replay: unknown probs %q (want truth, constant:PSUCC,PCONF, pconf:SRC or bundle:DIR)", spec)
}

// edgeIndex returns t with Ahead[t] = k for change i of w, or -1.
func edgeIndex(w *World, i, k int) int {
	t, ok := slices.BinarySearch(w.Traffic.Changes[i].Ahead, k)
	if !ok {
		return -1
	}
	return t
}
