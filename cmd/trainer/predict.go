package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/columnar"
)

func init() {
	register(command{name: "predict", summary: "score a table with a model file (any kind, recognised by content)", run: runPredict})
}

// predictUsage documents predict's output columns and their units.
const predictUsage = `--model MODEL --data FILE --out FILE.csv [--id COL[,COL...]]

Writes one row per input row, in order: the --id columns as they are (e.g. change_id,
submitted_at of a "trainer features" table), then the model's outputs:
  logistic, LightGBM binary   p (probability of label 1: success for a success table,
                              a conflict for a conflict table), raw (log-odds)
  LightGBM multiclass         p0..pK-1 (class probabilities)
  LightGBM regression         prediction (in the target's units, after the link)
  ngboost                     mu, sigma: the mean and standard deviation of the target itself,
                              in the target's units (seconds for a buildtime table), for the
                              Normal and the LogNormal family alike (not the parameters of log y)`

func runPredict(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "predict", predictUsage)
	ids := &listFlag{split: true}
	fs.Var(ids, "id", "columns of the data to copy into the output before the predictions, to join them back (repeatable or comma-separated)")
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
	for _, c := range ids.values {
		if !slices.Contains(header, c) {
			return fmt.Errorf("%s: no --id column %q%s", *data, c, hint(c, header))
		}
		if !slices.Contains(need, c) {
			need = append(need, c)
		}
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
	for _, name := range ids.values {
		c := &tb.Columns[tb.Index(name)]
		col := datasets.Column{Name: name, Strings: make([]string, n)}
		for i := range n {
			col.Strings[i] = idText(c, i)
		}
		res.Columns = append(res.Columns, col)
	}
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

// maxExactInt is 2^53, the bound below which every integer is a float64 exactly.
const maxExactInt = 1 << 53

// idText returns row i of an --id column as text: a text cell as it is, an integral
// number in plain digits (a numeric id such as TravisTorrent's build 103684356 read
// back as a number must not come out as 1.03684356e+08), any other number in the
// shortest form that reads back to it, and "" for a missing cell. Integers beyond 2^53
// are not exact in a float64 column and keep that form too.
func idText(c *columnar.Column, i int) string {
	if c.IsText() {
		s, _ := c.Level(i)
		return s
	}
	v := c.Values[i]
	switch {
	case math.IsNaN(v):
		return ""
	case v == math.Trunc(v) && math.Abs(v) < maxExactInt:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
