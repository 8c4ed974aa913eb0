package eval_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/logistic"
)

// bayesGapMin is the most a model may beat the Bayes limit by, relative to it: only by
// chance, on a finite holdout. Doing better than the truth by more means the features
// know something about the label they should not.
const bayesGapMin = -0.02

// checkBayes says why predictions p of the holdout labels y fall short of the Bayes
// limit, the log loss of the true probabilities q, or "" when they do not: their
// log-loss skill over the constant training rate (eval.LogLossSkill) must be at least
// eval.MinSkill (issue 13: a relative gap to the Bayes limit alone lets a constant
// predictor pass when the truth carries little information), and they must not beat the
// limit by more than bayesGapMin.
func checkBayes(y, p, q []float64, rate float64) (skill, gap float64, why string) {
	skill = eval.LogLossSkill(y, p, eval.Constant(len(y), rate), q)
	gap = eval.LogLoss(y, p)/eval.LogLoss(y, q) - 1
	switch {
	case !(skill >= eval.MinSkill):
		why = fmt.Sprintf("log-loss skill over the constant %.3f, want at least %.2f", skill, eval.MinSkill)
	case gap < bayesGapMin:
		why = fmt.Sprintf("log loss %+.2f%% off the Bayes limit, want at least %+.0f%%", 100*gap, 100*bayesGapMin)
	}
	return skill, gap, why
}

// TestBayesGap fits the P-succ and P-conf logistic models on the first 70% (by
// submission time) of the feature tables of four synthetic weeks, on the labels derived
// from the builds table, and compares their log loss on the last 30% with that of the
// true probability of each label on the same rows (checkBayes). The constant training
// rate, the prediction of a model that learnt nothing, must fail the same check.
//
// The conflict label records a conflict given that both changes succeed alone, whose
// probability is true_p_conflict. The success label is the change's intrinsic outcome
// (whether it is good: its build on HEAD alone succeeds), whose probability is
// true_p_success.
func TestBayesGap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := synth.Generate(ctx, synth.Config{Profile: "go", Days: 28, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := features.NewIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []features.Kind{features.KindSuccess, features.KindConflict} {
		tab, err := ix.Table(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		column := func(name string) []float64 {
			for _, c := range tab.Truth {
				if c.Name == name {
					return c.Values
				}
			}
			t.Fatalf("%v table has no truth column %q", kind, name)
			return nil
		}
		y := tab.Y
		var q []float64
		switch kind {
		case features.KindSuccess:
			q = column("true_p_success")
		case features.KindConflict:
			q = column("true_p_conflict")
		}
		var derived float64
		for _, v := range tab.Y {
			derived += v
		}
		// Rows without truth (NaN: the generator has no pair behind a derived row) are
		// left out of both sides.
		var keep []int
		var times []time.Time
		for r := range tab.NRows() {
			if !math.IsNaN(q[r]) {
				keep = append(keep, r)
				times = append(times, tab.SubmittedAt[r])
			}
		}
		trainK, testK := eval.HoldoutByTime(times, 0.3)
		train, test := make([]int, len(trainK)), make([]int, len(testK))
		for i, k := range trainK {
			train[i] = keep[k]
		}
		for i, k := range testK {
			test[i] = keep[k]
		}
		x := tab.Dense()
		_, nf := x.Dims()
		rows := func(idx []int) (xs *mat.Dense, ys, qs []float64) {
			xs = mat.NewDense(len(idx), nf, nil)
			ys, qs = make([]float64, len(idx)), make([]float64, len(idx))
			for i, r := range idx {
				xs.SetRow(i, x.RawRowView(r))
				ys[i], qs[i] = y[r], q[r]
			}
			return xs, ys, qs
		}
		xTrain, yTrain, _ := rows(train)
		xTest, yTest, qTest := rows(test)
		m, err := logistic.Fit(xTrain, yTrain, nil, logistic.Config{FeatureNames: tab.Schema.Names})
		if err != nil {
			t.Fatal(err)
		}
		var rate float64
		for _, v := range yTrain {
			rate += v / float64(len(yTrain))
		}
		pred := m.Predict(nil, xTest)
		skill, gap, why := checkBayes(yTest, pred, qTest, rate)
		var pos float64
		for _, v := range yTest {
			pos += v
		}
		t.Logf("%v: %d rows (%d positive labels, %d without truth), %d features; holdout %d rows, %.0f positive: log loss %.5f, Bayes limit %.5f, gap %+.2f%%, skill over the constant %.3f (%d iterations)",
			kind, tab.NRows(), int(derived), tab.NRows()-len(keep), nf, len(test), pos, eval.LogLoss(yTest, pred), eval.LogLoss(yTest, qTest), 100*gap, skill, m.Stats().Iterations)
		if why != "" {
			t.Errorf("%v: logistic model: %s", kind, why)
		}
		if cSkill, _, cWhy := checkBayes(yTest, eval.Constant(len(yTest), rate), qTest, rate); cWhy == "" {
			t.Errorf("%v: the constant rate %.4f passes the Bayes check (skill %.3f): the check cannot tell a model that learnt nothing", kind, rate, cSkill)
		}
	}
}
