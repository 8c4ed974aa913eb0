package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/sqpredict/sqpredict/eval"
)

// ClassifierRows returns the metrics-table rows of classifiers, one value per model in
// byModel: rows, failures, accuracy, ROC AUC, PR AUC (failure class), log loss, Brier,
// ECE, and the failure class's precision, recall and F1, in that order.
func ClassifierRows(byModel map[string]eval.ClassifierMetrics) []Metric {
	rows := []struct {
		name, better string
		get          func(eval.ClassifierMetrics) float64
	}{
		{"rows", "", func(m eval.ClassifierMetrics) float64 { return float64(m.N) }},
		{"failures", "", func(m eval.ClassifierMetrics) float64 { return float64(m.Failures) }},
		{"accuracy", "higher", func(m eval.ClassifierMetrics) float64 { return m.Accuracy }},
		{"ROC AUC", "higher", func(m eval.ClassifierMetrics) float64 { return m.ROCAUC }},
		{"PR AUC (failure)", "higher", func(m eval.ClassifierMetrics) float64 { return m.PRAUC }},
		{"log loss (nats)", "lower", func(m eval.ClassifierMetrics) float64 { return m.LogLoss }},
		{"Brier", "lower", func(m eval.ClassifierMetrics) float64 { return m.Brier }},
		{"ECE", "lower", func(m eval.ClassifierMetrics) float64 { return m.ECE }},
		{"failure precision", "higher", func(m eval.ClassifierMetrics) float64 { return m.Precision }},
		{"failure recall", "higher", func(m eval.ClassifierMetrics) float64 { return m.Recall }},
		{"failure F1", "higher", func(m eval.ClassifierMetrics) float64 { return m.F1 }},
	}
	out := make([]Metric, len(rows))
	for k, r := range rows {
		out[k] = Metric{Name: r.name, Better: r.better, Values: make(map[string]float64, len(byModel))}
		for model, m := range byModel {
			out[k].Values[model] = r.get(m)
		}
	}
	return out
}

// DistributionRows returns the metrics-table rows of predictive distributions, one value
// per model in byModel: NLL, CRPS, MAPE, median APE, RMSE and MAE of the mean, and the coverage of
// each of eval.CoverageLevels, in that order. unit (e.g. "s") labels the rows in the
// units of the target; coverage rows have no direction, since the best value is the
// nominal one.
func DistributionRows(unit string, byModel map[string]eval.DistributionMetrics) []Metric {
	u := ""
	if unit != "" {
		u = " (" + unit + ")"
	}
	type row struct {
		name, better string
		get          func(eval.DistributionMetrics) float64
	}
	rows := []row{
		{"NLL (nats)", "lower", func(m eval.DistributionMetrics) float64 { return m.NLL }},
		{"CRPS" + u, "lower", func(m eval.DistributionMetrics) float64 { return m.CRPS }},
		{"MAPE of point forecast (%)", "lower", func(m eval.DistributionMetrics) float64 { return m.Point.MAPE }},
		{"median APE of point forecast (%)", "lower", func(m eval.DistributionMetrics) float64 { return m.Point.MdAPE }},
		{"RMSE of point forecast" + u, "lower", func(m eval.DistributionMetrics) float64 { return m.Point.RMSE }},
		{"MAE of point forecast" + u, "lower", func(m eval.DistributionMetrics) float64 { return m.Point.MAE }},
	}
	for k, lvl := range eval.CoverageLevels {
		rows = append(rows, row{
			name: strconv.FormatFloat(100*lvl, 'g', -1, 64) + "% interval coverage",
			get:  func(m eval.DistributionMetrics) float64 { return m.Coverage[k] },
		})
	}
	out := make([]Metric, len(rows))
	for k, r := range rows {
		out[k] = Metric{Name: r.name, Better: r.better, Values: make(map[string]float64, len(byModel))}
		for model, m := range byModel {
			out[k].Values[model] = r.get(m)
		}
	}
	return out
}

// MetricsMap flattens the tables of in into one map for metrics.json: the key of a
// metric value is "section/metric/model", and a difference adds "section/metric/diff",
// ".../lo", ".../hi" and ".../p_better". It returns an error wrapping ErrInput when two
// entries would share a key.
func MetricsMap(in Input) (map[string]float64, error) {
	out := make(map[string]float64)
	put := func(key string, v float64) error {
		if _, dup := out[key]; dup {
			return fmt.Errorf("report: metrics map: %w: key %q twice", ErrInput, key)
		}
		out[key] = v
		return nil
	}
	for _, sec := range in.Sections {
		for _, m := range sec.Metrics {
			for model, v := range m.Values {
				if err := put(sec.Name+"/"+m.Name+"/"+model, v); err != nil {
					return nil, err
				}
			}
		}
		for _, d := range sec.Diffs {
			base := sec.Name + "/" + d.Metric + "/"
			for _, kv := range []struct {
				k string
				v float64
			}{{"diff", d.Diff}, {"lo", d.Lo}, {"hi", d.Hi}, {"p_better", d.PBetter}} {
				if err := put(base+kv.k, kv.v); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// jsonValue is a metric in metrics.json: nil for NaN and ±Inf, which JSON cannot hold.
func jsonValue(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
