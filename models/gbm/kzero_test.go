package gbm

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// readCSVRows reads a CSV file with a header and a label column first, returning the
// feature columns.
func readCSVRows(t *testing.T, path string) *mat.Dense {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[1:]
	x := mat.NewDense(len(recs), len(recs[0])-1, nil)
	for i, r := range recs {
		for j, s := range r[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s line %d: %v", path, i+2, err)
			}
			x.Set(i, j, v)
		}
	}
	return x
}

// TestKZeroThresholdLightGBMVectors checks LightGBM's input rule that every value with
// |x| <= kZeroThreshold is 0 against LightGBM 4.6.0's own raw scores
// (testdata/gen_kzero.py): its models have bounds at exactly +-kZeroThreshold, and the
// edge rows hold those values and their neighbours one ulp away.
func TestKZeroThresholdLightGBMVectors(t *testing.T) {
	x := readCSVRows(t, filepath.Join("testdata", "kzero_edge.csv"))
	for _, name := range []string{"binary", "regression"} {
		t.Run(name, func(t *testing.T) {
			m, err := LoadLightGBMFile(filepath.Join("testdata", "kzero_"+name+".model"))
			if err != nil {
				t.Fatal(err)
			}
			want := readColumn(t, filepath.Join("testdata", "kzero_"+name+"_raw.txt"))
			r, _ := x.Dims()
			if len(want) != r {
				t.Fatalf("%d predictions for %d rows", len(want), r)
			}
			check := func(path string, got []float64) {
				t.Helper()
				bad := 0
				for i := range want {
					// LightGBM prints 17 significant digits; our sums are the same
					// operations in the same order.
					if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
						if bad < 5 {
							t.Errorf("%s row %d %v: raw %v, LightGBM %v", path, i, x.RawRowView(i), got[i], want[i])
						}
						bad++
					}
				}
				if bad > 0 {
					t.Errorf("%s: %d of %d rows differ", path, bad, len(want))
				}
			}
			check("PredictRaw", m.PredictRaw(nil, x))
			rows := make([]float64, r)
			for i := range r {
				rows[i] = m.PredictRawRow(nil, x.RawRowView(i))[0]
			}
			check("PredictRawRow", rows)
			// The tree walk used for leaves must agree too.
			leaves := m.PredictLeaf(nil, x)
			sum := make([]float64, r)
			for i := range r {
				for ti := range m.NTrees() {
					sum[i] += m.Tree(ti).LeafValue(leaves[i*m.NTrees()+ti])
				}
			}
			check("PredictLeaf", sum)
		})
	}
}

// TestKZeroThresholdFit checks that Fit bins values within kZeroThreshold of 0 as 0,
// as LightGBM's loaders do: a feature whose only nonzero values are +-kZeroThreshold
// carries no information, so no tree splits on it.
func TestKZeroThresholdFit(t *testing.T) {
	const n = 200
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		v := 0.0
		switch i % 3 {
		case 1:
			v = kZeroThreshold
		case 2:
			v = -kZeroThreshold
		}
		x.Set(i, 0, v)
		x.Set(i, 1, float64(i%7))
		y[i] = float64(i%3) + float64(i%7)
	}
	m, err := Fit(x, y, nil, Config{NumIterations: 5, MinDataInLeaf: 5})
	if err != nil {
		t.Fatal(err)
	}
	if c := m.SplitCounts(); c[0] != 0 {
		t.Errorf("feature 0 (values 0 and +-kZeroThreshold) used in %d splits, want 0", c[0])
	}
}
