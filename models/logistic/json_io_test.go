package logistic

import (
	"bytes"
	"math"
	"os"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// TestReadV1File reads the hand-written format-version-1 artifact in testdata, which
// every later version of this package must still read, and checks its predictions
// against the formula by hand: z = 3.15 - 0.02·lines_added + 1·has_test_plan, with
// author_level eliminated and a NaN replaced by the feature's mean.
func TestReadV1File(t *testing.T) {
	t.Parallel()
	// Hand arithmetic with decimal constants, exact to a few ulps.
	const tol = 1e-14
	m, err := LoadFile("testdata/model_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.NFeatures() != 3 {
		t.Fatalf("NFeatures() = %d, want 3", m.NFeatures())
	}
	nan := math.NaN()
	x := mat.NewDense(4, 3, []float64{
		100, 1, 7,
		200, 0, 1,
		nan, 1, nan, // lines_added imputed with 120
		0, nan, 2, // has_test_plan imputed with 0.5
	})
	want := []float64{3.15 - 2 + 1, 3.15 - 4, 3.15 - 2.4 + 1, 3.15 + 0.5}
	got := m.PredictRaw(nil, x)
	p := m.Predict(nil, x)
	for i := range want {
		if !scalar.EqualWithinAbsOrRel(got[i], want[i], tol, tol) {
			t.Errorf("row %d: PredictRaw = %v, want %v", i, got[i], want[i])
		}
		if wp := 1 / (1 + math.Exp(-want[i])); !scalar.EqualWithinAbsOrRel(p[i], wp, tol, tol) {
			t.Errorf("row %d: Predict = %v, want %v", i, p[i], wp)
		}
	}
	c, ok := m.Coefficient("has_test_plan")
	if !ok || c.Value != 1 || c.Standardised != 0.5 || !c.Selected {
		t.Errorf("Coefficient(has_test_plan) = %+v, %v", c, ok)
	}
	if c, ok := m.Coefficient("author_level"); !ok || c.Selected || c.Value != 0 {
		t.Errorf("Coefficient(author_level) = %+v, %v, want unselected and 0", c, ok)
	}
	if _, ok := m.Coefficient("nope"); ok {
		t.Error("Coefficient(nope) found")
	}
	if st := m.Stats(); st.Rows != 1000 || st.Iterations != 12 || !st.Converged || st.LogLoss != 0.41 {
		t.Errorf("Stats() = %+v", st)
	}
}

// FuzzReadJSON checks that no input makes ReadJSON panic, and that a model it accepts
// predicts one value per row, writes itself back and reads back the same.
func FuzzReadJSON(f *testing.F) {
	seed, err := os.ReadFile("testdata/model_v1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"format_version": 1, "kind": "logistic"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			t.Skip("fuzz input is not a valid artifact; the reader refused it without panicking")
		}
		d := m.NFeatures()
		if d != len(m.FeatureNames()) || d != len(m.Coefficients()) {
			t.Fatalf("NFeatures() = %d, %d names, %d coefficients", d, len(m.FeatureNames()), len(m.Coefficients()))
		}
		x := mat.NewDense(2, d, nil)
		if got := m.Predict(nil, x); len(got) != 2 {
			t.Fatalf("Predict returned %d values for 2 rows", len(got))
		}
		var buf bytes.Buffer
		if err := m.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadJSON(&buf)
		if err != nil {
			t.Fatalf("re-reading a written model: %v", err)
		}
		if a, b := m.PredictRaw(nil, x), m2.PredictRaw(nil, x); a[0] != b[0] && !(math.IsNaN(a[0]) && math.IsNaN(b[0])) {
			t.Fatalf("PredictRaw %v after a round trip, want %v", b[0], a[0])
		}
	})
}
