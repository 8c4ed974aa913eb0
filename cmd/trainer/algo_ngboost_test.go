package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"

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
				"--param", "early_stopping_rounds=20", "--param", "refit=true")
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
		{"dist=weibull", "dist"},
		{"score=crps dist=gamma", "score"},
		{"score=mse", "score"},
		{"learning_rate=-1", "learning_rate"},
		{"minibatch_frac=1.5", "minibatch_frac"},
		{"n_estimators=0", "n_estimators"},
		{"natural_gradient=maybe", "natural_gradient"},
		{"random_state=-3", "random_state"},
		{"num_threads=-1", "num_threads"},
		{"subsample=0.5", "subsample"},
	} {
		args := []string{"fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
			"--categorical", "queue", "--model", model}
		for _, p := range strings.Fields(tc.param) {
			args = append(args, "--param", p)
		}
		_, _, err := runCmd(t, args...)
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

// addWeights appends a column w of weights 0..3 (a quarter of them 0) to the CSV at
// path and returns them.
func addWeights(t *testing.T, path string, seed uint64) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var w []float64
	for i := range lines {
		if i == 0 {
			lines[i] += ",w"
			continue
		}
		v := float64(rng.IntN(4))
		w = append(w, v)
		lines[i] += fmt.Sprintf(",%g", v)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestFitNGBoostValidWeight checks --valid as the early-stopping set and --weight:
// the logged validation scores, the kept iterations and the tracked scores against the
// weighted NLL of the truncated model on the --valid rows computed here, and the
// initial parameters against the weighted maximum-likelihood fit computed here.
func TestFitNGBoostValidWeight(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 400, 4)
	valid := writeBuildTimes(t, "valid.csv", 150, 5)
	w, wv := addWeights(t, train, 1), addWeights(t, valid, 2)
	model := filepath.Join(t.TempDir(), "model.json")
	_, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
		"--categorical", "queue", "--valid", valid, "--weight", "w", "--model", model,
		"--param", "dist=lognormal", "--param", "n_estimators=1000", "--param", "learning_rate=0.2",
		"--param", "early_stopping_rounds=10", "--param", "verbose_eval=5")
	if err != nil {
		t.Fatalf("fit: %v\n%s", err, stderr)
	}
	m, err := ngboost.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(m.FeatureNames(), "w") {
		t.Errorf("the weight column is a feature: %v", m.FeatureNames())
	}
	info := m.Info()
	vs := info.ValScore
	best := info.BestIteration
	if best < 0 || m.NIterations() != best+1 || len(vs) != best+11 {
		t.Fatalf("best iteration %d, %d kept, %d run; want best+1 kept and a stop 10 iterations after it", best, m.NIterations(), len(vs))
	}
	for k, v := range vs {
		if v < vs[best] {
			t.Fatalf("validation score %v at iteration %d is below the best %v", v, k, vs[best])
		}
	}
	// The logged validation scores, every 5 iterations.
	for k := 4; k < len(vs); k += 5 {
		want := fmt.Sprintf("iteration %d: train nll ", k+1)
		i := strings.Index(stderr, want)
		if i < 0 {
			t.Fatalf("no log line %q in:\n%s", want, stderr)
		}
		line, _, _ := strings.Cut(stderr[i:], "\n")
		if !strings.HasSuffix(line, fmt.Sprintf("validation nll %.6g", vs[k])) {
			t.Errorf("log line %q does not end with the validation score %.6g", line, vs[k])
		}
	}
	// The tracked scores: the weighted NLL of the --valid rows, computed here.
	in := readFrame(t, valid)
	yv := in.Columns[in.Index("duration_s")].Floats
	xv := buildTimeMatrix(t, valid, m.FeatureNames())
	// scoreTol allows for summing the same NLLs in another order.
	const scoreTol = 1e-9
	for _, k := range []int{0, best / 2, best} {
		tr, err := m.Truncate(k + 1)
		if err != nil {
			t.Fatal(err)
		}
		var s, sw float64
		for i, d := range tr.PredictDist(xv) {
			s -= wv[i] * d.LogPDF(yv[i])
			sw += wv[i]
		}
		if !scalar.EqualWithinAbsOrRel(vs[k], s/sw, scoreTol, scoreTol) {
			t.Errorf("validation score at iteration %d = %v, weighted NLL of the first %d iterations = %v", k, vs[k], k+1, s/sw)
		}
	}
	// The marginal fit: weighted mean and standard deviation of log y.
	tin := readFrame(t, train)
	y := tin.Columns[tin.Index("duration_s")].Floats
	var sw, mean, ss float64
	for i, yi := range y {
		sw += w[i]
		mean += w[i] * math.Log(yi)
	}
	mean /= sw
	for i, yi := range y {
		ss += w[i] * (math.Log(yi) - mean) * (math.Log(yi) - mean)
	}
	// initTol: the same sums in another order (West's running mean in the library).
	const initTol = 1e-12
	p := m.InitParams()
	if !scalar.EqualWithinAbsOrRel(p[0], mean, initTol, initTol) || !scalar.EqualWithinAbsOrRel(p[1], math.Log(math.Sqrt(ss/sw)), initTol, initTol) {
		t.Errorf("initial parameters %v, want the weighted fit (%v, %v)", p, mean, math.Log(math.Sqrt(ss/sw)))
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--algo", "ngboost", "--weight", "nope"}, "nope"},
		{[]string{"--algo", "ngboost", "--weight", "w", "--valid", valid, "--param", "validation_fraction=0.2"}, "validation_fraction"},
		{[]string{"--algo", "ngboost", "--weight", "w", "--param", "verbose_eval=-1"}, "verbose_eval"},
		{[]string{"--algo", "logistic", "--weight", "w"}, "--weight"},
	} {
		args := append([]string{"fit", "--train", train, "--target", "duration_s", "--categorical", "queue", "--model", model}, tc.args...)
		if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fit %v = %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
	// A negative weight is an error naming the row.
	b, _ := os.ReadFile(train)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	lines := strings.Split(string(b), "\n")
	lines[3] = lines[3][:strings.LastIndex(lines[3], ",")] + ",-1"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, "fit", "--algo", "ngboost", "--train", bad, "--target", "duration_s", "--categorical", "queue",
		"--weight", "w", "--model", model); err == nil || !strings.Contains(err.Error(), "row 3") {
		t.Errorf("fit with a negative weight in row 3 = %v, want an error naming row 3", err)
	}
}

// TestPredictNGBoostQuantiles checks predict --quantiles and --intervals against the
// closed forms of the two families, written in terms of the predicted mean mu and
// standard deviation sigma of the same output: Normal q_p = mu + sigma·z_p; LogNormal
// q_p = exp(m + s·z_p) with s² = log(1 + sigma²/mu²) and m = log mu - s²/2; z_p the
// standard Normal quantiles (constants to 16 digits).
func TestPredictNGBoostQuantiles(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 300, 1)
	data := writeBuildTimes(t, "data.csv", 60, 2)
	z := map[string]float64{
		"q0.1": -1.2815515655446004, "q0.5": 0, "q0.9": 1.2815515655446004,
		"lo0.8": -1.2815515655446004, "hi0.8": 1.2815515655446004,
		"lo0.95": -1.959963984540054, "hi0.95": 1.959963984540054,
	}
	// quantTol covers the round trip through mu and sigma and the float64 levels
	// ((1-0.8)/2 is not exactly 0.1).
	const quantTol = 1e-9
	for _, dist := range []string{"normal", "lognormal", "exponential", "gamma"} {
		t.Run(dist, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "model.json")
			if _, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
				"--categorical", "queue", "--model", model, "--param", "dist="+dist,
				"--param", "n_estimators=60", "--param", "learning_rate=0.05"); err != nil {
				t.Fatalf("fit: %v\n%s", err, stderr)
			}
			pred := filepath.Join(t.TempDir(), "pred.csv")
			if _, _, err := runCmd(t, "predict", "--model", model, "--data", data, "--out", pred,
				"--quantiles", "0.1,0.5,0.9", "--intervals", "0.8", "--intervals", "0.95", "--iteration", "30"); err != nil {
				t.Fatal(err)
			}
			got := readFrame(t, pred)
			var names []string
			for _, c := range got.Columns {
				names = append(names, c.Name)
			}
			if want := []string{"mu", "sigma", "q0.1", "q0.5", "q0.9", "lo0.8", "hi0.8", "lo0.95", "hi0.95"}; !slices.Equal(names, want) {
				t.Fatalf("columns %v, want %v", names, want)
			}
			mu, sigma := got.Columns[0].Floats, got.Columns[1].Floats
			for _, c := range got.Columns[2:] {
				for i, q := range c.Floats {
					want := mu[i] + sigma[i]*z[c.Name]
					switch dist {
					case "lognormal":
						s2 := math.Log1p(sigma[i] * sigma[i] / (mu[i] * mu[i]))
						want = math.Exp(math.Log(mu[i]) - s2/2 + math.Sqrt(s2)*z[c.Name])
					case "exponential":
						// F(q) = 1 - exp(-q/mu), and sigma = mu.
						want = -mu[i] * math.Log1p(-stdNormalCDF(z[c.Name]))
						if !scalar.EqualWithinAbsOrRel(sigma[i], mu[i], quantTol, quantTol) {
							t.Fatalf("row %d: exponential sigma %v != mu %v", i, sigma[i], mu[i])
						}
					case "gamma":
						// No closed-form quantile: check that the CDF of shape
						// (mu/sigma)² and scale sigma²/mu at q is the level.
						a, sc := mu[i]*mu[i]/(sigma[i]*sigma[i]), sigma[i]*sigma[i]/mu[i]
						if got, p := mathext.GammaIncReg(a, q/sc), stdNormalCDF(z[c.Name]); !scalar.EqualWithinAbsOrRel(got, p, quantTol, quantTol) {
							t.Fatalf("row %d: the gamma CDF at %s = %v is %v, want %v", i, c.Name, q, got, p)
						}
						continue
					}
					if !scalar.EqualWithinAbsOrRel(q, want, quantTol, quantTol) {
						t.Fatalf("row %d: %s = %v, closed form %v (mu %v, sigma %v)", i, c.Name, q, want, mu[i], sigma[i])
					}
				}
			}
		})
	}
	model := filepath.Join(t.TempDir(), "model.json")
	if _, _, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
		"--categorical", "queue", "--model", model, "--param", "n_estimators=5"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", model, "--quantiles", "1.5"}, "1.5"},
		{[]string{"--model", model, "--quantiles", "abc"}, "abc"},
		{[]string{"--model", model, "--intervals", "0"}, "intervals"},
		{[]string{"--model", model, "--quantiles", "0.5,0.50"}, "twice"},
		{[]string{"--model", "testdata/gbm_multiclass.txt", "--quantiles", "0.5"}, "distribution"},
	} {
		args := append([]string{"predict", "--data", data, "--out", filepath.Join(t.TempDir(), "p.csv")}, tc.args...)
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("predict %v = %v, want a usage error naming %q", tc.args, err, tc.want)
		}
	}
}

// stdNormalCDF is Φ(z), to turn the test's z values back into levels.
func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// TestFitNGBoostDurations fits the Exponential and the Gamma through the CLI and checks
// the validation metrics they print against the model's own scores of the --valid
// rows.
func TestFitNGBoostDurations(t *testing.T) {
	train := writeBuildTimes(t, "train.csv", 400, 6)
	valid := writeBuildTimes(t, "valid.csv", 100, 7)
	for _, dist := range []string{"exponential", "gamma"} {
		t.Run(dist, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "model.json")
			out, stderr, err := runCmd(t, "fit", "--algo", "ngboost", "--train", train, "--target", "duration_s",
				"--categorical", "queue", "--valid", valid, "--model", model, "--param", "dist="+dist,
				"--param", "n_estimators=80", "--param", "learning_rate=0.1")
			if err != nil {
				t.Fatalf("fit: %v\n%s", err, stderr)
			}
			m, err := ngboost.LoadFile(model)
			if err != nil {
				t.Fatal(err)
			}
			in := readFrame(t, valid)
			yv := in.Columns[in.Index("duration_s")].Floats
			scores := m.StagedScore(ngboost.LogScore, buildTimeMatrix(t, valid, m.FeatureNames()), yv, nil)
			want := fmt.Sprintf("  nll        %.6g (nats per row)", scores[len(scores)-1])
			for _, s := range []string{"dist " + dist, want, "crps", "rmse", "coverage   80% interval"} {
				if !strings.Contains(out, s) {
					t.Errorf("fit output lacks %q:\n%s", s, out)
				}
			}
			if scores[len(scores)-1] >= scores[0] {
				t.Errorf("validation NLL %v after boosting, %v at the marginal: want a decrease", scores[len(scores)-1], scores[0])
			}
		})
	}
}
