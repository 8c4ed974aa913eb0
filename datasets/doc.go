// Package datasets holds the build-history schema of sqpredict and its files.
//
// A history is a folder holding a changes table, a builds table and, for synthetic
// histories, a pairs table, each as Parquet (the default), Arrow IPC or CSV:
// changes.<ext>, builds.<ext>, pairs.<ext>. The tables and their columns are described
// in ARCHITECTURE.md; the Go types are [Change], [Build] and [Pair], collected in a
// [History]. [ReadHistory] reads and validates a folder, [WriteHistory] writes one, and
// [ImportTravisTorrent] and [ImportBuildFast] turn the public CI records of
// ../shared/ci-data into histories (the column mapping is in IMPORT.md).
//
// # Extra attributes
//
// A changes table may hold numeric columns outside the schema, named x_<name>: the
// extra attributes of its changes ([Extra], [History.Extra]), which the importers fill
// with a source's other numeric columns (BuildFast's history and code-structure counts,
// TravisTorrent's churn) and which the feature tables append to the success and
// build-time rows. Their values are any finite number or missing. A name that records
// how the build ended (BuildFast's now_label and now_duration, ...) is refused by name
// with [ErrLeakingColumn] by the readers, the writers and [CheckExtraName], since as a
// feature it would leak the label.
//
// [Frame] is a plain table of float and string columns, the form of feature tables,
// read and written by [ReadFrame] and [WriteFrame] in the same three formats.
//
// # Missing values
//
// Real histories do not have every column. A numeric attribute that is unknown is NaN in
// memory and null (Parquet, Arrow) or an empty cell (CSV) on disk; an unknown timestamp is
// the zero [time.Time]; an unknown flag is [FlagUnknown]; an unknown string is "". Nothing
// is filled in by guessing.
//
// # File formats
//
// Columns are written in the schema order. In Parquet and Arrow files every column is
// nullable: numbers are float64 (reading accepts any integer, float or bool column),
// strings utf8 (reading also accepts large_utf8, string views and dictionary-encoded
// strings, pandas' categoricals), times timestamp[us, UTC], flags bool, lists list<utf8>. CSV files have a
// header row; times are RFC 3339 in UTC (with a fraction only when there is one), numbers
// the shortest form that parses back to the same float64, flags true or false, lists
// joined with ";". An empty CSV cell is a missing value; a list known to be empty
// (affected_targets of a change that affects nothing) is written "[]" in CSV and as an
// empty list in Parquet and Arrow, while a missing list is an empty cell or null. A
// build's path has no missing state: an empty path (a build on HEAD) is written as a
// missing list and read back as nil. A list element may not be empty, and in CSV may not
// contain ";" or be "[]".
//
// Times are kept to the microsecond, the precision of timestamp[us]: writers truncate
// finer times, readers return UTC. With that, a round trip through any format gives back
// the same History, and writing is deterministic: the same History gives byte-identical
// files, which the synthetic generator relies on. The truth columns (true_p_success,
// true_mu_s, true_sigma_s) are written only when some row has a value, and a missing
// optional column reads as all-missing.
//
// # Validation
//
// Reading checks every row (see [ReadHistory] for the list) and reports each problem as
// a [*ParseError] naming the file, the data row (and the CSV line) and the column,
// wrapping a sentinel such as [ErrInvalidValue] or [ErrUnknownChange]. Strict reading
// (the default) returns a [*ProblemsError] with up to 100 problems; lenient reading skips
// the rows with problems, and the builds and pairs of skipped changes, and counts them by
// reason in the [Report]. Nothing is dropped silently.
//
// Arrow types never leave this package: readers return the project types above.
package datasets
