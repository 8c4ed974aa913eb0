package logistic_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/logistic"
)

func ExampleFit() {
	// Lines changed (hundreds) and whether the change's tests were updated, for eight
	// builds; y = 1 when the build succeeded.
	x := mat.NewDense(8, 2, []float64{
		0.1, 1,
		0.3, 1,
		0.5, 0,
		1.2, 1,
		2.0, 0,
		2.5, 1,
		4.0, 0,
		6.0, 0,
	})
	y := []float64{1, 1, 1, 0, 1, 1, 0, 0}
	m, err := logistic.Fit(x, y, nil, logistic.Config{FeatureNames: []string{"lines", "tests"}})
	if err != nil {
		log.Fatal(err)
	}
	p := m.Predict(nil, mat.NewDense(2, 2, []float64{0.2, 1, 5.0, 0}))
	fmt.Printf("P(success) small change with tests: %.4g\n", p[0])
	fmt.Printf("P(success) large change without tests: %.4g\n", p[1])
	for _, c := range m.Coefficients() {
		fmt.Printf("%s: %.4g per unit, %.4g per standard deviation\n", c.Name, c.Value, c.Standardised)
	}
	// Output:
	// P(success) small change with tests: 0.8202
	// P(success) large change without tests: 0.2911
	// lines: -0.4835 per unit, -0.9299 per standard deviation
	// tests: 0.08717 per unit, 0.04358 per standard deviation
}
