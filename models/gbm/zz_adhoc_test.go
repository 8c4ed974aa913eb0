package gbm

import (
	"math"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestZZAdhoc(t *testing.T) {
	_, rows := readCSVFloats(t, "/tmp/gf/adhoc/d.csv")
	x := mat.NewDense(len(rows), 3, nil)
	y := make([]float64, len(rows))
	for i, r := range rows {
		x.SetRow(i, r[1:])
		y[i] = r[0]
	}
	for _, name := range []string{"a", "b"} {
		ps, _ := os.ReadFile("/tmp/gf/adhoc/" + name + "_params.txt")
		params := map[string]string{"num_threads": "1"}
		for _, kv := range strings.Fields(string(ps)) {
			k, v, _ := strings.Cut(kv, "=")
			params[k] = v
		}
		cfg, err := ParseParams(params)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Fit(x, y, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := m.PredictRaw(nil, x)
		want := readFloatLines(t, "/tmp/gf/adhoc/"+name+"_raw.txt")
		worst, bad := 0.0, 0
		for i := range want {
			d := math.Abs(got[i] - want[i])
			worst = max(worst, d)
			if d > 1e-12 {
				bad++
			}
		}
		t.Logf("%s: %d of %d differ, worst %g", name, bad, len(want), worst)
	}
}
