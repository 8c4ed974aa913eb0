package gbm

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

// goldenTol: the golden predictions are our own, written with 17 significant digits;
// a refit on another architecture may differ in the last bits (fused multiply-add).
const goldenTol = 1e-9

// goldenData is the input of the golden models: Friedman #1 with a tenth of the third
// feature missing.
func goldenData() (*mat.Dense, []float64, []float64) {
	x, y := friedman(300, 1, 31)
	for i := 0; i < 300; i += 10 {
		x.Set(i, 2, math.NaN())
	}
	yb := make([]float64, len(y))
	for i := range y {
		if y[i] > 14 {
			yb[i] = 1
		}
	}
	return x, y, yb
}

// TestWrittenGolden keeps models written by WriteLightGBM, with our predictions, in
// testdata/ (gbm_written_*.golden). Besides pinning the writer's output, they let
// testdata/check_with_lightgbm.py check with LightGBM itself that LightGBM loads our
// files and predicts what we do, which cannot be run in this build environment.
func TestWrittenGolden(t *testing.T) {
	x, y, yb := goldenData()
	featPath := filepath.Join("testdata", "gbm_written_features.tsv")
	if *update {
		var b strings.Builder
		r, c := x.Dims()
		for i := range r {
			for j := range c {
				if j > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(strconv.FormatFloat(x.At(i, j), 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(featPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"x0", "x1", "x2", "x3", "x4", "x5"}
	for _, tc := range []struct {
		name string
		cfg  Config
		y    []float64
	}{
		{"regression", Config{NumIterations: 10, NumLeaves: 7, MinDataInLeaf: 10, FeatureNames: names}, y},
		{"binary", Config{Objective: ObjectiveBinary, NumIterations: 10, NumLeaves: 7, MinDataInLeaf: 10, FeatureNames: names}, yb},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Fit(x, tc.y, nil, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			modelPath := filepath.Join("testdata", "gbm_written_"+tc.name+".golden")
			predPath := filepath.Join("testdata", "gbm_written_"+tc.name+"_predictions.golden")
			p := m.Predict(nil, x)
			if *update {
				var b bytes.Buffer
				if err := WriteLightGBM(&b, m); err != nil {
					t.Fatal(err)
				}
				var pb strings.Builder
				for _, v := range p {
					pb.WriteString(strconv.FormatFloat(v, 'g', 17, 64) + "\n")
				}
				if err := os.WriteFile(modelPath, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(predPath, []byte(pb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := LoadLightGBMFile(modelPath)
			if err != nil {
				t.Fatal(err)
			}
			fx := readTSV(t, featPath)
			want := readColumn(t, predPath)
			gp := golden.Predict(nil, fx)
			for i := range want {
				if !scalar.EqualWithinAbsOrRel(p[i], want[i], goldenTol, goldenTol) {
					t.Fatalf("refit: Predict row %d = %v, golden %v", i, p[i], want[i])
				}
				if !scalar.EqualWithinAbsOrRel(gp[i], want[i], exactTol, exactTol) {
					t.Fatalf("golden model: Predict row %d = %v, golden %v", i, gp[i], want[i])
				}
			}
		})
	}
}
