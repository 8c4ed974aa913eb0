package main

import (
	"context"
	"fmt"
	"os"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/columnar"
)

func init() {
	register(command{name: "predict", summary: "score a table with a model file (any kind, recognised by content)", run: runPredict})
}

func runPredict(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "predict", "--model MODEL --data FILE --out FILE.csv")
	model := fs.String("model", "", "model file (a JSON artifact or a LightGBM text model) (required)")
	data := fs.String("data", "", "table to score (.csv or .parquet; - reads CSV from standard input); columns matched to the model's features by name (required)")
	out := fs.String("out", "", "predictions to write (.csv, or .parquet), one row per input row, in order (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	raw, err := os.ReadFile(*model)
	if err != nil {
		return err
	}
	l, err := detectModel(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", *model, err)
	}
	p, err := l.load(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", *model, err)
	}
	dataPath, cleanup, err := openInput(e, *data, "csv")
	if err != nil {
		return err
	}
	defer cleanup()
	*data = dataPath
	header, err := columnar.Header(*data)
	if err != nil {
		return err
	}
	need, err := neededColumns(*data, header, p.featureNames())
	if err != nil {
		return err
	}
	tb, err := columnar.Read(ctx, *data, columnar.Options{Columns: need})
	if err != nil {
		return err
	}
	x, err := tableMatrix(tb, p.featureNames())
	if err != nil {
		return err
	}
	cols, err := p.predict(x)
	if err != nil {
		return fmt.Errorf("%s: %w", *model, err)
	}
	names := p.outputs()
	n, _ := x.Dims()
	if len(cols) != len(names) {
		panic(fmt.Sprintf("trainer: %s predictor returned %d columns for outputs %v", l.name, len(cols), names))
	}
	res := &datasets.Frame{}
	for k, c := range cols {
		if len(c) != n {
			panic(fmt.Sprintf("trainer: %s predictor returned %d values for %d rows", l.name, len(c), n))
		}
		res.Columns = append(res.Columns, datasets.Column{Name: names[k], Floats: c})
	}
	if err := datasets.WriteFrame(ctx, *out, res); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s model %s: wrote %d predictions to %s\n", l.name, *model, n, *out)
	return nil
}
