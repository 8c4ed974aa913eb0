package datasets

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"gonum.org/v1/gonum/floats/scalar"
)

func testFrame() *Frame {
	return &Frame{Columns: []Column{
		{Name: "x", Floats: []float64{1, -2.5, math.NaN(), 1e-300, math.Inf(1), 0.1 + 0.2}},
		{Name: "name", Strings: []string{"a", "", "b,c", "d\"e", "line\nbreak", "ü"}},
		{Name: "y", Floats: []float64{0, 1, 1, 0, math.NaN(), 3}},
	}}
}

// equalFrames reports whether a and b have the same columns, types and values (NaN equal
// to NaN: the round trip must be exact, so no tolerance).
func equalFrames(t *testing.T, got, want *Frame) {
	t.Helper()
	if len(got.Columns) != len(want.Columns) {
		t.Fatalf("got %d columns, want %d", len(got.Columns), len(want.Columns))
	}
	for j := range want.Columns {
		g, w := &got.Columns[j], &want.Columns[j]
		if g.Name != w.Name {
			t.Errorf("column %d name = %q, want %q", j, g.Name, w.Name)
		}
		if (g.Floats == nil) != (w.Floats == nil) || (g.Strings == nil) != (w.Strings == nil) {
			t.Fatalf("column %q: kinds differ: got floats=%v strings=%v", w.Name, g.Floats != nil, g.Strings != nil)
		}
		if len(g.Floats) != len(w.Floats) || len(g.Strings) != len(w.Strings) {
			t.Fatalf("column %q: lengths differ", w.Name)
		}
		for i := range w.Floats {
			if !scalar.Same(g.Floats[i], w.Floats[i]) {
				t.Errorf("column %q row %d = %v, want %v", w.Name, i, g.Floats[i], w.Floats[i])
			}
		}
		for i := range w.Strings {
			if g.Strings[i] != w.Strings[i] {
				t.Errorf("column %q row %d = %q, want %q", w.Name, i, g.Strings[i], w.Strings[i])
			}
		}
	}
}

func TestFrameRoundTrip(t *testing.T) {
	for _, ext := range []string{".csv", ".parquet", ".arrow"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "f"+ext)
			want := testFrame()
			if err := writeFrame(ctx, path, want, mem); err != nil {
				t.Fatal(err)
			}
			got, err := readFrame(ctx, path, mem)
			if err != nil {
				t.Fatal(err)
			}
			equalFrames(t, got, want)
			if got.NRows() != 6 || got.Index("y") != 2 || got.Index("nope") != -1 {
				t.Errorf("NRows, Index = %d, %d, %d, want 6, 2, -1", got.NRows(), got.Index("y"), got.Index("nope"))
			}
		})
	}
}

func TestFrameRoundTripEmpty(t *testing.T) {
	for _, ext := range []string{".csv", ".parquet", ".arrow"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "f"+ext)
			in := &Frame{Columns: []Column{{Name: "a", Floats: []float64{}}, {Name: "s", Strings: []string{}}}}
			if err := writeFrame(context.Background(), path, in, mem); err != nil {
				t.Fatal(err)
			}
			got, err := readFrame(context.Background(), path, mem)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			if ext == ".csv" {
				// A CSV file has no types: a column without cells reads as numeric.
				want = &Frame{Columns: []Column{{Name: "a", Floats: []float64{}}, {Name: "s", Floats: []float64{}}}}
			}
			equalFrames(t, got, want)
		})
	}
}

// TestFrameRoundTripManyBatches crosses the batch size so that multi-batch reading and
// multi-row-group writing are exercised.
func TestFrameRoundTripManyBatches(t *testing.T) {
	n := batchRows*2 + 17
	want := &Frame{Columns: []Column{{Name: "i", Floats: make([]float64, n)}, {Name: "s", Strings: make([]string, n)}}}
	for i := range n {
		want.Columns[0].Floats[i] = float64(i)
		want.Columns[1].Strings[i] = "s" + string(rune('a'+i%26))
	}
	for _, ext := range []string{".csv", ".parquet", ".arrow"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "f"+ext)
			if err := writeFrame(context.Background(), path, want, mem); err != nil {
				t.Fatal(err)
			}
			got, err := readFrame(context.Background(), path, mem)
			if err != nil {
				t.Fatal(err)
			}
			equalFrames(t, got, want)
		})
	}
}

func TestReadFrameCSVInference(t *testing.T) {
	const in = "num,str,nan,empty,mixed\n1,a,NaN,,1\n2.5,b,,,x\n,c,3,,\n"
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFrame(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := &Frame{Columns: []Column{
		{Name: "num", Floats: []float64{1, 2.5, nan}},
		{Name: "str", Strings: []string{"a", "b", "c"}},
		{Name: "nan", Floats: []float64{nan, nan, 3}},
		{Name: "empty", Floats: []float64{nan, nan, nan}},
		{Name: "mixed", Strings: []string{"1", "x", ""}},
	}}
	equalFrames(t, got, want)
}

func TestReadFrameErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		file     string
		content  string
		wantErr  error
		wantLine int
		wantCol  string
	}{
		{name: "field count", file: "a.csv", content: "a,b\n1,2\n3\n", wantErr: ErrInvalidValue, wantLine: 3},
		{name: "bare quote", file: "b.csv", content: "a,b\n1,2\n3,x\"y\n", wantErr: ErrInvalidValue, wantLine: 3},
		{name: "duplicate column", file: "c.csv", content: "a,a\n1,2\n", wantErr: ErrDuplicateColumn, wantLine: 1, wantCol: "a"},
		{name: "empty file", file: "d.csv", content: "", wantErr: ErrInvalidValue, wantLine: 1},
		{name: "unknown extension", file: "e.txt", content: "a\n1\n", wantErr: ErrUnknownFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFrame(context.Background(), path)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("ReadFrame(%s) = %v, want %v", tc.name, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %q does not name the file", err)
			}
			var pe *ParseError
			if tc.wantLine == 0 {
				return
			}
			if !errors.As(err, &pe) {
				t.Fatalf("ReadFrame(%s) = %v, want a *ParseError", tc.name, err)
			}
			if pe.Line != tc.wantLine || pe.Column != tc.wantCol {
				t.Errorf("ParseError line, column = %d, %q, want %d, %q", pe.Line, pe.Column, tc.wantLine, tc.wantCol)
			}
		})
	}
}

func TestWriteFrameMisuse(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		f    *Frame
	}{
		{"both", &Frame{Columns: []Column{{Name: "a", Floats: []float64{1}, Strings: []string{"x"}}}}},
		{"neither", &Frame{Columns: []Column{{Name: "a"}}}},
		{"lengths", &Frame{Columns: []Column{{Name: "a", Floats: []float64{1}}, {Name: "b", Floats: []float64{1, 2}}}}},
		{"duplicate", &Frame{Columns: []Column{{Name: "a", Floats: []float64{1}}, {Name: "a", Floats: []float64{1}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".csv")
			if err := WriteFrame(context.Background(), path, tc.f); err == nil {
				t.Fatalf("WriteFrame(%s) = nil, want an error", tc.name)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("WriteFrame(%s) left a file behind", tc.name)
			}
		})
	}
}

// TestReadFrameUnsupportedType reads a history file, whose timestamp and list columns a
// Frame cannot hold: the error names the column.
func TestReadFrameUnsupportedType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	h := &History{Changes: []Change{testChange("c1")}}
	if err := writeHistory(context.Background(), dir, h, FormatParquet, mem); err != nil {
		t.Fatal(err)
	}
	_, err := readFrame(context.Background(), filepath.Join(dir, "changes.parquet"), mem)
	var pe *ParseError
	if !errors.Is(err, ErrUnsupportedType) || !errors.As(err, &pe) || pe.Column != "submitted_at" {
		t.Fatalf("readFrame(changes.parquet) = %v, want ErrUnsupportedType naming submitted_at", err)
	}
}
