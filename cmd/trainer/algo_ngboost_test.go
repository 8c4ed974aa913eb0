package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/ngboost"
)

// writeBuildTimes writes a CSV of n synthetic builds: targets changed, lines added, a
// category, and a LogNormal duration in seconds whose median and spread grow with the
// targets.
func writeBuildTimes(t *testing.T, name string, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("targets,lines,queue,duration_s\n")
	queues := []string{"ios", "android", "go"}
	for range n {
		targets, lines := rng.IntN(60), rng.IntN(2000)
		q := rng.IntN(3)
		d := math.Exp(math.Log(200) + float64(targets)/40 + 0.2*float64(q) + (0.1+float64(targets)/300)*rng.NormFloat64())
		fmt.Fprintf(&b, "%d,%d,%s,%.3f\n", targets, lines, queues[q], d)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFitPredictNGBoost(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 600, 1)
	valid := writeBuildTimes(t, "valid.csv", 200, 2)
	for _, dist := range []string{"normal", "lognormal"} {
		t.Run(dist, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "model.json")
			out, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
				"--categorical", "queue", "--valid", valid, "--model", model,
				"--param", "dist="+dist, "--param", "n_estimators=400", "--param", "learning_rate=0.05",
				"--param", "validation_fraction=0.25", "--param", "early_stopping_rounds=20", "--param", "refit=true")
			if err != nil {
				t.Fatalf("fit: %v\n%s", err, stderr)
			}
			for _, want := range []string{"dist " + dist, "iterations kept", "refitted on all rows", "best validation score",
				"nll", "crps", "mape", "coverage   80% interval", "pit"} {
				if !strings.Contains(out, want) {
					t.Errorf("fit output lacks %q:\n%s", want, out)
				}
			}
			m, err := ngboost.LoadFile(model)
			if err != nil {
				t.Fatal(err)
			}
			if info := m.Info(); !info.Refit || info.BestIteration < 0 || m.NIterations() != info.BestIteration+1 {
				t.Errorf("model: refit %v, best iteration %d, %d iterations; want a refit with best+1 iterations", info.Refit, info.BestIteration, m.NIterations())
			}
			if m.Family().String() != dist {
				t.Errorf("model family %v, want %s", m.Family(), dist)
			}

			pred := filepath.Join(t.TempDir(), "pred.csv")
			if _, _, err := runCmd(t, "predict", "--model", model, "--data", valid, "--out", pred); err != nil {
				t.Fatal(err)
			}
			got := readFrame(t, pred)
			mu, sigma := got.Columns[got.Index("mu")].Floats, got.Columns[got.Index("sigma")].Floats
			// Reference: the model's own Predict on the validation rows, encoded by hand.
			x := buildTimeMatrix(t, valid, m.FeatureNames())
			want := m.Predict(nil, x)
			for i := range x.RawMatrix().Rows {
				if !scalar.EqualWithinAbsOrRel(mu[i], want[2*i], predTol, predTol) || !scalar.EqualWithinAbsOrRel(sigma[i], want[2*i+1], predTol, predTol) {
					t.Fatalf("row %d: predicted mu, sigma = %v, %v, want %v, %v", i, mu[i], sigma[i], want[2*i], want[2*i+1])
				}
				// mu and sigma are of the duration itself, in seconds.
				if !(mu[i] > 100 && mu[i] < 5000 && sigma[i] > 0 && sigma[i] < mu[i]) {
					t.Fatalf("row %d: mu %v, sigma %v are not build times in seconds", i, mu[i], sigma[i])
				}
			}
		})
	}
}

func TestFitNGBoostUsageErrors(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 50, 1)
	model := filepath.Join(t.TempDir(), "model.json")
	for _, tc := range []struct{ param, want string }{
		{"dist=gamma", "dist"},
		{"score=mse", "score"},
		{"learning_rate=-1", "learning_rate"},
		{"minibatch_frac=1.5", "minibatch_frac"},
		{"n_estimators=0", "n_estimators"},
		{"natural_gradient=maybe", "natural_gradient"},
		{"random_state=-3", "random_state"},
		{"num_threads=-1", "num_threads"},
		{"subsample=0.5", "subsample"},
	} {
		_, _, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
			"--categorical", "queue", "--model", model, "--param", tc.param)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fit --param %s = %v, want a usage error naming %q", tc.param, err, tc.want)
		}
	}
}

// TestFitNGBoostNumThreads checks that --param num_threads is accepted and that the
// model file does not depend on it, on enough rows (3000) that the row loops split.
func TestFitNGBoostNumThreads(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 3000, 1)
	var files [2][]byte
	for k, threads := range []string{"1", "2"} {
		model := filepath.Join(t.TempDir(), "model.json")
		if _, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
			"--categorical", "queue", "--model", model, "--param", "dist=lognormal",
			"--param", "n_estimators=30", "--param", "num_threads="+threads); err != nil {
			t.Fatalf("fit num_threads=%s: %v\n%s", threads, err, stderr)
		}
		b, err := os.ReadFile(model)
		if err != nil {
			t.Fatal(err)
		}
		files[k] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Errorf("model files fitted with num_threads=1 and 2 differ")
	}
}

// buildTimeMatrix encodes the rows of a writeBuildTimes table by hand as the model
// features names ("queue=X" one-hot), independently of the trainer's encoding.
func buildTimeMatrix(t *testing.T, path string, names []string) *mat.Dense {
	t.Helper()
	in := readFrame(t, path)
	x := mat.NewDense(in.NRows(), len(names), nil)
	for j, name := range names {
		for i := range in.NRows() {
			if q, ok := strings.CutPrefix(name, "queue="); ok {
				if in.Columns[in.Index("queue")].Strings[i] == q {
					x.Set(i, j, 1)
				}
				continue
			}
			x.Set(i, j, in.Columns[in.Index(name)].Floats[i])
		}
	}
	return x
}

// TestPredictNGBoostIteration checks predict --iteration K against the library's
// staged prediction (Model.Truncate), and its errors.
func TestPredictNGBoostIteration(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 300, 1)
	data := writeBuildTimes(t, "data.csv", 50, 2)
	model := filepath.Join(t.TempDir(), "model.json")
	if _, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
		"--categorical", "queue", "--model", model, "--param", "dist=lognormal",
		"--param", "n_estimators=40", "--param", "learning_rate=0.05"); err != nil {
		t.Fatalf("fit: %v\n%s", err, stderr)
	}
	m, err := ngboost.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	x := buildTimeMatrix(t, data, m.FeatureNames())
	var prev []float64
	for _, k := range []int{0, 15, 40} {
		pred := filepath.Join(t.TempDir(), "pred.csv")
		if _, _, err := runCmd(t, "predict", "--model", model, "--data", data, "--out", pred, "--iteration", fmt.Sprint(k)); err != nil {
			t.Fatalf("predict --iteration %d: %v", k, err)
		}
		got := readFrame(t, pred)
		mu := got.Columns[got.Index("mu")].Floats
		tr, err := m.Truncate(k)
		if err != nil {
			t.Fatal(err)
		}
		want := tr.Predict(nil, x)
		for i := range mu {
			if !scalar.EqualWithinAbsOrRel(mu[i], want[2*i], predTol, predTol) {
				t.Fatalf("--iteration %d, row %d: mu = %v, Truncate(%d) predicts %v", k, i, mu[i], k, want[2*i])
			}
		}
		if k == 0 && !slicesAllEqual(mu) {
			t.Errorf("--iteration 0 predicts different mu per row, want the marginal fit for every row")
		}
		if prev != nil && slicesAllEqual(append(append([]float64(nil), prev...), mu...)) {
			t.Errorf("--iteration %d predicts the same as the previous stage", k)
		}
		prev = mu
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", model, "--iteration", "41"}, "41"},
		{[]string{"--model", model, "--iteration", "-2"}, "-2"},
		{[]string{"--model", "testdata/gbm_multiclass.txt", "--iteration", "3"}, "staged"},
	} {
		args := append([]string{"predict", "--data", data, "--out", filepath.Join(t.TempDir(), "p.csv")}, tc.args...)
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("predict %v = %v, want a usage error naming %q", tc.args, err, tc.want)
		}
	}
}

// slicesAllEqual reports whether every value of v equals the first.
func slicesAllEqual(v []float64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

// TestFitNGBoostImportance checks the importance table of the fit summary on the
// build times of writeBuildTimes, whose median and spread grow with targets and which
// lines does not affect: targets comes first, lines holds less of the gain.
func TestFitNGBoostImportance(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 1000, 3)
	model := filepath.Join(t.TempDir(), "model.json")
	out, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
		"--categorical", "queue", "--model", model, "--param", "dist=lognormal",
		"--param", "n_estimators=150", "--param", "learning_rate=0.05")
	if err != nil {
		t.Fatalf("fit: %v\n%s", err, stderr)
	}
	_, table, ok := strings.Cut(out, "top features by gain")
	if !ok {
		t.Fatalf("fit output has no importance table:\n%s", out)
	}
	rows := map[string][]string{}
	var first string
	for _, line := range strings.Split(table, "\n")[2:] {
		f := strings.Fields(line)
		if len(f) != 5 {
			break
		}
		if first == "" {
			first = f[0]
		}
		rows[f[0]] = f
	}
	if first != "targets" {
		t.Errorf("first feature by gain is %q, want targets:\n%s", first, table)
	}
	share := func(name string, col int) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(rows[name][col], "%"), 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	for col := 1; col <= 2; col++ {
		if rows["lines"] != nil && share("lines", col) >= share("targets", col) {
			t.Errorf("lines holds %v%% of the gain, targets %v%%; want targets more:\n%s", share("lines", col), share("targets", col), table)
		}
	}
}
