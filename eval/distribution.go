package eval

import (
	"errors"
	"fmt"

	"github.com/sqpredict/sqpredict/models/ngboost"
)

// ErrUnknownFamily is a distribution family name ParseDistFamily does not know.
var ErrUnknownFamily = errors.New("eval: unknown distribution family")

// DistFamily is the parametric form of a set of predictive distributions.
type DistFamily int

const (
	// FamilyNormal is N(Mu, Sigma²): Mu and Sigma are the mean and standard deviation of Y.
	FamilyNormal DistFamily = iota
	// FamilyLogNormal is exp(N(Mu, Sigma²)): Mu and Sigma are the mean and standard
	// deviation of log Y.
	FamilyLogNormal
)

// String returns the name of f as ParseDistFamily accepts it.
func (f DistFamily) String() string {
	switch f {
	case FamilyNormal:
		return "normal"
	case FamilyLogNormal:
		return "lognormal"
	}
	return fmt.Sprintf("DistFamily(%d)", int(f))
}

// ParseDistFamily returns the DistFamily named s ("normal" or "lognormal").
func ParseDistFamily(s string) (DistFamily, error) {
	switch s {
	case "normal":
		return FamilyNormal, nil
	case "lognormal":
		return FamilyLogNormal, nil
	}
	return 0, fmt.Errorf("%w %q (want normal or lognormal)", ErrUnknownFamily, s)
}

// Predictive is one predictive distribution per row: row i is Family with parameters
// Mu[i] and Sigma[i] (Sigma[i] > 0). Mu and Sigma have the same length.
type Predictive struct {
	Family DistFamily
	Mu     []float64
	Sigma  []float64
	// MeanPoint makes the point forecast (Point) the mean instead of the median: for a
	// distribution built around a point estimate that is a mean, such as Zuul's mean
	// of the last 10 builds (the zuul-mean10 baseline, whose LogNormal has that mean),
	// so that its point errors are those of the estimate itself.
	MeanPoint bool
}

// Len returns the number of rows.
func (p Predictive) Len() int {
	if len(p.Mu) != len(p.Sigma) {
		panic("eval: Predictive: len(Mu) != len(Sigma)")
	}
	return len(p.Mu)
}

// dist returns row i's distribution as an ngboost.Dist, which holds the maths of both
// families. It panics if p.Family is not FamilyNormal or FamilyLogNormal.
func (p Predictive) dist(i int) ngboost.Dist {
	var f ngboost.Family
	switch p.Family {
	case FamilyNormal:
		f = ngboost.Normal
	case FamilyLogNormal:
		f = ngboost.LogNormal
	default:
		panic(fmt.Sprintf("eval: Predictive: unknown family %v", p.Family))
	}
	return ngboost.Dist{Family: f, Loc: p.Mu[i], Scale: p.Sigma[i]}
}

// Mean returns the mean of Y at row i: Mu[i], or exp(Mu[i]+Sigma[i]²/2) for a LogNormal.
func (p Predictive) Mean(i int) float64 { return p.dist(i).Mean() }

// Median returns the median of Y at row i: Mu[i], or exp(Mu[i]) for a LogNormal.
func (p Predictive) Median(i int) float64 { return p.dist(i).Quantile(0.5) }

// Point returns the point forecast of row i, the one the point errors of
// DistributionMetrics (MAPE, median APE, RMSE, MAE) are of: the median, or the mean when
// MeanPoint is set. The median minimises the expected absolute error, and for the
// right-skewed LogNormal it is below the mean, which the long tail pulls up (issue 12:
// the mean made the LogNormal champion's median APE worse than Zuul's).
func (p Predictive) Point(i int) float64 {
	if p.MeanPoint {
		return p.Mean(i)
	}
	return p.Median(i)
}

// StdDev returns the standard deviation of row i's distribution, in the units of y (for
// a LogNormal, of y itself, not of log y).
func (p Predictive) StdDev(i int) float64 { return p.dist(i).StdDev() }

// LogPDF returns the log density of row i's distribution at y; for a LogNormal it is
// -Inf at y <= 0.
func (p Predictive) LogPDF(i int, y float64) float64 { return p.dist(i).LogPDF(y) }

// CDF returns P(Y <= y) under row i's distribution; for a LogNormal it is 0 at y <= 0.
func (p Predictive) CDF(i int, y float64) float64 { return p.dist(i).CDF(y) }

// Quantile returns the q-quantile of row i's distribution for q in (0, 1); q outside
// [0, 1] gives NaN.
func (p Predictive) Quantile(i int, q float64) float64 { return p.dist(i).Quantile(q) }

// CRPS returns the continuous ranked probability score ∫(F(z) - 1{z >= y})² dz of row
// i's distribution at y, in the units of Y, in closed form for both families:
//
//   - Normal (Gneiting and Raftery 2007), z = (y-μ)/σ:
//     σ·[z(2Φ(z)-1) + 2φ(z) - 1/√π];
//   - LogNormal (Baran and Lerch 2015), w = (log y - μ)/σ, M = exp(μ+σ²/2):
//     y(2Φ(w)-1) - 2M[Φ(w-σ) + Φ(σ/√2) - 1], and for y <= 0, outside the support,
//     -y + 2M[1 - Φ(σ/√2)], the value at 0⁺ plus the distance to 0.
func (p Predictive) CRPS(i int, y float64) float64 { return p.dist(i).CRPS(y) }

// MeanNLL returns the mean negative log-likelihood -mean(log f_i(y_i)) in nats, in the
// units of Y: the NLL of the NGBoost paper's tables. It panics if the lengths differ.
func MeanNLL(p Predictive, y []float64) float64 {
	checkPredLen("MeanNLL", p, y)
	var s float64
	for i, yi := range y {
		s -= p.LogPDF(i, yi)
	}
	return s / float64(len(y))
}

// MeanCRPS returns the mean CRPS of the rows, in the units of Y. It panics if the
// lengths differ.
func MeanCRPS(p Predictive, y []float64) float64 {
	checkPredLen("MeanCRPS", p, y)
	var s float64
	for i, yi := range y {
		s += p.CRPS(i, yi)
	}
	return s / float64(len(y))
}

// IntervalCoverage returns the fraction of rows whose y lies in the central interval of
// probability level of its distribution, between the (1-level)/2 and (1+level)/2
// quantiles, bounds included. A calibrated model covers about level of the rows. It
// panics if the lengths differ.
func IntervalCoverage(p Predictive, y []float64, level float64) float64 {
	checkPredLen("IntervalCoverage", p, y)
	lo, hi := (1-level)/2, (1+level)/2
	var in int
	for i, yi := range y {
		if p.Quantile(i, lo) <= yi && yi <= p.Quantile(i, hi) {
			in++
		}
	}
	return float64(in) / float64(len(y))
}

// PIT writes the probability integral transform F_i(y_i) of every row into dst and
// returns it; a nil dst is allocated. For a calibrated model the values are uniform on
// [0, 1]. It panics if the lengths differ or dst has the wrong length.
func PIT(dst []float64, p Predictive, y []float64) []float64 {
	checkPredLen("PIT", p, y)
	if dst == nil {
		dst = make([]float64, len(y))
	}
	if len(dst) != len(y) {
		panic("eval: PIT: len(dst) != len(y)")
	}
	for i, yi := range y {
		dst[i] = p.CDF(i, yi)
	}
	return dst
}

// PITHistogram returns the fraction of rows whose PIT falls in each of bins equal-width
// bins of [0, 1]; bin k holds [k/bins, (k+1)/bins), and the last bin includes 1. A
// calibrated model gives about 1/bins in every bin; a U shape means intervals that are
// too narrow, a hump too wide. It panics if bins < 1 or the lengths differ.
func PITHistogram(p Predictive, y []float64, bins int) []float64 {
	if bins < 1 {
		panic("eval: PITHistogram: bins < 1")
	}
	checkPredLen("PITHistogram", p, y)
	h := make([]float64, bins)
	for i, yi := range y {
		k := int(p.CDF(i, yi) * float64(bins))
		h[min(max(k, 0), bins-1)]++
	}
	for k := range h {
		h[k] /= float64(len(y))
	}
	return h
}

// CoverageLevels are the central-interval probabilities DistributionMetrics reports.
var CoverageLevels = [3]float64{0.5, 0.8, 0.95}

// PITBins is the number of PIT histogram bins DistributionMetrics reports.
const PITBins = 10

// DistributionMetrics summarise predictive distributions against observed targets.
type DistributionMetrics struct {
	// NLL is MeanNLL, in nats per row.
	NLL float64 `json:"nll"`
	// CRPS is MeanCRPS, in the units of Y.
	CRPS float64 `json:"crps"`
	// Point holds the errors of the point forecasts (Predictive.Point: the predictive
	// medians, or the means of a MeanPoint predictive).
	Point RegressionMetrics `json:"point"`
	// Coverage[k] is IntervalCoverage at CoverageLevels[k].
	Coverage [3]float64 `json:"coverage"`
	// PIT is PITHistogram with PITBins bins.
	PIT []float64 `json:"pit"`
}

// EvaluateDistribution computes every DistributionMetrics for the predictive
// distributions p of the targets y. It panics if the lengths differ.
func EvaluateDistribution(p Predictive, y []float64) DistributionMetrics {
	checkPredLen("EvaluateDistribution", p, y)
	point := make([]float64, len(y))
	for i := range point {
		point[i] = p.Point(i)
	}
	m := DistributionMetrics{
		NLL:   MeanNLL(p, y),
		CRPS:  MeanCRPS(p, y),
		Point: EvaluateRegression(y, point),
		PIT:   PITHistogram(p, y, PITBins),
	}
	for k, level := range CoverageLevels {
		m.Coverage[k] = IntervalCoverage(p, y, level)
	}
	return m
}

func checkPredLen(fn string, p Predictive, y []float64) {
	if p.Len() != len(y) {
		panic("eval: " + fn + ": len(y) differs from the number of distributions")
	}
}
