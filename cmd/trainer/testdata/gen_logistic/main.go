// Command gen_logistic writes the tables of the trainer's fit/predict tests:
// logistic_{train,valid}.{csv,parquet}, the same rows in both formats. Run from the
// repository root:
//
//	go run ./cmd/trainer/testdata/gen_logistic
package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/sqpredict/sqpredict/datasets"
)

func main() {
	rnd := rand.New(rand.NewPCG(1, 1))
	colors := []string{"red", "green", "blue"}
	effect := map[string]float64{"red": -1, "green": 0, "blue": 0.8}
	write := func(name string, n int) {
		var sb strings.Builder
		sb.WriteString("id,lines,tests,color,landed\n")
		fr := &datasets.Frame{Columns: []datasets.Column{{Name: "id"}, {Name: "lines"}, {Name: "tests"}, {Name: "color"}, {Name: "landed"}}}
		for i := range n {
			lines := math.Round(math.Exp(3 + rnd.NormFloat64()))
			tests := math.Round(rnd.Float64()*100) / 10
			c := colors[rnd.IntN(3)]
			z := 1.5 - 0.004*lines + 0.3*(tests-5) + effect[c]
			y := 0.0
			if rnd.Float64() < 1/(1+math.Exp(-z)) {
				y = 1
			}
			ts := fmt.Sprint(tests)
			tv := tests
			if rnd.IntN(10) == 0 { // 10% missing
				ts, tv = "", math.NaN()
			}
			fmt.Fprintf(&sb, "%d,%g,%s,%s,%g\n", i, lines, ts, c, y)
			fr.Columns[0].Floats = append(fr.Columns[0].Floats, float64(i))
			fr.Columns[1].Floats = append(fr.Columns[1].Floats, lines)
			fr.Columns[2].Floats = append(fr.Columns[2].Floats, tv)
			fr.Columns[3].Strings = append(fr.Columns[3].Strings, c)
			fr.Columns[4].Floats = append(fr.Columns[4].Floats, y)
		}
		dir := "cmd/trainer/testdata/"
		if err := os.WriteFile(dir+name+".csv", []byte(sb.String()), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := datasets.WriteFrame(context.Background(), dir+name+".parquet", fr); err != nil {
			log.Fatal(err)
		}
	}
	write("logistic_train", 400)
	write("logistic_valid", 100)
}
