package training

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/ngboost"
)

// TestCensoredDesign checks the merge of complete and aborted rows: submission order,
// the complete row first at equal times, each row's features, target and flag.
func TestCensoredDesign(t *testing.T) {
	s := features.KindBuildTime.Schema()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	table := func(ys []float64, minutes []int) *features.Table {
		tb := &features.Table{Schema: s}
		for i, y := range ys {
			row := make([]float64, s.NFeatures())
			row[0] = y // marks the row
			tb.X = append(tb.X, row...)
			tb.Y = append(tb.Y, y)
			tb.SubmittedAt = append(tb.SubmittedAt, t0.Add(time.Duration(minutes[i])*time.Minute))
			tb.ChangeID = append(tb.ChangeID, "c")
		}
		return tb
	}
	done := table([]float64{10, 20, 30}, []int{0, 5, 9})
	aborted := table([]float64{15, 25, 5}, []int{5, 7, 20})
	x, y, cens, err := censoredDesign(done, aborted)
	if err != nil {
		t.Fatal(err)
	}
	wantY := []float64{10, 20, 15, 25, 30, 5}
	wantC := []bool{false, false, true, true, false, true}
	for i := range wantY {
		if y[i] != wantY[i] || cens[i] != wantC[i] || x.At(i, 0) != wantY[i] {
			t.Errorf("row %d: y %v censored %v x0 %v; want %v %v", i, y[i], cens[i], x.At(i, 0), wantY[i], wantC[i])
		}
	}
	for _, a := range []*features.Table{nil, table(nil, nil)} {
		_, y, cens, err := censoredDesign(done, a)
		if err != nil || cens != nil || len(y) != done.NRows() {
			t.Errorf("censoredDesign without aborted rows = %d targets, flags %v, %v; want the complete rows and no flags", len(y), cens, err)
		}
		y[0] = -1
		if done.Y[0] == -1 {
			t.Error("censoredDesign's targets share the table's storage")
		}
	}
}

// TestAbortedTable checks the aborted rows of the test history's window: one per
// aborted build with a duration whose change was submitted in the window and which
// finished before its end, with its duration as the target (at least MinDuration) and
// the features a build-time row of it would have, the history's extra attributes
// included: without them, a history with both extra attributes and aborted builds made
// censoredDesign panic (the merge of issue 12's items 3 and 4; bundleload's
// TestExtraAttributes).
func TestAbortedTable(t *testing.T) {
	withExtra := cloneHistory(testHistory(t))
	withExtra.Extra = []string{"signal"}
	for i := range withExtra.Changes {
		v := float64(i % 5)
		if i%7 == 3 {
			v = math.NaN()
		}
		withExtra.Changes[i].Extra = datasets.Extra{Names: withExtra.Extra, Values: []float64{v}}
	}
	for _, tc := range []struct {
		name string
		h    *datasets.History
	}{{"no extra attributes", testHistory(t)}, {"an extra attribute", withExtra}} {
		t.Run(tc.name, func(t *testing.T) {
			checkAbortedTable(t, tc.h)
		})
	}
}

// checkAbortedTable checks the aborted table of h's window (see TestAbortedTable), and
// that the LogNormal champion fits it with the complete rows.
func checkAbortedTable(t *testing.T, h *datasets.History) {
	t.Helper()
	to, from := testAsOf, testAsOf.Add(-7*24*time.Hour)
	k := knownBefore(h, h.Changes[0].Repo, to)
	ix, err := features.NewIndex(context.Background(), k.h)
	if err != nil {
		t.Fatal(err)
	}
	all, err := windowTables(context.Background(), ix, k, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	byID := map[string]int{}
	for bi := range k.h.Builds {
		b := &k.h.Builds[bi]
		if b.Status == datasets.StatusAborted && b.DurationS >= 0 {
			want++
			byID[b.BuildID] = bi
		}
	}
	a := all.aborted
	if want == 0 || a.NRows() != want {
		t.Fatalf("%d aborted rows, want %d (every aborted build of the window) and some", a.NRows(), want)
	}
	if !slices.Equal(a.Schema.Names, all.buildtime.Schema.Names) {
		t.Fatalf("aborted columns %d, build-time columns %d: want the same schema", a.Schema.NFeatures(), all.buildtime.Schema.NFeatures())
	}
	changes := map[string]int{}
	for i := range k.h.Changes {
		changes[k.h.Changes[i].ChangeID] = i
	}
	row := make([]float64, a.Schema.NFeatures())
	for r := range a.NRows() {
		bi := byID[a.BuildID[r]]
		b := &k.h.Builds[bi]
		ci := changes[b.ChangeID]
		if a.Y[r] != max(b.DurationS, MinDuration) || r > 0 && a.SubmittedAt[r].Before(a.SubmittedAt[r-1]) {
			t.Fatalf("aborted row %d: target %v (build %v s), submitted %v after %v", r, a.Y[r], b.DurationS, a.SubmittedAt[r], a.SubmittedAt[max(r-1, 0)])
		}
		features.BuildTime(row[:features.NBuildTime], &k.h.Changes[ci], ix.Speculation(bi), ix.DevStats(ci), ix.Recent(ci))
		for e, n := range h.Extra {
			row[features.NBuildTime+e] = k.h.Changes[ci].Extra.Get(n)
		}
		for j, v := range row {
			if got := a.Row(r)[j]; got != v && !(math.IsNaN(got) && math.IsNaN(v)) {
				t.Fatalf("aborted row %d feature %s = %v, want %v", r, a.Schema.Names[j], got, v)
			}
		}
	}
	cfg := testConfig()
	if _, err := fitBuildTimeChampion(context.Background(), all.buildtime, a, &cfg); err != nil {
		t.Fatalf("fitting the champion with the aborted rows: %v", err)
	}
}

// TestCensoredAbortedBuilds measures, on a synthetic iOS world (7 days, seed 1; about
// 9% of its builds are aborted) whose truth gives every build's duration distribution,
// aborted ones included, what fitting the aborted builds as censored rows changes: the
// LogNormal champion with its default parameters is fitted on the rows submitted
// before 80% of the window, with and without the aborted builds, and scored against
// the truth on every later build, finished or aborted: the mean error of its log-scale
// location, and the mean Kullback-Leibler divergence from the true distribution to its
// prediction, which needs no observed duration, so that the aborted builds count as
// much as the others. Dropping the aborted builds, which ran long enough to be aborted,
// biases the location down; the censored fit must have the smaller bias, and a KL at
// most 5% worse. Measured on the world synthesised on the queue engine, without
// dynamics: bias -0.0023 against -0.0059, KL 0.0486 against 0.0473 (before the engine
// change: bias -0.0095 against -0.0124, KL 0.066 against 0.070).
func TestCensoredAbortedBuilds(t *testing.T) {
	ctx := context.Background()
	// Without the world's dynamics: the test isolates censoring. With them (build
	// times drifting up and jumping during cache outages) the censored fit still has
	// the smaller bias (-0.0105 against -0.0153) but the larger KL (0.077 against
	// 0.049) on this 7-day world: noted in BENCHMARKS.md, to be understood.
	h, err := synth.Generate(ctx, synth.Config{Profile: "ios", Days: 7, Seed: 1, NoDynamics: true})
	if err != nil {
		t.Fatal(err)
	}
	to, err := LatestSubmission(h, "")
	if err != nil {
		t.Fatal(err)
	}
	k := knownBefore(h, h.Changes[0].Repo, to)
	ix, err := features.NewIndex(ctx, k.h)
	if err != nil {
		t.Fatal(err)
	}
	all, err := windowTables(ctx, ix, k, to.Add(-90*24*time.Hour), to)
	if err != nil {
		t.Fatal(err)
	}
	bt, ab := all.buildtime, all.aborted
	cut := bt.SubmittedAt[bt.NRows()*8/10]
	fitT, fitA := bt.Slice(0, bt.Cut(cut)), ab.Slice(0, ab.Cut(cut))
	later := []*features.Table{bt.Slice(bt.Cut(cut), bt.NRows()), ab.Slice(ab.Cut(cut), ab.NRows())}
	cfg := Config{Seed: 1}
	var bias, kl [2]float64
	for j, a := range []*features.Table{fitA, nil} {
		m, err := fitNGBoost(ctx, fitT, a, ngboost.LogNormal, &cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tb := range later {
			truth, ok := truthPredictive(tb)
			if !ok {
				t.Fatal("the synthetic history has no build-time truth")
			}
			x, err := design(tb)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range m.PredictDist(x) {
				mt, st := truth.Mu[i], truth.Sigma[i]
				bias[j] += d.Loc - mt
				// KL(N(mt, st²) ‖ N(m, s²)) on log y, the same as between the LogNormals.
				kl[j] += math.Log(d.Scale/st) + (st*st+(mt-d.Loc)*(mt-d.Loc))/(2*d.Scale*d.Scale) - 0.5
				n++
			}
		}
		bias[j] /= float64(n)
		kl[j] /= float64(n)
	}
	t.Logf("%d finished and %d aborted training rows; on %d later builds (%d aborted): location bias censored %+.4f, dropped %+.4f; KL from the truth censored %.4f, dropped %.4f",
		fitT.NRows(), fitA.NRows(), later[0].NRows()+later[1].NRows(), later[1].NRows(), bias[0], bias[1], kl[0], kl[1])
	if fitA.NRows() == 0 || later[1].NRows() == 0 {
		t.Fatal("no aborted builds to fit or to score")
	}
	// The issue asks for the bias; the KL, which also weighs the scale, must not get
	// more than 5% worse.
	if !(math.Abs(bias[0]) < math.Abs(bias[1])) || !(kl[0] < 1.05*kl[1]) {
		t.Errorf("censored fit: bias %+.4f, KL %.4f; dropped: bias %+.4f, KL %.4f; want a smaller bias and a KL at most 5%% worse", bias[0], kl[0], bias[1], kl[1])
	}
}
