package replay

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/queue"
	"github.com/sqpredict/sqpredict/scoring"
)

// ErrInvalidWorld reports a history that cannot be replayed.
var ErrInvalidWorld = errors.New("replay: invalid world")

// World is traffic with its ground truth.
type World struct {
	// Name names the world in outputs (the repo).
	Name string
	// Synthetic reports a world with the whole truth (see the package documentation).
	Synthetic bool
	// History is the history the world comes from; Changes[i] of the traffic is
	// History.Changes[Index[i]].
	History *datasets.History
	Index   []int
	// Traffic is the replayed traffic with the history's arrival times.
	Traffic queue.Traffic
	// PConf[i][t] is the true conflict probability of the edge Traffic.Changes[i].Ahead[t].
	PConf [][]float64
	// Conflicted[i] lists the changes of Ahead[i] that conflict with i, ascending.
	Conflicted [][]int
	// Good[i] reports an intrinsically good change (synthetic) or a landed one (real).
	Good []bool
	// Lands[i] is the true outcome.
	Lands []bool
	// PSucc[i] is the true P-succ (synthetic) or 1/0 by the outcome (real).
	PSucc []float64
	// Mu and Sigma are the true mean and standard deviation of a change's build time on
	// HEAD, in seconds, and Family the shape of the distribution with those moments:
	// log-normal in a synthetic world (its DurationModel), Normal for a real history,
	// whose shape is not known (its replayed build times are constants).
	Mu, Sigma []float64
	Family    scoring.BuildFamily
	// Params are the synthetic world's parameters (zero for a real history), and Flaky its
	// infrastructure failure rate.
	Params synth.Params
	Flaky  float64
	// durM holds the real history's per-change build time (its observed mean).
	durM []float64
}

// FromSynth returns the world of a simulated synthetic world.
func FromSynth(w *synth.World) (*World, error) {
	return fromSynthetic(w.History, w.Params, w.Config.FlakyRate, w.Good)
}

// FromHistory returns the world of a history read from a folder. A history with a pairs
// table and true_p_success is synthetic: params must be its profile's parameters and
// flaky its flaky rate, and each change's intrinsic goodness is recovered from its
// builds (a change that landed, or has a succeeded build, is good; one with a failed
// build whose content holds no conflicting change is not; a change with neither, which
// only happens without culprit finding, is good iff a draw keyed by its index falls
// below true_p_success: its outcome does not depend on it, since it was rejected for a
// conflict). Otherwise the history is real (see the package documentation).
func FromHistory(h *datasets.History, params synth.Params, flaky float64) (*World, error) {
	if len(h.Pairs) > 0 && len(h.Changes) > 0 && !math.IsNaN(h.Changes[0].TrueProbSuccess) {
		if params.Name == "" {
			return nil, fmt.Errorf("%w: a synthetic history needs its profile", ErrInvalidWorld)
		}
		return fromSynthetic(h, params, flaky, nil)
	}
	return fromReal(h)
}

// idIndex maps change ids to indices of h.Changes.
func idIndex(h *datasets.History) (map[string]int, error) {
	m := make(map[string]int, len(h.Changes))
	for i, c := range h.Changes {
		if _, dup := m[c.ChangeID]; dup {
			return nil, fmt.Errorf("%w: change %s appears twice", ErrInvalidWorld, c.ChangeID)
		}
		m[c.ChangeID] = i
	}
	return m, nil
}

// order returns the indices of h.Changes with a known outcome sorted by submission (a
// stable sort, so ties keep the file's order).
func order(h *datasets.History) []int {
	var idx []int
	for i, c := range h.Changes {
		if c.Outcome != datasets.OutcomeUnknown {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return h.Changes[idx[a]].SubmittedAt.Before(h.Changes[idx[b]].SubmittedAt) })
	return idx
}

func newWorld(h *datasets.History, idx []int) *World {
	n := len(idx)
	w := &World{
		History: h, Index: idx,
		Traffic: queue.Traffic{Changes: make([]queue.Change, n)},
		PConf:   make([][]float64, n), Conflicted: make([][]int, n),
		Good: make([]bool, n), Lands: make([]bool, n), PSucc: make([]float64, n),
		Mu: make([]float64, n), Sigma: make([]float64, n),
	}
	if n > 0 {
		w.Name = h.Changes[idx[0]].Repo
	}
	var t0 = h.Changes[idx[0]].SubmittedAt
	for i, hi := range idx {
		c := &h.Changes[hi]
		w.Traffic.Changes[i] = queue.Change{ID: c.ChangeID, Arrival: c.SubmittedAt.Sub(t0).Seconds()}
	}
	return w
}

func fromSynthetic(h *datasets.History, p synth.Params, flaky float64, good []bool) (*World, error) {
	idx := order(h)
	if len(idx) == 0 {
		return nil, fmt.Errorf("%w: no decided change", ErrInvalidWorld)
	}
	w := newWorld(h, idx)
	w.Synthetic, w.Params, w.Flaky, w.Family = true, p, flaky, scoring.BuildLogNormal
	pos := make(map[string]int, len(idx))
	for i, hi := range idx {
		pos[h.Changes[hi].ChangeID] = i
	}
	type edge struct {
		k    int
		p    float64
		conf bool
	}
	edges := make([][]edge, len(idx))
	for r, pr := range h.Pairs {
		a, okA := pos[pr.AheadChangeID]
		b, okB := pos[pr.BehindChangeID]
		if !okA || !okB {
			continue // a change without an outcome
		}
		if a >= b {
			return nil, fmt.Errorf("%w: pairs row %d: ahead change %s is not ahead of %s", ErrInvalidWorld, r, pr.AheadChangeID, pr.BehindChangeID)
		}
		edges[b] = append(edges[b], edge{k: a, p: pr.TrueProbConflict, conf: pr.Conflicted})
	}
	for i, es := range edges {
		slices.SortFunc(es, func(x, y edge) int { return x.k - y.k })
		c := &w.Traffic.Changes[i]
		for t, e := range es {
			if t > 0 && es[t-1].k == e.k {
				return nil, fmt.Errorf("%w: pair (%s, %s) appears twice", ErrInvalidWorld, h.Changes[idx[e.k]].ChangeID, c.ID)
			}
			c.Ahead = append(c.Ahead, e.k)
			w.PConf[i] = append(w.PConf[i], e.p)
			if e.conf {
				w.Conflicted[i] = append(w.Conflicted[i], e.k)
			}
		}
		hc := &h.Changes[idx[i]]
		w.PSucc[i] = hc.TrueProbSuccess
		m, s := p.Duration.LogParams(hc, 0)
		w.Mu[i], w.Sigma[i] = synth.MeanSD(m, s)
		c.MeanBuild = w.Mu[i]
	}
	if good != nil {
		for i, hi := range idx {
			w.Good[i] = good[hi]
		}
	} else {
		w.recoverGood()
	}
	for i := range idx {
		w.Lands[i] = w.Good[i]
		for _, k := range w.Conflicted[i] {
			if w.Lands[k] {
				w.Lands[i] = false
				break
			}
		}
		want := h.Changes[idx[i]].Outcome == datasets.OutcomeLanded
		if w.Lands[i] != want {
			return nil, fmt.Errorf("%w: change %s: the truth says landed=%v, the history %v", ErrInvalidWorld, w.Traffic.Changes[i].ID, w.Lands[i], h.Changes[idx[i]].Outcome)
		}
	}
	return w, nil
}

// recoverGood fills Good from the builds (see FromHistory).
func (w *World) recoverGood() {
	h := w.History
	pos := make(map[string]int, len(w.Index))
	for i, hi := range w.Index {
		pos[h.Changes[hi].ChangeID] = i
	}
	const (
		unknown = iota
		isGood
		isBad
	)
	st := make([]int8, len(w.Index))
	for i, hi := range w.Index {
		if h.Changes[hi].Outcome == datasets.OutcomeLanded {
			st[i] = isGood
		}
	}
	for _, b := range h.Builds {
		i, ok := pos[b.ChangeID]
		if !ok || st[i] == isGood {
			continue
		}
		switch b.Status {
		case datasets.StatusSucceeded:
			st[i] = isGood
		case datasets.StatusFailed:
			clean := true
			for _, id := range b.Path {
				if k, ok := pos[id]; ok {
					if _, in := slices.BinarySearch(w.Conflicted[i], k); in {
						clean = false
						break
					}
				}
			}
			if clean {
				st[i] = isBad
			}
		}
	}
	for i := range w.Good {
		switch st[i] {
		case isGood:
			w.Good[i] = true
		case unknown:
			w.Good[i] = uniform(queue.Mix(uint64(i)^0xa5a5)) < w.PSucc[i]
		}
	}
}

func fromReal(h *datasets.History) (*World, error) {
	idx := order(h)
	if len(idx) == 0 {
		return nil, fmt.Errorf("%w: no decided change", ErrInvalidWorld)
	}
	w := newWorld(h, idx)
	pos := make(map[string]int, len(idx))
	for i, hi := range idx {
		pos[h.Changes[hi].ChangeID] = i
	}
	sum := make([]float64, len(idx))
	sq := make([]float64, len(idx))
	cnt := make([]int, len(idx))
	var all []float64
	for _, b := range h.Builds {
		i, ok := pos[b.ChangeID]
		if !ok || b.Status != datasets.StatusSucceeded && b.Status != datasets.StatusFailed || !(b.DurationS > 0) || math.IsInf(b.DurationS, 0) {
			continue
		}
		sum[i] += b.DurationS
		sq[i] += b.DurationS * b.DurationS
		cnt[i]++
		all = append(all, b.DurationS)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: no build with a duration", ErrInvalidWorld)
	}
	slices.Sort(all)
	med := queue.Quantile(all, 0.5)
	w.durM = make([]float64, len(idx))
	for i, hi := range idx {
		landed := h.Changes[hi].Outcome == datasets.OutcomeLanded
		w.Good[i], w.Lands[i] = landed, landed
		w.PSucc[i] = 0
		if landed {
			w.PSucc[i] = 1
		}
		w.Mu[i] = med
		if cnt[i] > 0 {
			w.Mu[i] = sum[i] / float64(cnt[i])
			w.Sigma[i] = math.Sqrt(math.Max(0, sq[i]/float64(cnt[i])-w.Mu[i]*w.Mu[i]))
		}
		w.durM[i] = math.Max(1, math.Round(w.Mu[i]))
		w.Traffic.Changes[i].MeanBuild = w.Mu[i]
	}
	w.realEdges()
	return w, nil
}

// realEdges adds an edge between two changes pending together in the history whose
// affected targets overlap, when the history lists affected targets.
func (w *World) realEdges() {
	h := w.History
	type iv struct {
		i          int
		from, till float64
		set        map[string]bool
	}
	var open []iv
	t0 := h.Changes[w.Index[0]].SubmittedAt
	for i, hi := range w.Index {
		c := &h.Changes[hi]
		if len(c.AffectedTargets) == 0 {
			continue
		}
		at := c.SubmittedAt.Sub(t0).Seconds()
		open = slices.DeleteFunc(open, func(x iv) bool { return x.till <= at })
		for _, x := range open {
			for _, tg := range c.AffectedTargets {
				if x.set[tg] {
					w.Traffic.Changes[i].Ahead = append(w.Traffic.Changes[i].Ahead, x.i)
					w.PConf[i] = append(w.PConf[i], 0)
					break
				}
			}
		}
		till := math.Inf(1)
		if !c.DecidedAt.IsZero() {
			till = c.DecidedAt.Sub(t0).Seconds()
		}
		set := make(map[string]bool, len(c.AffectedTargets))
		for _, tg := range c.AffectedTargets {
			set[tg] = true
		}
		open = append(open, iv{i: i, from: at, till: till, set: set})
	}
}

// Retime returns a copy of the traffic whose arrivals follow a Poisson process of rate
// changes per hour (paper 001 §8.1 replays the same changes at fixed rates), in the same
// order, drawn from seed; the first change arrives at 0.
func (w *World) Retime(rate float64, seed uint64) queue.Traffic {
	t := queue.Traffic{Changes: slices.Clone(w.Traffic.Changes)}
	at := 0.0
	for i := range t.Changes {
		if i > 0 {
			at += -math.Log(1-uniform(queue.Mix(seed^0x7e7e^uint64(i)*0x9e37))) * 3600 / rate
		}
		t.Changes[i].Arrival = math.Floor(at)
	}
	return t
}

// uniform maps a 64-bit key to [0, 1).
func uniform(x uint64) float64 { return float64(x>>11) / (1 << 53) }
