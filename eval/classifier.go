package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Errors of EvaluateClassifier; they are wrapped with the offending row.
var (
	// ErrLabel is a label other than 0 and 1.
	ErrLabel = errors.New("eval: label not 0 or 1")
	// ErrProbability is a predicted probability that is NaN or outside [0, 1].
	ErrProbability = errors.New("eval: probability not in [0, 1]")
)

// DecisionThreshold is the probability at or above which a row is predicted to succeed
// (label 1); below it the row is predicted to fail (label 0).
const DecisionThreshold = 0.5

// LogLossEpsilon is how far from 0 and 1 LogLoss clips probabilities, so that one
// confident mistake gives a large but finite loss (-log 1e-15 ≈ 34.5), as scikit-learn's
// log_loss did before version 1.5.
const LogLossEpsilon = 1e-15

// CalibrationBins is the number of reliability bins ClassifierMetrics reports.
const CalibrationBins = 10

// ClassifierMetrics summarise a binary classifier's probabilities against labels.
type ClassifierMetrics struct {
	// N is the number of rows and Failures the number with label 0.
	N        int `json:"n"`
	Failures int `json:"failures"`
	// Accuracy is the share of rows whose label the threshold decision gets right.
	Accuracy float64 `json:"accuracy"`
	// LogLoss is the mean negative log likelihood in nats (LogLoss).
	LogLoss float64 `json:"log_loss"`
	// Brier is the mean squared error of the probabilities.
	Brier float64 `json:"brier"`
	// ROCAUC is the area under the ROC curve (ROCAUC).
	ROCAUC float64 `json:"roc_auc"`
	// PRAUC is the average precision of the failure class (AveragePrecision).
	PRAUC float64 `json:"pr_auc"`
	// Precision, Recall and F1 are those of the failure class (FailureScores).
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// ECE is the expected calibration error over Calibration.
	ECE float64 `json:"ece"`
	// Calibration holds CalibrationBins reliability bins.
	Calibration []CalibrationBin `json:"calibration"`
}

// EvaluateClassifier computes every ClassifierMetrics of the probabilities p of the labels
// y. It returns an error wrapping ErrLabel or ErrProbability for the first bad row, and
// panics if the lengths differ.
func EvaluateClassifier(y, p []float64) (ClassifierMetrics, error) {
	if err := CheckBinary(y, p); err != nil {
		return ClassifierMetrics{}, err
	}
	m := ClassifierMetrics{
		N:        len(y),
		Accuracy: Accuracy(y, p),
		LogLoss:  LogLoss(y, p),
		Brier:    Brier(y, p),
		ROCAUC:   ROCAUC(y, p),
		PRAUC:    AveragePrecision(y, p),
	}
	for _, v := range y {
		if v == 0 {
			m.Failures++
		}
	}
	m.Precision, m.Recall, m.F1 = FailureScores(y, p)
	m.Calibration, m.ECE = Calibration(y, p, CalibrationBins)
	return m, nil
}

// CheckBinary returns an error wrapping ErrLabel or ErrProbability, naming the first row
// whose label is not 0 or 1 or whose probability is NaN or outside [0, 1]. It panics if
// the lengths differ.
func CheckBinary(y, p []float64) error {
	checkLen("CheckBinary", y, p)
	for i := range y {
		if y[i] != 0 && y[i] != 1 {
			return fmt.Errorf("%w: row %d: %v", ErrLabel, i, y[i])
		}
		if !(p[i] >= 0 && p[i] <= 1) {
			return fmt.Errorf("%w: row %d: %v", ErrProbability, i, p[i])
		}
	}
	return nil
}

func mustBinary(fn string, y, p []float64) {
	if err := CheckBinary(y, p); err != nil {
		panic("eval: " + fn + ": " + err.Error())
	}
}

// Accuracy returns the share of rows where (p >= DecisionThreshold) equals y == 1, NaN
// for no rows. Labels must be 0 or 1 and probabilities in [0, 1]; other values and
// slices of different lengths panic, as in every single-metric function here.
func Accuracy(y, p []float64) float64 {
	mustBinary("Accuracy", y, p)
	var right int
	for i := range y {
		if (p[i] >= DecisionThreshold) == (y[i] == 1) {
			right++
		}
	}
	return float64(right) / float64(len(y))
}

// LogLoss returns the mean of -log p over rows with y = 1 and -log(1-p) over rows with
// y = 0, in nats, with p clipped to [LogLossEpsilon, 1-LogLossEpsilon]; NaN for no rows.
func LogLoss(y, p []float64) float64 {
	mustBinary("LogLoss", y, p)
	var s float64
	for i := range y {
		q := math.Min(math.Max(p[i], LogLossEpsilon), 1-LogLossEpsilon)
		if y[i] == 1 {
			s -= math.Log(q)
		} else {
			s -= math.Log1p(-q)
		}
	}
	return s / float64(len(y))
}

// Brier returns the Brier score mean((p - y)²), NaN for no rows.
func Brier(y, p []float64) float64 {
	mustBinary("Brier", y, p)
	var s float64
	for i := range y {
		d := p[i] - y[i]
		s += d * d
	}
	return s / float64(len(y))
}

// ROCAUC returns the area under the ROC curve: the probability that a random row with
// y = 1 gets a higher p than a random row with y = 0, ties counting one half. It is the
// Mann–Whitney statistic computed from ranks, tied probabilities sharing their average
// rank. It is the same for either class taken as positive (scoring the other by 1 - p),
// and NaN unless both classes are present.
func ROCAUC(y, p []float64) float64 {
	mustBinary("ROCAUC", y, p)
	order := sortedByP(p)
	var n1 int
	var rankSum float64 // sum of the (1-based, tie-averaged) ranks of the y = 1 rows
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && p[order[hi]] == p[order[lo]] {
			hi++
		}
		avg := float64(lo+1+hi) / 2 // mean of ranks lo+1..hi
		for _, i := range order[lo:hi] {
			if y[i] == 1 {
				n1++
				rankSum += avg
			}
		}
		lo = hi
	}
	n0 := len(y) - n1
	if n1 == 0 || n0 == 0 {
		return math.NaN()
	}
	return (rankSum - float64(n1)*float64(n1+1)/2) / (float64(n1) * float64(n0))
}

// AveragePrecision returns the area under the precision-recall curve of the failure
// class (label 0, scored by 1 - p) as average precision, the definition of
// scikit-learn's average_precision_score:
//
//	AP = Σ_k (R_k - R_{k-1}) P_k
//
// where k runs over the distinct values of p in increasing order (decreasing failure
// score), P_k and R_k are the precision and recall of predicting failure for every row
// with p at or below the k-th value, and R_0 = 0. Rows with tied p enter together; there
// is no interpolation. It is NaN when no row has label 0.
func AveragePrecision(y, p []float64) float64 {
	mustBinary("AveragePrecision", y, p)
	order := sortedByP(p)
	var nFail int
	for _, v := range y {
		if v == 0 {
			nFail++
		}
	}
	if nFail == 0 {
		return math.NaN()
	}
	var tp, fp int
	var ap, prevRecall float64
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && p[order[hi]] == p[order[lo]] {
			hi++
		}
		for _, i := range order[lo:hi] {
			if y[i] == 0 {
				tp++
			} else {
				fp++
			}
		}
		recall := float64(tp) / float64(nFail)
		ap += (recall - prevRecall) * float64(tp) / float64(tp+fp)
		prevRecall = recall
		lo = hi
	}
	return ap
}

// sortedByP returns the row indices ordered by increasing p.
func sortedByP(p []float64) []int {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	return order
}

// FailureScores returns the precision, recall and F1 of the failure class (label 0),
// predicting failure when p < DecisionThreshold: with TP the failures predicted to fail,
// FP the successes predicted to fail and FN the failures predicted to succeed, precision
// is TP/(TP+FP) (NaN when nothing is predicted to fail), recall TP/(TP+FN) (NaN when
// there are no failures) and F1 = 2TP/(2TP+FP+FN) (NaN only when both are undefined).
func FailureScores(y, p []float64) (precision, recall, f1 float64) {
	mustBinary("FailureScores", y, p)
	var tp, fp, fn int
	for i := range y {
		predFail := p[i] < DecisionThreshold
		switch {
		case predFail && y[i] == 0:
			tp++
		case predFail:
			fp++
		case y[i] == 0:
			fn++
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	return ratio(tp, tp+fp), ratio(tp, tp+fn), ratio(2*tp, 2*tp+fp+fn)
}

// CalibrationBin is one bin of a reliability diagram.
type CalibrationBin struct {
	// Lo and Hi bound the probabilities in the bin: [Lo, Hi), the last bin [Lo, 1].
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Count is the number of rows in the bin.
	Count int `json:"count"`
	// MeanPredicted is the mean p of those rows and Observed the share with label 1;
	// both are 0 for an empty bin (so that the bins encode as JSON).
	MeanPredicted float64 `json:"mean_predicted"`
	Observed      float64 `json:"observed"`
}

// Calibration returns a reliability diagram of bins equal-width bins over [0, 1] and the
// expected calibration error ECE = Σ_b (Count_b / N) |MeanPredicted_b - Observed_b| over
// the non-empty bins (NaN for no rows). It panics if bins < 1.
func Calibration(y, p []float64, bins int) (diagram []CalibrationBin, ece float64) {
	mustBinary("Calibration", y, p)
	if bins < 1 {
		panic("eval: Calibration: bins < 1")
	}
	diagram = make([]CalibrationBin, bins)
	sumP := make([]float64, bins)
	sumY := make([]float64, bins)
	for i := range y {
		b := min(int(p[i]*float64(bins)), bins-1)
		diagram[b].Count++
		sumP[b] += p[i]
		sumY[b] += y[i]
	}
	for b := range diagram {
		bin := &diagram[b]
		bin.Lo = float64(b) / float64(bins)
		bin.Hi = float64(b+1) / float64(bins)
		if bin.Count > 0 {
			bin.MeanPredicted = sumP[b] / float64(bin.Count)
			bin.Observed = sumY[b] / float64(bin.Count)
			ece += float64(bin.Count) * math.Abs(bin.MeanPredicted-bin.Observed)
		}
	}
	return diagram, ece / float64(len(y))
}
