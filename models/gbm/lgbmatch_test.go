package gbm

import (
	"bufio"
	"bytes"
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
)

// lgbMatchTol is the tolerance between our predictions and LightGBM's on the same
// data and parameters. Training does LightGBM's floating-point operations in
// LightGBM's order, and on amd64 the predictions are LightGBM's to the bit (the
// tests log the largest difference); the tolerance leaves room for platforms where
// Go fuses multiply-adds.
const lgbMatchTol = 1e-12

// readCSVFloats reads a CSV file with a header line into its column names and rows.
func readCSVFloats(t *testing.T, path string) ([]string, [][]float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	head := strings.Split(sc.Text(), ",")
	var rows [][]float64
	for sc.Scan() {
		var row []float64
		for _, s := range strings.Split(sc.Text(), ",") {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s row %d: %v", path, len(rows)+1, err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return head, rows
}

// readFloatLines reads one number per line.
func readFloatLines(t *testing.T, path string) []float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for i, s := range strings.Fields(string(data)) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		out = append(out, v)
	}
	return out
}

// lgbCase is one line of a testdata/*_cases.txt file: a name, the label column and
// the LightGBM parameters the vectors were made with.
type lgbCase struct {
	name, label string
	params      map[string]string
}

func readCases(t *testing.T, path string) []lgbCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []lgbCase
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fields := strings.Fields(line)
		c := lgbCase{name: fields[0], params: map[string]string{}}
		for _, kv := range fields[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if k == "label" {
				c.label = v
				continue
			}
			c.params[k] = v
		}
		cases = append(cases, c)
	}
	return cases
}

// TestCategoricalMatchesLightGBM trains on testdata/cat_train.csv (two categorical
// columns, two numerical) with the parameters of each case in cat_cases.txt, which
// gen_cat.py gave LightGBM 4.6.0, and checks that our raw predictions on cat_test.csv
// (the training rows and rows with unseen categories) equal LightGBM's predictions
// from its own model. It also checks that LightGBM, given the model we write
// (cat_<case>_ours.model, kept in testdata), predicts what we predict.
func TestCategoricalMatchesLightGBM(t *testing.T) {
	head, train := readCSVFloats(t, filepath.Join("testdata", "cat_train.csv"))
	_, test := readCSVFloats(t, filepath.Join("testdata", "cat_test.csv"))
	if strings.Join(head, ",") != "y,yb,c0,c1,x2,x3" {
		t.Fatalf("cat_train.csv header %v", head)
	}
	x := mat.NewDense(len(train), 4, nil)
	for i, r := range train {
		x.SetRow(i, r[2:])
	}
	xt := mat.NewDense(len(test), 4, nil)
	for i, r := range test {
		xt.SetRow(i, r[1:])
	}
	for _, c := range readCases(t, filepath.Join("testdata", "cat_cases.txt")) {
		t.Run(c.name, func(t *testing.T) {
			col := map[string]int{"y": 0, "yb": 1}[c.label]
			y := make([]float64, len(train))
			for i, r := range train {
				y[i] = r[col]
			}
			params := map[string]string{"categorical_feature": "name:c0,c1", "num_threads": "1"}
			for k, v := range c.params {
				params[k] = v
			}
			cfg, err := ParseParams(params)
			if err != nil {
				t.Fatal(err)
			}
			cfg.FeatureNames = []string{"c0", "c1", "x2", "x3"}
			m, err := Fit(x, y, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := m.PredictRaw(nil, xt)
			checkRawAgainstLightGBM(t, got, filepath.Join("testdata", "cat_"+c.name+"_raw.txt"), lgbMatchTol)

			var buf bytes.Buffer
			if err := WriteLightGBM(&buf, m); err != nil {
				t.Fatal(err)
			}
			oursPath := filepath.Join("testdata", "cat_"+c.name+"_ours.model")
			if *update {
				if err := os.WriteFile(oursPath, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			kept, err := os.ReadFile(oursPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(kept, buf.Bytes()) {
				t.Fatalf("%s is not the model we write now; rerun with -update, then gen_cat.py ours", oursPath)
			}
			lgbOurs := readFloatLines(t, filepath.Join("testdata", "cat_"+c.name+"_ours_lgb_raw.txt"))
			for i := range lgbOurs {
				if !scalar.EqualWithinAbsOrRel(got[i], lgbOurs[i], exactTol, exactTol) {
					t.Fatalf("row %d: LightGBM predicts %.17g with our model, we predict %.17g", i, lgbOurs[i], got[i])
				}
			}
		})
	}
}

// checkRawAgainstLightGBM checks our raw scores got against LightGBM's, one per line of
// the file raw, within tol (absolute or relative), listing the first five rows that
// differ.
func checkRawAgainstLightGBM(t *testing.T, got []float64, raw string, tol float64) {
	t.Helper()
	want := readFloatLines(t, raw)
	if len(want) != len(got) {
		t.Fatalf("%d LightGBM predictions for %d rows", len(want), len(got))
	}
	bad, worst := 0, 0.0
	for i := range want {
		worst = max(worst, math.Abs(got[i]-want[i]))
		if !scalar.EqualWithinAbsOrRel(got[i], want[i], tol, tol) {
			if bad < 5 {
				t.Errorf("row %d: raw score %.17g, LightGBM %.17g", i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d rows differ from LightGBM (largest difference %g)", bad, len(want), worst)
	}
	t.Logf("largest difference from LightGBM %g", worst)
}

// optTol is the tolerance between our raw scores and LightGBM's for the option
// cases, bit-identical on amd64 like lgbMatchTol's.
const optTol = 1e-13

// TestOptionsMatchLightGBM fits testdata/opt_train.csv (three numerical features, one
// with missing values) with the parameters of each case in opt_cases.txt, which
// gen_opts.py gave LightGBM 4.6.0, and checks our raw scores on the training rows
// against LightGBM's.
func TestOptionsMatchLightGBM(t *testing.T) {
	head, train := readCSVFloats(t, filepath.Join("testdata", "opt_train.csv"))
	if strings.Join(head, ",") != "y,yb,yc,w,x0,x1,x2" {
		t.Fatalf("opt_train.csv header %v", head)
	}
	x := mat.NewDense(len(train), 3, nil)
	w := make([]float64, len(train))
	for i, r := range train {
		x.SetRow(i, r[4:])
		w[i] = r[3]
	}
	for _, c := range readCases(t, filepath.Join("testdata", "opt_cases.txt")) {
		t.Run(c.name, func(t *testing.T) {
			col := map[string]int{"y": 0, "yb": 1, "yc": 2}[c.label]
			y := make([]float64, len(train))
			for i, r := range train {
				y[i] = r[col]
			}
			var weights []float64
			if c.params["weighted"] == "1" {
				weights = w
			}
			params := map[string]string{"num_threads": "1"}
			for k, v := range c.params {
				if k != "weighted" {
					params[k] = v
				}
			}
			cfg, err := ParseParams(params)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Fit(x, y, weights, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkRawAgainstLightGBM(t, m.PredictRaw(nil, x), filepath.Join("testdata", "opt_"+c.name+"_raw.txt"), optTol)
		})
	}
}

func TestParseParamsLightGBMOptions(t *testing.T) {
	cfg, err := ParseParams(map[string]string{
		"categorical_feature": "0,2", "cat_smooth": "0", "cat_l2": "1.5", "max_cat_to_onehot": "8",
		"max_cat_threshold": "4", "min_data_per_group": "7", "reg_alpha": "0.25", "min_split_gain": "0.5",
		"max_delta_step": "0.7", "unbalance": "true", "objective": "binary",
	})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.treeConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.CategoricalFeature, []int{0, 2}) || tc.CatSmooth != 0 || tc.CatL2 != 1.5 ||
		tc.MaxCatToOnehot != 8 || tc.MaxCatThreshold != 4 || tc.MinDataPerGroup != 7 || tc.LambdaL1 != 0.25 ||
		tc.MinGainToSplit != 0.5 || tc.MaxDeltaStep != 0.7 || !cfg.IsUnbalance {
		t.Errorf("ParseParams gave %+v, tree config %+v", cfg, tc)
	}
	cfg, err = ParseParams(map[string]string{"cat_feature": "name:b, c", "objective": "poisson", "poisson_max_delta_step": "0.2"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.categoricalNames, []string{"b", "c"}) || cfg.Objective != ObjectivePoisson || cfg.PoissonMaxDeltaStep != 0.2 {
		t.Errorf("ParseParams gave %+v", cfg)
	}
	for _, bad := range []map[string]string{
		{"categorical_feature": "a,b"},
		{"categorical_feature": "-1"},
		{"is_unbalance": "maybe"},
		{"scale_pos_weight": "0"},
		{"lambda_l1": "-1"},
		{"objective": "regression", "scale_pos_weight": "2"},
		{"objective": "binary", "scale_pos_weight": "2", "is_unbalance": "true"},
	} {
		c, err := ParseParams(bad)
		if err == nil {
			_, err = c.validate()
		}
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseParams(%v) then validate: error %v, want ErrBadConfig", bad, err)
		}
	}
	// Names in categorical_feature must be feature names; poisson needs a count > 0.
	x := mat.NewDense(4, 2, []float64{0, 1, 1, 2, 2, 3, 3, 4})
	cfg, _ = ParseParams(map[string]string{"categorical_feature": "name:z"})
	cfg.FeatureNames = []string{"a", "b"}
	if _, err := Fit(x, []float64{1, 2, 3, 4}, nil, cfg); !errors.Is(err, ErrBadConfig) {
		t.Errorf("categorical_feature=name:z: error %v, want ErrBadConfig", err)
	}
	if _, err := Fit(x, []float64{0, 0, 0, 0}, nil, Config{Objective: ObjectivePoisson}); !errors.Is(err, ErrBadData) {
		t.Errorf("poisson on zero counts: error %v, want ErrBadData", err)
	}
	// LightGBM's weighted percentiles are not implemented: refused, not approximated.
	if _, err := Fit(x, []float64{1, 2, 3, 4}, []float64{1, 2, 1, 2}, Config{Objective: ObjectiveQuantile}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("weighted quantile: error %v, want ErrBadConfig", err)
	}
}

// TestMonotoneConstraintsHold checks the property monotone_constraints promise, on
// the model of case "monotone" of opt_cases.txt (x0 increasing, x1 decreasing):
// moving x0 up never lowers a row's prediction and moving x1 up never raises it.
func TestMonotoneConstraintsHold(t *testing.T) {
	_, train := readCSVFloats(t, filepath.Join("testdata", "opt_train.csv"))
	x := mat.NewDense(len(train), 3, nil)
	y := make([]float64, len(train))
	for i, r := range train {
		x.SetRow(i, r[4:])
		y[i] = r[0]
	}
	cfg, err := ParseParams(map[string]string{"monotone_constraints": "1,-1,0", "num_leaves": "10", "min_data_in_leaf": "8",
		"num_iterations": "25", "learning_rate": "0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.MonotoneConstraints, []int{1, -1, 0}) {
		t.Fatalf("MonotoneConstraints = %v", cfg.MonotoneConstraints)
	}
	m, err := Fit(x, y, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, 3)
	out := make([]float64, 1)
	pred := func() float64 { return m.PredictRawRow(out, row)[0] }
	for i := range train {
		copy(row, x.RawRowView(i))
		prev := math.Inf(-1)
		for v := -1.0; v <= 10; v += 0.5 {
			row[0] = v
			if p := pred(); p < prev {
				t.Fatalf("row %d: prediction falls from %v to %v as x0 rises to %v", i, prev, p, v)
			} else {
				prev = p
			}
		}
		copy(row, x.RawRowView(i))
		prev = math.Inf(1)
		for v := -1.0; v <= 1; v += 0.125 {
			row[1] = v
			if p := pred(); p > prev {
				t.Fatalf("row %d: prediction rises from %v to %v as x1 rises to %v", i, prev, p, v)
			} else {
				prev = p
			}
		}
	}
	for _, bad := range []map[string]string{{"monotone_constraints": "1,2"}, {"monotone_constraints": "a"}} {
		if _, err := ParseParams(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseParams(%v): error %v, want ErrBadConfig", bad, err)
		}
	}
	cfg.MonotoneConstraints = []int{1, 0}
	if _, err := Fit(x, y, nil, cfg); !errors.Is(err, ErrBadConfig) {
		t.Errorf("two constraints for three features: error %v, want ErrBadConfig", err)
	}
}
