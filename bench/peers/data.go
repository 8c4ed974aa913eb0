package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Kinds of generated data set.
const (
	// kindRegression: cols standard normal features x_j, target
	// y = Σ_j x_j/(1 + j mod 10) + x0·x1 + sin(3·x2) + N(0, 0.5²).
	kindRegression = "reg"
	// kindBinary: the features of kindRegression, label 1 when its y > 0.
	kindBinary = "bin"
	// kindLogistic: feature j is (1 + j mod 3)·v_j + j mod 5 for standard normal v_j;
	// P(y = 1) = sigmoid(0.2 + 0.5·Σ_{j mod 4 = 0} v_j).
	kindLogistic = "logit"
	// kindHetero: uniform features on [0, 1); y = 10·x0 + 5·x1·x2 + 3·x3 + noise with
	// standard deviation exp(x4 - x5) (a Normal NGBoost's kind of data).
	kindHetero = "hetero"
	// kindUCI: the training rows of split 0 of a UCI data set (the folder uci).
	kindUCI = "uci"
)

// dataGenVersion is part of the generated file names: change it when a generator
// changes, so that old files are not reused.
const dataGenVersion = 1

// genDigits is the number of significant digits of generated values: the files stay
// small, so that reading them measures parsing rather than the disk.
const genDigits = 7

// dataSet is a CSV file with a header, the target y first, then x0, x1, ....
type dataSet struct {
	kind       string
	rows, cols int
	seed       uint64
	uci        string // the UCI data set, for kindUCI
}

// file returns the path of the data set in the workspace.
func (d dataSet) file(ws *workspace) string {
	if d.kind == kindUCI {
		return filepath.Join(ws.dir, fmt.Sprintf("uci-%s-split0-train.csv", d.uci))
	}
	return filepath.Join(ws.dir, fmt.Sprintf("%s-%dx%d-seed%d-v%d.csv", d.kind, d.rows, d.cols, d.seed, dataGenVersion))
}

// path returns the path of the data set, writing it first when the workspace does
// not have it.
func (d dataSet) path(ws *workspace) (string, error) {
	p := d.file(ws)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	var err error
	if d.kind == kindUCI {
		err = writeUCI(p, filepath.Join(ws.uci, d.uci))
	} else {
		err = d.generate(p)
	}
	if err != nil {
		return "", fmt.Errorf("data set %s: %w", filepath.Base(p), err)
	}
	return p, nil
}

// generate writes the generated data set to path (through a temporary file, so that
// an interrupted run leaves nothing to reuse).
func (d dataSet) generate(path string) error {
	rng := rand.New(rand.NewPCG(d.seed, d.seed))
	row := make([]float64, d.cols+1) // y, then the features
	return writeCSV(path, d.cols, d.rows, genDigits, func() []float64 {
		d.fillRow(rng, row)
		return row
	})
}

// fillRow draws one row: row[0] is the target, row[1:] the features.
func (d dataSet) fillRow(rng *rand.Rand, row []float64) {
	x := row[1:]
	switch d.kind {
	case kindRegression, kindBinary:
		y := 0.0
		for j := range x {
			x[j] = rng.NormFloat64()
			y += x[j] / float64(1+j%10)
		}
		y += x[0]*x[1] + math.Sin(3*x[2]) + 0.5*rng.NormFloat64()
		if d.kind == kindBinary {
			y = b2f(y > 0)
		}
		row[0] = y
	case kindLogistic:
		z := 0.2
		for j := range x {
			v := rng.NormFloat64()
			if j%4 == 0 {
				z += 0.5 * v
			}
			x[j] = v*float64(1+j%3) + float64(j%5)
		}
		row[0] = b2f(rng.Float64() < 1/(1+math.Exp(-z)))
	case kindHetero:
		for j := range x {
			x[j] = rng.Float64()
		}
		row[0] = 10*x[0] + 5*x[1]*x[2] + 3*x[3] + math.Exp(x[4]-x[5])*rng.NormFloat64()
	default:
		panic("peers: unknown data kind " + d.kind)
	}
}

// b2f is 1 for true and 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// writeCSV writes rows rows of next() (y and cols features, with prec significant
// digits, -1 for as many as a float64 needs) under the header y,x0,x1,... to path,
// through a temporary file renamed at the end.
func writeCSV(path string, cols, rows, prec int, next func() []float64) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	names := []string{"y"}
	for j := range cols {
		names = append(names, "x"+strconv.Itoa(j))
	}
	w.WriteString(strings.Join(names, ",") + "\n")
	var buf []byte
	for range rows {
		buf = buf[:0]
		for j, v := range next() {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, v, 'g', prec, 64)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeUCI writes the training rows of split 0 of the UCI data set in folder dir
// (data.txt, index_features.txt, index_target.txt, index_train_0.txt; see the folder's
// README) to path as y,x0,x1,....
func writeUCI(path, dir string) error {
	data, err := readNumbers(filepath.Join(dir, "data.txt"))
	if err != nil {
		return err
	}
	ints := func(name string) ([]int, error) {
		rows, err := readNumbers(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var out []int
		for _, r := range rows {
			for _, v := range r {
				if v != math.Trunc(v) || v < 0 {
					return nil, fmt.Errorf("%s: %v is not an index", name, v)
				}
				out = append(out, int(v))
			}
		}
		return out, nil
	}
	feats, err := ints("index_features.txt")
	if err != nil {
		return err
	}
	target, err := ints("index_target.txt")
	if err != nil {
		return err
	}
	train, err := ints("index_train_0.txt")
	if err != nil {
		return err
	}
	if len(target) != 1 {
		return fmt.Errorf("%s: index_target.txt has %d indices, want 1", dir, len(target))
	}
	for _, c := range append(feats, target[0]) {
		if len(data) == 0 || c >= len(data[0]) {
			return fmt.Errorf("%s: column %d out of range", dir, c)
		}
	}
	row := make([]float64, len(feats)+1)
	k := 0
	var bad error
	err = writeCSV(path, len(feats), len(train), -1, func() []float64 {
		r := train[k]
		k++
		if r >= len(data) {
			bad = fmt.Errorf("%s: training row %d out of range", dir, r)
			return row
		}
		row[0] = data[r][target[0]]
		for j, c := range feats {
			row[j+1] = data[r][c]
		}
		return row
	})
	if bad != nil {
		os.Remove(path)
		return bad
	}
	return err
}

// readNumbers reads a file of whitespace-separated numbers, one row per line.
func readNumbers(path string) ([][]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows [][]float64
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		r := make([]float64, len(f))
		for j, s := range f {
			if r[j], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("%s: line %d, field %d: %w", path, i+1, j+1, err)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New(path + ": no numbers")
	}
	return rows, nil
}
