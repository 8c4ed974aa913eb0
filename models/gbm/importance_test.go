package gbm

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestSplitGains compares SplitGains with the sums of the split_gain values of a model
// LightGBM wrote, read independently from its text: split_feature and split_gain lines
// of every tree, positive gains only as LightGBM's gain importance counts them.
func TestSplitGains(t *testing.T) {
	const path = "testdata/cat_reg_default.model"
	m, err := LoadLightGBMFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := make([]float64, m.NFeatures())
	var feats []int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "split_feature="); ok {
			feats = feats[:0]
			for _, s := range strings.Fields(v) {
				k, err := strconv.Atoi(s)
				if err != nil {
					t.Fatal(err)
				}
				feats = append(feats, k)
			}
		}
		if v, ok := strings.CutPrefix(line, "split_gain="); ok {
			for i, s := range strings.Fields(v) {
				g, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatal(err)
				}
				if g > 0 {
					want[feats[i]] += g
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// The same values summed in the same order: only the parse can differ, and both
	// parse with strconv.
	const tol = 1e-12
	got := m.SplitGains()
	if !floats.EqualApprox(got, want, tol) || floats.Sum(want) == 0 {
		t.Errorf("SplitGains() = %v, want %v", got, want)
	}
}
