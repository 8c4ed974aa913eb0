package eval

import (
	"math"
	"slices"
)

// RegressionMetrics are the point-prediction errors of a regression model.
type RegressionMetrics struct {
	// N is the number of rows.
	N int `json:"n"`
	// RMSE is sqrt(mean((pred-y)²)).
	RMSE float64 `json:"rmse"`
	// MAE is mean(|pred-y|).
	MAE float64 `json:"mae"`
	// MAPE is the mean absolute percentage error in percent, over the MAPERows rows
	// with y != 0 (see MAPE).
	MAPE float64 `json:"mape"`
	// MAPERows is the number of rows MAPE averages over.
	MAPERows int `json:"mape_rows"`
	// MdAPE is the median absolute percentage error in percent, over the same rows as
	// MAPE (see MdAPE): robust to the few rows a heavy-tailed target gives huge errors.
	MdAPE float64 `json:"mdape"`
}

// EvaluateRegression returns the errors of the predictions pred of the targets y. It
// panics if the lengths differ.
func EvaluateRegression(y, pred []float64) RegressionMetrics {
	mape, used := MAPE(y, pred)
	return RegressionMetrics{N: len(y), RMSE: RMSE(y, pred), MAE: MAE(y, pred), MAPE: mape, MAPERows: used, MdAPE: MdAPE(y, pred)}
}

// RMSE returns the root mean squared error sqrt(mean((pred-y)²)), NaN for no rows. It
// panics if the lengths differ.
func RMSE(y, pred []float64) float64 {
	checkLen("RMSE", y, pred)
	var s float64
	for i, yi := range y {
		d := pred[i] - yi
		s += d * d
	}
	return math.Sqrt(s / float64(len(y)))
}

// MAE returns the mean absolute error mean(|pred-y|), NaN for no rows. It panics if the
// lengths differ.
func MAE(y, pred []float64) float64 {
	checkLen("MAE", y, pred)
	var s float64
	for i, yi := range y {
		s += math.Abs(pred[i] - yi)
	}
	return s / float64(len(y))
}

// MAPE returns the mean absolute percentage error 100/n·Σ|pred-y|/|y| of paper 000
// §IX-B, in percent, and the number n of rows it averages over.
//
// The ratio is undefined at y = 0, so those rows are left out, and used says how many
// rows remained; with none, MAPE is NaN. Build times, the target MAPE is reported for,
// are positive. It panics if the lengths differ.
func MAPE(y, pred []float64) (mape float64, used int) {
	checkLen("MAPE", y, pred)
	var s float64
	for i, yi := range y {
		if yi == 0 {
			continue
		}
		s += math.Abs((pred[i] - yi) / yi)
		used++
	}
	if used == 0 {
		return math.NaN(), 0
	}
	return 100 * s / float64(used), used
}

// MdAPE returns the median over the rows with y != 0 of 100·|pred-y|/|y|, in percent (the
// mean of the two middle values for an even count), NaN when no row has y != 0. It
// panics if the lengths differ.
func MdAPE(y, pred []float64) float64 {
	checkLen("MdAPE", y, pred)
	ape := make([]float64, 0, len(y))
	for i, yi := range y {
		if yi != 0 {
			ape = append(ape, 100*math.Abs((pred[i]-yi)/yi))
		}
	}
	n := len(ape)
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(ape)
	if n%2 == 1 {
		return ape[n/2]
	}
	return (ape[n/2-1] + ape[n/2]) / 2
}

func checkLen(fn string, y, other []float64) {
	if len(y) != len(other) {
		panic("eval: " + fn + ": mismatched lengths")
	}
}
