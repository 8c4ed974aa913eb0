package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/datasets/columnar"
	"github.com/sqpredict/sqpredict/eval"
)

func init() {
	register(command{name: "fit", summary: "fit one model (--algo) on a CSV or Parquet table", run: runFit})
}

const fitUsage = "--algo NAME --train FILE --target COL [--valid FILE] [--weight COL] [--features a,b,c | --drop a,b] [--categorical col ...] [--param key=value ...] --model OUT"

// listFlag is a repeatable flag; with split set, each value is also split at commas.
type listFlag struct {
	values []string
	split  bool
}

func (l *listFlag) String() string { return strings.Join(l.values, ",") }

func (l *listFlag) Set(s string) error {
	if !l.split {
		l.values = append(l.values, s)
		return nil
	}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			l.values = append(l.values, v)
		}
	}
	return nil
}

func runFit(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "fit", fitUsage)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(e.stderr, "\nalgorithms and their --param keys:")
		for _, n := range fitterNames() {
			f := fitters[n]
			fmt.Fprintf(e.stderr, "  %s: %s\n", n, f.summary)
			for _, p := range f.params {
				fmt.Fprintf(e.stderr, "      %-22s %s\n", p.key, p.help)
			}
		}
	}
	algo := fs.String("algo", "", "model kind: "+strings.Join(fitterNames(), ", ")+" (required)")
	train := fs.String("train", "", "training table (.csv or .parquet; - reads CSV from standard input) (required)")
	target := fs.String("target", "", "target column (required)")
	valid := fs.String("valid", "", "optional validation table, scored with the model's metrics (ngboost: also its early-stopping set, which picks the number of iterations)")
	model := fs.String("model", "", "model file to write (required)")
	weight := fs.String("weight", "", "column of row weights (finite, >= 0), left out of the features; in the --valid table too, if it has it (ngboost)")
	features := &listFlag{split: true}
	drop := &listFlag{split: true}
	categorical := &listFlag{split: true}
	paramArgs := &listFlag{}
	fs.Var(features, "features", "comma-separated feature columns (default: every column but the target, the true_* truth columns and the row ids change_id, ahead_change_id, build_id, submitted_at)")
	fs.Var(drop, "drop", "comma-separated columns to leave out")
	fs.Var(categorical, "categorical", "string column to one-hot encode (repeatable or comma-separated)")
	fs.Var(paramArgs, "param", "algorithm parameter key=value (repeatable; see the list below)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case len(features.values) > 0 && len(drop.values) > 0:
		return fmt.Errorf("%w: --features and --drop exclude each other", errUsage)
	}
	f, ok := fitters[*algo]
	if !ok {
		return fmt.Errorf("%w: unknown --algo %q (one of %s)", errUsage, *algo, strings.Join(fitterNames(), ", "))
	}
	if *weight != "" {
		if !f.weights {
			return fmt.Errorf("%w: --weight: --algo %s does not take row weights from --weight (see its --param keys)", errUsage, f.name)
		}
		if slices.Contains(features.values, *weight) || *weight == *target {
			return fmt.Errorf("%w: --weight %q is also the target or in --features", errUsage, *weight)
		}
		drop.values = append(drop.values, *weight)
	}
	ps, err := parseParams(f, paramArgs.values)
	if err != nil {
		return err
	}

	trainPath, cleanup, err := openInput(e, *train, "csv")
	if err != nil {
		return err
	}
	defer cleanup()
	shown := *train // what messages call the table
	if shown == "-" {
		shown = "standard input"
	}
	*train = trainPath
	header, err := columnar.Header(*train)
	if err != nil {
		return err
	}
	if *weight != "" && !slices.Contains(header, *weight) {
		return fmt.Errorf("%s: no --weight column %q%s (%s)", shown, *weight, hint(*weight, header), columnList(header))
	}
	cols, truth, err := chooseColumns(header, shown, *target, features.values, drop.values, categorical.values)
	if err != nil {
		return err
	}
	if len(truth) > 0 {
		fmt.Fprintf(e.stderr, "fit: left out the truth columns and row ids %s (name them in --features to use them)\n", strings.Join(truth, ", "))
	}
	opt := columnar.Options{Columns: append(slices.Clone(cols), *target)}
	// The loader honours the fitter's thread limit too (0 or none: GOMAXPROCS).
	if n, err := strconv.Atoi(ps["num_threads"]); err == nil && n > 0 {
		opt.Threads = n
	}
	if *weight != "" {
		opt.Columns = append(opt.Columns, *weight)
	}
	tr, err := columnar.Read(ctx, *train, opt)
	if err != nil {
		return err
	}
	names, err := featureNames(tr, cols, categorical.values)
	if err != nil {
		return err
	}
	in := &fitInput{features: names, params: ps, log: e.stderr}
	if in.y, err = targetColumn(tr, *target); err != nil {
		return err
	}
	if in.x, err = featureMatrix(tr, names); err != nil {
		return err
	}
	if *weight != "" {
		if in.weights, err = weightData(tr, *weight); err != nil {
			return err
		}
	}
	if *valid != "" {
		vopt := opt
		if *weight != "" {
			vh, err := columnar.Header(*valid)
			if err != nil {
				return err
			}
			if !slices.Contains(vh, *weight) {
				vopt.Columns = opt.Columns[:len(opt.Columns)-1]
			}
		}
		va, err := columnar.Read(ctx, *valid, vopt)
		if err != nil {
			return err
		}
		if in.validY, err = targetColumn(va, *target); err != nil {
			return err
		}
		if in.validX, err = tableMatrix(va, names); err != nil {
			return err
		}
		if *weight != "" && va.Index(*weight) >= 0 {
			if in.validWeights, err = weightData(va, *weight); err != nil {
				return err
			}
		}
	}
	e.log.Info("fitting", "algo", f.name, "rows", len(in.y), "features", len(names))
	m, err := f.fit(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s on %s: %d rows, %d features, target %s\n", f.name, shown, len(in.y), len(names), *target)
	if err := m.summary(e.stdout); err != nil {
		return err
	}
	if in.validX != nil {
		fmt.Fprintf(e.stdout, "validation on %s: %d rows\n", *valid, len(in.validY))
		if err := m.validate(e.stdout, in.validX, in.validY); err != nil {
			return err
		}
	}
	if err := m.save(*model); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", *model)
	return nil
}

// truthPrefix starts the names of the ground-truth columns of synthetic data ("trainer
// features" writes them beside the features): known only to the generator, they are
// never features unless --features names them.
const truthPrefix = "true_"

// chooseColumns returns the feature columns of a training table with the given header
// (read from path): --features in their order, or every column but the target, the
// --drop columns, the truth columns (truthPrefix) and the id columns of a feature table
// (idColumnNames), the last two returned as truth: left out.
func chooseColumns(header []string, path, target string, keep, drop, categorical []string) (cols, truth []string, err error) {
	if !slices.Contains(header, target) {
		return nil, nil, fmt.Errorf("%s: no target column %q%s (%s)", path, target, hint(target, header), columnList(header))
	}
	if len(keep) > 0 {
		for _, c := range keep {
			switch {
			case !slices.Contains(header, c):
				return nil, nil, fmt.Errorf("%s: no column %q%s (--features; %s)", path, c, hint(c, header), columnList(header))
			case c == target:
				return nil, nil, fmt.Errorf("%w: --features lists the target column %q", errUsage, c)
			case slices.Contains(cols, c):
				return nil, nil, fmt.Errorf("%w: --features lists %q twice", errUsage, c)
			}
			cols = append(cols, c)
		}
	} else {
		for _, c := range drop {
			if !slices.Contains(header, c) {
				return nil, nil, fmt.Errorf("%s: no column %q%s (--drop; %s)", path, c, hint(c, header), columnList(header))
			}
		}
		for _, c := range header {
			switch {
			case c == target || slices.Contains(drop, c):
			case strings.HasPrefix(c, truthPrefix) || slices.Contains(idColumnNames, c):
				truth = append(truth, c)
			default:
				cols = append(cols, c)
			}
		}
	}
	for _, c := range categorical {
		if !slices.Contains(cols, c) {
			return nil, nil, fmt.Errorf("%w: --categorical %q is not one of the feature columns", errUsage, c)
		}
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("%s: no feature columns", path)
	}
	return cols, truth, nil
}

// featureNames returns the model's input columns for the training table tb: the
// columns cols in order, each --categorical one replaced by its "col=value" indicator
// columns (see algo.go), one per level seen in tb, sorted.
func featureNames(tb *columnar.Table, cols, categorical []string) ([]string, error) {
	var names []string
	for _, c := range cols {
		if !slices.Contains(categorical, c) {
			names = append(names, c)
			continue
		}
		col := &tb.Columns[tb.Index(c)]
		seen := map[string]bool{}
		for i := range tb.NRows {
			if v, ok := col.Level(i); ok {
				seen[v] = true
			}
		}
		cats := make([]string, 0, len(seen))
		for v := range seen {
			cats = append(cats, v)
		}
		slices.Sort(cats)
		for _, v := range cats {
			names = append(names, c+"="+v)
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("%s: feature %q occurs twice (a one-hot column has the name of another column)", tb.Path, n)
		}
		seen[n] = true
	}
	return names, nil
}

// hint returns " (did you mean X?)" when a column of header is a likely misspelling of
// name (datasets.ClosestColumn), else "".
func hint(name string, header []string) string {
	if c, ok := datasets.ClosestColumn(name, header); ok && c != name {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// columnList lists the first names of a header for an error message.
func columnList(header []string) string {
	const show = 12
	s := "columns: " + strings.Join(header[:min(len(header), show)], ", ")
	if more := len(header) - show; more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// targetColumn returns the target column of tb: numbers, none missing.
func targetColumn(tb *columnar.Table, target string) ([]float64, error) {
	j := tb.Index(target)
	if j < 0 {
		return nil, fmt.Errorf("%s: no target column %q", tb.Path, target)
	}
	col := &tb.Columns[j]
	if err := col.NumberError(tb.Path); err != nil {
		return nil, fmt.Errorf("target column %q: %w", target, err)
	}
	for i, v := range col.Values {
		if v != v {
			return nil, fmt.Errorf("%s: target column %q, %s: missing value", tb.Path, target, rowName(tb.Path, i))
		}
	}
	return col.Values, nil
}

// featureMatrix returns the training rows of tb as a matrix whose columns are the model
// features names. When every name is a numeric column of tb the matrix is those
// columns themselves (a columnar.Matrix, column-major, no copy: a copy of a 1M × 50
// table is 400 MB, and gbm bins column by column); otherwise (one-hot columns) it is
// tableMatrix's row-major copy.
func featureMatrix(tb *columnar.Table, names []string) (mat.Matrix, error) {
	cols := make([][]float64, len(names))
	for j, name := range names {
		k := tb.Index(name)
		if k < 0 || tb.Columns[k].IsText() || tb.NRows == 0 {
			return tableMatrix(tb, names) // one-hot columns, and the errors
		}
		cols[j] = tb.Columns[k].Values
	}
	return columnar.NewMatrix(cols, tb.NRows)
}

// weightData returns the row weights of tb's column name: numbers, finite and >= 0.
func weightData(tb *columnar.Table, name string) ([]float64, error) {
	j := tb.Index(name)
	if j < 0 {
		return nil, fmt.Errorf("%s: no --weight column %q", tb.Path, name)
	}
	col := &tb.Columns[j]
	if err := col.NumberError(tb.Path); err != nil {
		return nil, fmt.Errorf("--weight column %q: %w", name, err)
	}
	for i, v := range col.Values {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: --weight column %q, %s: %v, want a finite weight >= 0", tb.Path, name, rowName(tb.Path, i), v)
		}
	}
	return col.Values, nil
}

// neededColumns returns the columns of a table with the given header that the model
// features names read: the column of each name, or for a name "col=value" without such
// a column, col. A name matching neither is an error.
func neededColumns(path string, header, names []string) ([]string, error) {
	var cols []string
	add := func(c string) {
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	for _, name := range names {
		if slices.Contains(header, name) {
			add(name)
			continue
		}
		c, _, ok := oneHotSource(header, name)
		if !ok {
			return nil, fmt.Errorf("%s: missing column %q%s", path, name, hint(name, header))
		}
		add(c)
	}
	return cols, nil
}

// tableMatrix returns the rows of tb as a matrix whose columns are the model features
// names, matched by name: a numeric column of that name, or for a name "col=value"
// without such a column, the 0/1 indicator of value in column col (missing cells and
// unseen values give 0). A text column used as a number, a missing column and a table
// without rows are errors naming them.
func tableMatrix(tb *columnar.Table, names []string) (*mat.Dense, error) {
	n, d := tb.NRows, len(names)
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows", tb.Path)
	}
	data := make([]float64, n*d)
	header := tb.Names()
	for j, name := range names {
		if k := tb.Index(name); k >= 0 {
			col := &tb.Columns[k]
			if err := col.NumberError(tb.Path); err != nil {
				return nil, fmt.Errorf("%w (use --categorical %s to one-hot encode a text column)", err, col.Name)
			}
			for i, v := range col.Values {
				data[i*d+j] = v
			}
			continue
		}
		c, value, ok := oneHotSource(header, name)
		if !ok {
			return nil, fmt.Errorf("%s: missing column %q", tb.Path, name)
		}
		col := &tb.Columns[tb.Index(c)]
		for i := range n {
			if v, ok := col.Level(i); ok && v == value {
				data[i*d+j] = 1
			}
		}
	}
	return mat.NewDense(n, d, data), nil
}

// oneHotSource finds the column and the value of a one-hot feature name "col=value",
// preferring the longest col that the header has.
func oneHotSource(header []string, name string) (string, string, bool) {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] != '=' {
			continue
		}
		if slices.Contains(header, name[:i]) {
			return name[:i], name[i+1:], true
		}
	}
	return "", "", false
}

// rowName names data row i (0-based) of the table at path: "row N" counting from 1,
// with the line number for CSV files, whose header is line 1 (for files without
// multi-line quoted fields).
func rowName(path string, i int) string {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return fmt.Sprintf("row %d (line %d)", i+1, i+2)
	}
	return fmt.Sprintf("row %d", i+1)
}

// writeClassifierMetrics prints eval's binary classifier metrics of the probabilities p
// of the 0/1 labels y (label 0 = failure) to w. fitted.validate of any binary classifier
// can use it.
func writeClassifierMetrics(w io.Writer, y, p []float64) error {
	m, err := eval.EvaluateClassifier(y, p)
	if err != nil {
		return fmt.Errorf("validation metrics: %w", err)
	}
	fmt.Fprintf(w, "  rows %d, failures (label 0) %d\n", m.N, m.Failures)
	fmt.Fprintf(w, "  log loss   %.6g\n", m.LogLoss)
	fmt.Fprintf(w, "  brier      %.6g\n", m.Brier)
	fmt.Fprintf(w, "  accuracy   %.6g\n", m.Accuracy)
	fmt.Fprintf(w, "  roc auc    %.6g\n", m.ROCAUC)
	fmt.Fprintf(w, "  pr auc     %.6g (average precision of the failure class)\n", m.PRAUC)
	fmt.Fprintf(w, "  failure    precision %.6g, recall %.6g, f1 %.6g (p < %g)\n", m.Precision, m.Recall, m.F1, eval.DecisionThreshold)
	fmt.Fprintf(w, "  ece        %.6g\n", m.ECE)
	fmt.Fprintf(w, "  calibration  %-11s %7s %9s %9s\n", "bin", "rows", "mean p", "observed")
	for _, b := range m.Calibration {
		if b.Count == 0 {
			continue
		}
		fmt.Fprintf(w, "               [%.1f, %.1f) %7d %9.4f %9.4f\n", b.Lo, b.Hi, b.Count, b.MeanPredicted, b.Observed)
	}
	return nil
}
