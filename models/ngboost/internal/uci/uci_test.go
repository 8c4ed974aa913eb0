package uci

import (
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		rows, cols, test int
		firstY           float64
	}{
		// Sizes from the README's table; test rows are 10% of the data.
		{"kin8nm", 8192, 8, 820, 0.53652416},
		{"power-plant", 9568, 4, 957, 480.48},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Load("../../testdata/uci/" + tc.name)
			if err != nil {
				t.Fatal(err)
			}
			r, c := d.X.Dims()
			if r != tc.rows || c != tc.cols || len(d.Y) != tc.rows || d.Y[0] != tc.firstY {
				t.Errorf("Load(%s): %d×%d, %d targets, y[0] = %v; want %d×%d, y[0] = %v", tc.name, r, c, len(d.Y), d.Y[0], tc.rows, tc.cols, tc.firstY)
			}
			train, test, err := d.Split(0)
			if err != nil {
				t.Fatal(err)
			}
			if len(train)+len(test) != tc.rows || len(test) < tc.test-1 || len(test) > tc.test {
				t.Errorf("Split(0): %d train, %d test rows; want %d in all, about %d test", len(train), len(test), tc.rows, tc.test)
			}
			seen := make([]bool, tc.rows)
			for _, i := range append(train, test...) {
				if seen[i] {
					t.Fatalf("Split(0): row %d twice", i)
				}
				seen[i] = true
			}
			x, y := d.Rows(test[:2])
			if y[1] != d.Y[test[1]] || x.At(1, 0) != d.X.At(test[1], 0) {
				t.Errorf("Rows(%v) do not copy the rows", test[:2])
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	if _, err := Load("no-such-dir"); err == nil || !strings.Contains(err.Error(), "index_features.txt") {
		t.Errorf("Load(no-such-dir) = %v, want an error naming the file", err)
	}
	d, err := Load("../../testdata/uci/power-plant")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Split(99); err == nil || !strings.Contains(err.Error(), "index_train_99.txt") {
		t.Errorf("Split(99) = %v, want an error naming the missing file", err)
	}
}
