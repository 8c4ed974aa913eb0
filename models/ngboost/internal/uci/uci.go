// Package uci reads the UCI regression benchmarks in the layout of Hernandez-Lobato and
// Adams (2015) that the NGBoost paper evaluates on: a whitespace-separated data.txt,
// index_features.txt and index_target.txt naming its columns (0-based), and
// index_train_K.txt / index_test_K.txt holding the 0-based rows of split K.
package uci

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Dataset is one benchmark: its features and target, all rows.
type Dataset struct {
	// Dir is the folder it was read from.
	Dir string
	// X holds the feature columns of every row, in index_features.txt order.
	X *mat.Dense
	// Y is the target column.
	Y []float64
}

// Load reads the data set in dir.
func Load(dir string) (*Dataset, error) {
	feat, err := readInts(filepath.Join(dir, "index_features.txt"))
	if err != nil {
		return nil, err
	}
	tgt, err := readInts(filepath.Join(dir, "index_target.txt"))
	if err != nil {
		return nil, err
	}
	if len(tgt) != 1 {
		return nil, fmt.Errorf("uci: %s: want one target column, got %d", filepath.Join(dir, "index_target.txt"), len(tgt))
	}
	path := filepath.Join(dir, "data.txt")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("uci: %w", err)
	}
	defer f.Close()
	var xs, ys []float64
	sc := bufio.NewScanner(f)
	line, width := 0, -1
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if width < 0 {
			width = len(fields)
			for _, c := range append(feat, tgt[0]) {
				if c < 0 || c >= width {
					return nil, fmt.Errorf("uci: %s: column %d out of range for %d columns", dir, c, width)
				}
			}
		}
		if len(fields) != width {
			return nil, fmt.Errorf("uci: %s:%d: %d fields, want %d", path, line, len(fields), width)
		}
		row := make([]float64, width)
		for j, s := range fields {
			if row[j], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("uci: %s:%d: column %d: %w", path, line, j, err)
			}
		}
		for _, c := range feat {
			xs = append(xs, row[c])
		}
		ys = append(ys, row[tgt[0]])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("uci: %s: %w", path, err)
	}
	if len(ys) == 0 {
		return nil, fmt.Errorf("uci: %s: no rows", path)
	}
	return &Dataset{Dir: dir, X: mat.NewDense(len(ys), len(feat), xs), Y: ys}, nil
}

// Split returns the training and test rows of split k.
func (d *Dataset) Split(k int) (train, test []int, err error) {
	if train, err = d.readRows(fmt.Sprintf("index_train_%d.txt", k)); err != nil {
		return nil, nil, err
	}
	if test, err = d.readRows(fmt.Sprintf("index_test_%d.txt", k)); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func (d *Dataset) readRows(name string) ([]int, error) {
	rows, err := readInts(filepath.Join(d.Dir, name))
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		if r < 0 || r >= len(d.Y) {
			return nil, fmt.Errorf("uci: %s: line %d: row %d out of range for %d rows", filepath.Join(d.Dir, name), i+1, r, len(d.Y))
		}
	}
	return rows, nil
}

// Rows returns copies of the features and targets of the given rows, in that order.
func (d *Dataset) Rows(idx []int) (*mat.Dense, []float64) {
	_, c := d.X.Dims()
	x := mat.NewDense(len(idx), c, nil)
	y := make([]float64, len(idx))
	for i, r := range idx {
		x.SetRow(i, d.X.RawRowView(r))
		y[i] = d.Y[r]
	}
	return x, y
}

// readInts reads one integer per line (written as floats in some files, e.g. "8.0").
func readInts(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("uci: %w", err)
	}
	var out []int
	for i, s := range strings.Fields(string(b)) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v != float64(int(v)) {
			return nil, fmt.Errorf("uci: %s: entry %d: %q is not an integer", path, i+1, s)
		}
		out = append(out, int(v))
	}
	return out, nil
}
