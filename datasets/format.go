package datasets

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format is a file format of a table.
type Format uint8

// The formats this package reads and writes. FormatParquet is the zero value and the
// default.
const (
	FormatParquet Format = iota
	FormatArrow
	FormatCSV
)

var formatNames = [...]string{FormatParquet: "parquet", FormatArrow: "arrow", FormatCSV: "csv"}

// String returns the format's name, which is also its file extension without the dot.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// Ext returns the file extension of the format, with its dot.
func (f Format) Ext() string { return "." + f.String() }

// ParseFormat parses a format name: "parquet", "arrow" or "csv".
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("datasets: %w %q (want parquet, arrow or csv)", ErrUnknownFormat, s)
}

// formatOf returns the format of path from its extension.
func formatOf(path string) (Format, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	f, err := ParseFormat(ext)
	if err != nil {
		return 0, fmt.Errorf("datasets: %s: %w %q (want .parquet, .arrow or .csv)", path, ErrUnknownFormat, filepath.Ext(path))
	}
	return f, nil
}
