package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
)

// A bundle report with one classifier section: the metrics table, a reliability
// diagram and the files Write creates.
func ExampleWrite() {
	y := []float64{1, 1, 0, 1, 0, 1, 1, 0}
	p := []float64{0.9, 0.8, 0.3, 0.7, 0.4, 0.6, 0.9, 0.2}
	m, err := eval.EvaluateClassifier(y, p)
	if err != nil {
		log.Fatal(err)
	}
	in := report.Input{
		Title:  "sqpredict bundle ios/v3",
		Models: []string{"champion"},
		Sections: []report.Section{{
			Name: "success",
			Metrics: []report.Metric{
				{Name: "log loss", Values: map[string]float64{"champion": m.LogLoss}, Better: eval.LowerIsBetter.String()},
				{Name: "ROC AUC", Values: map[string]float64{"champion": m.ROCAUC}, Better: eval.HigherIsBetter.String()},
			},
			Plots: []report.Plot{report.Reliability{
				Title:  "success: reliability",
				Series: []report.ReliabilitySeries{{Model: "champion", Bins: m.Calibration}},
			}},
		}},
	}
	dir, err := os.MkdirTemp("", "report-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := report.Write(dir, in); err != nil {
		log.Fatal(err)
	}
	if err := report.WriteMetricsJSON(filepath.Join(dir, "metrics.json"), m); err != nil {
		log.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		fmt.Println(f.Name())
	}
	// Output:
	// fig01-success-reliability.png
	// metrics.json
	// report.html
}
