package scoring_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/models/gbm"
	"github.com/sqpredict/sqpredict/models/logistic"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/training"
)

// The models the scorer takes.
var (
	_ scoring.Predictor     = (*logistic.Model)(nil)
	_ scoring.Predictor     = (*gbm.Model)(nil)
	_ scoring.DistPredictor = (*ngboost.Model)(nil)
	_ scoring.DevLookup     = (*features.DevTable)(nil)
)

// scorerTol is the relative tolerance between the scorer and the models called on rows
// built here: the same feature functions and models, so equal up to rounding.
const scorerTol = 1e-12

func bundleModels(t testing.TB) *training.Models {
	t.Helper()
	dir := t.TempDir()
	if err := defaultbundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := registry.LoadDir(dir, training.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func testChange(rnd *rand.Rand, i int) datasets.Change {
	n := func(max int) float64 { return float64(rnd.IntN(max)) }
	return datasets.Change{
		ChangeID: string(rune('A' + i)), Author: []string{"dev0001", "dev0131", "", "nobody"}[i%4],
		SubmittedAt:    time.Date(2026, 1, 10, i, 0, 0, 0, time.UTC),
		TargetsChanged: n(5), LinesAdded: n(400), LinesRemoved: n(100), Hunks: n(10), FilesChanged: n(8), Commits: 1 + n(3),
		TargetsAdded: math.NaN(), TargetsRemoved: 0, BinariesAdded: 0, BinariesRemoved: 0,
		InitialChecksPassed: n(8), InitialChecksFailed: n(2), RevisionSubmissions: 1,
		AuthorTenureDays: n(1000), AuthorLevel: n(4),
		AffectedTargets: []string{"//a", "//b"}[:i%3%2+1],
	}
}

func TestScorerMatchesModels(t *testing.T) {
	ms := bundleModels(t)
	s, err := scoring.NewScorer(ms.Success, ms.Conflict, ms.BuildTime, ms.DevTable)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	const n = 8
	changes := make([]datasets.Change, n)
	succ := make([]scoring.SuccessInput, n)
	builds := make([]scoring.BuildInput, n)
	pairs := make([]scoring.PairInput, n-1)
	xs := mat.NewDense(n, features.NSuccess, nil)
	xb := mat.NewDense(n, features.NBuildTime, nil)
	xc := mat.NewDense(n-1, features.NConflict, nil)
	for i := range changes {
		changes[i] = testChange(rnd, i)
	}
	for i := range changes {
		spec := features.Speculation{Succeeded: float64(i % 2), Failed: 0, Height: float64(i % 3), ConflictsCount: 1, QueueAhead: float64(i), PathChanges: 0, PathLinesChanged: math.NaN()}
		c := &changes[i]
		succ[i] = scoring.SuccessInput{Change: c, Spec: spec}
		builds[i] = scoring.BuildInput{Change: c, Spec: spec}
		dev := ms.DevTable.Lookup(c.Author)
		rec := ms.DevTable.Recent(ms.DevTable.Repos()[0], c)
		features.Success(xs.RawRowView(i), c, spec, dev, rec)
		features.BuildTime(xb.RawRowView(i), c, spec, dev, rec)
		if i > 0 {
			a := &changes[i-1]
			pairs[i-1] = scoring.PairInput{Ahead: a, Behind: c}
			features.Conflict(xc.RawRowView(i-1), a, c, ms.DevTable.Lookup(a.Author), dev)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want []float64
	}{
		{"success", s.PredictSuccess(nil, succ), ms.Success.Predict(nil, xs)},
		{"conflict", s.PredictConflict(nil, pairs), ms.Conflict.Predict(nil, xc)},
		{"buildtime", s.PredictBuildTime(nil, builds), ms.BuildTime.Predict(nil, xb)},
	} {
		if len(tc.got) != len(tc.want) {
			t.Fatalf("%s: %d outputs, want %d", tc.name, len(tc.got), len(tc.want))
		}
		for i := range tc.got {
			if !scalar.EqualWithinAbsOrRel(tc.got[i], tc.want[i], scorerTol, scorerTol) {
				t.Errorf("%s[%d] = %v, want %v", tc.name, i, tc.got[i], tc.want[i])
			}
		}
	}
	if got := s.PredictSuccess(nil, nil); len(got) != 0 {
		t.Errorf("PredictSuccess(empty) = %v, want empty", got)
	}
}

func TestNewScorerErrors(t *testing.T) {
	ms := bundleModels(t)
	for _, tc := range []struct {
		name    string
		s, c    scoring.Predictor
		b       scoring.DistPredictor
		wantErr error
	}{
		{"no success model", nil, ms.Conflict, ms.BuildTime, scoring.ErrNoModel},
		{"no build-time model", ms.Success, ms.Conflict, nil, scoring.ErrNoModel},
		{"conflict model as success", ms.Conflict, ms.Conflict, ms.BuildTime, scoring.ErrModelShape},
		{"success model as conflict", ms.Success, ms.Success, ms.BuildTime, scoring.ErrModelShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := scoring.NewScorer(tc.s, tc.c, tc.b, ms.DevTable); !errors.Is(err, tc.wantErr) {
				t.Errorf("NewScorer = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestScorerDstPanics(t *testing.T) {
	ms := bundleModels(t)
	s, err := scoring.NewScorer(ms.Success, ms.Conflict, ms.BuildTime, ms.DevTable)
	if err != nil {
		t.Fatal(err)
	}
	c := testChange(rand.New(rand.NewPCG(1, 1)), 0)
	defer func() {
		if recover() == nil {
			t.Error("PredictBuildTime with a short dst did not panic")
		}
	}()
	s.PredictBuildTime(make([]float64, 1), []scoring.BuildInput{{Change: &c}})
}
