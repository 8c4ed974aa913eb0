package columnar

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
)

// FuzzReadCSV reads fuzzed CSV bytes twice: in one block on one goroutine, and in
// 16-byte blocks on three goroutines. A read must never panic, and the two must agree:
// both refuse the file, or both return the same columns, levels and values (NaN equal to
// NaN), so block boundaries and parallel parsing never change what a table holds.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b,y\n1,2,3\n4,,6\n"))
	f.Add([]byte("x,label\n1.5,good\n-2e3,bad\nNaN,good\n"))
	f.Add([]byte("\"q,1\",v\n\"x\"\"y\",1\n"))
	f.Add([]byte("a\n\n1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "t.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		one, err1 := Read(context.Background(), path, Options{Threads: 1})
		many, err2 := Read(context.Background(), path, Options{Threads: 3, BlockSize: 16})
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("one block: %v; 16-byte blocks: %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if one.NRows != many.NRows || len(one.Columns) != len(many.Columns) {
			t.Fatalf("one block: %d rows × %d columns; 16-byte blocks: %d × %d",
				one.NRows, len(one.Columns), many.NRows, len(many.Columns))
		}
		for j, c := range one.Columns {
			d := many.Columns[j]
			if c.Name != d.Name || len(c.Levels) != len(d.Levels) || len(c.Values) != len(d.Values) {
				t.Fatalf("column %d: %q (%d levels, %d values) vs %q (%d, %d)",
					j, c.Name, len(c.Levels), len(c.Values), d.Name, len(d.Levels), len(d.Values))
			}
			for k := range c.Levels {
				if c.Levels[k] != d.Levels[k] {
					t.Fatalf("column %q level %d: %q vs %q", c.Name, k, c.Levels[k], d.Levels[k])
				}
			}
			for i, v := range c.Values {
				w := d.Values[i]
				if v != w && !(math.IsNaN(v) && math.IsNaN(w)) {
					t.Fatalf("column %q row %d: %v vs %v", c.Name, i, v, w)
				}
			}
		}
	})
}

// FuzzReadParquet reads fuzzed bytes as a Parquet table, seeded with a real two-column
// file (numbers with NaN, strings) and damaged copies of it: a read must never panic or
// allocate by an untrusted row count, and a table it returns has as many values in each
// column as it says it has rows.
func FuzzReadParquet(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.parquet")
	n := 300
	fr := &datasets.Frame{Columns: []datasets.Column{{Name: "x", Floats: make([]float64, n)}, {Name: "s", Strings: make([]string, n)}}}
	for i := range n {
		fr.Columns[0].Floats[i] = float64(i) / 7
		if i%11 == 0 {
			fr.Columns[0].Floats[i] = math.NaN()
		}
		fr.Columns[1].Strings[i] = []string{"b", "a", "", "c"}[i%4]
	}
	if err := datasets.WriteFrame(context.Background(), path, fr); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	for _, at := range []int{len(seed) / 3, len(seed) / 2, len(seed) - 20} {
		d := append([]byte(nil), seed...)
		d[at] ^= 0xff
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "t.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := Read(context.Background(), p, Options{})
		if err != nil {
			return
		}
		for _, c := range tb.Columns {
			if len(c.Values) != tb.NRows {
				t.Fatalf("column %q holds %d values, the table %d rows", c.Name, len(c.Values), tb.NRows)
			}
		}
	})
}
