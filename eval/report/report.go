package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// Errors of Write; they are wrapped with the section, plot, series, row or field at fault.
var (
	// ErrNoData is a plot, series or table with nothing to show.
	ErrNoData = errors.New("no data")
	// ErrNotFinite is a NaN or infinite value where a plot or difference needs a number.
	ErrNotFinite = errors.New("value not finite")
	// ErrInput is any other invalid input: mismatched lengths, values out of range,
	// unknown model names, duplicate models, an unknown Better.
	ErrInput = errors.New("invalid input")
)

// HTMLFile is the name of the report page Write creates.
const HTMLFile = "report.html"

// Input is the content of a report. It holds plain numbers, so that the trainer and
// the compare command can fill it from any model.
type Input struct {
	// Title heads the page; Subtitle (optional) is a line below it, e.g. the repository,
	// data window and version.
	Title, Subtitle string
	// Notice (optional) is a highlighted paragraph under the subtitle, e.g. why a bundle
	// was rejected or that the scores are in-sample.
	Notice string
	// Models names the value columns of the metrics tables in order: the champion first,
	// then the challengers. Every Metric.Values key must be one of them.
	Models []string
	// A and B name the models whose paired differences B − A the sections' Diffs hold;
	// empty means "A" and "B".
	A, B string
	// Sections are shown in order, e.g. success, conflict, build time.
	Sections []Section
}

// Section is one part of the report: a metrics table, an optional table of paired
// differences with its forest plot, and figures.
type Section struct {
	// Name heads the section, e.g. "success".
	Name string
	// Note is an optional paragraph under the heading, e.g. the number of holdout rows.
	Note string
	// Metrics are the table rows, e.g. accuracy, log loss, or a gap to the Bayes limit.
	Metrics []Metric
	// Diffs are paired-bootstrap differences B − A (compare reports); when present the
	// section also gets a table of them and, unless A is 0 for every one, a forest plot.
	Diffs []Difference
	// Plots are the section's figures in order.
	Plots []Plot
}

// Metric is one row of a metrics table.
type Metric struct {
	// Name labels the row, with its unit where it has one, e.g. "CRPS (s)".
	Name string
	// Values holds the metric per model name; a model without a value shows a dash
	// and NaN shows as "n/a".
	Values map[string]float64
	// Better is "lower", "higher" (eval.Direction's String) or empty; with a direction
	// the best value of the row is highlighted.
	Better string
}

// Difference is one metric's paired comparison of model B against model A.
type Difference struct {
	// Metric names the metric, e.g. "log loss".
	Metric string
	// Better is the direction in which the metric improves.
	Better eval.Direction
	eval.PairedDiff
}

// Write renders in into dir (created if missing): HTMLFile, a self-contained page with
// inline CSS and no scripts, and one PNG per figure beside it, which the page references
// by file name. It checks all of in and draws every figure before writing any file, then
// writes the PNGs and the page last, each through a temporary file renamed into place,
// so the page never references a missing image. Files of an earlier report in dir that
// this one does not use are left alone. The same input gives byte-identical files.
func Write(dir string, in Input) error {
	page, figures, err := build(in)
	if err != nil {
		return err
	}
	var html bytes.Buffer
	if err := pageTemplate.Execute(&html, page); err != nil {
		return fmt.Errorf("report: executing template: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, f := range figures {
		if err := writeFile(filepath.Join(dir, f.File), f.png); err != nil {
			return fmt.Errorf("report: writing %s: %w", f.File, err)
		}
	}
	if err := writeFile(filepath.Join(dir, HTMLFile), html.Bytes()); err != nil {
		return fmt.Errorf("report: writing %s: %w", HTMLFile, err)
	}
	return nil
}

// WriteMetricsJSON writes m as an indented JSON object with sorted keys (MetricsMap
// gives one from an Input) to path through a temporary file renamed into place. NaN and
// ±Inf, which JSON cannot hold, are written as null.
func WriteMetricsJSON(path string, m map[string]float64) error {
	obj := make(map[string]*float64, len(m))
	for k, v := range m {
		obj[k] = jsonValue(v)
	}
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return fmt.Errorf("report: encoding %s: %w", path, err)
	}
	if err := writeFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}

// writeFile replaces path with data atomically (a reader sees the old file or the
// whole new one), mode 0644.
func writeFile(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644)
}

// figure is a rendered PNG and its place in the page.
type figure struct {
	png     []byte
	Title   string
	Caption string
	File    string
	W, H    int
}

type pageData struct {
	Title, Subtitle string
	Notice          string
	Models          []string
	A, B            string
	Sections        []sectionData
}

type sectionData struct {
	ID, Name, Note string
	// Level is the interval probability of Diffs, e.g. "95%".
	Level   string
	Rows    []rowData
	Diffs   []diffData
	Figures []*figure
}

type rowData struct {
	Name, Better string
	Cells        []cellData
}

type cellData struct {
	Text string
	Best bool
}

type diffData struct {
	Metric, A, B, Diff, Interval, PBetter, Verdict, Class string
}

// build checks in, renders every figure and lays out the page.
func build(in Input) (pageData, []*figure, error) {
	page := pageData{Title: in.Title, Subtitle: in.Subtitle, Notice: in.Notice, Models: in.Models, A: in.A, B: in.B}
	if page.A == "" {
		page.A = "A"
	}
	if page.B == "" {
		page.B = "B"
	}
	known := make(map[string]bool, len(in.Models))
	for _, m := range in.Models {
		if known[m] {
			return pageData{}, nil, fmt.Errorf("report: Models: %w: %q listed twice", ErrInput, m)
		}
		known[m] = true
	}
	var figures []*figure
	for si, sec := range in.Sections {
		sd := sectionData{ID: fmt.Sprintf("s%d", si+1), Name: sec.Name, Note: sec.Note}
		for _, m := range sec.Metrics {
			row, err := metricRow(m, in.Models, known)
			if err != nil {
				return pageData{}, nil, fmt.Errorf("report: section %q: metric %q: %w", sec.Name, m.Name, err)
			}
			sd.Rows = append(sd.Rows, row)
		}
		for _, d := range sec.Diffs {
			if !finite(d.A, d.B, d.Diff, d.Lo, d.Hi, d.PBetter) {
				return pageData{}, nil, fmt.Errorf("report: section %q: difference %q: %w", sec.Name, d.Metric, ErrNotFinite)
			}
			if d.Better != eval.LowerIsBetter && d.Better != eval.HigherIsBetter {
				return pageData{}, nil, fmt.Errorf("report: section %q: difference %q: %w: Better %v", sec.Name, d.Metric, ErrInput, d.Better)
			}
			sd.Diffs = append(sd.Diffs, diffRow(d, page.B))
		}
		plots := sec.Plots
		if len(sec.Diffs) > 0 {
			sd.Level = levelText(sec.Diffs)
		}
		if slices.ContainsFunc(sec.Diffs, func(d Difference) bool { return d.A != 0 }) {
			f := forest{Title: sec.Name + ": " + page.B + " against " + page.A, A: page.A, B: page.B, Diffs: sec.Diffs}
			plots = append([]Plot{f}, plots...)
		}
		for pi, p := range plots {
			name := p.title()
			if name == "" {
				name = fmt.Sprintf("%d (%s)", pi+1, p.kind())
			}
			png, w, h, err := render(p)
			if err != nil {
				return pageData{}, nil, fmt.Errorf("report: section %q: plot %q: %w", sec.Name, name, err)
			}
			file := fmt.Sprintf("fig%02d-%s-%s.png", len(figures)+1, slug(sec.Name), p.kind())
			f := &figure{png: png, Title: p.title(), Caption: p.caption(), File: file, W: w, H: h}
			figures = append(figures, f)
			sd.Figures = append(sd.Figures, f)
		}
		page.Sections = append(page.Sections, sd)
	}
	return page, figures, nil
}

func metricRow(m Metric, models []string, known map[string]bool) (rowData, error) {
	for name := range m.Values {
		if !known[name] {
			return rowData{}, fmt.Errorf("%w: value for model %q, which is not in Input.Models", ErrInput, name)
		}
	}
	if m.Better != "" && m.Better != "lower" && m.Better != "higher" {
		return rowData{}, fmt.Errorf("%w: Better %q is not \"lower\", \"higher\" or empty", ErrInput, m.Better)
	}
	row := rowData{Name: m.Name, Better: m.Better}
	best, nFinite := math.NaN(), 0
	for _, name := range models {
		v, ok := m.Values[name]
		switch {
		case !ok:
			row.Cells = append(row.Cells, cellData{Text: "—"})
			continue
		case math.IsNaN(v):
			row.Cells = append(row.Cells, cellData{Text: "n/a"})
			continue
		}
		row.Cells = append(row.Cells, cellData{Text: formatValue(v)})
		nFinite++
		if math.IsNaN(best) || (m.Better == "lower" && v < best) || (m.Better == "higher" && v > best) {
			best = v
		}
	}
	if m.Better != "" && nFinite > 1 {
		for i, name := range models {
			if v, ok := m.Values[name]; ok && v == best {
				row.Cells[i].Best = true
			}
		}
	}
	return row, nil
}

func diffRow(d Difference, b string) diffData {
	row := diffData{
		Metric:   d.Metric,
		A:        formatValue(d.A),
		B:        formatValue(d.B),
		Diff:     fmt.Sprintf("%+.3g", d.Diff),
		Interval: fmt.Sprintf("[%+.3g, %+.3g]", d.Lo, d.Hi),
		PBetter:  fmt.Sprintf("%.3f", d.PBetter),
		Verdict:  "no clear difference",
		Class:    "neutral",
	}
	switch verdict(d) {
	case 1:
		row.Verdict, row.Class = b+" better", "better"
	case -1:
		row.Verdict, row.Class = b+" worse", "worse"
	}
	return row
}

// verdict is 1 when the interval shows B better than A, -1 when it shows B worse, and 0
// when it contains 0.
func verdict(d Difference) int {
	switch {
	case !d.Significant():
		return 0
	case (d.Better == eval.HigherIsBetter) == (d.Lo > 0):
		return 1
	}
	return -1
}

// formatValue prints a metric with four significant digits.
func formatValue(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.4g", v)
}

// slug turns a section name into a file-name fragment: lower-case letters and digits
// joined by hyphens.
func slug(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			hyphen = false
		} else {
			hyphen = true
		}
	}
	if b.Len() == 0 {
		return "section"
	}
	return b.String()
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
h1 { margin-bottom: 0.2rem; }
.subtitle { color: #555; margin-top: 0; }
.notice { background: #fff4e5; border-left: 4px solid #d55e00; padding: 0.6rem 1rem; }
nav a { margin-right: 1rem; }
section { margin-top: 2.5rem; border-top: 1px solid #ddd; }
table { border-collapse: collapse; margin: 1rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.3rem 0.8rem; border-bottom: 1px solid #e5e5e5; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #999; }
td.best { font-weight: bold; background: #eef6ee; }
td.better { color: #00704f; font-weight: bold; }
td.worse { color: #b34700; font-weight: bold; }
td.neutral { color: #666; }
.dir { color: #777; font-size: 0.9em; }
.figures { display: flex; flex-wrap: wrap; gap: 1.5rem; }
figure { margin: 0; max-width: 100%; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { max-width: 40rem; color: #444; font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Subtitle}}<p class="subtitle">{{.}}</p>
{{end}}{{with .Notice}}<p class="notice">{{.}}</p>
{{end}}{{if gt (len .Sections) 1}}<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Name}}</a>{{end}}</nav>
{{end}}{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Name}}</h2>
{{with .Note}}<p>{{.}}</p>
{{end}}{{if .Rows}}<table class="metrics">
<thead><tr><th>metric</th>{{range $.Models}}<th>{{.}}</th>{{end}}<th>better</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Cells}}<td{{if .Best}} class="best"{{end}}>{{.Text}}</td>{{end}}<td class="dir">{{.Better}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Diffs}}<table class="diffs">
<thead><tr><th>metric</th><th>{{$.A}}</th><th>{{$.B}}</th><th>{{$.B}} − {{$.A}}</th><th>{{.Level}} interval</th><th>P({{$.B}} better)</th><th>verdict</th></tr></thead>
<tbody>
{{range .Diffs}}<tr><td>{{.Metric}}</td><td>{{.A}}</td><td>{{.B}}</td><td>{{.Diff}}</td><td>{{.Interval}}</td><td>{{.PBetter}}</td><td class="{{.Class}}">{{.Verdict}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Figures}}<div class="figures">
{{range .Figures}}<figure><img src="{{.File}}" width="{{.W}}" height="{{.H}}" alt="{{.Title}}"><figcaption>{{with .Title}}<b>{{.}}.</b> {{end}}{{.Caption}}</figcaption></figure>
{{end}}</div>
{{end}}</section>
{{end}}</body>
</html>
`))
