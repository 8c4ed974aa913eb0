package training

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/modelset"
)

// The baselines: the estimates a merge queue has without sqpredict (see
// modelset.Baseline, which holds, reads and writes them). Training fits them.
const (
	BaselinePassRate      = modelset.BaselinePassRate
	BaselineLastOutcome   = modelset.BaselineLastOutcome
	BaselineConstantRate  = modelset.BaselineConstantRate
	BaselineZuulMean10    = modelset.BaselineZuulMean10
	BaselineRepoLogNormal = modelset.BaselineRepoLogNormal
)

// RecentBuilds is the number of latest training builds BaselineRepoLogNormal is fitted
// on.
const RecentBuilds = 100

// BaselineVersion is the format version of a baseline's JSON file.
const BaselineVersion = modelset.BaselineVersion

// minLogSigma bounds the log-scale deviation of the build-time baselines from below.
const minLogSigma = modelset.MinLogSigma

// Baselines lists the baseline names of each row kind, in the order reports show them.
var Baselines = modelset.Baselines

// Baseline is a fitted baseline model of one row kind (modelset.Baseline).
type Baseline = modelset.Baseline

// ReadBaseline reads a baseline written by Baseline.WriteJSON (modelset.ReadBaseline).
func ReadBaseline(r io.Reader) (*Baseline, error) { return modelset.ReadBaseline(r) }

// baselineKind maps every baseline name to its row kind.
var baselineKind = func() map[string]features.Kind {
	m := map[string]features.Kind{}
	for _, name := range modelset.BaselineNames() {
		m[name], _ = modelset.BaselineKind(name)
	}
	return m
}()

// baselineFile returns the bundle file name of a baseline: baseline.<name>.json.
func baselineFile(name string) string { return modelset.BaselineFile(name) }

// baselineNames returns every baseline name, sorted.
func baselineNames() []string { return modelset.BaselineNames() }

// FitBaseline fits the named baseline on the rows of t, which must be of the baseline's
// kind and have at least one row. Rows are in submission order, which
// BaselineRepoLogNormal relies on to take the latest ones.
func FitBaseline(name string, t *features.Table) (*Baseline, error) {
	kind, ok := modelset.BaselineKind(name)
	if !ok {
		return nil, fmt.Errorf("%w: unknown baseline %q", ErrConfig, name)
	}
	col := -1
	if c := modelset.BaselineColumn(name); c != "" {
		if col = slices.Index(t.Schema.Names, c); col < 0 {
			return nil, fmt.Errorf("%w: baseline %s: the %s schema has no column %s", ErrBundle, name, kind, c)
		}
	}
	if t.Schema.Kind != kind {
		return nil, fmt.Errorf("%w: baseline %s is of %s rows, not %s", ErrConfig, name, kind, t.Schema.Kind)
	}
	if t.NRows() == 0 {
		return nil, fmt.Errorf("%w: baseline %s: no %s rows", ErrNoData, name, t.Schema.Kind)
	}
	rate := func(rows []int, prior, weight float64) float64 {
		k := 0.0
		for _, r := range rows {
			k += t.Y[r]
		}
		return (k + weight*prior) / (float64(len(rows)) + weight)
	}
	all := make([]int, t.NRows())
	for r := range all {
		all[r] = r
	}
	var p modelset.BaselineParams
	switch name {
	case BaselinePassRate, BaselineConstantRate:
		p.P = rate(all, 0.5, 2)
	case BaselineLastOutcome:
		prior := rate(all, 0.5, 2)
		var ok, failed, none []int
		for r := range all {
			switch v := t.Row(r)[col]; {
			case v == 0:
				ok = append(ok, r)
			case v == 1:
				failed = append(failed, r)
			default:
				none = append(none, r)
			}
		}
		p.PLastSucceeded, p.PLastFailed, p.P = rate(ok, prior, 2), rate(failed, prior, 2), rate(none, prior, 2)
	case BaselineRepoLogNormal, BaselineZuulMean10:
		lo := max(0, t.NRows()-RecentBuilds)
		logs := make([]float64, 0, t.NRows()-lo)
		for _, y := range t.Y[lo:] {
			logs = append(logs, math.Log(max(y, MinDuration)))
		}
		p.Mu, p.Sigma = meanSD(logs)
		if name == BaselineZuulMean10 {
			var rel []float64
			for r, y := range t.Y {
				if est := math.Expm1(t.Row(r)[col]); est > 0 {
					rel = append(rel, math.Log(max(y, MinDuration))-math.Log(est))
				}
			}
			_, p.RelSigma = meanSD(rel)
		}
	}
	b, err := modelset.NewBaseline(name, t.Schema.Names, p)
	if err != nil {
		return nil, fmt.Errorf("training: fitting baseline %s: %w", name, err)
	}
	return b, nil
}

// meanSD returns the mean and standard deviation (divisor n) of v, the deviation at
// least minLogSigma; (0, minLogSigma) for no values.
func meanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return 0, minLogSigma
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, max(math.Sqrt(sd/float64(len(v))), minLogSigma)
}
