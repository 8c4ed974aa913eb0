// Package atomicfile replaces files atomically: a reader of the path sees either the
// old content or the whole new one, never a partial write, and once Write returns the
// new content survives a crash.
//
// Write creates a temporary file in the target's folder (same file system, so the
// final rename is atomic), lets the caller write into it, syncs and closes it, sets its
// permission bits, renames it over the target and syncs the folder. This is
// writeMetaFile in Prometheus tsdb/block.go. On any failure the temporary file is
// removed and the target is left as it was.
//
// Temporary files are named TempPrefix + the target's base name + a random suffix, so
// readers that list a folder can skip them and housekeeping can remove those a crash
// left behind.
package atomicfile
