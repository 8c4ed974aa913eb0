package gbm_test

import (
	"fmt"
	"log"

	"github.com/sqpredict/sqpredict/models/gbm"
	"gonum.org/v1/gonum/mat"
)

// Load a binary classifier saved by LightGBM (Booster.save_model) and predict the
// probability and the raw score (log-odds) of two rows.
func ExampleLoadLightGBMFile() {
	m, err := gbm.LoadLightGBMFile("testdata/model_simple.txt")
	if err != nil {
		log.Fatal(err)
	}
	x := mat.NewDense(2, m.NFeatures(), []float64{
		10, 100, // X1, X2
		500, 7,
	})
	p := m.Predict(nil, x)
	raw := m.PredictRaw(nil, x)
	fmt.Println(m.FeatureNames(), m.Objective())
	for i := range p {
		fmt.Printf("p=%.4g raw=%.4g\n", p[i], raw[i])
	}
	// Output:
	// [X1 X2] binary sigmoid:1
	// p=0.6673 raw=0.6958
	// p=0.5976 raw=0.3957
}

// Fit a regression model to y = x0² on a grid and predict two new points.
func ExampleFit() {
	const n = 200
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		v := -1 + 2*float64(i)/(n-1)
		x.Set(i, 0, v)
		y[i] = v * v
	}
	m, err := gbm.Fit(x, y, nil, gbm.Config{NumIterations: 200, NumLeaves: 8, MinDataInLeaf: 5})
	if err != nil {
		log.Fatal(err)
	}
	p := m.Predict(nil, mat.NewDense(2, 1, []float64{0, 0.9}))
	fmt.Printf("%d trees; f(0) ≈ %.2f, f(0.9) ≈ %.2f\n", m.NTrees(), p[0], p[1])
	// Output:
	// 200 trees; f(0) ≈ 0.00, f(0.9) ≈ 0.81
}
