// Package report renders evaluation reports: a self-contained HTML page of metrics
// tables and PNG figures drawn with gonum.org/v1/plot, for a trained bundle
// (report.html beside its metrics.json) and for the comparison of two bundles.
//
// # Input
//
// An [Input] holds plain numbers, not models: sections (success, conflict, build time)
// with a metrics table of one column per model (the champion first, then any
// challengers), optional paired-bootstrap differences ([Difference], from
// eval.PairedBootstrap) and figures:
//
//   - [Reliability]: reliability diagram of one or more classifiers from
//     eval.CalibrationBin, with the diagonal and the rows per bin;
//   - [PredictedActual]: predicted against actual values with the line y = x, linear or
//     log axes, at most [MaxScatterPoints] points (a fixed-seed sample);
//   - [PITHistogram]: PIT histogram as a density with the uniform line;
//   - [Coverage]: empirical against nominal coverage of central intervals.
//
// A section with differences also gets a forest plot of them, each relative to model
// A's value so that metrics of different units share one axis.
//
// # Output
//
// [Write] draws every figure before it writes anything, so bad input (no data, NaN,
// mismatched lengths, unknown model names) returns an error naming the section and the
// plot and leaves the directory untouched. Files are written through temporary files
// renamed into place, PNGs first and report.html last. Text is escaped by html/template;
// the page has inline CSS, no scripts and no external assets, and references the PNGs,
// [DPI] pixels per inch, by sibling file name. The same input gives byte-identical
// files.
package report
