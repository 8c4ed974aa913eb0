// Package datasets holds the build-history schema of sqpredict and its files.
//
// A history is a folder holding a changes table, a builds table and, for synthetic
// histories, a pairs table, each as Parquet (the default), Arrow IPC or CSV. The tables
// and their columns are described in ARCHITECTURE.md; the Go types are [Change], [Build]
// and [Pair], collected in a [History].
//
// # Missing values
//
// Real histories do not have every column. A numeric attribute that is unknown is NaN in
// memory and null (Parquet, Arrow) or an empty cell (CSV) on disk; an unknown timestamp is
// the zero [time.Time]; an unknown flag is [FlagUnknown]. Nothing is filled in by guessing.
//
// Arrow types never leave this package: readers return the project types above.
package datasets
