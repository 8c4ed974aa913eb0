package main

// This file is the plug-in point of "trainer fit" and "trainer predict", which every
// model kind shares. A kind plugs in from its own file, cmd/trainer/algo_<kind>.go, with
// an init function that calls registerFitter and/or registerLoader:
//
//	func init() {
//		registerFitter(fitter{
//			name:    "logistic",                  // the --algo value
//			summary: "binary logistic regression", // one line for "trainer fit -h"
//			params: []param{                      // the accepted --param keys
//				{key: "C", help: "inverse L2 strength (default 1)"},
//			},
//			fit: fitLogistic,
//		})
//		registerLoader(loader{
//			name:   "logistic",
//			detect: func(head []byte, kind string) bool { return kind == logistic.Kind },
//			load:   loadLogistic,
//		})
//	}
//
// with these signatures (all types below are in this file):
//
//	func fitLogistic(ctx context.Context, in *fitInput) (fitted, error)
//	func loadLogistic(data []byte) (predictor, error)
//
// fit does everything that is not model specific: it reads the tables with
// datasets.ReadFrame, picks the feature columns (--features, --drop), one-hot encodes the
// --categorical columns, checks that every value is numeric, parses --param key=value
// against the fitter's keys, and then calls fitter.fit with the matrices. It prints the
// row and feature counts, then fitted.summary, then with --valid fitted.validate, and
// saves the model with fitted.save.
//
// predict reads the model file, asks each loader's detect whether the file is its kind
// (the first loader in name order that says yes loads it), builds the input matrix by
// matching the predictor's featureNames to the data's columns by name, and writes one
// column per predictor output (in order: "p", "raw" for binary classifiers;
// "prediction" for regression; "p0".."pK" for multiclass; "mu", "sigma" for NGBoost).
//
// # Categorical columns
//
// --categorical col replaces the string column col by one 0/1 column per category seen in
// the training table, named "col=value" (values sorted; a numeric column's values are
// formatted with strconv.FormatFloat(v, 'g', -1, 64)). A model therefore records its
// categories in its feature names, whatever its file format: predict rebuilds the
// encoding from a feature name "col=value" whenever the data has no column of that exact
// name but has a column col. A category not seen in training, and a missing cell (empty
// string or NaN), encode as all zeros.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// fitter is one model kind as "trainer fit --algo NAME" sees it.
type fitter struct {
	name    string  // the --algo value
	summary string  // one line for "trainer fit -h"
	params  []param // the --param keys it accepts; any other key is a usage error
	// weights reports that fit uses fitInput.weights: "trainer fit --weight COL" is
	// refused for the other kinds.
	weights bool
	// fit trains a model. It should return errors wrapped with errUsage for bad
	// parameter values (params' accessors do that).
	fit func(ctx context.Context, in *fitInput) (fitted, error)
}

// param documents one --param key of a fitter.
type param struct {
	key  string
	help string // includes the default, e.g. "inverse L2 strength (default 1)"
}

// fitInput is what a fitter gets: the training (and optional validation) matrices,
// already encoded, and the parsed parameters.
type fitInput struct {
	// features names the columns of x and validX ("col=value" for one-hot columns).
	features []string
	// x holds one training row per row; NaN means missing. It is column-major (a
	// columnar.Matrix over the table's columns) when no feature is one-hot encoded.
	x mat.Matrix
	// y is the target of each row of x; never NaN.
	y []float64
	// validX and validY are the --valid table encoded like x, or nil without --valid.
	validX *mat.Dense
	validY []float64
	// weights and validWeights are the --weight column of the training and the
	// validation table (finite, >= 0), or nil without --weight; only a fitter with
	// weights set gets them.
	weights, validWeights []float64
	// params holds the --param values; every key is one of the fitter's params.
	params params
	// log receives progress messages (stderr).
	log io.Writer
}

// fitted is a model fit has trained.
type fitted interface {
	// save writes the model file at path, atomically.
	save(path string) error
	// summary writes the training summary to w: iterations or trees, training loss,
	// the most important features. fit has already printed the row and feature counts.
	summary(w io.Writer) error
	// validate writes the model's metrics on the validation rows x, y to w.
	validate(w io.Writer, x *mat.Dense, y []float64) error
}

// loader recognises and loads one model file format for "trainer predict".
type loader struct {
	name string // for messages
	// detect reports whether the model file is of this format. head is the start of the
	// file (up to headBytes); kind is the top-level "kind" field of a JSON file, or ""
	// when the file is not a JSON object (LightGBM text files start with "tree" and
	// hold a "version=" line).
	detect func(head []byte, kind string) bool
	// load builds a predictor from the whole file.
	load func(data []byte) (predictor, error)
}

// headBytes is how much of a model file loader.detect sees.
const headBytes = 4096

// predictor is a loaded model as "trainer predict" uses it.
type predictor interface {
	// featureNames returns the names of the input columns, in matrix column order.
	featureNames() []string
	// outputs returns the names of the prediction columns.
	outputs() []string
	// predict returns one slice per output column, each as long as x has rows.
	predict(x *mat.Dense) ([][]float64, error)
}

var (
	fitters = map[string]fitter{}
	loaders = map[string]loader{}
)

// registerFitter adds a model kind to "trainer fit". Call it from an init function.
func registerFitter(f fitter) {
	if _, dup := fitters[f.name]; dup {
		panic("trainer: duplicate fitter " + f.name)
	}
	keys := map[string]bool{}
	for _, p := range f.params {
		if keys[p.key] {
			panic("trainer: fitter " + f.name + ": duplicate param " + p.key)
		}
		keys[p.key] = true
	}
	fitters[f.name] = f
}

// registerLoader adds a model file format to "trainer predict". Call it from an init
// function.
func registerLoader(l loader) {
	if _, dup := loaders[l.name]; dup {
		panic("trainer: duplicate loader " + l.name)
	}
	loaders[l.name] = l
}

// fitterNames returns the registered --algo values, sorted.
func fitterNames() []string {
	names := make([]string, 0, len(fitters))
	for n := range fitters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// detectModel returns the loader that recognises the model file content data.
func detectModel(data []byte) (loader, error) {
	head := data[:min(len(data), headBytes)]
	var kind string
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var probe struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(data, &probe); err != nil {
			return loader{}, fmt.Errorf("model file is not valid JSON: %w", err)
		}
		kind = probe.Kind
	}
	names := make([]string, 0, len(loaders))
	for n := range loaders {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if loaders[n].detect(head, kind) {
			return loaders[n], nil
		}
	}
	if kind != "" {
		return loader{}, fmt.Errorf("unknown model kind %q (known formats: %s)", kind, strings.Join(names, ", "))
	}
	return loader{}, fmt.Errorf("unrecognised model file: neither a JSON artifact with a \"kind\" field nor a known text format (known formats: %s)", strings.Join(names, ", "))
}

// params holds the --param key=value pairs of "trainer fit".
type params map[string]string

// str returns the value of key, or def when it was not given.
func (p params) str(key, def string) string {
	if v, ok := p[key]; ok {
		return v
	}
	return def
}

// float returns the value of key as a float64, or def when it was not given. A value
// that does not parse is a usage error naming the key.
func (p params) float(key string, def float64) (float64, error) {
	v, ok := p[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: --param %s=%s: not a number", errUsage, key, v)
	}
	return f, nil
}

// int returns the value of key as an int, or def when it was not given. A value that
// does not parse is a usage error naming the key.
func (p params) int(key string, def int) (int, error) {
	v, ok := p[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: --param %s=%s: not an integer", errUsage, key, v)
	}
	return n, nil
}

// bool returns the value of key as a bool (strconv.ParseBool), or def when it was not
// given. A value that does not parse is a usage error naming the key.
func (p params) bool(key string, def bool) (bool, error) {
	v, ok := p[key]
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: --param %s=%s: not a boolean", errUsage, key, v)
	}
	return b, nil
}

// parseParams splits the --param key=value arguments and checks every key against f.
func parseParams(f fitter, args []string) (params, error) {
	known := make([]string, len(f.params))
	for i, p := range f.params {
		known[i] = p.key
	}
	p := params{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: --param %q: want key=value", errUsage, a)
		}
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("%w: unknown --param %q for --algo %s (accepted: %s)", errUsage, k, f.name, strings.Join(known, ", "))
		}
		if _, dup := p[k]; dup {
			return nil, fmt.Errorf("%w: --param %s given twice", errUsage, k)
		}
		p[k] = v
	}
	return p, nil
}
