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
