package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/logistic"
)

// predTol: predict writes float64s in their shortest exact form, and the reference
// predictions below come from the same model file and the same arithmetic.
const predTol = 1e-12

// fitLogisticModel runs "trainer fit" on a testdata table and returns the model path and
// the fit output.
func fitLogisticModel(t *testing.T, train string, extra ...string) (string, string) {
	t.Helper()
	model := filepath.Join(t.TempDir(), "model.json")
	args := append([]string{"fit", "--algo", "logistic", "--train", train, "--target", "landed",
		"--model", model}, extra...)
	out, _, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("trainer %s: %v", strings.Join(args, " "), err)
	}
	return model, out
}

// referenceMatrix builds the model's input matrix from the validation CSV by hand:
// lines, tests, then the one-hot color columns in the model's order.
func referenceMatrix(t *testing.T, m *logistic.Model, path string) *mat.Dense {
	t.Helper()
	f := readFrame(t, path)
	names := m.FeatureNames()
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

func TestFitPredictLogistic(t *testing.T) {
	var models []*logistic.Model
	for _, ext := range []string{".csv", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			model, out := fitLogisticModel(t, "testdata/logistic_train"+ext,
				"--drop", "id", "--categorical", "color", "--valid", "testdata/logistic_valid"+ext)
			for _, want := range []string{"400 rows, 5 features", "iterations, converged", "train log loss",
				"color=blue", "validation on testdata/logistic_valid" + ext, "roc auc", "ece"} {
				if !strings.Contains(out, want) {
					t.Errorf("fit output lacks %q:\n%s", want, out)
				}
			}
			m, err := logistic.LoadFile(model)
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, m)
			wantNames := []string{"lines", "tests", "color=blue", "color=green", "color=red"}
			if got := m.FeatureNames(); strings.Join(got, ",") != strings.Join(wantNames, ",") {
				t.Errorf("features = %v, want %v", got, wantNames)
			}

			pred := filepath.Join(t.TempDir(), "pred.csv")
			if _, _, err := runCmd(t, "predict", "--model", model, "--data", "testdata/logistic_valid"+ext, "--out", pred); err != nil {
				t.Fatal(err)
			}
			got := readFrame(t, pred)
			if len(got.Columns) != 2 || got.Columns[0].Name != "p" || got.Columns[1].Name != "raw" || got.NRows() != 100 {
				t.Fatalf("predictions: %d columns %v, %d rows; want p, raw and 100 rows", len(got.Columns), got.Columns, got.NRows())
			}
			x := referenceMatrix(t, m, "testdata/logistic_valid.csv")
			wantP, wantRaw := m.Predict(nil, x), m.PredictRaw(nil, x)
			for i := range wantP {
				if !scalar.EqualWithinAbsOrRel(got.Columns[0].Floats[i], wantP[i], predTol, predTol) ||
					!scalar.EqualWithinAbsOrRel(got.Columns[1].Floats[i], wantRaw[i], predTol, predTol) {
					t.Errorf("row %d: p, raw = %v, %v, want %v, %v", i, got.Columns[0].Floats[i], got.Columns[1].Floats[i], wantP[i], wantRaw[i])
				}
			}
		})
	}
	// The two files hold the same rows, so the two fits are the same computation.
	if len(models) == 2 {
		a, b := models[0].Coefficients(), models[1].Coefficients()
		for j := range a {
			if !scalar.EqualWithinAbsOrRel(a[j].Value, b[j].Value, predTol, predTol) {
				t.Errorf("coefficient %s: csv %v, parquet %v", a[j].Name, a[j].Value, b[j].Value)
			}
		}
	}
}

func TestPredictUnseenCategory(t *testing.T) {
	model, _ := fitLogisticModel(t, "testdata/logistic_train.csv", "--features", "lines,color", "--categorical", "color")
	data := writeFile(t, "new.csv", "color,lines,extra\npurple,10,x\nred,10,y\n,10,z\n")
	pred := filepath.Join(t.TempDir(), "pred.csv")
	if _, _, err := runCmd(t, "predict", "--model", model, "--data", data, "--out", pred); err != nil {
		t.Fatal(err)
	}
	m, err := logistic.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	// Features: lines, color=blue, color=green, color=red.
	want := m.PredictRaw(nil, mat.NewDense(3, 4, []float64{10, 0, 0, 0, 10, 0, 0, 1, 10, 0, 0, 0}))
	got := readFrame(t, pred).Columns[1].Floats
	for i := range want {
		if !scalar.EqualWithinAbsOrRel(got[i], want[i], predTol, predTol) {
			t.Errorf("row %d: raw = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestFitOptions(t *testing.T) {
	_, out := fitLogisticModel(t, "testdata/logistic_train.parquet", "--drop", "id", "--categorical", "color",
		"--param", "n_features_to_select=2", "--param", "C=0.5")
	if !strings.Contains(out, "feature elimination kept 2 of 5 features") || !strings.Contains(out, "C 0.5") {
		t.Errorf("fit output:\n%s", out)
	}
	model, out := fitLogisticModel(t, "testdata/logistic_train.csv", "--drop", "id,color",
		"--param", "penalty=l1", "--param", "C=0.001", "--param", "class_weight=balanced")
	m, err := logistic.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	// With C this small the L1 penalty outweighs every feature.
	for _, c := range m.Coefficients() {
		if c.Value != 0 {
			t.Errorf("l1, C=0.001: coefficient %s = %v, want 0\n%s", c.Name, c.Value, out)
		}
	}
	if cfg := m.Config(); cfg.Penalty != logistic.L1 || cfg.ClassWeight != logistic.Balanced {
		t.Errorf("config = %+v, want l1 and balanced", cfg)
	}
}

func TestFitPredictErrors(t *testing.T) {
	dir := t.TempDir()
	model, _ := fitLogisticModel(t, "testdata/logistic_train.csv", "--drop", "id", "--categorical", "color")
	badCell := writeFile(t, "bad.csv", "lines,tests,color,landed\n1,2,red,1\n3,n/a,red,0\n")
	noTests := writeFile(t, "notests.csv", "lines,color,landed\n1,red,1\n")
	labels := writeFile(t, "labels.csv", "lines,landed\n1,1\n2,2\n")
	noRows := writeFile(t, "empty.csv", "lines,tests,color,landed\n")
	missingTarget := writeFile(t, "nan.csv", "lines,landed\n1,1\n2,\n")
	foreign := writeFile(t, "forest.json", `{"format_version": 1, "kind": "forest"}`)
	badVersion := writeFile(t, "v9.json", `{"format_version": 9, "kind": "logistic"}`)
	out := filepath.Join(dir, "out.csv")
	fit := func(args ...string) []string {
		return append([]string{"fit", "--algo", "logistic", "--target", "landed", "--model", filepath.Join(dir, "m.json")}, args...)
	}
	train := "testdata/logistic_train.csv"
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool     // want an errUsage error
		want  []string // substrings of the error
	}{
		{name: "unknown param", args: fit("--train", train, "--drop", "id,color", "--param", "alpha=1"), usage: true, want: []string{`"alpha"`}},
		{name: "param not a number", args: fit("--train", train, "--drop", "id,color", "--param", "C=big"), usage: true, want: []string{"C=big"}},
		{name: "param C negative", args: fit("--train", train, "--drop", "id,color", "--param", "C=-1"), usage: true, want: []string{"C=-1"}},
		{name: "param penalty", args: fit("--train", train, "--drop", "id,color", "--param", "penalty=l3"), usage: true, want: []string{"penalty", "l3"}},
		{name: "param too many features", args: fit("--train", train, "--drop", "id,color", "--param", "n_features_to_select=9"), usage: true, want: []string{"n_features_to_select"}},
		{name: "unknown algo", args: []string{"fit", "--algo", "svm", "--train", train, "--target", "landed", "--model", "m"}, usage: true, want: []string{`"svm"`}},
		{name: "features and drop", args: fit("--train", train, "--features", "lines", "--drop", "id"), usage: true, want: []string{"--features and --drop"}},
		{name: "no train", args: fit(), usage: true, want: []string{"--train"}},
		{name: "string column", args: fit("--train", train), want: []string{`column "color"`, `"blue"`, "line 2", "--categorical color"}},
		{name: "string column parquet", args: fit("--train", "testdata/logistic_train.parquet"), want: []string{`column "color"`, `"blue"`, "row 1"}},
		{name: "non-numeric cell", args: fit("--train", badCell, "--categorical", "color"), want: []string{`column "tests"`, `"n/a"`, "row 2 (line 3)"}},
		{name: "missing target", args: fit("--train", train, "--target", "merged"), want: []string{`target column "merged"`}},
		{name: "missing feature", args: fit("--train", train, "--features", "lines,size"), want: []string{`"size"`}},
		{name: "missing drop", args: fit("--train", train, "--drop", "size"), want: []string{`"size"`}},
		{name: "categorical not a feature", args: fit("--train", train, "--features", "lines", "--categorical", "color"), usage: true, want: []string{`--categorical "color"`}},
		{name: "bad labels", args: fit("--train", labels), want: []string{"label 2"}},
		{name: "string target", args: fit("--train", train, "--target", "color", "--drop", "landed,id"), want: []string{`target column "color"`, `"blue"`}},
		{name: "missing label", args: fit("--train", missingTarget), want: []string{`target column "landed"`, "row 2"}},
		{name: "no rows", args: fit("--train", noRows, "--categorical", "color"), want: []string{"no rows"}},
		{name: "missing train file", args: fit("--train", filepath.Join(dir, "nope.csv")), want: []string{"nope.csv"}},
		{name: "predict missing column", args: []string{"predict", "--model", model, "--data", noTests, "--out", out}, want: []string{`missing column "tests"`}},
		{name: "predict non-numeric cell", args: []string{"predict", "--model", model, "--data", badCell, "--out", out}, want: []string{`column "tests"`, `"n/a"`}},
		{name: "predict unknown kind", args: []string{"predict", "--model", foreign, "--data", train, "--out", out}, want: []string{`"forest"`}},
		{name: "predict unsupported version", args: []string{"predict", "--model", badVersion, "--data", train, "--out", out}, want: []string{"format_version 9"}},
		{name: "predict not a model", args: []string{"predict", "--model", train, "--data", train, "--out", out}, want: []string{"unrecognised model file"}},
		{name: "predict no out", args: []string{"predict", "--model", model, "--data", train}, usage: true, want: []string{"--out"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCmd(t, tc.args...)
			if err == nil {
				t.Fatalf("trainer %s: no error", strings.Join(tc.args, " "))
			}
			if errors.Is(err, errUsage) != tc.usage {
				t.Errorf("trainer %s = %v, usage error %v, want %v", strings.Join(tc.args, " "), err, errors.Is(err, errUsage), tc.usage)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("trainer %s = %v, want it to contain %s", strings.Join(tc.args, " "), err, w)
				}
			}
		})
	}
}
