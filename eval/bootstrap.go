package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Errors of the paired bootstrap; they are wrapped with the offending row, resample or
// config field.
var (
	// ErrNoRows is a comparison over no rows.
	ErrNoRows = errors.New("eval: no rows")
	// ErrNotFinite is a per-row loss or a metric value that is NaN or ±Inf.
	ErrNotFinite = errors.New("eval: value not finite")
	// ErrBootstrapConfig is a BootstrapConfig field out of range.
	ErrBootstrapConfig = errors.New("eval: invalid bootstrap config")
)

// DefaultResamples is the number of bootstrap resamples when BootstrapConfig.Resamples
// is zero. With 1000 resamples the Monte Carlo error of a 95% percentile bound is about
// a tenth of the metric's standard error.
const DefaultResamples = 1000

// DefaultLevel is the probability of the bootstrap interval when BootstrapConfig.Level
// is zero.
const DefaultLevel = 0.95

// Direction says which way a metric improves.
type Direction int

const (
	// LowerIsBetter is the direction of losses: log loss, Brier, NLL, CRPS, MAPE, ECE.
	LowerIsBetter Direction = iota
	// HigherIsBetter is the direction of scores: accuracy, AUC, recall.
	HigherIsBetter
)

// String returns "lower" or "higher".
func (d Direction) String() string {
	switch d {
	case LowerIsBetter:
		return "lower"
	case HigherIsBetter:
		return "higher"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// BootstrapConfig sets up a paired bootstrap. The zero value is the default: 1000
// resamples, a 95% interval, seed 0.
type BootstrapConfig struct {
	// Resamples is the number B of resamples; zero means DefaultResamples.
	Resamples int
	// Level is the probability of the central percentile interval, in (0, 1); zero means
	// DefaultLevel.
	Level float64
	// Seed seeds the PCG generator as rand.NewPCG(Seed, Seed); zero is a valid seed.
	// The same seed, rows and metric give the same result.
	Seed uint64
}

func (c BootstrapConfig) validate() error {
	if c.Resamples < 0 {
		return fmt.Errorf("%w: Resamples %d is negative", ErrBootstrapConfig, c.Resamples)
	}
	if c.Level != 0 && !(c.Level > 0 && c.Level < 1) {
		return fmt.Errorf("%w: Level %v not in (0, 1)", ErrBootstrapConfig, c.Level)
	}
	return nil
}

func (c BootstrapConfig) withDefaults() BootstrapConfig {
	if c.Resamples == 0 {
		c.Resamples = DefaultResamples
	}
	if c.Level == 0 {
		c.Level = DefaultLevel
	}
	return c
}

// PairedDiff is the result of a paired bootstrap comparison of model B against model A
// on the same rows.
type PairedDiff struct {
	// N is the number of rows.
	N int `json:"n"`
	// A and B are the metric of each model on all rows.
	A float64 `json:"a"`
	B float64 `json:"b"`
	// Diff is B - A on all rows.
	Diff float64 `json:"diff"`
	// Lo and Hi bound the central percentile interval of B - A over the resamples, at
	// probability Level (linear interpolation between order statistics).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// PBetter is the share of resamples in which B is strictly better than A in the
	// metric's Direction; ties count as not better.
	PBetter float64 `json:"p_better"`
	// Level and Resamples are the interval probability and the number of resamples used.
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples"`
}

// Significant reports whether the interval excludes zero.
func (d PairedDiff) Significant() bool { return d.Lo > 0 || d.Hi < 0 }

// PairedBootstrapMean compares two models by a metric that is the mean of per-row
// losses (or scores): log loss, Brier, accuracy (0/1 per row), NLL, CRPS, absolute
// percentage error, interval coverage (0/1 per row). lossA[i] and lossB[i] are the
// values of models A and B on row i. Each resample draws n rows with replacement and
// takes the mean of lossB - lossA over them; the draws are those of PairedBootstrapFunc
// with the same config, so both give the same interval up to rounding.
//
// It returns an error wrapping ErrNoRows for empty input, ErrNotFinite naming the first
// NaN or infinite loss, or ErrBootstrapConfig. It panics if the lengths differ.
func PairedBootstrapMean(lossA, lossB []float64, better Direction, cfg BootstrapConfig) (PairedDiff, error) {
	if len(lossA) != len(lossB) {
		panic("eval: PairedBootstrapMean: length mismatch")
	}
	mustDirection(better)
	if err := cfg.validate(); err != nil {
		return PairedDiff{}, err
	}
	cfg = cfg.withDefaults()
	n := len(lossA)
	if n == 0 {
		return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: %w", ErrNoRows)
	}
	d := make([]float64, n)
	var sumA, sumB float64
	for i := range n {
		a, b := lossA[i], lossB[i]
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: row %d of model A is %v: %w", i, a, ErrNotFinite)
		}
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: row %d of model B is %v: %w", i, b, ErrNotFinite)
		}
		sumA += a
		sumB += b
		d[i] = b - a
	}
	res := PairedDiff{N: n, A: sumA / float64(n), B: sumB / float64(n)}
	res.Diff = res.B - res.A

	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed))
	diffs := make([]float64, cfg.Resamples)
	for r := range diffs {
		var s float64
		for range n {
			s += d[rng.IntN(n)]
		}
		diffs[r] = s / float64(n)
	}
	res.summarise(diffs, better, cfg)
	return res, nil
}

// PairedBootstrap compares two models by a metric of predictions and targets, such as
// ROCAUC, Brier or RMSE: metric(y, pred) is evaluated on each resample's rows for predA
// and for predB. Use it for metrics that are not a mean over rows (AUC, average
// precision, ECE, RMSE); for means PairedBootstrapMean is faster. metric must not keep
// or modify its arguments, which are reused between calls.
//
// It returns the errors of PairedBootstrapFunc and panics if the lengths differ.
func PairedBootstrap(y, predA, predB []float64, metric func(y, pred []float64) float64, better Direction, cfg BootstrapConfig) (PairedDiff, error) {
	if len(y) != len(predA) || len(y) != len(predB) {
		panic("eval: PairedBootstrap: length mismatch")
	}
	n := len(y)
	ys := make([]float64, n)
	pa := make([]float64, n)
	pb := make([]float64, n)
	return PairedBootstrapFunc(n, func(rows []int) (a, b float64) {
		for i, r := range rows {
			ys[i], pa[i], pb[i] = y[r], predA[r], predB[r]
		}
		return metric(ys, pa), metric(ys, pb)
	}, better, cfg)
}

// PairedBootstrapAUC is PairedBootstrap with ROCAUC, computed in O(n) per resample:
// each model's rows are sorted by probability once, and a resample weighs every row by
// the number of times it was drawn. It draws the same rows as PairedBootstrap with the
// same config, so both give the same result up to rounding, and is faster by about the
// factor log n that ROCAUC's sort costs.
//
// It returns an error wrapping ErrLabel or ErrProbability for a bad row (CheckBinary),
// and the errors of PairedBootstrapFunc; it panics if the lengths differ.
func PairedBootstrapAUC(y, predA, predB []float64, cfg BootstrapConfig) (PairedDiff, error) {
	if len(y) != len(predA) || len(y) != len(predB) {
		panic("eval: PairedBootstrapAUC: length mismatch")
	}
	if err := CheckBinary(y, predA); err != nil {
		return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: model A: %w", err)
	}
	if err := CheckBinary(y, predB); err != nil {
		return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: model B: %w", err)
	}
	orderA, orderB := sortedByP(predA), sortedByP(predB)
	w := make([]float64, len(y))
	return PairedBootstrapFunc(len(y), func(rows []int) (a, b float64) {
		clear(w)
		for _, r := range rows {
			w[r]++
		}
		return weightedAUC(y, predA, orderA, w), weightedAUC(y, predB, orderB, w)
	}, HigherIsBetter, cfg)
}

// weightedAUC is ROCAUC with row i counted w[i] times: the weighted share of
// (y = 1, y = 0) pairs in which the y = 1 row has the higher p, ties counting one half.
// order lists the rows by increasing p. It is NaN unless both classes have weight.
func weightedAUC(y, p []float64, order []int, w []float64) float64 {
	var below0, pairs, w1 float64 // y = 0 weight at lower p; pairs won; y = 1 weight
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && p[order[hi]] == p[order[lo]] {
			hi++
		}
		var g0, g1 float64
		for _, i := range order[lo:hi] {
			if y[i] == 1 {
				g1 += w[i]
			} else {
				g0 += w[i]
			}
		}
		pairs += g1 * (below0 + g0/2)
		below0 += g0
		w1 += g1
		lo = hi
	}
	if w1 == 0 || below0 == 0 {
		return math.NaN()
	}
	return pairs / (w1 * below0)
}

// PairedBootstrapFunc is the general paired bootstrap over n rows: metric(rows) returns
// the metric of model A and of model B on the rows listed (with repeats), in any way
// the caller likes, for example over several prediction columns. It is called once
// with rows 0..n-1 for the observed values, then once per resample with n rows drawn
// uniformly with replacement from a PCG generator seeded by cfg.Seed. metric must not
// keep or modify rows.
//
// It returns an error wrapping ErrNoRows for n = 0, ErrNotFinite when a metric value is
// NaN or infinite (naming the resample; AUC, for one, is NaN on a resample with a single
// class, which needs more rows), or ErrBootstrapConfig.
func PairedBootstrapFunc(n int, metric func(rows []int) (a, b float64), better Direction, cfg BootstrapConfig) (PairedDiff, error) {
	if n < 0 {
		panic("eval: PairedBootstrapFunc: negative n")
	}
	mustDirection(better)
	if err := cfg.validate(); err != nil {
		return PairedDiff{}, err
	}
	cfg = cfg.withDefaults()
	if n == 0 {
		return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: %w", ErrNoRows)
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	a, b := metric(rows)
	if err := checkPair(a, b); err != nil {
		return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: all rows: %w", err)
	}
	res := PairedDiff{N: n, A: a, B: b, Diff: b - a}

	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed))
	diffs := make([]float64, cfg.Resamples)
	for r := range diffs {
		for i := range rows {
			rows[i] = rng.IntN(n)
		}
		a, b := metric(rows)
		if err := checkPair(a, b); err != nil {
			return PairedDiff{}, fmt.Errorf("eval: paired bootstrap: resample %d: %w", r, err)
		}
		diffs[r] = b - a
	}
	res.summarise(diffs, better, cfg)
	return res, nil
}

func mustDirection(d Direction) {
	if d != LowerIsBetter && d != HigherIsBetter {
		panic("eval: unknown Direction")
	}
}

func checkPair(a, b float64) error {
	if math.IsNaN(a) || math.IsInf(a, 0) {
		return fmt.Errorf("metric of model A is %v: %w", a, ErrNotFinite)
	}
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return fmt.Errorf("metric of model B is %v: %w", b, ErrNotFinite)
	}
	return nil
}

// summarise fills the interval and PBetter from the resampled differences, which it
// sorts in place.
func (d *PairedDiff) summarise(diffs []float64, better Direction, cfg BootstrapConfig) {
	var wins int
	for _, x := range diffs {
		if (better == HigherIsBetter && x > 0) || (better == LowerIsBetter && x < 0) {
			wins++
		}
	}
	slices.Sort(diffs)
	alpha := (1 - cfg.Level) / 2
	d.Lo = stat.Quantile(alpha, stat.LinInterp, diffs, nil)
	d.Hi = stat.Quantile(1-alpha, stat.LinInterp, diffs, nil)
	d.PBetter = float64(wins) / float64(len(diffs))
	d.Level = cfg.Level
	d.Resamples = cfg.Resamples
}
