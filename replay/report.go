package replay

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// figure is one PNG of the report.
type figure struct {
	File, Title, Caption string
}

// group is the cells that share a probability source and, for the sweep axis, a rate
// (sweeping workers) or a worker count (sweeping rates).
type group struct {
	probs string
	fixed float64 // the rate (x = workers) or the workers (x = rate)
	byX   bool    // true: x is workers
	cells []*Cell
}

// WriteReport writes report.html and its PNG figures into dir: turnaround CDFs per
// strategy, builds per change and P95 turnaround with their 95% intervals over the sweep
// axis, the same normalised to the oracle (paper 001 Figures 11-12), throughput
// normalised to the oracle, and tables of every cell and paired comparison.
func WriteReport(dir string, s *Summary) error {
	var figs []figure
	add := func(name, title, caption string, p *plot.Plot) error {
		if p == nil {
			return nil
		}
		if err := savePNG(p, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("replay: report: %s: %w", name, err)
		}
		figs = append(figs, figure{File: name, Title: title, Caption: caption})
		return nil
	}
	for k, g := range groups(s.Cells) {
		axis, fixed := "workers", fmt.Sprintf("rate %s", RateText(g.fixed))
		if !g.byX {
			axis, fixed = "rate (changes/h)", fmt.Sprintf("%d workers", int(g.fixed))
		}
		tag := fmt.Sprintf("%s, %s", g.probs, fixed)
		metrics := []struct{ key, label, file string }{
			{"builds_per_change", "builds per change", "builds"},
			{"turnaround_p95_s", "P95 turnaround (min)", "p95"},
			{"turnaround_p50_s", "P50 turnaround (min)", "p50"},
			{"cpu_hours", "CPU hours", "cpu"},
		}
		for _, m := range metrics {
			scale := 1.0
			if m.file == "p95" || m.file == "p50" {
				scale = 1.0 / 60
			}
			if err := add(fmt.Sprintf("g%d_%s.png", k, m.file), m.label+" by "+axis+" ("+tag+")",
				"Mean over seeds with its 95% interval.", sweepPlot(g, m.key, m.label, axis, scale, false)); err != nil {
				return err
			}
		}
		for _, m := range []struct{ key, label, file string }{
			{"turnaround_p50_s", "P50 turnaround / oracle", "p50n"},
			{"turnaround_p95_s", "P95 turnaround / oracle", "p95n"},
			{"builds_per_change", "builds per change / oracle", "buildsn"},
			{"throughput_per_hour", "throughput / oracle", "thrun"},
		} {
			if err := add(fmt.Sprintf("g%d_%s.png", k, m.file), m.label+" by "+axis+" ("+tag+")",
				"Ratio of the means over seeds to the oracle's (paper 001 Figures 11-12).", sweepPlot(g, m.key, m.label, axis, 1, true)); err != nil {
				return err
			}
		}
	}
	// Turnaround CDFs: one figure per probability source, workers and rate.
	type cdfKey struct {
		probs   string
		workers int
		rate    float64
	}
	var keys []cdfKey
	cdfs := map[cdfKey][]*Cell{}
	for _, c := range s.Cells {
		k := cdfKey{c.Probs, c.Workers, c.Rate}
		if cdfs[k] == nil {
			keys = append(keys, k)
		}
		cdfs[k] = append(cdfs[k], c)
	}
	for n, k := range keys {
		if err := add(fmt.Sprintf("cdf%d.png", n), fmt.Sprintf("Turnaround CDF (%s, %d workers, rate %s)", k.probs, k.workers, RateText(k.rate)),
			"Every change of the first seed.", cdfPlot(cdfs[k])); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, struct {
		S    *Summary
		Figs []figure
	}{s, figs}); err != nil {
		return fmt.Errorf("replay: report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("replay: report: %w", err)
	}
	return nil
}

// RateText returns how a cell's rate is printed: "history" for 0, which replays the
// history's own submission times, and the re-timed rate "R/h" otherwise.
func RateText(r float64) string {
	if r == 0 {
		return "history"
	}
	return fmt.Sprintf("%g/h", r)
}

// PlainNumber formats x with three significant digits and no exponent (4280, not
// 4.28e+03; 0.0123), as the report's tables print metrics. NaN and infinities print as
// Go does.
func PlainNumber(x float64) string {
	a := math.Abs(x)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return fmt.Sprint(x)
	case a >= 100 || a == 0:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	// Below 1: three significant digits after the leading zeros.
	prec := 2 - int(math.Floor(math.Log10(a)))
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// strategyPalette holds one colour per strategy of Strategies, in its order, so that a
// strategy has the same colour in every figure and no two strategies share one
// (plotutil's palette has seven colours for nine strategies). The colours are
// Tableau 10's.
var strategyPalette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff}, color.RGBA{0xe1, 0x57, 0x59, 0xff},
	color.RGBA{0x76, 0xb7, 0xb2, 0xff}, color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xff, 0x9d, 0xa7, 0xff}, color.RGBA{0x9c, 0x75, 0x5f, 0xff},
	color.RGBA{0xba, 0xb0, 0xac, 0xff},
}

// strategyColor returns the colour of strategy name: its place in Strategies, or for a
// name not there, fallback's place after them.
func strategyColor(name string, fallback int) color.Color {
	i := slices.Index(Strategies, name)
	if i < 0 {
		i = len(Strategies) + fallback
	}
	return strategyPalette[i%len(strategyPalette)]
}

// cdfTicks marks the share axis of the CDF figures every 0.1, labelled every 0.2.
type cdfTicks struct{}

// Ticks implements plot.Ticker.
func (cdfTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i := 0; i <= 10; i++ {
		v := float64(i) / 10
		if v < min-1e-9 || v > max+1e-9 {
			continue
		}
		t := plot.Tick{Value: v}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', 1, 64)
		}
		out = append(out, t)
	}
	return out
}

// groups splits the cells for sweep plots: by probability source and rate with workers
// on the x axis when there are several worker counts, else by source and workers with
// the rate on the x axis when there are several rates.
func groups(cells []*Cell) []group {
	ws, rs := map[int]bool{}, map[float64]bool{}
	for _, c := range cells {
		ws[c.Workers], rs[c.Rate] = true, true
	}
	byX := len(ws) > 1
	if !byX && len(rs) < 2 {
		return nil
	}
	var out []group
	idx := map[[2]any]int{}
	for _, c := range cells {
		fixed := c.Rate
		if !byX {
			fixed = float64(c.Workers)
		}
		k := [2]any{c.Probs, fixed}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, group{probs: c.Probs, fixed: fixed, byX: byX})
		}
		out[i].cells = append(out[i].cells, c)
	}
	return out
}

func (g group) x(c *Cell) float64 {
	if g.byX {
		return float64(c.Workers)
	}
	return c.Rate
}

// sweepPlot draws metric key over the sweep axis, one line per strategy, with error bars
// (or divided by the oracle's mean when normalise).
func sweepPlot(g group, key, label, axis string, scale float64, normalise bool) *plot.Plot {
	oracle := map[float64]float64{}
	for _, c := range g.cells {
		if c.Strategy == "oracle" {
			oracle[g.x(c)] = c.Metrics[key].Mean
		}
	}
	if normalise && len(oracle) == 0 {
		return nil
	}
	var names []string
	by := map[string][]*Cell{}
	for _, c := range g.cells {
		if by[c.Strategy] == nil {
			names = append(names, c.Strategy)
		}
		by[c.Strategy] = append(by[c.Strategy], c)
	}
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = axis, label
	if g.byX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	drawn := false
	for si, name := range names {
		cs := slices.Clone(by[name])
		slices.SortFunc(cs, func(a, b *Cell) int { return int(math.Copysign(1, g.x(a)-g.x(b))) })
		var xy plotter.XYs
		var errs plotter.YErrors
		for _, c := range cs {
			iv := c.Metrics[key]
			y, lo, hi := iv.Mean*scale, iv.Lo*scale, iv.Hi*scale
			if normalise {
				o := oracle[g.x(c)]
				if !(o > 0) {
					continue
				}
				y, lo, hi = iv.Mean/o, iv.Mean/o, iv.Mean/o
			}
			if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
				continue
			}
			xy = append(xy, plotter.XY{X: g.x(c), Y: y})
			errs = append(errs, struct{ Low, High float64 }{y - lo, hi - y})
		}
		if len(xy) == 0 {
			continue
		}
		col := strategyColor(name, si)
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			continue
		}
		l.Color, pts.Color = col, col
		pts.Shape = plotutil.Shape(si)
		p.Add(l, pts)
		if !normalise {
			eb := &plotter.YErrorBars{XYs: xy, YErrors: errs, LineStyle: l.LineStyle, CapWidth: vg.Points(5)}
			eb.Color = col
			p.Add(eb)
		}
		p.Legend.Add(name, l, pts)
		drawn = true
	}
	if !drawn {
		return nil
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

// cdfPlot draws the turnaround CDF of the first seed of every cell, in minutes on a log
// axis.
func cdfPlot(cells []*Cell) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = "turnaround (min)", "share of changes"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	drawn := false
	for si, c := range cells {
		if len(c.Runs) == 0 || len(c.Runs[0].Turnaround) == 0 {
			continue
		}
		t := c.Runs[0].Turnaround
		// At most 400 points per curve: evenly spaced ranks.
		step := max(1, len(t)/400)
		var xy plotter.XYs
		for i := 0; i < len(t); i += step {
			xy = append(xy, plotter.XY{X: math.Max(t[i]/60, 0.1), Y: float64(i+1) / float64(len(t))})
		}
		xy = append(xy, plotter.XY{X: math.Max(t[len(t)-1]/60, 0.1), Y: 1})
		l, err := plotter.NewLine(xy)
		if err != nil {
			continue
		}
		l.Color = strategyColor(c.Strategy, si)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.Strategy, l)
		drawn = true
	}
	if !drawn {
		return nil
	}
	// A CDF rises from the bottom left to the top right: the top-left corner is where
	// no curve is until the short turnarounds are all counted.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(4), vg.Points(-4)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = cdfTicks{}
	p.Add(plotter.NewGrid())
	return p
}

func savePNG(p *plot.Plot, path string) error {
	c := vgimg.NewWith(vgimg.UseWH(6.5*vg.Inch, 4*vg.Inch), vgimg.UseDPI(96))
	p.BackgroundColor = color.White
	p.Draw(drawCanvas(c))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"iv": func(iv Interval, scale float64) string {
		if iv.N == 0 {
			return "–"
		}
		if iv.N == 1 {
			return PlainNumber(iv.Mean * scale)
		}
		return fmt.Sprintf("%s [%s, %s]", PlainNumber(iv.Mean*scale), PlainNumber(iv.Lo*scale), PlainNumber(iv.Hi*scale))
	},
	"f3":   PlainNumber,
	"rate": RateText,
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Replay: {{.S.Meta.World}}</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#eee}figure{margin:1em 0}
figcaption{font-size:13px;color:#444}</style></head><body>
<h1>Merge-queue replay: {{.S.Meta.World}}</h1>
<p>Source: {{.S.Meta.Source}}; {{.S.Meta.Changes}} changes; synthetic: {{.S.Meta.Synthetic}};
speculation threshold {{.S.Meta.Threshold}}; keep margin {{.S.Meta.KeepMargin}}; SubmitQueue strategies learn from their finished builds: {{if .S.Meta.NoLearning}}no{{else}}yes{{end}}; {{.S.Meta.Seeds}} seeds. Intervals are 95% over seeds (Student t).</p>
{{with .S.Meta.Limits}}<p><b>What this history cannot model:</b> {{.}}</p>{{end}}
<h2>Every configuration</h2>
<table><tr><th>strategy</th><th>probs</th><th>workers</th><th>rate</th><th>builds/change</th><th>builds/landed</th>
<th>CPU hours</th><th>aborted share</th><th>P50 min</th><th>P95 min</th><th>P99 min</th><th>small-behind-large P95 min</th>
<th>throughput/h</th><th>BLRD trigger rate</th></tr>
{{range .S.Cells}}<tr><td>{{.Strategy}}</td><td>{{.Probs}}</td><td>{{.Workers}}</td><td>{{rate .Rate}}</td>
<td>{{iv (index .Metrics "builds_per_change") 1.0}}</td><td>{{iv (index .Metrics "builds_per_landed") 1.0}}</td>
<td>{{iv (index .Metrics "cpu_hours") 1.0}}</td><td>{{iv (index .Metrics "aborted_share") 1.0}}</td>
<td>{{iv (index .Metrics "turnaround_p50_s") 0.016666666666666666}}</td><td>{{iv (index .Metrics "turnaround_p95_s") 0.016666666666666666}}</td>
<td>{{iv (index .Metrics "turnaround_p99_s") 0.016666666666666666}}</td><td>{{iv (index .Metrics "sbl_turnaround_p95_s") 0.016666666666666666}}</td>
<td>{{iv (index .Metrics "throughput_per_hour") 1.0}}</td><td>{{iv (index .Metrics "blrd_trigger_rate") 1.0}}</td></tr>
{{end}}</table>
{{if .S.Pairs}}<h2>Paired comparisons (B − A, bootstrap over changes)</h2>
<table><tr><th>strategy</th><th>workers</th><th>rate</th><th>A</th><th>B</th><th>metric</th><th>A</th><th>B</th><th>B − A</th><th>95% interval</th></tr>
{{range $p := .S.Pairs}}{{range $k, $d := $p.Diffs}}<tr><td>{{$p.Strategy}}</td><td>{{$p.Workers}}</td><td>{{rate $p.Rate}}</td><td>{{$p.A}}</td><td>{{$p.B}}</td>
<td>{{$k}}</td><td>{{f3 $d.A}}</td><td>{{f3 $d.B}}</td><td>{{f3 $d.Diff}}</td><td>[{{f3 $d.Lo}}, {{f3 $d.Hi}}]</td></tr>
{{end}}{{end}}</table>{{end}}
{{range .Figs}}<figure><h3>{{.Title}}</h3><img src="{{.File}}" alt="{{.Title}}"><figcaption>{{.Caption}}</figcaption></figure>
{{end}}</body></html>
`))

func drawCanvas(c *vgimg.Canvas) draw.Canvas { return draw.New(c) }
