package report

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/eval"
)

var sampleDir = flag.String("sample", "", "also write the sample compare report into this directory, for looking at")

// sampleInput builds a compare report of a calibrated champion against a miscalibrated
// challenger from synthetic rows, through the eval metrics the trainer uses.
func sampleInput(t testing.TB) Input {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	const nClass, nTime = 2000, 5000
	in := Input{
		Title:    "sqpredict compare: champion against challenger",
		Subtitle: "synthetic rows, seed 1",
		Models:   []string{"champion", "challenger"},
		A:        "champion",
		B:        "challenger",
	}
	boot := eval.BootstrapConfig{Resamples: 200, Seed: 1}

	for _, task := range []struct {
		name string
		bias float64
	}{{"success", 1.5}, {"conflict", -2}} {
		y := make([]float64, nClass)
		pa := make([]float64, nClass)
		pb := make([]float64, nClass)
		for i := range y {
			x := rng.NormFloat64()
			q := 1 / (1 + math.Exp(-(task.bias + 1.2*x)))
			if rng.Float64() < q {
				y[i] = 1
			}
			pa[i] = q
			pb[i] = 1 / (1 + math.Exp(-(task.bias + 0.5 + 2*x)))
		}
		ma, err := eval.EvaluateClassifier(y, pa)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := eval.EvaluateClassifier(y, pb)
		if err != nil {
			t.Fatal(err)
		}
		sec := Section{
			Name: task.name,
			Note: strconv.Itoa(nClass) + " holdout rows",
			Metrics: []Metric{
				{Name: "accuracy", Values: map[string]float64{"champion": ma.Accuracy, "challenger": mb.Accuracy}, Better: "higher"},
				{Name: "ROC AUC", Values: map[string]float64{"champion": ma.ROCAUC, "challenger": mb.ROCAUC}, Better: "higher"},
				{Name: "log loss", Values: map[string]float64{"champion": ma.LogLoss, "challenger": mb.LogLoss}, Better: "lower"},
				{Name: "Brier", Values: map[string]float64{"champion": ma.Brier, "challenger": mb.Brier}, Better: "lower"},
				{Name: "ECE", Values: map[string]float64{"champion": ma.ECE, "challenger": mb.ECE}, Better: "lower"},
				{Name: "failure recall", Values: map[string]float64{"champion": ma.Recall, "challenger": mb.Recall}, Better: "higher"},
				{Name: "log loss gap to Bayes limit", Values: map[string]float64{"champion": 0, "challenger": mb.LogLoss - ma.LogLoss}, Better: "lower"},
				{Name: "rows", Values: map[string]float64{"champion": float64(ma.N)}},
			},
			Plots: []Plot{Reliability{Title: task.name + ": reliability", Series: []ReliabilitySeries{
				{Model: "champion", Bins: ma.Calibration}, {Model: "challenger", Bins: mb.Calibration},
			}}},
		}
		for _, m := range []struct {
			name string
			f    func(y, p []float64) float64
			dir  eval.Direction
		}{{"ROC AUC", eval.ROCAUC, eval.HigherIsBetter}, {"log loss", eval.LogLoss, eval.LowerIsBetter}, {"Brier", eval.Brier, eval.LowerIsBetter}} {
			d, err := eval.PairedBootstrap(y, pa, pb, m.f, m.dir, boot)
			if err != nil {
				t.Fatal(err)
			}
			sec.Diffs = append(sec.Diffs, Difference{Metric: m.name, Better: m.dir, PairedDiff: d})
		}
		in.Sections = append(in.Sections, sec)
	}

	// Build times: log-normal truth; the champion predicts it, the challenger is a
	// Normal with too small a spread.
	y := make([]float64, nTime)
	ln := eval.Predictive{Family: eval.FamilyLogNormal, Mu: make([]float64, nTime), Sigma: make([]float64, nTime)}
	nm := eval.Predictive{Family: eval.FamilyNormal, Mu: make([]float64, nTime), Sigma: make([]float64, nTime)}
	for i := range y {
		mu := 6 + rng.NormFloat64()
		ln.Mu[i], ln.Sigma[i] = mu, 0.4
		y[i] = math.Exp(mu + 0.4*rng.NormFloat64())
		nm.Mu[i], nm.Sigma[i] = ln.Mean(i), 0.2*ln.Mean(i)
	}
	da, db := eval.EvaluateDistribution(ln, y), eval.EvaluateDistribution(nm, y)
	sec := Section{Name: "build time", Metrics: []Metric{
		{Name: "MAPE of mean (%)", Values: map[string]float64{"champion": da.Point.MAPE, "challenger": db.Point.MAPE}, Better: "lower"},
		{Name: "NLL (nats)", Values: map[string]float64{"champion": da.NLL, "challenger": db.NLL}, Better: "lower"},
		{Name: "CRPS (s)", Values: map[string]float64{"champion": da.CRPS, "challenger": db.CRPS}, Better: "lower"},
	}}
	for k, lvl := range eval.CoverageLevels {
		name := strconv.Itoa(int(100*lvl)) + "% interval coverage"
		sec.Metrics = append(sec.Metrics, Metric{Name: name, Values: map[string]float64{"champion": da.Coverage[k], "challenger": db.Coverage[k]}})
	}
	crpsA, crpsB := make([]float64, nTime), make([]float64, nTime)
	for i := range y {
		crpsA[i], crpsB[i] = ln.CRPS(i, y[i]), nm.CRPS(i, y[i])
	}
	d, err := eval.PairedBootstrapMean(crpsA, crpsB, eval.LowerIsBetter, boot)
	if err != nil {
		t.Fatal(err)
	}
	sec.Diffs = append(sec.Diffs, Difference{Metric: "CRPS (s)", Better: eval.LowerIsBetter, PairedDiff: d})
	meanA, meanB := make([]float64, nTime), make([]float64, nTime)
	for i := range y {
		meanA[i], meanB[i] = ln.Mean(i), nm.Mean(i)
	}
	sec.Plots = []Plot{
		PredictedActual{Title: "build time: champion", Model: "champion", Label: "build time (s)", Predicted: meanA, Actual: y, Log: true},
		PredictedActual{Title: "build time: challenger", Model: "challenger", Label: "build time (s)", Predicted: meanB, Actual: y},
		PITHistogram{Title: "build time: PIT", Series: []PITSeries{{Model: "champion", Fractions: da.PIT}, {Model: "challenger", Fractions: db.PIT}}},
		Coverage{Title: "build time: interval coverage", Series: []CoverageSeries{
			{Model: "champion", Nominal: eval.CoverageLevels[:], Empirical: da.Coverage[:]},
			{Model: "challenger", Nominal: eval.CoverageLevels[:], Empirical: db.Coverage[:]},
		}},
	}
	in.Sections = append(in.Sections, sec)
	return in
}

// figureSize is the pixel size of each kind of figure at DPI: 6.5 in wide, and 7, 6,
// 4.5 and 5 in high; a forest plot is 1.3 in plus 0.4 in per metric.
func figureSize(kind string, diffs int) (w, h int) {
	switch kind {
	case "reliability":
		return 624, 672
	case "predicted-actual":
		return 624, 576
	case "pit":
		return 624, 432
	case "coverage":
		return 624, 480
	case "forest":
		return 624, int(math.Round((1.3 + 0.4*float64(diffs)) * DPI))
	}
	return -1, -1
}

type parsedPage struct {
	text   string
	tables [][][]string // table, row, cell text
	imgs   []map[string]string
	tags   map[string]int
	attrs  []string // every attribute value, to look for external references
}

func parsePage(t *testing.T, path string) parsedPage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("html.Parse(%s): %v", path, err)
	}
	pp := parsedPage{tags: map[string]int{}}
	var text strings.Builder
	var walk func(n *html.Node)
	var table [][]string
	var row []string
	var cellText func(n *html.Node) string
	cellText = func(n *html.Node) string {
		if n.Type == html.TextNode {
			return n.Data
		}
		var s strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			s.WriteString(cellText(c))
		}
		return s.String()
	}
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			text.WriteString(n.Data)
			text.WriteByte('\n')
		case html.ElementNode:
			pp.tags[n.Data]++
			for _, a := range n.Attr {
				pp.attrs = append(pp.attrs, a.Val)
			}
			switch n.Data {
			case "img":
				m := map[string]string{}
				for _, a := range n.Attr {
					m[a.Key] = a.Val
				}
				pp.imgs = append(pp.imgs, m)
			case "table":
				table = nil
			case "tr":
				row = nil
			case "td", "th":
				row = append(row, cellText(n))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "tr":
				table = append(table, row)
			case "table":
				pp.tables = append(pp.tables, table)
			}
		}
	}
	walk(doc)
	pp.text = text.String()
	return pp
}

func TestWriteSample(t *testing.T) {
	in := sampleInput(t)
	dir := t.TempDir()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	if *sampleDir != "" {
		if err := Write(*sampleDir, in); err != nil {
			t.Fatal(err)
		}
	}
	pp := parsePage(t, filepath.Join(dir, HTMLFile))

	for _, tag := range []string{"script", "link", "iframe", "object"} {
		if pp.tags[tag] != 0 {
			t.Errorf("page has %d <%s> elements, want none", pp.tags[tag], tag)
		}
	}
	if pp.tags["style"] != 1 {
		t.Errorf("page has %d <style> elements, want 1 (inline CSS)", pp.tags["style"])
	}
	for _, v := range pp.attrs {
		if strings.Contains(v, "://") || strings.HasPrefix(v, "//") {
			t.Errorf("page references external %q", v)
		}
	}

	// One metrics table and one differences table per section, in order.
	if want := 2 * len(in.Sections); len(pp.tables) != want {
		t.Fatalf("page has %d tables, want %d", len(pp.tables), want)
	}
	for si, sec := range in.Sections {
		metrics, diffs := pp.tables[2*si], pp.tables[2*si+1]
		if len(metrics) != 1+len(sec.Metrics) {
			t.Errorf("section %q: metrics table has %d rows, want %d", sec.Name, len(metrics), 1+len(sec.Metrics))
			continue
		}
		if want := append(append([]string{"metric"}, in.Models...), "better"); !slices.Equal(metrics[0], want) {
			t.Errorf("section %q: header %q, want %q", sec.Name, metrics[0], want)
		}
		for k, m := range sec.Metrics {
			got := metrics[k+1]
			want := []string{m.Name}
			for _, model := range in.Models {
				v, ok := m.Values[model]
				switch {
				case !ok:
					want = append(want, "—")
				default:
					want = append(want, strconv.FormatFloat(v, 'g', 4, 64))
				}
			}
			want = append(want, m.Better)
			if !slices.Equal(got, want) {
				t.Errorf("section %q: row %q, want %q", sec.Name, got, want)
			}
		}
		if len(diffs) != 1+len(sec.Diffs) {
			t.Errorf("section %q: differences table has %d rows, want %d", sec.Name, len(diffs), 1+len(sec.Diffs))
			continue
		}
		for k, d := range sec.Diffs {
			got := diffs[k+1]
			if got[0] != d.Metric || got[3] != fmt.Sprintf("%+.3g", d.Diff) {
				t.Errorf("section %q: difference row %q, want metric %q and B − A %.3g", sec.Name, got, d.Metric, d.Diff)
			}
		}
	}

	// Every figure exists, decodes and has its kind's size.
	wantFigs := 0
	for _, sec := range in.Sections {
		wantFigs += len(sec.Plots) + 1 // plus the forest plot
	}
	if len(pp.imgs) != wantFigs {
		t.Errorf("page has %d images, want %d", len(pp.imgs), wantFigs)
	}
	for _, img := range pp.imgs {
		src := img["src"]
		if src != filepath.Base(src) || !strings.HasSuffix(src, ".png") {
			t.Errorf("img src %q is not a sibling PNG", src)
			continue
		}
		f, err := os.Open(filepath.Join(dir, src))
		if err != nil {
			t.Errorf("img %s: %v", src, err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Errorf("png.DecodeConfig(%s): %v", src, err)
			continue
		}
		kind := ""
		for _, k := range []string{"reliability", "predicted-actual", "pit", "coverage", "forest"} {
			if strings.HasSuffix(src, "-"+k+".png") {
				kind = k
			}
		}
		diffs := 0
		for _, sec := range in.Sections {
			if strings.Contains(src, "-"+slug(sec.Name)+"-") {
				diffs = len(sec.Diffs)
			}
		}
		w, h := figureSize(kind, diffs)
		if cfg.Width != w || cfg.Height != h {
			t.Errorf("%s (%s) is %d×%d, want %d×%d", src, kind, cfg.Width, cfg.Height, w, h)
		}
		if img["width"] != strconv.Itoa(cfg.Width) || img["height"] != strconv.Itoa(cfg.Height) {
			t.Errorf("%s: img width, height = %s, %s, want %d, %d", src, img["width"], img["height"], cfg.Width, cfg.Height)
		}
	}
	for _, sec := range in.Sections {
		for _, p := range sec.Plots {
			if !strings.Contains(pp.text, p.title()+".") {
				t.Errorf("no caption for figure %q", p.title())
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != wantFigs+1 {
		t.Errorf("dir holds %d files, want %d (no temporary files left)", len(entries), wantFigs+1)
	}
}

func TestWriteDeterministic(t *testing.T) {
	in := sampleInput(t)
	in.Sections = in.Sections[2:] // the build-time section has every figure but reliability
	in.Sections = append(in.Sections, sampleInput(t).Sections[0])
	d1, d2 := t.TempDir(), t.TempDir()
	for _, d := range []string{d1, d2} {
		if err := Write(d, in); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(d1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		a, err1 := os.ReadFile(filepath.Join(d1, e.Name()))
		b, err2 := os.ReadFile(filepath.Join(d2, e.Name()))
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes of the same input", e.Name())
		}
	}
}

func TestWriteEscapes(t *testing.T) {
	t.Parallel()
	const evil = `<script>alert("x")</script> & <b>`
	in := Input{
		Title:    evil,
		Subtitle: evil,
		Models:   []string{evil},
		Sections: []Section{{Name: evil, Note: evil, Metrics: []Metric{{Name: evil, Values: map[string]float64{evil: 1}}}}},
	}
	dir := t.TempDir()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	pp := parsePage(t, filepath.Join(dir, HTMLFile))
	if pp.tags["script"] != 0 || pp.tags["b"] != 0 {
		t.Errorf("text was not escaped: %d <script>, %d <b>", pp.tags["script"], pp.tags["b"])
	}
	// Title, h1, subtitle, h2, note, model header, metric name.
	if got := strings.Count(pp.text, evil); got != 7 {
		t.Errorf("page shows the text %d times, want 7", got)
	}
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	bins := func(obs float64) []eval.CalibrationBin {
		return []eval.CalibrationBin{{Lo: 0, Hi: 0.5, Count: 3, MeanPredicted: 0.3, Observed: obs}, {Lo: 0.5, Hi: 1, Count: 2, MeanPredicted: 0.7, Observed: 0.5}}
	}
	sec := func(p Plot) Input {
		return Input{Title: "t", Sections: []Section{{Name: "sec", Plots: []Plot{p}}}}
	}
	okDiff := eval.PairedDiff{A: 1, B: 2, Diff: 1, Lo: 0.5, Hi: 1.5, PBetter: 0, Level: 0.95, Resamples: 10}
	nanDiff := okDiff
	nanDiff.Hi = nan
	tests := []struct {
		name    string
		in      Input
		want    error
		mention string // the plot, series or field the message must name
	}{
		{"reliability no series", sec(Reliability{Title: "rel"}), ErrNoData, `"rel"`},
		{"reliability no bins", sec(Reliability{Title: "rel", Series: []ReliabilitySeries{{Model: "m"}}}), ErrNoData, `"m"`},
		{"reliability NaN", sec(Reliability{Title: "rel", Series: []ReliabilitySeries{{Model: "m", Bins: bins(nan)}}}), ErrNotFinite, `"rel"`},
		{"reliability out of range", sec(Reliability{Title: "rel", Series: []ReliabilitySeries{{Model: "m", Bins: bins(1.5)}}}), ErrInput, "bin 0"},
		{"reliability all empty", sec(Reliability{Title: "rel", Series: []ReliabilitySeries{{Model: "m", Bins: []eval.CalibrationBin{{Lo: 0, Hi: 1}}}}}), ErrNoData, `"m"`},
		{"reliability bin counts differ", sec(Reliability{Title: "rel", Series: []ReliabilitySeries{{Model: "a", Bins: bins(0.1)}, {Model: "b", Bins: bins(0.1)[:1]}}}), ErrInput, `"b"`},
		{"scatter empty", sec(PredictedActual{Title: "sc"}), ErrNoData, `"sc"`},
		{"xy scatter no series", sec(Scatter{Title: "xy"}), ErrNoData, `"xy"`},
		{"xy scatter no points", sec(Scatter{Title: "xy", Series: []ScatterSeries{{Model: "m"}}}), ErrNoData, `"m"`},
		{"xy scatter lengths", sec(Scatter{Title: "xy", Series: []ScatterSeries{{Model: "m", X: []float64{1}, Y: []float64{1, 2}}}}), ErrInput, `"m"`},
		{"xy scatter NaN", sec(Scatter{Title: "xy", Series: []ScatterSeries{{Model: "m", X: []float64{1, nan}, Y: []float64{1, 2}}}}), ErrNotFinite, "row 1"},
		{"xy scatter log of zero", sec(Scatter{Title: "xy", LogY: true, Series: []ScatterSeries{{Model: "m", X: []float64{1, 2}, Y: []float64{1, 0}}}}), ErrInput, "row 1"},
		{"scatter NaN", sec(PredictedActual{Title: "sc", Predicted: []float64{1, nan}, Actual: []float64{1, 2}}), ErrNotFinite, "row 1"},
		{"scatter Inf", sec(PredictedActual{Title: "sc", Predicted: []float64{1, 2}, Actual: []float64{math.Inf(1), 2}}), ErrNotFinite, "row 0"},
		{"scatter lengths", sec(PredictedActual{Title: "sc", Predicted: []float64{1}, Actual: []float64{1, 2}}), ErrInput, `"sc"`},
		{"scatter log of zero", sec(PredictedActual{Title: "sc", Predicted: []float64{1, 0}, Actual: []float64{1, 2}, Log: true}), ErrInput, "row 1"},
		{"PIT empty", sec(PITHistogram{Title: "pit"}), ErrNoData, `"pit"`},
		{"PIT NaN", sec(PITHistogram{Title: "pit", Series: []PITSeries{{Model: "m", Fractions: []float64{0.5, nan}}}}), ErrNotFinite, "bin 1"},
		{"PIT not summing to 1", sec(PITHistogram{Title: "pit", Series: []PITSeries{{Model: "m", Fractions: []float64{0.5, 0.4}}}}), ErrInput, "sum"},
		{"coverage empty", sec(Coverage{Title: "cov", Series: []CoverageSeries{{Model: "m"}}}), ErrNoData, `"cov"`},
		{"coverage NaN", sec(Coverage{Title: "cov", Series: []CoverageSeries{{Model: "m", Nominal: []float64{0.5}, Empirical: []float64{nan}}}}), ErrNotFinite, `"cov"`},
		{"coverage lengths", sec(Coverage{Title: "cov", Series: []CoverageSeries{{Model: "m", Nominal: []float64{0.5, 0.8}, Empirical: []float64{0.5}}}}), ErrInput, `"m"`},
		{"untitled plot", sec(Coverage{}), ErrNoData, `"1 (coverage)"`},
		{"unknown model", Input{Models: []string{"a"}, Sections: []Section{{Name: "s", Metrics: []Metric{{Name: "auc", Values: map[string]float64{"b": 1}}}}}}, ErrInput, `"b"`},
		{"duplicate model", Input{Models: []string{"a", "a"}}, ErrInput, `"a"`},
		{"bad better", Input{Models: []string{"a"}, Sections: []Section{{Name: "s", Metrics: []Metric{{Name: "auc", Better: "up"}}}}}, ErrInput, `"auc"`},
		{"NaN difference", Input{Sections: []Section{{Name: "s", Diffs: []Difference{{Metric: "auc", PairedDiff: nanDiff}}}}}, ErrNotFinite, `"auc"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			err := Write(dir, tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Write: err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) || !strings.HasPrefix(err.Error(), "report: ") {
				t.Errorf("Write: err = %q, want it to start with \"report: \" and name %s", err, tc.mention)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("Write failed but created %s (stat: %v)", dir, err)
			}
		})
	}
}

// TestForestSkipsZeroA checks that differences whose model A value is 0 (gaps to a
// limit, say) get their table but no forest plot, which could not scale them.
func TestForestSkipsZeroA(t *testing.T) {
	t.Parallel()
	in := Input{Sections: []Section{{Name: "s", Diffs: []Difference{{Metric: "gap", PairedDiff: eval.PairedDiff{B: 0.1, Diff: 0.1, Lo: 0.05, Hi: 0.2, Level: 0.9}}}}}}
	dir := t.TempDir()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	pp := parsePage(t, filepath.Join(dir, HTMLFile))
	if len(pp.imgs) != 0 || len(pp.tables) != 1 || len(pp.tables[0]) != 2 {
		t.Errorf("page has %d images and tables %q, want no image and one difference row", len(pp.imgs), pp.tables)
	}
	if !strings.Contains(pp.text, "90% interval") || !strings.Contains(pp.text, "B worse") {
		t.Errorf("difference table lacks the 90%% interval header or the verdict:\n%s", pp.text)
	}
}

// TestLogTicks is issue 15 item 16: a log axis spanning less than a decade, as build
// times do, still has at least three labelled ticks, each inside the range, and
// labels at 1, 2 and 5 times powers of ten when those give three.
func TestLogTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{300, 2000, []string{"500", "1000", "2000"}},
		{300, 900, []string{"300", "400", "500", "600", "700", "800", "900"}},
		{1, 1000, []string{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"}},
		{150, 1200, []string{"200", "500", "1000"}},
	} {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("Ticks(%v, %v): tick %v outside the range", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Ticks(%v, %v) labels = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := (logTicks{}).Ticks(0, 10); got != nil {
		t.Errorf("Ticks(0, 10) = %v, want none", got)
	}
}

// TestForestRobustScale is issue 15 item 16: one unstable metric no longer sets the
// axis of the forest plot; the axis reaches forestClip times the median extent and that
// metric is marked as clipped.
func TestForestRobustScale(t *testing.T) {
	t.Parallel()
	if got := robustLimit([]float64{1, 2, 3}); got != 3 {
		t.Errorf("robustLimit(1, 2, 3) = %v, want the largest, 3", got)
	}
	if got := robustLimit([]float64{1, 2, 400}); got != forestClip*2 {
		t.Errorf("robustLimit(1, 2, 400) = %v, want %v times the median 2", got, forestClip)
	}
	if got := robustLimit([]float64{1, 3, 2, 400}); got != forestClip*2.5 {
		t.Errorf("robustLimit(1, 3, 2, 400) = %v, want %v times the median 2.5", got, forestClip)
	}
	d := func(name string, lo, hi float64) Difference {
		return Difference{Metric: name, Better: eval.LowerIsBetter, PairedDiff: eval.PairedDiff{A: 1, B: 1 + (lo+hi)/2, Diff: (lo + hi) / 2, Lo: lo, Hi: hi, Level: 0.95}}
	}
	f := forest{Title: "f", A: "A", B: "B", Diffs: []Difference{d("log loss", -0.01, 0.01), d("Brier", -0.02, 0.01), d("ECE", -3, 5)}}
	panels, _, _, err := f.build()
	if err != nil {
		t.Fatal(err)
	}
	// In percent of |A| = 1: extents 1, 2 and 500; the axis reaches 3·2 = 6 plus padding.
	if x := panels[0].X; x.Max > 7 || x.Min < -7 {
		t.Errorf("forest x axis [%v, %v], want within ±7 (the unstable ECE clipped)", x.Min, x.Max)
	}
	png, _, _, err := render(f)
	if err != nil {
		t.Fatal(err)
	}
	if *writeForest != "" {
		if err := os.WriteFile(*writeForest, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeForest writes TestForestRobustScale's figure to a file, to look at it.
var writeForest = flag.String("forest-png", "", "write TestForestRobustScale's PNG to this file")

func TestVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		better eval.Direction
		lo, hi float64
		want   int
	}{
		{"loss down", eval.LowerIsBetter, -2, -1, 1},
		{"loss up", eval.LowerIsBetter, 1, 2, -1},
		{"loss unclear", eval.LowerIsBetter, -1, 1, 0},
		{"score up", eval.HigherIsBetter, 1, 2, 1},
		{"score down", eval.HigherIsBetter, -2, -1, -1},
		{"score unclear", eval.HigherIsBetter, 0, 1, 0},
	}
	for _, tc := range tests {
		d := Difference{Better: tc.better, PairedDiff: eval.PairedDiff{Lo: tc.lo, Hi: tc.hi}}
		if got := verdict(d); got != tc.want {
			t.Errorf("%s: verdict(%v, [%v, %v]) = %d, want %d", tc.name, tc.better, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestMetricRowBest(t *testing.T) {
	t.Parallel()
	models := []string{"a", "b", "c"}
	known := map[string]bool{"a": true, "b": true, "c": true}
	tests := []struct {
		name     string
		m        Metric
		wantText []string
		wantBest []bool
	}{
		{"lower", Metric{Values: map[string]float64{"a": 2, "b": 1, "c": 3}, Better: "lower"}, []string{"2", "1", "3"}, []bool{false, true, false}},
		{"higher with tie", Metric{Values: map[string]float64{"a": 0.9, "b": 0.5, "c": 0.9}, Better: "higher"}, []string{"0.9", "0.5", "0.9"}, []bool{true, false, true}},
		{"missing and NaN", Metric{Values: map[string]float64{"a": math.NaN(), "c": 0.123456}, Better: "higher"}, []string{"n/a", "—", "0.1235"}, []bool{false, false, false}},
		{"no direction", Metric{Values: map[string]float64{"a": 1, "b": 2, "c": 12345678}}, []string{"1", "2", "1.235e+07"}, []bool{false, false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row, err := metricRow(tc.m, models, known)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range row.Cells {
				if c.Text != tc.wantText[i] || c.Best != tc.wantBest[i] {
					t.Errorf("cell %d = %q best %v, want %q best %v", i, c.Text, c.Best, tc.wantText[i], tc.wantBest[i])
				}
			}
		})
	}
}

func TestSampleRows(t *testing.T) {
	t.Parallel()
	tests := []struct{ n, k int }{{0, 5}, {3, 5}, {5, 5}, {10000, 3000}}
	for _, tc := range tests {
		got := sampleRows(tc.n, tc.k)
		if len(got) != min(tc.n, tc.k) {
			t.Errorf("sampleRows(%d, %d) has %d rows, want %d", tc.n, tc.k, len(got), min(tc.n, tc.k))
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Errorf("sampleRows(%d, %d) not strictly increasing at %d", tc.n, tc.k, i)
				break
			}
		}
		if len(got) > 0 && (got[0] < 0 || got[len(got)-1] >= tc.n) {
			t.Errorf("sampleRows(%d, %d) out of range", tc.n, tc.k)
		}
		if !slices.Equal(got, sampleRows(tc.n, tc.k)) {
			t.Errorf("sampleRows(%d, %d) not deterministic", tc.n, tc.k)
		}
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"build time": "build-time", "Success": "success", "  a--b ": "a-b", "<>": "section", "p95 (s)": "p95-s"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteMetricsJSON(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "metrics.json")
	if err := WriteMetricsJSON(path, map[string]float64{"b": 2, "a": 0.5, "c": math.NaN(), "d": math.Inf(-1)}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": 0.5,\n  \"b\": 2,\n  \"c\": null,\n  \"d\": null\n}\n"; string(b) != want {
		t.Errorf("metrics.json = %q, want %q", b, want)
	}
	err = WriteMetricsJSON(filepath.Join(t.TempDir(), "missing", "m.json"), nil)
	if err == nil || !strings.Contains(err.Error(), "m.json") {
		t.Errorf("WriteMetricsJSON(missing dir) = %v, want an error naming m.json", err)
	}
}

func TestRowsAndMetricsMap(t *testing.T) {
	t.Parallel()
	cm := eval.ClassifierMetrics{N: 10, Failures: 3, Accuracy: 0.8, ROCAUC: 0.9, PRAUC: 0.7, LogLoss: 0.4, Brier: 0.1, ECE: 0.05, Precision: math.NaN(), Recall: 0.5, F1: 0.6}
	dm := eval.DistributionMetrics{NLL: 6, CRPS: 30, Point: eval.RegressionMetrics{RMSE: 50, MAE: 40, MAPE: 25, MdAPE: 12}, Coverage: [3]float64{0.45, 0.79, 0.96}}
	in := Input{Models: []string{"m"}, Sections: []Section{
		{Name: "success", Metrics: ClassifierRows(map[string]eval.ClassifierMetrics{"m": cm})},
		{Name: "build time", Metrics: DistributionRows("s", map[string]eval.DistributionMetrics{"m": dm}),
			Diffs: []Difference{{Metric: "CRPS (s)", PairedDiff: eval.PairedDiff{A: 30, B: 28, Diff: -2, Lo: -3, Hi: -1, PBetter: 0.99}}}},
	}}
	got, err := MetricsMap(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"success/rows/m": 10, "success/failures/m": 3, "success/accuracy/m": 0.8, "success/ROC AUC/m": 0.9,
		"success/PR AUC (failure)/m": 0.7, "success/log loss (nats)/m": 0.4, "success/Brier/m": 0.1, "success/ECE/m": 0.05,
		"success/failure precision/m": math.NaN(), "success/failure recall/m": 0.5, "success/failure F1/m": 0.6,
		"build time/NLL (nats)/m": 6, "build time/CRPS (s)/m": 30, "build time/MAPE of point forecast (%)/m": 25, "build time/median APE of point forecast (%)/m": 12,
		"build time/RMSE of point forecast (s)/m": 50, "build time/MAE of point forecast (s)/m": 40,
		"build time/50% interval coverage/m": 0.45, "build time/80% interval coverage/m": 0.79, "build time/95% interval coverage/m": 0.96,
		"build time/CRPS (s)/diff": -2, "build time/CRPS (s)/lo": -3, "build time/CRPS (s)/hi": -1, "build time/CRPS (s)/p_better": 0.99,
	}
	if len(got) != len(want) {
		t.Errorf("MetricsMap has %d keys, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !scalar.Same(g, w) {
			t.Errorf("MetricsMap[%q] = %v (present %v), want %v", k, g, ok, w)
		}
	}
	if err := Write(t.TempDir(), in); err != nil {
		t.Errorf("Write of the rows: %v", err)
	}
	in.Sections = append(in.Sections, in.Sections[0])
	if _, err := MetricsMap(in); !errors.Is(err, ErrInput) {
		t.Errorf("MetricsMap(duplicate section) err = %v, want ErrInput", err)
	}
}

func BenchmarkWriteSample(b *testing.B) {
	in := sampleInput(b)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(dir, in); err != nil {
			b.Fatal(err)
		}
	}
}
