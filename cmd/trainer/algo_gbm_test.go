package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/gbm"
)

// gbmPredTol: predict writes float64s in their shortest exact form, and the expected
// values come from the same model file and the same arithmetic.
const gbmPredTol = 1e-12

// gbmMatrix builds the model's input matrix from the logistic test table by hand:
// lines, tests, then the one-hot color columns, in the model's feature order.
func gbmMatrix(t *testing.T, names []string, path string) *mat.Dense {
	t.Helper()
	f := readFrame(t, path)
	x := mat.NewDense(f.NRows(), len(names), nil)
	for j, n := range names {
		for i := range f.NRows() {
			switch {
			case n == "lines" || n == "tests":
				x.Set(i, j, f.Columns[f.Index(n)].Floats[i])
			case strings.HasPrefix(n, "color="):
				if f.Columns[f.Index("color")].Strings[i] == strings.TrimPrefix(n, "color=") {
					x.Set(i, j, 1)
				}
			default:
				t.Fatalf("unexpected feature %q", n)
			}
		}
	}
	return x
}

func TestFitPredictGBM(t *testing.T) {
	for _, tc := range []struct {
		name      string
		target    string
		drop      string
		params    []string
		wantOut   []string
		wantCols  []string
		objective string
	}{
		{
			name: "binary", target: "landed", drop: "id",
			params:    []string{"objective=binary", "n_estimators=30", "num_leaves=7", "min_child_samples=5", "early_stopping_round=5"},
			wantOut:   []string{"objective binary sigmoid:1", "train log loss", "top features", "roc auc", "wrote "},
			wantCols:  []string{"p", "raw"},
			objective: "binary sigmoid:1",
		},
		{
			name: "regression", target: "lines", drop: "id,landed",
			params:    []string{"objective=regression", "num_iterations=20", "eta=0.2", "min_data_in_leaf=5"},
			wantOut:   []string{"objective regression", "train rmse", "rmse", "mae", "wrote "},
			wantCols:  []string{"prediction"},
			objective: "regression",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "model.txt")
			args := []string{"fit", "--algo", "gbm", "--train", "testdata/logistic_train.csv", "--target", tc.target,
				"--drop", tc.drop, "--categorical", "color", "--valid", "testdata/logistic_valid.csv", "--model", model}
			for _, p := range tc.params {
				args = append(args, "--param", p)
			}
			out, _, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("trainer %s: %v", strings.Join(args, " "), err)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("fit output lacks %q:\n%s", want, out)
				}
			}
			m, err := gbm.LoadLightGBMFile(model)
			if err != nil {
				t.Fatal(err)
			}
			if m.Objective() != tc.objective {
				t.Errorf("saved objective %q, want %q", m.Objective(), tc.objective)
			}
			pred := filepath.Join(t.TempDir(), "pred.csv")
			if _, _, err := runCmd(t, "predict", "--model", model, "--data", "testdata/logistic_valid.csv", "--out", pred); err != nil {
				t.Fatal(err)
			}
			got := readFrame(t, pred)
			x := gbmMatrix(t, m.FeatureNames(), "testdata/logistic_valid.csv")
			want := [][]float64{m.Predict(nil, x), m.PredictRaw(nil, x)}
			for k, col := range tc.wantCols {
				c := got.Index(col)
				if c < 0 {
					t.Fatalf("predictions lack column %q", col)
				}
				for i, v := range got.Columns[c].Floats {
					if !scalar.EqualWithinAbsOrRel(v, want[k][i], gbmPredTol, gbmPredTol) {
						t.Fatalf("%s row %d = %v, want %v", col, i, v, want[k][i])
					}
				}
			}
		})
	}
}

// lightGBMCaseArgs returns the --param flags of case name in the LightGBM case file
// cases (a line "name key=value ..."), leaving out the keys in skip, which the test
// passes its own way.
func lightGBMCaseArgs(t *testing.T, cases, name string, skip ...string) []string {
	t.Helper()
	data, err := os.ReadFile(cases)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	found := false
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != name {
			continue
		}
		found = true
		for _, kv := range fields[1:] {
			if !slices.Contains(skip, strings.SplitN(kv, "=", 2)[0]) {
				args = append(args, "--param", kv)
			}
		}
	}
	if !found {
		t.Fatalf("%s has no %s case", filepath.Base(cases), name)
	}
	return args
}

// checkRawAgainstLightGBM checks the raw predictions of the model file model on the
// rows of the CSV data (its columns picked by the model's feature names) against
// LightGBM's, one per line of the file raw.
func checkRawAgainstLightGBM(t *testing.T, model, data, raw string) {
	t.Helper()
	m, err := gbm.LoadLightGBMFile(model)
	if err != nil {
		t.Fatal(err)
	}
	f := readFrame(t, data)
	names := m.FeatureNames()
	x := mat.NewDense(f.NRows(), len(names), nil)
	for j, n := range names {
		for i, v := range f.Columns[f.Index(n)].Floats {
			x.Set(i, j, v)
		}
	}
	got := m.PredictRaw(nil, x)
	text, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(text))
	if len(want) != len(got) {
		t.Fatalf("%d LightGBM predictions for %d rows", len(want), len(got))
	}
	for i, s := range want {
		w, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		// The models package's own test states this tolerance (LightGBM's
		// floating-point operations, up to its histogram subtractions).
		if !scalar.EqualWithinAbsOrRel(got[i], w, 1e-12, 1e-12) {
			t.Fatalf("row %d: raw %v, LightGBM %v", i, got[i], w)
		}
	}
}

// TestFitGBMCategoricalMatchesLightGBM fits models/gbm's categorical test data through
// the CLI with categorical_feature and the parameters LightGBM 4.6.0 was given (case
// reg_tuned of models/gbm/testdata/cat_cases.txt) and checks the saved model's raw
// predictions against LightGBM's own (cat_reg_tuned_raw.txt, made by gen_cat.py).
func TestFitGBMCategoricalMatchesLightGBM(t *testing.T) {
	const dir = "../../models/gbm/testdata/"
	model := filepath.Join(t.TempDir(), "model.txt")
	args := append([]string{"fit", "--algo", "gbm", "--train", dir + "cat_train.csv", "--target", "y", "--drop", "yb",
		"--model", model, "--param", "categorical_feature=name:c0,c1", "--param", "num_threads=1"},
		lightGBMCaseArgs(t, dir+"cat_cases.txt", "reg_tuned", "label", "objective")...)
	if _, _, err := runCmd(t, args...); err != nil {
		t.Fatalf("trainer %s: %v", strings.Join(args, " "), err)
	}
	m, err := gbm.LoadLightGBMFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if names := m.FeatureNames(); strings.Join(names, ",") != "c0,c1,x2,x3" {
		t.Fatalf("model features %v, want features c0 c1 x2 x3", names)
	}
	checkRawAgainstLightGBM(t, model, dir+"cat_test.csv", dir+"cat_reg_tuned_raw.txt")
}

// TestFitGBMWeightColumnMatchesLightGBM fits models/gbm's option test data through
// the CLI with weight_column=name:w, as gen_opts.py's case reg_weighted gave LightGBM
// 4.6.0 weight_column=name:w, and checks the raw predictions against LightGBM's.
func TestFitGBMWeightColumnMatchesLightGBM(t *testing.T) {
	const dir = "../../models/gbm/testdata/"
	model := filepath.Join(t.TempDir(), "model.txt")
	args := append([]string{"fit", "--algo", "gbm", "--train", dir + "opt_train.csv", "--target", "y", "--drop", "yb,yc",
		"--model", model, "--param", "weight_column=name:w", "--param", "num_threads=1"},
		lightGBMCaseArgs(t, dir+"opt_cases.txt", "reg_weighted", "label", "weighted")...)
	if _, _, err := runCmd(t, args...); err != nil {
		t.Fatalf("trainer %s: %v", strings.Join(args, " "), err)
	}
	m, err := gbm.LoadLightGBMFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if names := m.FeatureNames(); strings.Join(names, ",") != "x0,x1,x2" {
		t.Fatalf("model features %v, want features x0 x1 x2 (w is the weight column)", names)
	}
	checkRawAgainstLightGBM(t, model, dir+"opt_train.csv", dir+"opt_reg_weighted_raw.txt")
}

func TestPredictLightGBMMulticlass(t *testing.T) {
	// A LightGBM multiclass model (written by hand, see models/gbm/testdata/README.md).
	data := writeFile(t, "rows.csv", "u,v\n1,1\n6,2\n9,\n")
	pred := filepath.Join(t.TempDir(), "pred.csv")
	if _, _, err := runCmd(t, "predict", "--model", "testdata/gbm_multiclass.txt", "--data", data, "--out", pred); err != nil {
		t.Fatal(err)
	}
	got := readFrame(t, pred)
	// Raw class scores worked out from the trees (see models/gbm's multiclass test).
	raw := [][]float64{{0.625, -0.5, 0.9375}, {-0.375, 1, -0.0625}, {-0.125, -0.5, -0.0625}}
	for i, r := range raw {
		sum := math.Exp(r[0]) + math.Exp(r[1]) + math.Exp(r[2])
		for k, col := range []string{"p0", "p1", "p2"} {
			c := got.Index(col)
			if c < 0 {
				t.Fatalf("predictions lack column %q", col)
			}
			if want := math.Exp(r[k]) / sum; !scalar.EqualWithinAbsOrRel(got.Columns[c].Floats[i], want, gbmPredTol, gbmPredTol) {
				t.Errorf("%s row %d = %v, want %v", col, i, got.Columns[c].Floats[i], want)
			}
		}
	}
}

func TestFitGBMUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"unknown param", []string{"--param", "boosting=dart"}, "boosting"},
		{"bad value", []string{"--param", "num_leaves=1"}, "num_leaves"},
		{"alias twice", []string{"--param", "eta=0.1", "--param", "learning_rate=0.2"}, "learning_rate"},
		{"early stopping without valid", []string{"--param", "early_stopping_round=3"}, "--valid"},
		{"unsupported objective", []string{"--param", "objective=tweedie"}, "tweedie"},
		{"unknown weight column", []string{"--param", "weight_column=name:nope"}, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"fit", "--algo", "gbm", "--train", "testdata/logistic_train.csv", "--target", "landed",
				"--drop", "id", "--categorical", "color", "--model", filepath.Join(t.TempDir(), "m.txt")}, tc.extra...)
			_, _, err := runCmd(t, args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("trainer fit %v: error %v, want a usage error naming %q", tc.extra, err, tc.want)
			}
		})
	}
}

func TestIsLightGBMText(t *testing.T) {
	for _, tc := range []struct {
		head string
		kind string
		want bool
	}{
		{"tree\nversion=v3\nnum_class=1\n", "", true},
		{"\r\ntree\r\nversion=v4\r\nnum_class=3\r\n", "", true},
		{"tree\nversion=v4\n", "", false},
		{"trees\nversion=v3\nnum_class=1\n", "", false},
		{"tree\nversion=v3\nnum_class=1\n", "logistic", false},
	} {
		if got := isLightGBMText([]byte(tc.head), tc.kind); got != tc.want {
			t.Errorf("isLightGBMText(%q, %q) = %v, want %v", tc.head, tc.kind, got, tc.want)
		}
	}
}

func TestPredictLightGBMBinary(t *testing.T) {
	// A binary model written by LightGBM itself (models/gbm/testdata/model_simple.txt):
	// both trees send X2 == 100 left, then split X1 at 340.5.
	data := writeFile(t, "rows.csv", "X2,X1\n100,10\n2,340.5\n2,341\n")
	pred := filepath.Join(t.TempDir(), "pred.csv")
	if _, _, err := runCmd(t, "predict", "--model", "testdata/gbm_lightgbm_binary_v2.txt", "--data", data, "--out", pred); err != nil {
		t.Fatal(err)
	}
	got := readFrame(t, pred)
	add := func(a, b float64) float64 { return a + b } // rounds at run time, like the model
	raw := []float64{
		add(0.56697267424823339, 0.12883103567558912),
		add(0.3584987837673016, -0.063872842243335157),
		add(0.41213915936587919, -0.016484332942214807),
	}
	p, r := got.Index("p"), got.Index("raw")
	if p < 0 || r < 0 {
		t.Fatalf("predictions lack p or raw: %v", got.Columns)
	}
	for i, want := range raw {
		if v := got.Columns[r].Floats[i]; !scalar.EqualWithinAbsOrRel(v, want, gbmPredTol, gbmPredTol) {
			t.Errorf("raw row %d = %v, want %v", i, v, want)
		}
		if v, want := got.Columns[p].Floats[i], 1/(1+math.Exp(-want)); !scalar.EqualWithinAbsOrRel(v, want, gbmPredTol, gbmPredTol) {
			t.Errorf("p row %d = %v, want %v", i, v, want)
		}
	}
}
