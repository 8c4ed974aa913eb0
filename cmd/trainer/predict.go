package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/columnar"
)

func init() {
	register(command{name: "predict", summary: "score a table with a model file (any kind, recognised by content)", run: runPredict})
}

// predictUsage documents predict's output columns and their units.
const predictUsage = `--model MODEL --data FILE --out FILE.csv [--id COL[,COL...]] [--iteration K]

Writes one row per input row, in order: the --id columns as they are (e.g. change_id,
submitted_at of a "trainer features" table), then the model's outputs:
  logistic, LightGBM binary   p (probability of label 1: success for a success table,
                              a conflict for a conflict table), raw (log-odds)
  LightGBM multiclass         p0..pK-1 (class probabilities)
  LightGBM regression         prediction (in the target's units, after the link)
  ngboost                     mu, sigma: the mean and standard deviation of the target itself,
                              in the target's units (seconds for a buildtime table), for the
                              Normal and the LogNormal family alike (not the parameters of log y)

--iteration K predicts with the first K boosting iterations of an ngboost model (0 = the
marginal fit), as the reference's pred_dist(max_iter=K): the staged prediction for
choosing the number of iterations on held-out rows.`

func runPredict(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "predict", predictUsage)
	ids := &listFlag{split: true}
	fs.Var(ids, "id", "columns of the data to copy into the output before the predictions, to join them back (repeatable or comma-separated)")
	model := fs.String("model", "", "model file (a JSON artifact or a LightGBM text model) (required)")
	data := fs.String("data", "", "table to score (.csv or .parquet; - reads CSV from standard input); columns matched to the model's features by name (required)")
	out := fs.String("out", "", "predictions to write (.csv, or .parquet), one row per input row, in order (required)")
	iteration := fs.Int("iteration", -1, "ngboost: predict with the first K boosting iterations (0 = the marginal fit; default all)")
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
	if *iteration >= 0 {
		s, ok := p.(stager)
		if !ok {
			return fmt.Errorf("%w: --iteration: %s models have no staged prediction (ngboost models do)", errUsage, l.name)
		}
		if p, err = s.atIteration(*iteration); err != nil {
			return fmt.Errorf("%w: --iteration %d: %s: %w", errUsage, *iteration, *model, err)
		}
	} else if *iteration != -1 {
		return fmt.Errorf("%w: --iteration %d: want >= 0", errUsage, *iteration)
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
			col.Strings[i], _ = c.Level(i)
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

// stager is a predictor with staged prediction: the model of its first k boosting
// iterations.
type stager interface {
	atIteration(k int) (predictor, error)
}
