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

// refTol is the tolerance against LightGBM's own predictions. The reference files hold
// them with 18 significant digits, i.e. the exact doubles; our raw scores are the same
// sums in the same order, and the only difference left is the last bit of exp (Go's
// math.Exp versus the C library's), about 2e-16 relative.
const refTol = 1e-12

// readTSV reads a tab-separated matrix of numbers.
func readTSV(t *testing.T, path string) *mat.Dense {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var data []float64
	rows, cols := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		words := strings.Split(strings.TrimSpace(line), "\t")
		if cols == 0 {
			cols = len(words)
		}
		if len(words) != cols {
			t.Fatalf("%s: row %d has %d columns, want %d", path, rows+1, len(words), cols)
		}
		for _, w := range words {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil {
				t.Fatalf("%s: row %d: %v", path, rows+1, err)
			}
			data = append(data, v)
		}
		rows++
	}
	return mat.NewDense(rows, cols, data)
}

// readColumn reads one number per line.
func readColumn(t *testing.T, path string) []float64 {
	t.Helper()
	x := readTSV(t, path)
	return mat.Col(nil, 0, x)
}

func TestReadLightGBMReference(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"genlin_fmtp_gamma_AvgClaimAmount",
		"genlin_fmtp_poisson_Frequency",
		"genlin_fmtp_tweedie_PurePremium",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, err := LoadLightGBMFile(filepath.Join("testdata", name+".model"))
			if err != nil {
				t.Fatal(err)
			}
			if m.NTrees() != 100 || m.NFeatures() != 9 || m.NClasses() != 1 {
				t.Fatalf("NTrees, NFeatures, NClasses = %d, %d, %d, want 100, 9, 1", m.NTrees(), m.NFeatures(), m.NClasses())
			}
			x := readTSV(t, filepath.Join("testdata", name+"_features.tsv"))
			want := readColumn(t, filepath.Join("testdata", name+"_true_predictions.txt"))
			got := m.Predict(nil, x)
			raw := m.PredictRaw(nil, x)
			for i := range want {
				if !scalar.EqualWithinAbsOrRel(got[i], want[i], 0, refTol) {
					t.Errorf("Predict row %d = %.17g, want %.17g", i, got[i], want[i])
				}
				// The raw score is the log of LightGBM's prediction (log link).
				if w := math.Log(want[i]); !scalar.EqualWithinAbsOrRel(raw[i], w, refTol, refTol) {
					t.Errorf("PredictRaw row %d = %.17g, want log(LightGBM) %.17g", i, raw[i], w)
				}
			}
		})
	}
}

// readTreeBlock reads a bare Tree=K block (the tree_*leaf*.txt files) into a Tree.
func readTreeBlock(t *testing.T, path string) *Tree {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && k != "Tree" {
			fields[k] = v
		}
	}
	tree, err := parseTree(fields)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tree
}

func TestParseTreeFiles(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		file   string
		leaves int
		nodes  []node
		cases  []struct {
			row  []float64
			want float64
		}
	}{
		{
			file: "tree_1leaf.txt", leaves: 1,
			cases: []struct {
				row  []float64
				want float64
			}{{[]float64{0}, 0.123}, {[]float64{nan}, 0.123}},
		},
		{
			file: "tree_2leaves.txt", leaves: 2,
			nodes: []node{{threshold: 5, feature: 0, left: 0, right: 1, flags: flagDefaultLeft | flagLeafLeft | flagLeafRight}},
			cases: []struct {
				row  []float64
				want float64
			}{
				{[]float64{5}, 0.43}, // equal to the threshold: left (<=)
				{[]float64{math.Nextafter(5, 6)}, 0.59},
				{[]float64{-100}, 0.43},
				{[]float64{nan}, 0.43}, // missing type None: NaN counts as 0 <= 5
			},
		},
		{
			file: "tree_3leaves.txt", leaves: 3,
			nodes: []node{
				{threshold: 0, feature: 1, left: 0, right: 1, flags: flagCategorical | flagMissingNaN | flagLeafLeft},
				{threshold: 756, feature: 0, left: 1, right: 2, flags: flagDefaultLeft | flagLeafLeft | flagLeafRight},
			},
			cases: []struct {
				row  []float64
				want float64
			}{
				{[]float64{0, 100}, 0.54},   // category 100 is bit 4 of word 3 (16)
				{[]float64{0, 100.9}, 0.54}, // truncated to 100, as C++'s int cast
				{[]float64{756, 3}, 0.35},   // not in the set: right, then 756 <= 756
				{[]float64{757, 3}, 0.38},
				{[]float64{0, nan}, 0.35},  // NaN category goes right
				{[]float64{0, -1}, 0.35},   // negative category goes right
				{[]float64{0, -0.5}, 0.35}, // truncates to category 0, not in the set
				{[]float64{0, 1e10}, 0.35}, // beyond int32: right
				{[]float64{0, 132}, 0.35},  // beyond the bitset: right
			},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			tree := readTreeBlock(t, filepath.Join("testdata", tc.file))
			if tree.NLeaves() != tc.leaves {
				t.Fatalf("NLeaves() = %d, want %d", tree.NLeaves(), tc.leaves)
			}
			if len(tree.nodes) != len(tc.nodes) {
				t.Fatalf("%d nodes, want %d", len(tree.nodes), len(tc.nodes))
			}
			for i := range tc.nodes {
				if tree.nodes[i] != tc.nodes[i] {
					t.Errorf("node %d = %+v, want %+v", i, tree.nodes[i], tc.nodes[i])
				}
			}
			for _, c := range tc.cases {
				if got := tree.Predict(c.row); got != c.want {
					t.Errorf("Predict(%v) = %v, want %v", c.row, got, c.want)
				}
			}
		})
	}
}

func TestReadLightGBMSimple(t *testing.T) {
	t.Parallel()
	m, err := LoadLightGBMFile("testdata/model_simple.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.FeatureNames(); strings.Join(got, ",") != "X1,X2" {
		t.Errorf("FeatureNames() = %v, want [X1 X2]", got)
	}
	if m.Objective() != "binary sigmoid:1" {
		t.Errorf("Objective() = %q, want %q", m.Objective(), "binary sigmoid:1")
	}
	// Both trees split on X2 == 100 (left), then X1 <= 340.5; leaf values from the file.
	x := mat.NewDense(3, 2, []float64{
		10, 100,
		340.5, 2,
		341, 2,
	})
	// add rounds at run time: Go would add constants exactly and round once.
	add := func(a, b float64) float64 { return a + b }
	wantRaw := []float64{
		add(0.56697267424823339, 0.12883103567558912),
		add(0.3584987837673016, -0.063872842243335157),
		add(0.41213915936587919, -0.016484332942214807),
	}
	raw := m.PredictRaw(nil, x)
	p := m.Predict(nil, x)
	for i := range wantRaw {
		if raw[i] != wantRaw[i] {
			t.Errorf("PredictRaw row %d = %.17g, want %.17g", i, raw[i], wantRaw[i])
		}
		if want := 1 / (1 + math.Exp(-wantRaw[i])); p[i] != want {
			t.Errorf("Predict row %d = %.17g, want %.17g", i, p[i], want)
		}
	}
}

func TestReadLightGBMMissingTypes(t *testing.T) {
	t.Parallel()
	m, err := LoadLightGBMFile("testdata/hand_missing_v4.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Tree 0: a <= 1.5 (NaN missing, default left) 1 | 2.
	// Tree 1: b <= 0.5 (Zero missing, default right) 10 | 20.
	// Tree 2: a <= 0.5 (no missing type: NaN is 0) 100 | 200.
	// Tree 3: b <= 100 (NaN missing, default right) 1000 | 2000.
	nan := math.NaN()
	for _, tc := range []struct {
		a, b, want float64
	}{
		{0, 0, 1121},
		{nan, nan, 2121},
		{2, -1, 1212},
		{1.5, 1e-36, 1221},
		{0.5, 0.3, 1111},
		{1.6, 150, 2222},
		{-1, -1e-30, 1111},
	} {
		x := mat.NewDense(1, 2, []float64{tc.a, tc.b})
		if got := m.Predict(nil, x)[0]; got != tc.want {
			t.Errorf("Predict(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestReadLightGBMMulticlass(t *testing.T) {
	t.Parallel()
	m, err := LoadLightGBMFile("testdata/hand_multiclass_v4.txt")
	if err != nil {
		t.Fatal(err)
	}
	if m.NClasses() != 3 || m.NTrees() != 6 {
		t.Fatalf("NClasses, NTrees = %d, %d, want 3, 6", m.NClasses(), m.NTrees())
	}
	x := mat.NewDense(4, 2, []float64{
		1, 1,
		6, 2,
		9, math.NaN(),
		2, 3,
	})
	// Raw scores worked out by hand from the trees (class k sums trees k and k+3).
	wantRaw := []float64{
		0.625, -0.5, 0.9375,
		-0.375, 1, -0.0625,
		-0.125, -0.5, -0.0625,
		0.625, 1, 0.9375,
	}
	raw := m.PredictRaw(nil, x)
	p := m.Predict(nil, x)
	for i := 0; i < 4; i++ {
		sum := 0.0
		for k := 0; k < 3; k++ {
			sum += math.Exp(wantRaw[3*i+k])
		}
		for k := 0; k < 3; k++ {
			j := 3*i + k
			if raw[j] != wantRaw[j] {
				t.Errorf("PredictRaw row %d class %d = %v, want %v", i, k, raw[j], wantRaw[j])
			}
			if want := math.Exp(wantRaw[j]) / sum; !scalar.EqualWithinAbsOrRel(p[j], want, refTol, refTol) {
				t.Errorf("Predict row %d class %d = %v, want %v", i, k, p[j], want)
			}
		}
	}
}

// oneTreeModel is a model with one 2-leaf tree on feature x (x <= 0 gives -0.3, else
// 0.7) and the given objective line, version and extra tree field.
func oneTreeModel(version, objective, extra string) string {
	return "tree\nversion=" + version + "\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\n" +
		"max_feature_idx=0\n" + objective + "\nfeature_names=x\nfeature_infos=[-1:1]\n\n" +
		"Tree=0\nnum_leaves=2\nnum_cat=0\nsplit_feature=0\nsplit_gain=1\nthreshold=0\n" +
		"decision_type=2\nleft_child=-1\nright_child=-2\nleaf_value=-0.3 0.7\n" + extra +
		"shrinkage=1\n\n\nend of trees\n"
}

func TestReadLightGBMObjectives(t *testing.T) {
	t.Parallel()
	sigmoid := func(k, x float64) float64 { return 1 / (1 + math.Exp(-k*x)) }
	for _, tc := range []struct {
		objective string
		version   string
		extra     string
		want      [2]float64 // predictions at raw -0.3 and 0.7
		wantErr   error
	}{
		{"objective=regression", "v4", "", [2]float64{-0.3, 0.7}, nil},
		{"objective=regression_l1", "v3", "", [2]float64{-0.3, 0.7}, nil},
		{"objective=huber", "v2", "", [2]float64{-0.3, 0.7}, nil},
		{"objective=regression sqrt", "v4", "", [2]float64{-0.3 * 0.3, 0.7 * 0.7}, nil},
		{"objective=binary sigmoid:1", "v4", "", [2]float64{sigmoid(1, -0.3), sigmoid(1, 0.7)}, nil},
		{"objective=binary sigmoid:2.5", "v4", "", [2]float64{sigmoid(2.5, -0.3), sigmoid(2.5, 0.7)}, nil},
		{"objective=cross_entropy", "v4", "", [2]float64{sigmoid(1, -0.3), sigmoid(1, 0.7)}, nil},
		{"objective=poisson", "v4", "", [2]float64{math.Exp(-0.3), math.Exp(0.7)}, nil},
		{"objective=gamma", "v4", "", [2]float64{math.Exp(-0.3), math.Exp(0.7)}, nil},
		{"objective=tweedie", "v4", "", [2]float64{math.Exp(-0.3), math.Exp(0.7)}, nil},
		{"", "v4", "", [2]float64{-0.3, 0.7}, nil}, // custom objective: raw scores
		{"objective=regression", "v4", "is_linear=0\n", [2]float64{-0.3, 0.7}, nil},
		{"objective=lambdarank", "v4", "", [2]float64{}, ErrUnsupportedObjective},
		{"objective=multiclassova num_class:2 sigmoid:1", "v4", "", [2]float64{}, ErrUnsupportedObjective},
		{"objective=binary sigmoid:1 foo:2", "v4", "", [2]float64{}, ErrUnsupportedObjective},
		{"objective=binary sigmoid:-1", "v4", "", [2]float64{}, ErrFormat},
		{"objective=multiclass num_class:3", "v4", "", [2]float64{}, ErrFormat},
		{"objective=regression", "v1", "", [2]float64{}, ErrUnsupportedVersion},
		{"objective=regression", "v5", "", [2]float64{}, ErrUnsupportedVersion},
		{"objective=regression", "v4", "is_linear=1\n", [2]float64{}, ErrUnsupportedFeature},
	} {
		name := tc.version + " " + tc.objective + " " + strings.TrimSpace(tc.extra)
		t.Run(name, func(t *testing.T) {
			m, err := ReadLightGBM(strings.NewReader(oneTreeModel(tc.version, tc.objective, tc.extra)))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("ReadLightGBM() error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			got := m.Predict(nil, mat.NewDense(2, 1, []float64{-1, 1}))
			for i := range got {
				if !scalar.EqualWithinAbsOrRel(got[i], tc.want[i], refTol, refTol) {
					t.Errorf("Predict()[%d] = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestReadLightGBMErrors(t *testing.T) {
	t.Parallel()
	good := oneTreeModel("v4", "objective=regression", "")
	for _, tc := range []struct {
		name    string
		input   string
		wantErr error
	}{
		{"empty", "", ErrFormat},
		{"no tree line", strings.TrimPrefix(good, "tree\n"), ErrFormat},
		{"no version", strings.Replace(good, "version=v4\n", "", 1), ErrUnsupportedVersion},
		{"no end of trees", strings.Replace(good, "end of trees\n", "", 1), ErrFormat},
		{"bad tree number", strings.Replace(good, "Tree=0", "Tree=1", 1), ErrFormat},
		{"leaf out of range", strings.Replace(good, "right_child=-2", "right_child=-3", 1), ErrFormat},
		{"node out of range", strings.Replace(good, "right_child=-2", "right_child=1", 1), ErrFormat},
		{"node cycle", strings.Replace(good, "right_child=-2", "right_child=0", 1), ErrFormat},
		{"leaf twice", strings.Replace(good, "right_child=-2", "right_child=-1", 1), ErrFormat},
		{"short leaf_value", strings.Replace(good, "leaf_value=-0.3 0.7", "leaf_value=-0.3", 1), ErrFormat},
		{"NaN leaf", strings.Replace(good, "leaf_value=-0.3 0.7", "leaf_value=nan 0.7", 1), ErrFormat},
		{"bad number", strings.Replace(good, "threshold=0", "threshold=zero", 1), ErrFormat},
		{"feature beyond max_feature_idx", strings.Replace(good, "split_feature=0", "split_feature=1", 1), ErrFormat},
		{"missing type 3", strings.Replace(good, "decision_type=2", "decision_type=12", 1), ErrFormat},
		{"categorical without bitset", strings.Replace(good, "decision_type=2", "decision_type=1", 1), ErrFormat},
		{"feature_names count", strings.Replace(good, "feature_names=x", "feature_names=x y", 1), ErrFormat},
		{"no num_leaves", strings.Replace(good, "num_leaves=2\n", "", 1), ErrFormat},
		{"trees per class", strings.Replace(good, "num_tree_per_iteration=1", "num_tree_per_iteration=2", 1), ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadLightGBM(strings.NewReader(tc.input))
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("ReadLightGBM() error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestLinkString(t *testing.T) {
	t.Parallel()
	for l, want := range map[link]string{
		linkIdentity: "identity", linkSquare: "square", linkSigmoid: "sigmoid",
		linkExp: "exp", linkSoftmax: "softmax", link(99): "link(99)",
	} {
		if got := l.String(); got != want {
			t.Errorf("link(%d).String() = %q, want %q", l, got, want)
		}
	}
}

func FuzzReadLightGBM(f *testing.F) {
	for _, name := range []string{"model_simple.txt", "hand_missing_v4.txt", "hand_multiclass_v4.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(oneTreeModel("v3", "objective=binary sigmoid:1", "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadLightGBM(bytes.NewReader(data))
		if err != nil {
			t.Skip("fuzz input is not a valid model; the reader refused it without panicking")
		}
		if len(m.FeatureNames()) != m.NFeatures() {
			t.Fatalf("%d feature names, NFeatures() = %d", len(m.FeatureNames()), m.NFeatures())
		}
		for i := range m.NTrees() {
			if mf := m.Tree(i).maxFeature(); mf >= m.NFeatures() {
				t.Fatalf("tree %d splits on feature %d, NFeatures() = %d", i, mf, m.NFeatures())
			}
		}
		if m.NFeatures() > 1000 {
			return
		}
		x := mat.NewDense(3, m.NFeatures(), nil)
		for j := range m.NFeatures() {
			x.Set(1, j, math.NaN())
			x.Set(2, j, float64(j)+0.5)
		}
		if got := m.Predict(nil, x); len(got) != 3*m.NClasses() {
			t.Fatalf("len(Predict) = %d, want %d", len(got), 3*m.NClasses())
		}
		m.PredictLeaf(nil, x)
	})
}

func TestWriteLightGBMReproducesLightGBMFiles(t *testing.T) {
	t.Parallel()
	// Reading a model LightGBM wrote and writing it back gives LightGBM's file byte for
	// byte: every header line, every tree field, tree_sizes, feature importances and
	// parameters.
	for _, name := range []string{
		"genlin_fmtp_gamma_AvgClaimAmount.model",
		"genlin_fmtp_poisson_Frequency.model",
		"genlin_fmtp_tweedie_PurePremium.model",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ReadLightGBM(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteLightGBM(&got, m); err != nil {
				t.Fatal(err)
			}
			gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("line %d = %.80q, LightGBM wrote %.80q", i+1, gl[i], wl[i])
				}
			}
			if len(gl) != len(wl) {
				t.Fatalf("%d lines, LightGBM wrote %d", len(gl), len(wl))
			}
		})
	}
}

// blockKeys returns the keys of the key=value lines of text from the line equal to
// from up to (not including) the first line equal to until.
func blockKeys(text, from, until string) []string {
	var keys []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if line == from {
			in = true
		}
		if in && line == until {
			break
		}
		if k, _, ok := strings.Cut(line, "="); in && ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func TestWriteLightGBMRoundTrip(t *testing.T) {
	t.Parallel()
	x, y := friedman(300, 1, 12)
	xn := mat.DenseCopyOf(x)
	for i := 0; i < 300; i += 7 {
		xn.Set(i, 2, math.NaN())
	}
	yb := make([]float64, len(y))
	for i := range y {
		if y[i] > 14 {
			yb[i] = 1
		}
	}
	ref, err := os.ReadFile("testdata/genlin_fmtp_gamma_AvgClaimAmount.model")
	if err != nil {
		t.Fatal(err)
	}
	refHeader := blockKeys(string(ref), "tree", "")
	refTree := blockKeys(string(ref), "Tree=0", "")
	refTree = slices.DeleteFunc(refTree, func(k string) bool { return k == "Tree" || k == "cat_boundaries" || k == "cat_threshold" })
	hand, err := LoadLightGBMFile("testdata/hand_multiclass_v4.txt")
	if err != nil {
		t.Fatal(err)
	}
	fit := func(cfg Config, x mat.Matrix, y []float64) *Model {
		m, err := Fit(x, y, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		m    *Model
		x    mat.Matrix
	}{
		{"regression", fit(Config{NumIterations: 20, FeatureNames: []string{"a", "b", "c", "d", "e", "f"}}, x, y), x},
		{"regression with NaN", fit(Config{NumIterations: 20}, xn, y), xn},
		{"binary", fit(Config{Objective: ObjectiveBinary, NumIterations: 20}, x, yb), x},
		{"custom", fit(Config{NumIterations: 5, Gradient: func(g, h, s, y, w []float64) {
			for i := range g {
				g[i], h[i] = s[i]-y[i], 1
			}
		}}, x, y), x},
		{"multiclass by hand", hand, mat.NewDense(2, 2, []float64{1, 1, 9, math.NaN()})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var first, second bytes.Buffer
			if err := WriteLightGBM(&first, tc.m); err != nil {
				t.Fatal(err)
			}
			back, err := ReadLightGBM(bytes.NewReader(first.Bytes()))
			if err != nil {
				t.Fatalf("reading what WriteLightGBM wrote: %v\n%s", err, first.String())
			}
			if !slices.Equal(back.FeatureNames(), tc.m.FeatureNames()) || back.Objective() != tc.m.Objective() ||
				back.NTrees() != tc.m.NTrees() || back.NClasses() != tc.m.NClasses() {
				t.Errorf("read back: names %v objective %q trees %d classes %d, want %v %q %d %d",
					back.FeatureNames(), back.Objective(), back.NTrees(), back.NClasses(),
					tc.m.FeatureNames(), tc.m.Objective(), tc.m.NTrees(), tc.m.NClasses())
			}
			if a, b := tc.m.Predict(nil, tc.x), back.Predict(nil, tc.x); !slices.Equal(a, b) {
				t.Errorf("predictions differ after the round trip")
			}
			if a, b := tc.m.PredictLeaf(nil, tc.x), back.PredictLeaf(nil, tc.x); !slices.Equal(a, b) {
				t.Errorf("leaf indices differ after the round trip")
			}
			if err := WriteLightGBM(&second, back); err != nil {
				t.Fatal(err)
			}
			if first.String() != second.String() {
				t.Errorf("writing the model read back changed the text")
			}
			text := first.String()
			// The fields LightGBM writes, in its order (taken from its own file).
			hdr := slices.DeleteFunc(blockKeys(text, "tree", ""), func(k string) bool { return k == "objective" })
			wantHdr := slices.DeleteFunc(slices.Clone(refHeader), func(k string) bool { return k == "objective" })
			if !slices.Equal(hdr, wantHdr) {
				t.Errorf("header keys %v, LightGBM writes %v", hdr, wantHdr)
			}
			for i := range back.NTrees() {
				keys := slices.DeleteFunc(blockKeys(text, "Tree="+strconv.Itoa(i), ""),
					func(k string) bool { return k == "Tree" || k == "cat_boundaries" || k == "cat_threshold" })
				if !slices.Equal(keys, refTree) {
					t.Fatalf("tree %d keys %v, LightGBM writes %v", i, keys, refTree)
				}
			}
			// tree_sizes gives each Tree=K block's length in bytes, which LightGBM
			// uses to find the blocks.
			sizesLine := text[strings.Index(text, "tree_sizes=")+len("tree_sizes="):]
			sizesLine = sizesLine[:strings.IndexByte(sizesLine, '\n')]
			pos := strings.Index(text, "Tree=0\n")
			for i, s := range strings.Fields(sizesLine) {
				n, _ := strconv.Atoi(s)
				if !strings.HasPrefix(text[pos:], "Tree="+strconv.Itoa(i)+"\n") {
					t.Fatalf("tree_sizes: block %d does not start at byte %d", i, pos)
				}
				pos += n
			}
			if !strings.HasPrefix(text[pos:], "end of trees\n") {
				t.Errorf("tree_sizes do not add up to the start of \"end of trees\"")
			}
		})
	}
}

func TestSaveLightGBMFile(t *testing.T) {
	t.Parallel()
	m, err := LoadLightGBMFile("testdata/model_simple.txt")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.txt")
	if err := SaveLightGBMFile(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := LoadLightGBMFile(path)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(1, 2, []float64{10, 100})
	if a, b := m.Predict(nil, x)[0], back.Predict(nil, x)[0]; a != b {
		t.Errorf("saved model predicts %v, original %v", b, a)
	}
	if err := SaveLightGBMFile(filepath.Join(t.TempDir(), "missing", "model.txt"), m); err == nil {
		t.Error("SaveLightGBMFile into a missing directory succeeded")
	}
}

func TestReadLightGBMAverageOutput(t *testing.T) {
	t.Parallel()
	// A random-forest model (boosting=rf) marks itself with a bare average_output line:
	// LightGBM's Predict takes the mean of the trees before the link, while its
	// PredictRaw returns the sum.
	leaf := func(i int, v string) string {
		return "Tree=" + strconv.Itoa(i) + "\nnum_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\n" +
			"decision_type=\nleft_child=\nright_child=\nleaf_value=" + v + "\nleaf_weight=\nleaf_count=\n" +
			"internal_value=\ninternal_weight=\ninternal_count=\nis_linear=0\nshrinkage=1\n\n\n"
	}
	text := "tree\nversion=v3\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=0\n" +
		"objective=binary sigmoid:1\naverage_output\nfeature_names=x\nfeature_infos=none\n\n" +
		leaf(0, "1") + leaf(1, "3") + "end of trees\n"
	m, err := ReadLightGBM(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(1, 1, []float64{0})
	if got := m.PredictRaw(nil, x)[0]; got != 4 {
		t.Errorf("PredictRaw = %v, want the sum 4", got)
	}
	if got, want := m.Predict(nil, x)[0], 1/(1+math.Exp(-2)); got != want {
		t.Errorf("Predict = %v, want %v", got, want)
	}
	var b bytes.Buffer
	if err := WriteLightGBM(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\naverage_output\n") {
		t.Error("WriteLightGBM dropped average_output")
	}
}
