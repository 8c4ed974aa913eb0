package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/sqpredict/sqpredict/eval"
)

// DPI is the resolution of every PNG; a plot of w inches is w·DPI pixels wide.
const DPI = 96

// MaxScatterPoints is the most points PredictedActual draws; larger inputs are
// subsampled deterministically (a fixed-seed sample without replacement), which keeps
// the PNG readable and its size bounded.
const MaxScatterPoints = 3000

// Plot is one figure of a section. The implementations are Reliability, Scatter,
// PredictedActual, PITHistogram and Coverage.
type Plot interface {
	// kind names the figure type in file names.
	kind() string
	// title is the figure's title, used in errors and captions.
	title() string
	// caption explains how to read the figure.
	caption() string
	// build checks the data and lays out the figure: a column of panels sharing the
	// x axis, and the image size.
	build() (panels []*plot.Plot, w, h vg.Length, err error)
}

// palette holds the Okabe–Ito colours, distinguishable with the common forms of colour
// blindness; series take them in order.
var palette = []color.Color{
	color.NRGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.NRGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.NRGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.NRGBA{0xD5, 0x5E, 0x00, 0xff}, // vermilion
	color.NRGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.NRGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
}

func seriesColor(i int) color.Color { return palette[i%len(palette)] }

var (
	grey      = color.NRGBA{0x55, 0x55, 0x55, 0xff}
	dashed    = []vg.Length{vg.Points(4), vg.Points(3)}
	lineWidth = vg.Points(1.5)
)

// Reliability is a reliability diagram of one or more classifiers: observed share of
// label 1 against mean predicted probability per bin, with the diagonal of perfect
// calibration, above a panel of the number of rows in each bin.
type Reliability struct {
	// Title is the figure title, e.g. "success: reliability".
	Title string
	// Series holds one classifier each; every series has the same bins.
	Series []ReliabilitySeries
}

// ReliabilitySeries is one classifier's reliability bins, as eval.Calibration or
// eval.ClassifierMetrics.Calibration give them.
type ReliabilitySeries struct {
	// Model names the series in the legend.
	Model string
	// Bins are the reliability bins; empty bins are not drawn.
	Bins []eval.CalibrationBin
}

func (r Reliability) kind() string  { return "reliability" }
func (r Reliability) title() string { return r.Title }
func (r Reliability) caption() string {
	return "Observed share of label 1 against mean predicted probability in equal-width bins (empty bins left out); " +
		"points on the dashed diagonal are calibrated. Lower panel: rows per bin."
}

func (r Reliability) build() ([]*plot.Plot, vg.Length, vg.Length, error) {
	if len(r.Series) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: no series", ErrNoData)
	}
	top, bottom := newPlot(r.Title), newPlot("")
	top.X.Label.Text = "mean predicted probability"
	top.Y.Label.Text = "observed rate"
	bottom.X.Label.Text = "predicted probability"
	bottom.Y.Label.Text = "rows per bin"
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = 0, 1
	}
	top.Y.Min, top.Y.Max = 0, 1
	top.X.Tick.Marker, top.Y.Tick.Marker, bottom.X.Tick.Marker = tenths, tenths, tenths
	bottom.Y.Min = 0
	legendAt(top, true)
	top.Add(plotter.NewGrid())

	diag := mustLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	diag.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1), Dashes: dashed}
	top.Add(diag)
	top.Legend.Add("perfectly calibrated", diag)

	nBins := len(r.Series[0].Bins)
	for si, s := range r.Series {
		if len(s.Bins) == 0 {
			return nil, 0, 0, fmt.Errorf("%w: series %q has no bins", ErrNoData, s.Model)
		}
		if len(s.Bins) != nBins {
			return nil, 0, 0, fmt.Errorf("%w: series %q has %d bins, series %q %d", ErrInput, s.Model, len(s.Bins), r.Series[0].Model, nBins)
		}
		var pts plotter.XYs
		for bi, b := range s.Bins {
			if !finite(b.Lo, b.Hi, b.MeanPredicted, b.Observed) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, bin %d", ErrNotFinite, s.Model, bi)
			}
			if b.Count < 0 || !(b.Lo < b.Hi) || !in01(b.Lo, b.Hi, b.MeanPredicted, b.Observed) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, bin %d: count %d, [%v, %v], predicted %v, observed %v outside [0, 1]",
					ErrInput, s.Model, bi, b.Count, b.Lo, b.Hi, b.MeanPredicted, b.Observed)
			}
			if b.Count > 0 {
				pts = append(pts, plotter.XY{X: b.MeanPredicted, Y: b.Observed})
			}
		}
		if len(pts) == 0 {
			return nil, 0, 0, fmt.Errorf("%w: series %q has only empty bins", ErrNoData, s.Model)
		}
		c := seriesColor(si)
		l, sc := mustLinePoints(pts)
		l.LineStyle = draw.LineStyle{Color: c, Width: lineWidth}
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		top.Add(l, sc)
		top.Legend.Add(s.Model, l, sc)
	}

	// Bars of each bin side by side, one per series, so that counts of several
	// classifiers stay readable.
	maxCount := 1
	for si, s := range r.Series {
		h := &plotter.Histogram{FillColor: seriesColor(si), LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}}
		for _, b := range s.Bins {
			w := (b.Hi - b.Lo) / float64(len(r.Series))
			lo := b.Lo + float64(si)*w
			h.Bins = append(h.Bins, plotter.HistogramBin{Min: lo, Max: lo + w, Weight: float64(b.Count)})
			maxCount = max(maxCount, b.Count)
		}
		bottom.Add(h)
	}
	bottom.Add(plotter.NewGrid())
	bottom.Y.Max = 1.08 * float64(maxCount)
	return []*plot.Plot{top, bottom}, 6.5 * vg.Inch, 7 * vg.Inch, nil
}

// PredictedActual is a scatter of one model's point predictions against the actual
// values, with the line y = x.
type PredictedActual struct {
	// Title is the figure title, e.g. "build time: champion".
	Title string
	// Model names the series in the legend.
	Model string
	// Label is what is predicted, with its unit, e.g. "build time (s)"; empty means "value".
	Label string
	// Predicted and Actual are the per-row values; same length.
	Predicted, Actual []float64
	// Log draws both axes on a log scale; every value must then be positive.
	Log bool
}

func (p PredictedActual) kind() string  { return "predicted-actual" }
func (p PredictedActual) title() string { return p.Title }
func (p PredictedActual) caption() string {
	c := "Each point is a row of the holdout; points on the dashed line y = x are predicted exactly."
	if len(p.Actual) > MaxScatterPoints {
		c += fmt.Sprintf(" A fixed random sample of %d of the %d rows is drawn.", MaxScatterPoints, len(p.Actual))
	}
	if p.Log {
		c += " Both axes are logarithmic."
	}
	return c
}

func (p PredictedActual) build() ([]*plot.Plot, vg.Length, vg.Length, error) {
	n := len(p.Actual)
	if len(p.Predicted) != n {
		return nil, 0, 0, fmt.Errorf("%w: %d predicted and %d actual values", ErrInput, len(p.Predicted), n)
	}
	if n == 0 {
		return nil, 0, 0, fmt.Errorf("%w: no rows", ErrNoData)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range n {
		x, y := p.Predicted[i], p.Actual[i]
		if !finite(x, y) {
			return nil, 0, 0, fmt.Errorf("%w: row %d: predicted %v, actual %v", ErrNotFinite, i, x, y)
		}
		if p.Log && !(x > 0 && y > 0) {
			return nil, 0, 0, fmt.Errorf("%w: row %d: predicted %v, actual %v not positive on log axes", ErrInput, i, x, y)
		}
		lo, hi = min(lo, x, y), max(hi, x, y)
	}
	if lo == hi {
		// A single value still gets a visible range.
		if p.Log {
			lo, hi = lo/2, hi*2
		} else {
			lo, hi = lo-1, hi+1
		}
	}

	rows := sampleRows(n, MaxScatterPoints)
	pts := make(plotter.XYs, len(rows))
	for k, i := range rows {
		pts[k] = plotter.XY{X: p.Predicted[i], Y: p.Actual[i]}
	}
	label := p.Label
	if label == "" {
		label = "value"
	}
	pl := newPlot(p.Title)
	pl.X.Label.Text = "predicted " + label
	pl.Y.Label.Text = "actual " + label
	pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = lo, hi, lo, hi
	if p.Log {
		for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
			a.Scale = plot.LogScale{}
			a.Tick.Marker = logTicks{}
		}
	}
	pl.Add(plotter.NewGrid())
	sc := mustScatter(pts)
	sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(seriesColor(0), 0x60), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
	// y = x is a straight segment on linear and on log-log axes alike.
	diag := mustLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	diag.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: dashed}
	pl.Add(sc, diag)
	model := p.Model
	if model == "" {
		model = "rows"
	}
	if len(rows) < n {
		pl.Legend.Add(fmt.Sprintf("%s: %d of %d rows", model, len(rows), n), sc)
	} else {
		pl.Legend.Add(fmt.Sprintf("%s: %d rows", model, n), sc)
	}
	pl.Legend.Add("y = x", diag)
	legendAt(pl, true)
	return []*plot.Plot{pl}, 6.5 * vg.Inch, 6 * vg.Inch, nil
}

// Scatter is a scatter of Y against X for one or more series (residuals against
// speculation height, predicted sigma against build size), with an optional dashed
// horizontal reference line.
type Scatter struct {
	// Title is the figure title.
	Title string
	// XLabel and YLabel name the axes, with units.
	XLabel, YLabel string
	// Series holds the points of each model; X and Y of a series have the same length.
	Series []ScatterSeries
	// RefY, when HasRefY, draws a dashed horizontal line at y = RefY (0 for residuals).
	RefY    float64
	HasRefY bool
	// JitterX moves each point by a fixed pseudo-random amount in [-JitterX, JitterX]
	// along x, so that rows at the same integer x (a speculation height) stay visible.
	JitterX float64
	// LogX and LogY draw that axis on a log scale; its values must then be positive.
	LogX, LogY bool
	// Note is added to the caption: what a point is and how to read the figure.
	Note string
}

// ScatterSeries is one model's points.
type ScatterSeries struct {
	Model string
	X, Y  []float64
}

func (s Scatter) kind() string  { return "scatter" }
func (s Scatter) title() string { return s.Title }
func (s Scatter) caption() string {
	c := s.Note
	for _, se := range s.Series {
		if len(se.X) > MaxScatterPoints {
			c += fmt.Sprintf(" A fixed random sample of %d of the %d rows of each series is drawn.", MaxScatterPoints, len(se.X))
			break
		}
	}
	if s.JitterX > 0 {
		c += fmt.Sprintf(" Points are spread by up to ±%g along x so that equal values stay visible.", s.JitterX)
	}
	return strings.TrimSpace(c)
}

func (s Scatter) build() ([]*plot.Plot, vg.Length, vg.Length, error) {
	if len(s.Series) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: no series", ErrNoData)
	}
	pl := newPlot(s.Title)
	pl.X.Label.Text, pl.Y.Label.Text = s.XLabel, s.YLabel
	if s.LogX {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if s.LogY {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	pl.Add(plotter.NewGrid())
	xlo, xhi := math.Inf(1), math.Inf(-1)
	rng := rand.New(rand.NewPCG(3, 5))
	for si, se := range s.Series {
		n := len(se.X)
		if len(se.Y) != n {
			return nil, 0, 0, fmt.Errorf("%w: series %q has %d x and %d y values", ErrInput, se.Model, n, len(se.Y))
		}
		if n == 0 {
			return nil, 0, 0, fmt.Errorf("%w: series %q has no points", ErrNoData, se.Model)
		}
		rows := sampleRows(n, MaxScatterPoints)
		pts := make(plotter.XYs, 0, len(rows))
		for _, i := range rows {
			x, y := se.X[i], se.Y[i]
			if !finite(x, y) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, row %d: x %v, y %v", ErrNotFinite, se.Model, i, x, y)
			}
			if s.LogX && !(x > 0) || s.LogY && !(y > 0) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, row %d: x %v, y %v not positive on a log axis", ErrInput, se.Model, i, x, y)
			}
			if s.JitterX > 0 {
				x += s.JitterX * (2*rng.Float64() - 1)
			}
			xlo, xhi = min(xlo, x), max(xhi, x)
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		sc := mustScatter(pts)
		sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(seriesColor(si), 0x70), Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		pl.Add(sc)
		label := fmt.Sprintf("%s: %d rows", se.Model, n)
		if len(rows) < n {
			label = fmt.Sprintf("%s: %d of %d rows", se.Model, len(rows), n)
		}
		pl.Legend.Add(label, sc)
	}
	if s.HasRefY {
		ref := mustLine(plotter.XYs{{X: xlo, Y: s.RefY}, {X: xhi, Y: s.RefY}})
		ref.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: dashed}
		pl.Add(ref)
	}
	legendAt(pl, false)
	return []*plot.Plot{pl}, 6.5 * vg.Inch, 4.5 * vg.Inch, nil
}

// sampleRows returns k of the n row indices in increasing order, drawn without
// replacement from a fixed-seed generator, or all of them when n <= k.
func sampleRows(n, k int) []int {
	if n <= k {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	rows := rand.New(rand.NewPCG(1, 1)).Perm(n)[:k]
	slices.Sort(rows)
	return rows
}

// PITHistogram shows the probability integral transform of predictive distributions as
// a density over equal-width bins of [0, 1], with the uniform density 1 of a calibrated
// model.
type PITHistogram struct {
	// Title is the figure title.
	Title string
	// Series holds one model each; every series has the same number of bins.
	Series []PITSeries
}

// PITSeries is one model's PIT histogram as fractions of rows per bin summing to 1, as
// eval.PITHistogram and eval.DistributionMetrics.PIT give them.
type PITSeries struct {
	// Model names the series in the legend.
	Model string
	// Fractions[k] is the share of rows whose PIT falls in bin k of equal-width bins.
	Fractions []float64
}

func (p PITHistogram) kind() string  { return "pit" }
func (p PITHistogram) title() string { return p.Title }
func (p PITHistogram) caption() string {
	return "Histogram of the PIT values F(y) as a density; a calibrated model is flat at the dashed line 1. " +
		"A U shape means intervals that are too narrow, a hump too wide, a slope a biased centre."
}

// pitSumTol bounds how far the fractions of a PIT histogram may sum from 1; they are
// counts divided by n, so only rounding separates their sum from 1.
const pitSumTol = 1e-9

func (p PITHistogram) build() ([]*plot.Plot, vg.Length, vg.Length, error) {
	if len(p.Series) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: no series", ErrNoData)
	}
	pl := newPlot(p.Title)
	pl.X.Label.Text = "PIT value F(y)"
	pl.Y.Label.Text = "density"
	pl.X.Min, pl.X.Max, pl.Y.Min = 0, 1, 0
	pl.Add(plotter.NewGrid())
	bins := len(p.Series[0].Fractions)
	for si, s := range p.Series {
		if len(s.Fractions) == 0 {
			return nil, 0, 0, fmt.Errorf("%w: series %q has no bins", ErrNoData, s.Model)
		}
		if len(s.Fractions) != bins {
			return nil, 0, 0, fmt.Errorf("%w: series %q has %d bins, series %q %d", ErrInput, s.Model, len(s.Fractions), p.Series[0].Model, bins)
		}
		var sum float64
		for bi, f := range s.Fractions {
			if !finite(f) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, bin %d is %v", ErrNotFinite, s.Model, bi, f)
			}
			if f < 0 {
				return nil, 0, 0, fmt.Errorf("%w: series %q, bin %d is negative (%v)", ErrInput, s.Model, bi, f)
			}
			sum += f
		}
		if math.Abs(sum-1) > pitSumTol {
			return nil, 0, 0, fmt.Errorf("%w: series %q: fractions sum to %v, not 1", ErrInput, s.Model, sum)
		}
		h := &plotter.Histogram{FillColor: withAlpha(seriesColor(si), 0xd0), LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}}
		w := 1 / float64(bins) / float64(len(p.Series))
		for bi, f := range s.Fractions {
			lo := float64(bi)/float64(bins) + float64(si)*w
			h.Bins = append(h.Bins, plotter.HistogramBin{Min: lo, Max: lo + w, Weight: f * float64(bins)})
		}
		pl.Add(h)
		pl.Legend.Add(s.Model, h)
	}
	uni := mustLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 1}})
	uni.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: dashed}
	pl.Add(uni)
	pl.Legend.Add("uniform", uni)
	legendAt(pl, false)
	// Leave head room above the bars for the legend.
	ymax := 1.0
	for _, s := range p.Series {
		ymax = max(ymax, slices.Max(s.Fractions)*float64(bins))
	}
	pl.Y.Max = ymax * (1.15 + 0.08*float64(len(p.Series)))
	return []*plot.Plot{pl}, 6.5 * vg.Inch, 4.5 * vg.Inch, nil
}

// Coverage compares the nominal probability of central prediction intervals with the
// share of rows they actually cover.
type Coverage struct {
	// Title is the figure title.
	Title string
	// Series holds one model each.
	Series []CoverageSeries
}

// CoverageSeries is one model's coverage: Empirical[k] is the share of rows inside the
// central interval of probability Nominal[k] (eval.CoverageLevels and
// eval.DistributionMetrics.Coverage).
type CoverageSeries struct {
	// Model names the series in the legend.
	Model string
	// Nominal and Empirical are the interval probabilities and the covered shares, in [0, 1].
	Nominal   []float64
	Empirical []float64
}

func (c Coverage) kind() string  { return "coverage" }
func (c Coverage) title() string { return c.Title }
func (c Coverage) caption() string {
	return "Share of rows inside the central prediction interval against its nominal probability; " +
		"points below the dashed diagonal are over-confident intervals, above it too wide ones."
}

func (c Coverage) build() ([]*plot.Plot, vg.Length, vg.Length, error) {
	if len(c.Series) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: no series", ErrNoData)
	}
	pl := newPlot(c.Title)
	pl.X.Label.Text = "nominal coverage"
	pl.Y.Label.Text = "empirical coverage"
	lo := 0.4
	for si, s := range c.Series {
		if len(s.Nominal) != len(s.Empirical) {
			return nil, 0, 0, fmt.Errorf("%w: series %q has %d nominal and %d empirical levels", ErrInput, s.Model, len(s.Nominal), len(s.Empirical))
		}
		if len(s.Nominal) == 0 {
			return nil, 0, 0, fmt.Errorf("%w: series %q has no levels", ErrNoData, s.Model)
		}
		pts := make(plotter.XYs, len(s.Nominal))
		for k := range s.Nominal {
			x, y := s.Nominal[k], s.Empirical[k]
			if !finite(x, y) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, level %d: nominal %v, empirical %v", ErrNotFinite, s.Model, k, x, y)
			}
			if !in01(x, y) {
				return nil, 0, 0, fmt.Errorf("%w: series %q, level %d: nominal %v, empirical %v outside [0, 1]", ErrInput, s.Model, k, x, y)
			}
			pts[k] = plotter.XY{X: x, Y: y}
			lo = min(lo, x, y)
		}
		col := seriesColor(si)
		l, sc := mustLinePoints(pts)
		l.LineStyle = draw.LineStyle{Color: col, Width: lineWidth}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		pl.Add(l, sc)
		pl.Legend.Add(s.Model, l, sc)
	}
	lo = math.Max(0, math.Floor(lo*10)/10-0.05)
	diag := mustLine(plotter.XYs{{X: lo, Y: lo}, {X: 1, Y: 1}})
	diag.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: dashed}
	pl.Add(diag, plotter.NewGrid())
	pl.Legend.Add("nominal = empirical", diag)
	legendAt(pl, true)
	pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = lo, 1, lo, 1
	pl.X.Tick.Marker, pl.Y.Tick.Marker = tenths, tenths
	return []*plot.Plot{pl}, 6.5 * vg.Inch, 5 * vg.Inch, nil
}

// forest is the forest plot of a section's paired differences, relative to model A's
// value so that metrics of different units share one axis.
type forest struct {
	Title string
	A, B  string
	Diffs []Difference
}

func (f forest) kind() string  { return "forest" }
func (f forest) title() string { return f.Title }
func (f forest) caption() string {
	return fmt.Sprintf("Difference %s − %s of each metric as a percentage of |%s|, with its %s paired-bootstrap interval "+
		"(metrics where %s is 0 are left out). Green: %s significantly better; red: significantly worse; grey: interval contains 0. "+
		"The axis is set by the typical metric (%g times the median extent), so that one unstable metric does not squeeze "+
		"the others onto the zero line: an interval beyond it ends in a triangle at the edge, and its metric is marked \"(clipped)\" "+
		"(the table above has its values).",
		f.B, f.A, f.A, levelText(f.Diffs), f.A, f.B, forestClip)
}

// forestClip is how many times the median extent of the differences (the largest
// absolute value of a row's interval and estimate) the forest plot's axis reaches.
const forestClip = 3.0

// robustLimit returns the half-width of the forest plot's axis for rows of the given
// extents: the largest extent when it is within forestClip times the median, else that
// bound (issue 15: one unstable metric squeezed every other effect onto the zero line).
func robustLimit(extents []float64) float64 {
	s := slices.Clone(extents)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	if lim := forestClip * med; lim > 0 && s[n-1] > lim {
		return lim
	}
	return s[n-1]
}

func levelText(ds []Difference) string {
	if len(ds) == 0 {
		return "95%"
	}
	return fmt.Sprintf("%.4g%%", 100*ds[0].Level)
}

var (
	better  = color.NRGBA{0x00, 0x9E, 0x73, 0xff}
	worse   = color.NRGBA{0xD5, 0x5E, 0x00, 0xff}
	neutral = color.NRGBA{0x70, 0x70, 0x70, 0xff}
)

func (f forest) build() ([]*plot.Plot, vg.Length, vg.Length, error) {
	var names []string
	type row struct {
		d, lo, hi float64
		c         color.Color
	}
	var rows []row
	for _, d := range f.Diffs {
		if d.A == 0 {
			continue
		}
		s := 100 / math.Abs(d.A)
		c := neutral
		switch verdict(d) {
		case 1:
			c = better
		case -1:
			c = worse
		}
		rows = append(rows, row{d.Diff * s, d.Lo * s, d.Hi * s, c})
		names = append(names, d.Metric)
	}
	if len(rows) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: no difference with a nonzero value of %s", ErrNoData, f.A)
	}
	extents := make([]float64, len(rows))
	for k, r := range rows {
		extents[k] = max(math.Abs(r.lo), math.Abs(r.hi), math.Abs(r.d))
	}
	lim := robustLimit(extents)
	clipped := make([]bool, len(rows))
	for k := range rows {
		if extents[k] > lim {
			clipped[k] = true
			names[k] += " (clipped)"
		}
	}
	pl := newPlot(f.Title)
	pl.X.Label.Text = fmt.Sprintf("(%s − %s) / |%s|, %%", f.B, f.A, f.A)
	// The first metric is drawn at the top.
	slices.Reverse(rows)
	slices.Reverse(names)
	slices.Reverse(clipped)
	pl.NominalY(names...)
	pl.Add(plotter.NewGrid())
	zero := mustLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(len(rows)) - 0.5}})
	zero.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1), Dashes: dashed}
	pl.Add(zero)
	clamp := func(v float64) float64 { return min(max(v, -lim), lim) }
	for k, r := range rows {
		y := float64(k)
		bar := mustLine(plotter.XYs{{X: clamp(r.lo), Y: y}, {X: clamp(r.hi), Y: y}})
		bar.LineStyle = draw.LineStyle{Color: r.c, Width: vg.Points(2)}
		pl.Add(bar)
		if r.d == clamp(r.d) {
			pt := mustScatter(plotter.XYs{{X: r.d, Y: y}})
			pt.GlyphStyle = draw.GlyphStyle{Color: r.c, Radius: vg.Points(3.5), Shape: draw.BoxGlyph{}}
			pl.Add(pt)
		}
		if clipped[k] {
			for _, v := range []float64{r.lo, r.hi, r.d} {
				if v != clamp(v) {
					tri := mustScatter(plotter.XYs{{X: clamp(v), Y: y}})
					tri.GlyphStyle = draw.GlyphStyle{Color: r.c, Radius: vg.Points(4.5), Shape: draw.TriangleGlyph{}}
					pl.Add(tri)
				}
			}
		}
	}
	pl.Y.Min, pl.Y.Max = -0.7, float64(len(rows))-0.3
	// Room on both sides so that no interval ends on the frame, and 0 always shown.
	xmin, xmax := 0.0, 0.0
	for _, r := range rows {
		xmin, xmax = min(xmin, clamp(r.lo), clamp(r.d)), max(xmax, clamp(r.hi), clamp(r.d))
	}
	pad := 0.08 * (xmax - xmin)
	if pad == 0 {
		pad = 1
	}
	pl.X.Min, pl.X.Max = xmin-pad, xmax+pad
	h := vg.Length(1.3+0.4*float64(len(rows))) * vg.Inch
	return []*plot.Plot{pl}, 6.5 * vg.Inch, h, nil
}

// render draws a plot into PNG bytes; the image is w·DPI by h·DPI pixels.
func render(p Plot) (png []byte, wPx, hPx int, err error) {
	panels, w, h, err := p.build()
	if err != nil {
		return nil, 0, 0, err
	}
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	dc := draw.New(c)
	if len(panels) == 1 {
		panels[0].Draw(dc)
	} else {
		grid := make([][]*plot.Plot, len(panels))
		for i, pl := range panels {
			grid[i] = []*plot.Plot{pl}
		}
		tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(6)}
		canvases := plot.Align(grid, tiles, dc)
		for i, pl := range panels {
			pl.Draw(canvases[i][0])
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, 0, 0, fmt.Errorf("encoding png: %w", err)
	}
	b := c.Image().Bounds()
	return buf.Bytes(), b.Dx(), b.Dy(), nil
}

// logTicks marks a logarithmic axis with labelled ticks at 1, 2 and 5 times the powers
// of ten in range (every digit when that gives fewer than three labels), and unlabelled
// ticks at the other digits. gonum's LogTicks labels powers of ten only, so an axis
// spanning less than a decade (most build times) had no number at all (issue 15).
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	build := func(labelled []int) []plot.Tick {
		var ticks []plot.Tick
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			p := math.Pow(10, e)
			for d := 1; d <= 9; d++ {
				v := float64(d) * p
				if v < lo*(1-1e-12) || v > hi*(1+1e-12) {
					continue
				}
				t := plot.Tick{Value: v}
				if slices.Contains(labelled, d) {
					t.Label = strconv.FormatFloat(v, 'g', -1, 64)
				}
				ticks = append(ticks, t)
			}
		}
		return ticks
	}
	ticks := build([]int{1, 2, 5})
	n := 0
	for _, t := range ticks {
		if t.Label != "" {
			n++
		}
	}
	if n < 3 {
		ticks = build([]int{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return ticks
}

// tenths marks a probability axis every 0.1.
var tenths = func() plot.ConstantTicks {
	var t plot.ConstantTicks
	for k := 0; k <= 10; k++ {
		t = append(t, plot.Tick{Value: float64(k) / 10, Label: strconv.FormatFloat(float64(k)/10, 'f', 1, 64)})
	}
	return t
}()

// legendAt puts the legend in the top left or top right corner, inset from the frame.
func legendAt(p *plot.Plot, left bool) {
	p.Legend.Top, p.Legend.Left = true, left
	p.Legend.YOffs = -vg.Points(6)
	p.Legend.XOffs = vg.Points(8)
	if !left {
		p.Legend.XOffs = -vg.Points(8)
	}
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(8)
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	return p
}

// The plotter constructors fail only on NaN, Inf or no points, which build has ruled out.

func mustLine(xys plotter.XYs) *plotter.Line {
	l, err := plotter.NewLine(xys)
	if err != nil {
		panic("report: " + err.Error())
	}
	return l
}

func mustScatter(xys plotter.XYs) *plotter.Scatter {
	s, err := plotter.NewScatter(xys)
	if err != nil {
		panic("report: " + err.Error())
	}
	return s
}

func mustLinePoints(xys plotter.XYs) (*plotter.Line, *plotter.Scatter) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		panic("report: " + err.Error())
	}
	return l, s
}

func withAlpha(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func in01(xs ...float64) bool {
	for _, x := range xs {
		if !(x >= 0 && x <= 1) {
			return false
		}
	}
	return true
}
