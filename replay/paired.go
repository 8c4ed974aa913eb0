package replay

import (
	"fmt"
	"slices"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/queue"
)

// Paired compares two probability sources on the same traffic: the same strategy,
// workers, rate, seeds and truth draws, so each change is a pair of observations.
type Paired struct {
	Strategy string  `json:"strategy"`
	Workers  int     `json:"workers"`
	Rate     float64 `json:"rate"`
	// A is the reference source and B the one compared; every difference is B − A.
	A string `json:"a"`
	B string `json:"b"`
	// Diffs maps builds_per_change, cpu_hours and turnaround_p50_s, _p95_s, _p99_s to
	// the paired bootstrap of B − A over the changes of every seed (resampling changes,
	// 95% percentile interval).
	Diffs map[string]eval.PairedDiff `json:"diffs"`
}

// pairedResamples is the number of bootstrap resamples of a paired comparison: each
// resample of a quantile sorts every row, so fewer than eval's default.
const pairedResamples = 400

// PairAll pairs, for every strategy, workers and rate, each source after the first with
// the first.
func PairAll(cells []*Cell, probs []string) ([]*Paired, error) {
	if len(probs) < 2 {
		return nil, nil
	}
	type key struct {
		s    string
		w    int
		rate float64
	}
	ref := map[key]*Cell{}
	for _, c := range cells {
		if c.Probs == probs[0] {
			ref[key{c.Strategy, c.Workers, c.Rate}] = c
		}
	}
	var out []*Paired
	for _, c := range cells {
		a := ref[key{c.Strategy, c.Workers, c.Rate}]
		if c.Probs == probs[0] || a == nil {
			continue
		}
		p, err := Pair(a, c)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Pair compares cell b with cell a, run for run (the same seeds in the same order).
func Pair(a, b *Cell) (*Paired, error) {
	if len(a.Runs) != len(b.Runs) {
		return nil, fmt.Errorf("replay: pair %s with %s: %d and %d runs", a.Probs, b.Probs, len(a.Runs), len(b.Runs))
	}
	var rows [2][3][]float64
	for r := range a.Runs {
		if a.Runs[r].Setting.Seed != b.Runs[r].Setting.Seed || len(a.Runs[r].PerChange[0]) != len(b.Runs[r].PerChange[0]) {
			return nil, fmt.Errorf("replay: pair %s with %s: run %d differs in seed or traffic", a.Probs, b.Probs, r)
		}
		for m := range 3 {
			rows[0][m] = append(rows[0][m], a.Runs[r].PerChange[m]...)
			rows[1][m] = append(rows[1][m], b.Runs[r].PerChange[m]...)
		}
	}
	n := len(rows[0][0])
	seeds := float64(len(a.Runs))
	p := &Paired{Strategy: a.Strategy, Workers: a.Workers, Rate: a.Rate, A: a.Probs, B: b.Probs, Diffs: map[string]eval.PairedDiff{}}
	cfg := eval.BootstrapConfig{Resamples: pairedResamples, Seed: 1}
	sum := func(x []float64, rows []int) float64 {
		s := 0.0
		for _, i := range rows {
			s += x[i]
		}
		return s
	}
	var buf []float64
	quant := func(x []float64, rows []int, q float64) float64 {
		buf = buf[:0]
		for _, i := range rows {
			buf = append(buf, x[i])
		}
		slices.Sort(buf)
		return queue.Quantile(buf, q)
	}
	// Each metric is computed from one column of per-change values on the rows drawn.
	metrics := []struct {
		name string
		col  int
		f    func(x []float64, rows []int) float64
	}{
		{"builds_per_change", 1, func(x []float64, r []int) float64 { return sum(x, r) / float64(len(r)) }},
		{"cpu_hours", 2, func(x []float64, r []int) float64 { return sum(x, r) / 3600 / seeds }},
		{"turnaround_p50_s", 0, func(x []float64, r []int) float64 { return quant(x, r, 0.5) }},
		{"turnaround_p95_s", 0, func(x []float64, r []int) float64 { return quant(x, r, 0.95) }},
		{"turnaround_p99_s", 0, func(x []float64, r []int) float64 { return quant(x, r, 0.99) }},
	}
	for _, m := range metrics {
		xa, xb := rows[0][m.col], rows[1][m.col]
		d, err := eval.PairedBootstrapFunc(n, func(r []int) (float64, float64) {
			return m.f(xa, r), m.f(xb, r)
		}, eval.LowerIsBetter, cfg)
		if err != nil {
			return nil, fmt.Errorf("replay: pair %s with %s, %s: %w", a.Probs, b.Probs, m.name, err)
		}
		p.Diffs[m.name] = d
	}
	return p, nil
}
