package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/eval"
)

func init() {
	register(command{name: "fit", summary: "fit one model (--algo) on a CSV or Parquet table", run: runFit})
}

const fitUsage = "--algo NAME --train FILE --target COL [--valid FILE] [--features a,b,c | --drop a,b] [--categorical col ...] [--param key=value ...] --model OUT"

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
	algo := fs.String("algo", "", "model kind: "+strings.Join(fitterNames(), ", "))
	train := fs.String("train", "", "training table (.csv or .parquet)")
	target := fs.String("target", "", "target column")
	valid := fs.String("valid", "", "optional validation table, scored with the model's metrics")
	model := fs.String("model", "", "model file to write")
	features := &listFlag{split: true}
	drop := &listFlag{split: true}
	categorical := &listFlag{split: true}
	paramArgs := &listFlag{}
	fs.Var(features, "features", "comma-separated feature columns (default: every column but the target and the true_* truth columns)")
	fs.Var(drop, "drop", "comma-separated columns to leave out")
	fs.Var(categorical, "categorical", "string column to one-hot encode (repeatable or comma-separated)")
	fs.Var(paramArgs, "param", "algorithm parameter key=value (repeatable; see the list below)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *algo == "":
		return fmt.Errorf("%w: --algo is required (one of %s)", errUsage, strings.Join(fitterNames(), ", "))
	case *train == "":
		return fmt.Errorf("%w: --train is required", errUsage)
	case *target == "":
		return fmt.Errorf("%w: --target is required", errUsage)
	case *model == "":
		return fmt.Errorf("%w: --model is required", errUsage)
	case len(features.values) > 0 && len(drop.values) > 0:
		return fmt.Errorf("%w: --features and --drop exclude each other", errUsage)
	}
	f, ok := fitters[*algo]
	if !ok {
		return fmt.Errorf("%w: unknown --algo %q (one of %s)", errUsage, *algo, strings.Join(fitterNames(), ", "))
	}
	ps, err := parseParams(f, paramArgs.values)
	if err != nil {
		return err
	}

	tr, err := datasets.ReadFrame(ctx, *train)
	if err != nil {
		return err
	}
	names, truth, err := featureNames(tr, *train, *target, features.values, drop.values, categorical.values)
	if err != nil {
		return err
	}
	if len(truth) > 0 {
		fmt.Fprintf(e.stderr, "fit: left out the truth columns %s (name them in --features to use them)\n", strings.Join(truth, ", "))
	}
	in := &fitInput{features: names, params: ps, log: e.stderr}
	if in.x, in.y, err = frameData(tr, *train, names, *target); err != nil {
		return err
	}
	if *valid != "" {
		va, err := datasets.ReadFrame(ctx, *valid)
		if err != nil {
			return err
		}
		if in.validX, in.validY, err = frameData(va, *valid, names, *target); err != nil {
			return err
		}
	}
	e.log.Info("fitting", "algo", f.name, "rows", len(in.y), "features", len(names))
	m, err := f.fit(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s on %s: %d rows, %d features, target %s\n", f.name, *train, len(in.y), len(names), *target)
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

// featureNames returns the model's input columns for the training table fr (read from
// path): the chosen columns in table order, each --categorical one replaced by its
// "col=value" indicator columns (see algo.go). Without --features, the truth columns
// (truthPrefix) are left out and returned as truth.
func featureNames(fr *datasets.Frame, path, target string, keep, drop, categorical []string) (names, truth []string, err error) {
	if fr.Index(target) < 0 {
		return nil, nil, fmt.Errorf("%s: no target column %q (%s)", path, target, columnList(fr))
	}
	var cols []string
	if len(keep) > 0 {
		for _, c := range keep {
			switch {
			case fr.Index(c) < 0:
				return nil, nil, fmt.Errorf("%s: no column %q (--features; %s)", path, c, columnList(fr))
			case c == target:
				return nil, nil, fmt.Errorf("%w: --features lists the target column %q", errUsage, c)
			case slices.Contains(cols, c):
				return nil, nil, fmt.Errorf("%w: --features lists %q twice", errUsage, c)
			}
			cols = append(cols, c)
		}
	} else {
		for _, c := range drop {
			if fr.Index(c) < 0 {
				return nil, nil, fmt.Errorf("%s: no column %q (--drop; %s)", path, c, columnList(fr))
			}
		}
		for _, c := range fr.Columns {
			switch {
			case c.Name == target || slices.Contains(drop, c.Name):
			case strings.HasPrefix(c.Name, truthPrefix):
				truth = append(truth, c.Name)
			default:
				cols = append(cols, c.Name)
			}
		}
	}
	for _, c := range categorical {
		if !slices.Contains(cols, c) {
			return nil, nil, fmt.Errorf("%w: --categorical %q is not one of the feature columns", errUsage, c)
		}
	}
	for _, c := range cols {
		if !slices.Contains(categorical, c) {
			names = append(names, c)
			continue
		}
		col := &fr.Columns[fr.Index(c)]
		seen := map[string]bool{}
		for i := range fr.NRows() {
			if v, ok := cellString(col, i); ok {
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
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("%s: no feature columns", path)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, nil, fmt.Errorf("%s: feature %q occurs twice (a one-hot column has the name of another column)", path, n)
		}
		seen[n] = true
	}
	return names, truth, nil
}

// columnList lists the first columns of fr for an error message.
func columnList(fr *datasets.Frame) string {
	const show = 12
	names := make([]string, 0, show)
	for i := range min(len(fr.Columns), show) {
		names = append(names, fr.Columns[i].Name)
	}
	s := "columns: " + strings.Join(names, ", ")
	if more := len(fr.Columns) - show; more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// cellString returns row i of a categorical column as a category: the string, or a
// number formatted with strconv.FormatFloat(v, 'g', -1, 64). ok is false for a missing
// cell ("" or NaN).
func cellString(c *datasets.Column, i int) (v string, ok bool) {
	if c.Strings != nil {
		return c.Strings[i], c.Strings[i] != ""
	}
	f := c.Floats[i]
	if f != f {
		return "", false
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}

// frameData returns the feature matrix (frameMatrix) and the target column of fr.
func frameData(fr *datasets.Frame, path string, names []string, target string) (*mat.Dense, []float64, error) {
	j := fr.Index(target)
	if j < 0 {
		return nil, nil, fmt.Errorf("%s: no target column %q", path, target)
	}
	col := &fr.Columns[j]
	if col.Strings != nil {
		for i, s := range col.Strings {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return nil, nil, fmt.Errorf("%s: target column %q, %s: %q is not a number", path, target, rowName(path, i), s)
			}
		}
		return nil, nil, fmt.Errorf("%s: target column %q holds strings, not numbers", path, target)
	}
	for i, v := range col.Floats {
		if v != v {
			return nil, nil, fmt.Errorf("%s: target column %q, %s: missing value", path, target, rowName(path, i))
		}
	}
	x, err := frameMatrix(fr, path, names)
	if err != nil {
		return nil, nil, err
	}
	return x, col.Floats, nil
}

// frameMatrix returns the rows of fr as a matrix whose columns are the model features
// names, matched by name: a numeric column of that name, or for a name "col=value"
// without such a column, the 0/1 indicator of value in column col (missing cells and
// unseen values give 0). A string column used as a number, a missing column and a
// table without rows are errors naming them.
func frameMatrix(fr *datasets.Frame, path string, names []string) (*mat.Dense, error) {
	n, d := fr.NRows(), len(names)
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	data := make([]float64, n*d)
	for j, name := range names {
		if k := fr.Index(name); k >= 0 {
			col := &fr.Columns[k]
			if col.Strings != nil {
				return nil, nonNumeric(path, col)
			}
			for i, v := range col.Floats {
				data[i*d+j] = v
			}
			continue
		}
		col, value, ok := oneHotSource(fr, name)
		if !ok {
			return nil, fmt.Errorf("%s: missing column %q", path, name)
		}
		for i := range n {
			if v, ok := cellString(col, i); ok && v == value {
				data[i*d+j] = 1
			}
		}
	}
	return mat.NewDense(n, d, data), nil
}

// oneHotSource finds the column col and the value of a one-hot feature name
// "col=value", preferring the longest col that fr has.
func oneHotSource(fr *datasets.Frame, name string) (*datasets.Column, string, bool) {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] != '=' {
			continue
		}
		if k := fr.Index(name[:i]); k >= 0 {
			return &fr.Columns[k], name[i+1:], true
		}
	}
	return nil, "", false
}

// nonNumeric is the error for a string column where numbers are needed, naming its
// first cell that is not a number.
func nonNumeric(path string, col *datasets.Column) error {
	for i, s := range col.Strings {
		if _, err := strconv.ParseFloat(s, 64); s != "" && err != nil {
			return fmt.Errorf("%s: column %q, %s: %q is not a number (use --categorical %s to one-hot encode a string column)", path, col.Name, rowName(path, i), s, col.Name)
		}
	}
	return fmt.Errorf("%s: column %q holds strings, not numbers (use --categorical %s to one-hot encode it)", path, col.Name, col.Name)
}

// rowName names data row i (0-based) of the table at path: "row N" counting from 1,
// with the line number for CSV files, whose header is line 1.
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
