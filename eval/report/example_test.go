package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
)

// A bundle report with one classifier section (the metrics table and a reliability
// diagram), its metrics.json, and the files they create.
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
			Name:    "success",
			Metrics: report.ClassifierRows(map[string]eval.ClassifierMetrics{"champion": m}),
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
	metrics, err := report.MetricsMap(in)
	if err != nil {
		log.Fatal(err)
	}
	if err := report.WriteMetricsJSON(filepath.Join(dir, "metrics.json"), metrics); err != nil {
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
