package features

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"gonum.org/v1/gonum/mat"
)

// Truth is a ground-truth column of a synthetic history, aligned with a table's rows.
type Truth struct {
	Name   string    // true_p_success, true_p_conflict, true_conflicted, true_mu_s or true_sigma_s
	Values []float64 // NaN where the history has no truth for the row
}

// Table is the feature matrix of one row kind, with its labels (or targets), row keys and
// any ground truth. Rows are in queue order of the change they belong to (the behind
// change for pairs), so SubmittedAt is non-decreasing and a time split is a cut.
type Table struct {
	Schema Schema
	// X holds the features row-major: row r is X[r*NFeatures : (r+1)*NFeatures].
	X []float64
	// Y is the label (success, conflict: 0 or 1) or target (build time: duration_s) of
	// each row; Schema.Kind.LabelName names its column.
	Y []float64
	// Truth holds the ground-truth columns the history has for this kind (none for real
	// histories).
	Truth []Truth
	// ChangeID is the change each row belongs to: the change (success), the behind
	// change (conflict) or the change the build decides (build time).
	ChangeID []string
	// AheadID is the ahead change of each conflict row; nil for the other kinds.
	AheadID []string
	// BuildID is the build of each build-time row, or, for each success row, the build
	// that settles its label: the change's first succeeded decisive build (label 1) or
	// its first decisive build failed on the empty path (label 0), first in order of
	// finish. It is a pointer to the evidence only: a success row's features are those
	// of the change's submission, not of this build. nil for conflicts.
	BuildID []string
	// SubmittedAt is the submission time of the change in ChangeID: the time the row's
	// point-in-time features are taken at, and the key to split on by time.
	SubmittedAt []time.Time
	// Considered is the number of candidate rows looked at: decided and undecided
	// changes (success), candidate pairs including those skipped (conflict), builds
	// (build time). Considered = NRows() + the sum of Skipped.
	Considered int
	// Skipped counts the candidates that did not become rows, by reason (the Skip
	// constants).
	Skipped map[string]int
}

// NRows returns the number of rows.
func (t *Table) NRows() int { return len(t.Y) }

// Row returns row r of X, sharing its storage.
func (t *Table) Row(r int) []float64 {
	n := t.Schema.NFeatures()
	return t.X[r*n : (r+1)*n : (r+1)*n]
}

// Dense returns X as a matrix sharing its storage, or nil when the table has no rows
// (a gonum matrix cannot be empty).
func (t *Table) Dense() *mat.Dense {
	if t.NRows() == 0 {
		return nil
	}
	return mat.NewDense(t.NRows(), t.Schema.NFeatures(), t.X)
}

// Cut returns the index of the first row submitted at or after at: rows [0, Cut(at))
// were submitted before at. With Slice it splits a table by time.
func (t *Table) Cut(at time.Time) int {
	return sort.Search(len(t.SubmittedAt), func(r int) bool { return !t.SubmittedAt[r].Before(at) })
}

// Slice returns rows [i, j) of t as a table sharing t's storage, with Considered and
// Skipped left zero (they describe the whole table). It panics if the bounds are out of
// range.
func (t *Table) Slice(i, j int) *Table {
	if i < 0 || j < i || j > t.NRows() {
		panic("features: slice bounds out of range")
	}
	n := t.Schema.NFeatures()
	s := &Table{
		Schema:      t.Schema,
		X:           t.X[i*n : j*n : j*n],
		Y:           t.Y[i:j:j],
		ChangeID:    t.ChangeID[i:j:j],
		SubmittedAt: t.SubmittedAt[i:j:j],
	}
	if t.AheadID != nil {
		s.AheadID = t.AheadID[i:j:j]
	}
	if t.BuildID != nil {
		s.BuildID = t.BuildID[i:j:j]
	}
	for _, tr := range t.Truth {
		s.Truth = append(s.Truth, Truth{Name: tr.Name, Values: tr.Values[i:j:j]})
	}
	return s
}

// Schema returns the schema of the rows of the given kind that Table builds: the kind's
// schema with the history's extra attributes (Kind.SchemaWithExtra).
func (ix *Index) Schema(kind Kind) Schema { return kind.SchemaWithExtra(ix.extra) }

// Extra returns the history's extra attributes (datasets.History.Extra), which the
// success and build-time rows end with.
func (ix *Index) Extra() []string { return slices.Clone(ix.extra) }

// ctxEvery is how many rows are built between two checks of the context.
const ctxEvery = 1 << 14

// Table returns the rows of the given kind, with the schema Schema(kind): success and
// build-time rows end with the history's extra attributes. It returns an error only
// when ctx is done.
func (ix *Index) Table(ctx context.Context, kind Kind) (*Table, error) {
	t := &Table{Schema: ix.Schema(kind), Skipped: make(map[string]int)}
	var err error
	switch kind {
	case KindSuccess:
		err = ix.successRows(ctx, t)
	case KindConflict:
		err = ix.conflictRows(ctx, t)
	case KindBuildTime:
		err = ix.buildTimeRows(ctx, t)
	default:
		panic("features: invalid kind " + kind.String())
	}
	if err != nil {
		return nil, fmt.Errorf("features: building %s rows: %w", kind, err)
	}
	for r, n := range t.Skipped {
		if n == 0 {
			delete(t.Skipped, r)
		}
	}
	return t, nil
}

// reserve sets the capacity of the row slices to at most n rows, so that building a table
// allocates each of them once.
func (t *Table) reserve(n int) {
	t.X = make([]float64, 0, n*t.Schema.NFeatures())
	t.Y = make([]float64, 0, n)
	t.ChangeID = make([]string, 0, n)
	t.SubmittedAt = make([]time.Time, 0, n)
	switch t.Schema.Kind {
	case KindConflict:
		t.AheadID = make([]string, 0, n)
	default:
		t.BuildID = make([]string, 0, n)
	}
}

// grow makes room for one more row and returns it.
func (t *Table) grow() []float64 {
	n := t.Schema.NFeatures()
	l := len(t.X)
	if cap(t.X)-l < n {
		x := make([]float64, l, 2*cap(t.X)+n*1024)
		copy(x, t.X)
		t.X = x
	}
	t.X = t.X[:l+n]
	return t.X[l:]
}

func (ix *Index) successRows(ctx context.Context, t *Table) error {
	h := ix.h
	t.Considered = len(h.Changes)
	t.reserve(len(h.Changes))
	truth := make([]float64, 0, len(h.Changes))
	hasTruth := false
	for k, ci := range ix.queue {
		if k%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := &h.Changes[ci]
		info := &ix.changes[ci]
		switch {
		case !info.isDecided:
			t.Skipped[SkipUndecided]++
			continue
		case !info.hasDecisive:
			t.Skipped[SkipNoDecisiveBuild]++
			continue
		case info.label == labelUnknown:
			t.Skipped[SkipUndeterminedAlone]++
			continue
		}
		row := t.grow()
		success(row[:NSuccess], c, info.nTargets, info.spec, info.dev, info.rec)
		Extra(row[NSuccess:], c, ix.extra)
		t.Y = append(t.Y, float64(info.label))
		t.ChangeID = append(t.ChangeID, c.ChangeID)
		t.BuildID = append(t.BuildID, h.Builds[info.labelBuild].BuildID)
		t.SubmittedAt = append(t.SubmittedAt, c.SubmittedAt)
		truth = append(truth, c.TrueProbSuccess)
		hasTruth = hasTruth || !math.IsNaN(c.TrueProbSuccess)
	}
	if hasTruth {
		t.Truth = []Truth{{Name: "true_p_success", Values: truth}}
	}
	return nil
}

func (ix *Index) conflictRows(ctx context.Context, t *Table) error {
	h := ix.h
	for r, n := range ix.pairSkips {
		t.Skipped[r] += n
		t.Considered += n
	}
	t.Considered += len(ix.pairs)
	t.reserve(len(ix.pairs))
	var pTrue, conflicted []float64
	for k := range ix.pairs {
		if k%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		p := &ix.pairs[k]
		switch p.label {
		case labelUnknown:
			t.Skipped[SkipUndetermined]++
			continue
		case labelNotBoth:
			t.Skipped[SkipNotBothSucceedAlone]++
			continue
		case labelContradictory:
			t.Skipped[SkipContradictory]++
			continue
		}
		a, b := &h.Changes[p.ahead], &h.Changes[p.behind]
		ia, ib := &ix.changes[p.ahead], &ix.changes[p.behind]
		// Candidate pairs have known targets.
		conflict(t.grow(), a, b, ia.nTargets, ib.nTargets, float64(overlapInfo(ia, ib)), ia.area, ib.area, p.devAhead, ib.dev)
		t.Y = append(t.Y, float64(p.label))
		t.ChangeID = append(t.ChangeID, b.ChangeID)
		t.AheadID = append(t.AheadID, a.ChangeID)
		t.SubmittedAt = append(t.SubmittedAt, b.SubmittedAt)
		if ix.truth != nil {
			pt, cf := nan, nan
			if tp := ix.truth[[2]string{a.ChangeID, b.ChangeID}]; tp != nil {
				pt, cf = tp.TrueProbConflict, 0
				if tp.Conflicted {
					cf = 1
				}
			}
			pTrue = append(pTrue, pt)
			conflicted = append(conflicted, cf)
		}
	}
	if ix.truth != nil {
		t.Truth = []Truth{{Name: "true_p_conflict", Values: pTrue}, {Name: "true_conflicted", Values: conflicted}}
	}
	return nil
}

func (ix *Index) buildTimeRows(ctx context.Context, t *Table) error {
	h := ix.h
	t.Considered = len(h.Builds)
	t.reserve(len(h.Builds))
	mu := make([]float64, 0, len(h.Builds))
	sigma := make([]float64, 0, len(h.Builds))
	hasTruth := false
	k := 0
	for _, ci := range ix.queue {
		c := &h.Changes[ci]
		info := &ix.changes[ci]
		for _, bi := range info.builds {
			if k%ctxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			k++
			b := &h.Builds[bi]
			switch {
			case b.Status == datasets.StatusAborted:
				t.Skipped[SkipAborted]++
				continue
			case b.Status == datasets.StatusInfraFailed:
				t.Skipped[SkipInfraFailed]++
				continue
			case !decisive(b.Status):
				t.Skipped[SkipUnknownStatus]++
				continue
			case !(b.DurationS >= 0) || math.IsInf(b.DurationS, 1):
				t.Skipped[SkipMissingDuration]++
				continue
			}
			row := t.grow()
			buildTime(row[:NBuildTime], c, info.nTargets, ix.builds[bi].spec, info.dev, info.rec)
			Extra(row[NBuildTime:], c, ix.extra)
			t.Y = append(t.Y, b.DurationS)
			t.ChangeID = append(t.ChangeID, c.ChangeID)
			t.BuildID = append(t.BuildID, b.BuildID)
			t.SubmittedAt = append(t.SubmittedAt, c.SubmittedAt)
			mu = append(mu, b.TrueMuS)
			sigma = append(sigma, b.TrueSigmaS)
			hasTruth = hasTruth || !math.IsNaN(b.TrueMuS) || !math.IsNaN(b.TrueSigmaS)
		}
	}
	if hasTruth {
		t.Truth = []Truth{{Name: "true_mu_s", Values: mu}, {Name: "true_sigma_s", Values: sigma}}
	}
	return nil
}
