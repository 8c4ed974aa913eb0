package columnar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/datasets"
)

// sameFloat reports whether a and b are equal or both NaN.
func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }

// checkAgainstFrame compares a Table with datasets.ReadFrame's reading of the same
// file, the independent reader: numeric columns value by value, text columns by level.
func checkAgainstFrame(t *testing.T, path string, tb *Table) {
	t.Helper()
	fr, err := datasets.ReadFrame(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if tb.NRows != fr.NRows() {
		t.Fatalf("%d rows, ReadFrame %d", tb.NRows, fr.NRows())
	}
	for k := range tb.Columns {
		c := &tb.Columns[k]
		fc := &fr.Columns[fr.Index(c.Name)]
		if (fc.Strings != nil) != c.IsText() {
			t.Fatalf("column %s: text %v, ReadFrame strings %v", c.Name, c.IsText(), fc.Strings != nil)
		}
		for i := range tb.NRows {
			if fc.Floats != nil {
				if !sameFloat(c.Values[i], fc.Floats[i]) {
					t.Fatalf("column %s row %d: %v, ReadFrame %v", c.Name, i, c.Values[i], fc.Floats[i])
				}
				continue
			}
			got, ok := c.Level(i)
			want := fc.Strings[i]
			if v, err := strconv.ParseFloat(want, 64); err == nil {
				want = strconv.FormatFloat(v, 'g', -1, 64)
			}
			if !ok {
				got = ""
			}
			if got != want {
				t.Fatalf("column %s row %d: %q, ReadFrame %q", c.Name, i, got, want)
			}
		}
	}
}

// randomCSV writes a CSV file with numbers (some empty, some exponents), a text column
// with quotes, commas and newlines inside quotes, and CRLF line ends on some lines.
func randomCSV(t *testing.T, rows int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("a,b,\"c,d\",txt,mixed\n")
	for i := range rows {
		num := func() string {
			switch rng.IntN(6) {
			case 0:
				return ""
			case 1:
				return strconv.FormatFloat(rng.NormFloat64()*1e-40, 'g', -1, 64)
			case 2:
				return strconv.Itoa(rng.IntN(100))
			}
			return strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64)
		}
		txt := []string{"x", "\"q,1\"", "\"two\nlines\"", "\"say \"\"hi\"\"\"", "", "y"}[rng.IntN(6)]
		mixed := num()
		if i == rows*2/3 {
			mixed = "late text"
		}
		end := "\n"
		if rng.IntN(5) == 0 {
			end = "\r\n"
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s%s", num(), num(), num(), txt, mixed, end)
	}
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadCSVMatchesReadFrame(t *testing.T) {
	path := randomCSV(t, 3000, 1)
	for _, bs := range []int{0, 64, 1000} {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("block%d_threads%d", bs, threads), func(t *testing.T) {
				tb, err := Read(context.Background(), path, Options{BlockSize: bs, Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(tb.Names(), "|"); got != "a|b|c,d|txt|mixed" {
					t.Fatalf("names %s", got)
				}
				if !tb.Columns[4].IsText() || tb.Columns[0].IsText() {
					t.Fatalf("column kinds wrong")
				}
				checkAgainstFrame(t, path, tb)
			})
		}
	}
}

func TestReadCSVSelect(t *testing.T) {
	path := randomCSV(t, 500, 2)
	tb, err := Read(context.Background(), path, Options{Columns: []string{"b", "a"}, BlockSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tb.Names(), "|"); got != "a|b" {
		t.Fatalf("names %s, want file order a|b", got)
	}
	checkAgainstFrame(t, path, tb)
	if _, err := Read(context.Background(), path, Options{Columns: []string{"nope"}}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("missing column: %v", err)
	}
}

func TestReadCSVErrorsNameLine(t *testing.T) {
	var lines []string
	lines = append(lines, "a,b")
	for i := range 40 {
		lines = append(lines, strconv.Itoa(i)+",1")
	}
	cases := []struct {
		name   string
		change func([]string) []string
		want   string
	}{
		{"fields", func(l []string) []string { l[30] = "1,2,3"; return l }, "line 31: 3 fields"},
		{"quote", func(l []string) []string { l[12] = "\"open,1"; return l }, "line 13: quoted field not closed"},
		{"after quote", func(l []string) []string { l[20] = "\"a\"x,1"; return l }, "line 21: text after a closing quote"},
		// Issue 15 item 15: the line where the bad field starts, not where reading stopped.
		{"after a multi-line quote", func(l []string) []string { l[11] = "\"a\nb\nc\"x,1"; return l }, "line 12: text after a closing quote"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.change(append([]string(nil), lines...))
			path := filepath.Join(t.TempDir(), "e.csv")
			if err := os.WriteFile(path, []byte(strings.Join(l, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, bs := range []int{0, 16} {
				_, err := Read(context.Background(), path, Options{BlockSize: bs})
				if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
					t.Fatalf("block %d: error %v, want %q", bs, err, tc.want)
				}
			}
		})
	}
	// A text cell in a column used as numbers.
	l := append([]string(nil), lines...)
	l[25] = "oops,1"
	path := filepath.Join(t.TempDir(), "n.csv")
	if err := os.WriteFile(path, []byte(strings.Join(l, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := Read(context.Background(), path, Options{BlockSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	err = tb.Columns[0].NumberError(path)
	if !errors.Is(err, ErrNotNumber) || !strings.Contains(err.Error(), `column "a", row 25 (line 26): "oops"`) {
		t.Fatalf("NumberError: %v", err)
	}
	if tb.Columns[1].NumberError(path) != nil || tb.NRows != 40 {
		t.Fatalf("column b is numeric, 40 rows; got %d rows", tb.NRows)
	}
}

func TestReadParquet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 70000 // more than one record batch
	fr := &datasets.Frame{Columns: []datasets.Column{{Name: "x", Floats: make([]float64, n)}, {Name: "s", Strings: make([]string, n)}}}
	for i := range n {
		fr.Columns[0].Floats[i] = rng.NormFloat64()
		if i%7 == 0 {
			fr.Columns[0].Floats[i] = math.NaN()
		}
		fr.Columns[1].Strings[i] = []string{"b", "a", "", "c"}[i%4]
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := datasets.WriteFrame(context.Background(), path, fr); err != nil {
		t.Fatal(err)
	}
	names, err := Header(path)
	if err != nil || strings.Join(names, ",") != "x,s" {
		t.Fatalf("Header: %v %v", names, err)
	}
	tb, err := Read(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.NRows != n || strings.Join(tb.Columns[1].Levels, ",") != "a,b,c" {
		t.Fatalf("%d rows, levels %v", tb.NRows, tb.Columns[1].Levels)
	}
	checkAgainstFrame(t, path, tb)
}

func TestMatrix(t *testing.T) {
	m, err := NewMatrix([][]float64{{1, 2}, {3, 4}, {5, 6}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 2 || c != 3 || m.At(1, 2) != 6 || m.T().At(2, 1) != 6 || m.RawColView(1)[0] != 3 {
		t.Fatal("Matrix views wrong")
	}
	if _, err := NewMatrix([][]float64{{1}, {1, 2}}, 2); err == nil {
		t.Fatal("ragged columns accepted")
	}
}
