package training

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
)

// Aborted builds as right-censored durations (issue 12 item 4). The build-time table
// holds succeeded and failed builds only; an aborted build (a speculation the queue
// gave up) ran at least its recorded duration_s, and the long builds are the ones most
// often aborted, so dropping them biases every duration model towards short builds.
// The trainer gives the NGBoost models the aborted builds too, as right-censored rows
// (ngboost.FitCensored: the log survival instead of the log density), unless
// NGBoostParams.DropAborted. Their features are those of a build-time row, from the
// same point-in-time index; they take part in fitting only, never in the metrics,
// which score the durations of the builds that finished.

// abortedTable returns a build-time table of the aborted builds of ix's history with a
// recorded duration (finite, >= 0), in submission order of their changes: the Y of a
// row is a lower bound of its build's duration. Its rows end with the history's extra
// attributes, as the complete table's do (ix.Schema), so that the two merge into one
// design matrix. Truth columns are kept as the complete table keeps them.
func abortedTable(ctx context.Context, ix *features.Index, h *datasets.History) (*features.Table, error) {
	t := &features.Table{Schema: ix.Schema(features.KindBuildTime), Skipped: map[string]int{}}
	extra := ix.Extra()
	change := make(map[string]int, len(h.Changes))
	for i := range h.Changes {
		change[h.Changes[i].ChangeID] = i
	}
	var rows []int // build indices
	for bi := range h.Builds {
		b := &h.Builds[bi]
		if b.Status != datasets.StatusAborted || !(b.DurationS >= 0) || math.IsInf(b.DurationS, 1) {
			continue
		}
		if _, ok := change[b.ChangeID]; ok {
			rows = append(rows, bi)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int {
		return h.Changes[change[h.Builds[a].ChangeID]].SubmittedAt.Compare(h.Changes[change[h.Builds[b].ChangeID]].SubmittedAt)
	})
	mu, sigma := make([]float64, 0, len(rows)), make([]float64, 0, len(rows))
	hasTruth := false
	row := make([]float64, t.Schema.NFeatures())
	for k, bi := range rows {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("training: aborted build rows: %w", err)
			}
		}
		b := &h.Builds[bi]
		ci := change[b.ChangeID]
		c := &h.Changes[ci]
		features.BuildTime(row[:features.NBuildTime], c, ix.Speculation(bi), ix.DevStats(ci), ix.Recent(ci))
		features.Extra(row[features.NBuildTime:], c, extra)
		t.X = append(t.X, row...)
		t.Y = append(t.Y, b.DurationS)
		t.ChangeID = append(t.ChangeID, c.ChangeID)
		t.BuildID = append(t.BuildID, b.BuildID)
		t.SubmittedAt = append(t.SubmittedAt, c.SubmittedAt)
		mu, sigma = append(mu, b.TrueMuS), append(sigma, b.TrueSigmaS)
		hasTruth = hasTruth || !math.IsNaN(b.TrueMuS) || !math.IsNaN(b.TrueSigmaS)
	}
	t.Considered = len(rows)
	if hasTruth {
		t.Truth = []features.Truth{{Name: "true_mu_s", Values: mu}, {Name: "true_sigma_s", Values: sigma}}
	}
	return t, nil
}

// censoredDesign returns the rows of the complete build-time table t and of the aborted
// table a (nil or empty for none) merged in submission order, t's row first at equal
// times, as one matrix, the targets and the censoring flags (nil when a has no rows):
// the input of ngboost.FitCensored, whose early stopping holds out the latest rows.
func censoredDesign(t, a *features.Table) (x *mat.Dense, y []float64, cens []bool, err error) {
	if t.NRows() == 0 {
		return nil, nil, nil, fmt.Errorf("%w: no %s rows to fit on", ErrNoData, t.Schema.Kind)
	}
	if a == nil || a.NRows() == 0 {
		return t.Dense(), slices.Clone(t.Y), nil, nil
	}
	nf := t.Schema.NFeatures()
	if !slices.Equal(a.Schema.Names, t.Schema.Names) {
		return nil, nil, nil, fmt.Errorf("training: the aborted build rows have %d columns, the build-time rows %d: their schemas differ", a.Schema.NFeatures(), nf)
	}
	n := t.NRows() + a.NRows()
	x = mat.NewDense(n, nf, nil)
	y = make([]float64, 0, n)
	cens = make([]bool, 0, n)
	i, j := 0, 0
	for r := range n {
		if j >= a.NRows() || i < t.NRows() && !a.SubmittedAt[j].Before(t.SubmittedAt[i]) {
			x.SetRow(r, t.Row(i))
			y, cens = append(y, t.Y[i]), append(cens, false)
			i++
			continue
		}
		x.SetRow(r, a.Row(j))
		y, cens = append(y, a.Y[j]), append(cens, true)
		j++
	}
	return x, y, cens, nil
}
