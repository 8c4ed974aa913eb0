package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportReadability checks the walkthrough's replay report fixes: rate 0 printed as
// "history", metrics as plain numbers (4280, not 4.28e+03), and a distinct colour for
// every strategy.
func TestReportReadability(t *testing.T) {
	if got := RateText(0); got != "history" {
		t.Errorf("RateText(0) = %q, want history", got)
	}
	if got := RateText(30); got != "30/h" {
		t.Errorf("RateText(30) = %q, want 30/h", got)
	}
	for _, tc := range []struct {
		x    float64
		want string
	}{{4280, "4280"}, {4283.7, "4284"}, {17.25, "17.2"}, {1.0204, "1.02"}, {0.0123456, "0.0123"}, {0.5, "0.500"}, {0, "0"}, {-250.4, "-250"}} {
		if got := PlainNumber(tc.x); got != tc.want {
			t.Errorf("PlainNumber(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
	seen := map[any]string{}
	for i, s := range Strategies {
		c := strategyColor(s, i)
		if other, ok := seen[c]; ok {
			t.Errorf("strategies %s and %s share a colour", other, s)
		}
		seen[c] = s
	}

	cell := &Cell{Strategy: "sq2024", Probs: "truth", Workers: 8, Rate: 0, Seeds: 2,
		Metrics: map[string]Interval{"cpu_hours": {Mean: 4280, Lo: 4100, Hi: 4460, N: 2}}}
	dir := t.TempDir()
	if err := WriteReport(dir, &Summary{Meta: Meta{World: "w"}, Cells: []*Cell{cell}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.Contains(html, "<td>history</td>") || !strings.Contains(html, "4280 [4100, 4460]") || strings.Contains(html, "e+03") {
		t.Errorf("report table lacks rate history or plain CPU hours:\n%s", html)
	}
}
