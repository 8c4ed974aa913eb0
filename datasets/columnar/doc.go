// Package columnar reads a CSV or Parquet table straight into float64 columns, the
// form model fitting and batch prediction need, without keeping a string per cell.
//
// # CSV
//
// A CSV file has a header row and one record per row, fields separated by commas,
// RFC 4180 quoting ("a,b" and "say ""hi""" are one field; a quoted field may span
// lines). The file is read in blocks of a few megabytes that end at a record boundary;
// the blocks are parsed in parallel (Options.Threads goroutines), numbers parsed from
// the bytes in place with strconv.ParseFloat, so memory is the columns plus a few blocks
// in flight. An empty cell is NaN (missing). A column whose cells are all numbers (or
// empty) is numeric; a column with any other cell is a text column, stored as codes of
// its distinct values (Column.Levels, sorted), numeric cells of such a column becoming
// the level strconv.FormatFloat(v, 'g', -1, 64). Columns not named in Options.Columns
// are skipped without parsing. Errors name the file, the 1-based line (the header is
// line 1; a record spanning lines is named by its first line) and the column.
//
// # Parquet
//
// Integer, float and bool columns become numeric columns (bool 0 or 1, null NaN);
// string columns (utf8, large_utf8, string views, and dictionary-encoded strings: pandas'
// categoricals) become text columns; other types are an error naming the column.
// Parquet row groups are decoded in parallel by arrow-go and converted batch by batch.
//
// Arrow types do not leave this package (they stay inside datasets, as the house style
// asks).
package columnar
