package columnar

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Options says what Read reads.
type Options struct {
	// Columns names the columns to read, in any order; nil means every column. A name
	// the file lacks is an error. The Table keeps file order.
	Columns []string
	// Threads is the number of goroutines parsing CSV blocks; 0 means GOMAXPROCS.
	Threads int
	// BlockSize is the size in bytes of a CSV block; 0 means 4 MiB. Tests set it small
	// to exercise block boundaries.
	BlockSize int
}

func (o Options) threads() int {
	if o.Threads > 0 {
		return o.Threads
	}
	return runtime.GOMAXPROCS(0)
}

func (o Options) blockSize() int {
	if o.BlockSize > 0 {
		return o.BlockSize
	}
	return 4 << 20
}

// Read reads the table at path, a .csv or .parquet file (by extension), into float64
// columns.
func Read(ctx context.Context, path string, opt Options) (*Table, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return readCSV(ctx, path, opt)
	case ".parquet":
		return readParquet(ctx, path, opt)
	}
	return nil, fmt.Errorf("columnar: %s: unknown table format %q (want .csv or .parquet)", path, filepath.Ext(path))
}

// Header returns the column names of the table at path without reading its rows.
func Header(path string) ([]string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return csvHeader(path)
	case ".parquet":
		return parquetHeader(path)
	}
	return nil, fmt.Errorf("columnar: %s: unknown table format %q (want .csv or .parquet)", path, filepath.Ext(path))
}

// selection maps each column of a header to its index among the selected columns, -1
// when it is not read, checking names for duplicates and wanted names for presence.
func selection(path string, header, want []string) ([]int, error) {
	seen := make(map[string]bool, len(header))
	for _, h := range header {
		if seen[h] {
			return nil, fmt.Errorf("columnar: %s: column %q occurs twice in the header: %w", path, h, ErrFormat)
		}
		seen[h] = true
	}
	sel := make([]int, len(header))
	k := 0
	for j, h := range header {
		sel[j] = -1
		if want == nil || slices.Contains(want, h) {
			sel[j] = k
			k++
		}
	}
	for _, w := range want {
		if !seen[w] {
			return nil, fmt.Errorf("columnar: %s: no column %q: %w", path, w, ErrFormat)
		}
	}
	return sel, nil
}
