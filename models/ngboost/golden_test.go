package ngboost

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// update rewrites the golden artifact and its predictions in testdata.
var update = flag.Bool("update", false, "rewrite testdata/model_v1.json and testdata/model_v1_pred.golden")

const (
	goldenModel = "testdata/model_v1.json"
	goldenPred  = "testdata/model_v1_pred.golden"
)

// goldenRows are the inputs of the golden predictions, NaN (missing) included.
func goldenRows() *mat.Dense {
	return mat.NewDense(4, 3, []float64{
		0.1, 0.2, 0.3,
		0.9, 0.5, 0.1,
		0.5, 0.99, 0.7,
		0.3, nan, 0.5,
	})
}

var nan = func() float64 { v, _ := strconv.ParseFloat("NaN", 64); return v }()

// TestGoldenArtifact reads a format-version-1 artifact committed to testdata, so that a
// change of the format or of prediction is caught, and checks its predictions against
// the values recorded when it was written. Run with -update to rewrite both.
func TestGoldenArtifact(t *testing.T) {
	if *update {
		rng := rand.New(rand.NewPCG(1, 1))
		x, y, _, _ := synth(rng, 300, LogNormal)
		m, err := Fit(context.Background(), x, y, nil, Config{Dist: LogNormal, NEstimators: 12, LearningRate: 0.1,
			FeatureNames: []string{"targets_changed", "lines_added", "noise"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SaveFile(goldenModel); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		p := m.PredictParams(nil, goldenRows())
		for i := 0; i < len(p); i += 2 {
			fmt.Fprintf(&b, "%s %s\n", strconv.FormatFloat(p[i], 'g', -1, 64), strconv.FormatFloat(p[i+1], 'g', -1, 64))
		}
		if err := os.WriteFile(goldenPred, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := LoadFile(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(goldenPred)
	if err != nil {
		t.Fatal(err)
	}
	p := m.PredictParams(nil, goldenRows())
	lines := strings.Split(strings.TrimSpace(string(want)), "\n")
	if len(lines) != len(p)/2 {
		t.Fatalf("%s has %d lines, want %d", goldenPred, len(lines), len(p)/2)
	}
	for i, line := range lines {
		f := strings.Fields(line)
		for k := range 2 {
			v, err := strconv.ParseFloat(f[k], 64)
			if err != nil {
				t.Fatalf("%s line %d: %v", goldenPred, i+1, err)
			}
			// The same trees summed in the same order: exact.
			if got := p[2*i+k]; got != v {
				t.Errorf("row %d param %d = %v, golden %v", i, k, got, v)
			}
		}
	}
	if m.Family() != LogNormal || m.NIterations() != 12 || m.NFeatures() != 3 {
		t.Errorf("golden model: %v, %d iterations, %d features", m.Family(), m.NIterations(), m.NFeatures())
	}
}

// FuzzReadJSON checks that no artifact makes ReadJSON panic, and that a model it
// accepts predicts a row without panicking.
func FuzzReadJSON(f *testing.F) {
	seed, err := os.ReadFile(goldenModel)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(bytes.Replace(seed, []byte(`"n_iterations": 12`), []byte(`"n_iterations": 3`), 1))
	f.Add(bytes.Replace(seed, []byte(`"dist": "lognormal"`), []byte(`"dist": "normal"`), 1))
	f.Add([]byte(`{"format_version": 1, "kind": "ngboost"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		row := make([]float64, m.NFeatures())
		m.PredictRow(row)
		m.Predict(nil, mat.NewDense(1, m.NFeatures(), row))
	})
}
