package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/columnar"
)

func init() {
	register(command{name: "predict", summary: "score a table with a model file (any kind, recognised by content)", run: runPredict})
}

// predictUsage documents predict's output columns and their units.
const predictUsage = `--model MODEL --data FILE --out FILE.csv [--id COL[,COL...]] [--iteration K] [--quantiles P,...] [--intervals L,...]

Writes one row per input row, in order: the --id columns as they are (e.g. change_id,
submitted_at of a "trainer features" table), then the model's outputs:
  logistic, LightGBM binary   p (probability of label 1: success for a success table,
                              a conflict for a conflict table), raw (log-odds)
  LightGBM multiclass         p0..pK-1 (class probabilities)
  LightGBM regression         prediction (in the target's units, after the link)
  ngboost                     mu, sigma: the mean and standard deviation of the target itself,
                              in the target's units (seconds for a buildtime table), for every
                              family alike (not the parameters of log y of a LogNormal)

--iteration K predicts with the first K boosting iterations of an ngboost model (0 = the
marginal fit), as the reference's pred_dist(max_iter=K): the staged prediction for
choosing the number of iterations on held-out rows.

--quantiles 0.1,0.5,0.9 adds, for an ngboost model, one column per level p named qP
(q0.1, q0.5, q0.9): the p-quantile of the predicted distribution of the target, in the
target's units. --intervals 0.8,0.95 adds loL and hiL (lo0.8, hi0.8, ...): the central
interval holding probability L, the (1-L)/2 and (1+L)/2 quantiles.`

func runPredict(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "predict", predictUsage)
	ids := &listFlag{split: true}
	fs.Var(ids, "id", "columns of the data to copy into the output before the predictions, to join them back (repeatable or comma-separated)")
	model := fs.String("model", "", "model file (a JSON artifact or a LightGBM text model) (required)")
	data := fs.String("data", "", "table to score (.csv or .parquet; - reads CSV from standard input); columns matched to the model's features by name (required)")
	out := fs.String("out", "", "predictions to write (.csv, or .parquet), one row per input row, in order (required)")
	quantiles := &listFlag{split: true}
	fs.Var(quantiles, "quantiles", "ngboost: quantile levels in (0, 1) to add as columns qP, e.g. 0.1,0.5,0.9")
	intervals := &listFlag{split: true}
	fs.Var(intervals, "intervals", "ngboost: central interval probabilities in (0, 1) to add as columns loL, hiL, e.g. 0.8,0.95")
	iteration := fs.Int("iteration", -1, "ngboost: predict with the first K boosting iterations (0 = the marginal fit, -1 = all of them)")
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
	levels, err := quantileLevels(quantiles.values, intervals.values)
	if err != nil {
		return err
	}
	var qp quantilePredictor
	if len(levels) > 0 {
		var ok bool
		if qp, ok = p.(quantilePredictor); !ok {
			return fmt.Errorf("%w: --quantiles, --intervals: %s models predict no distribution (ngboost models do)", errUsage, l.name)
		}
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
	if qp != nil {
		ps := make([]float64, len(levels))
		for i, lv := range levels {
			ps[i] = lv.p
			names = append(names, lv.name)
		}
		cols = append(cols, qp.quantiles(x, ps)...)
	}
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

// stager is a predictor with staged prediction: the model of its first k boosting
// iterations.
type stager interface {
	atIteration(k int) (predictor, error)
}

// quantilePredictor is a predictor of distributions: quantiles returns, per level in
// ps, the ps[k]-quantile of every row's predicted distribution.
type quantilePredictor interface {
	quantiles(x *mat.Dense, ps []float64) [][]float64
}

// quantileLevel is one quantile column of predict: its name and level.
type quantileLevel struct {
	name string
	p    float64
}

// quantileLevels returns the columns of --quantiles (qP) and --intervals (loL at
// (1-L)/2 and hiL at (1+L)/2), in that order, or a usage error naming a value that is
// not a number in (0, 1) or a column named twice.
func quantileLevels(quantiles, intervals []string) ([]quantileLevel, error) {
	var out []quantileLevel
	parse := func(flag, s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v < 1) {
			return 0, fmt.Errorf("%w: --%s %q: want a number in (0, 1)", errUsage, flag, s)
		}
		return v, nil
	}
	for _, s := range quantiles {
		v, err := parse("quantiles", s)
		if err != nil {
			return nil, err
		}
		out = append(out, quantileLevel{"q" + strconv.FormatFloat(v, 'g', -1, 64), v})
	}
	for _, s := range intervals {
		v, err := parse("intervals", s)
		if err != nil {
			return nil, err
		}
		name := strconv.FormatFloat(v, 'g', -1, 64)
		out = append(out, quantileLevel{"lo" + name, (1 - v) / 2}, quantileLevel{"hi" + name, (1 + v) / 2})
	}
	seen := map[string]bool{}
	for _, lv := range out {
		if seen[lv.name] {
			return nil, fmt.Errorf("%w: --quantiles, --intervals: column %s asked twice", errUsage, lv.name)
		}
		seen[lv.name] = true
	}
	return out, nil
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
