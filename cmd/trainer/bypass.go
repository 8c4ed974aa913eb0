package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strconv"

	"github.com/sqpredict/sqpredict/scoring"
)

func init() {
	register(command{name: "bypass", summary: "probability that a new change finishes before a conflicting change ahead", run: runBypass})
}

func runBypass(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "bypass", "--ahead-arrival S --ahead-mu S --ahead-sigma S --arrival S --mu S --sigma S\n\n"+
		"Prints P(FT_y < FT_x) (paper 000 §VII) as the last line: x is the change ahead in the queue,\n"+
		"y the new change behind it. Times are seconds (any unit shared by all six flags works).")
	names := []string{"ahead-arrival", "ahead-mu", "ahead-sigma", "arrival", "mu", "sigma"}
	help := []string{
		"arrival time of the ahead change x",
		"mean build time of x",
		"standard deviation of the build time of x",
		"arrival time of the new change y",
		"mean build time of y",
		"standard deviation of the build time of y",
	}
	vals := make([]*float64, len(names))
	for i, n := range names {
		vals[i] = fs.Float64(n, math.NaN(), "`seconds`: "+help[i]+" (required)")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for i, n := range names {
		v := *vals[i]
		switch {
		case !set[n]:
			return fmt.Errorf("%w: --%s is required", errUsage, n)
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("%w: --%s=%v is not a finite number", errUsage, n, v)
		case (n == "ahead-sigma" || n == "sigma") && v < 0:
			return fmt.Errorf("%w: --%s=%v is negative", errUsage, n, v)
		}
	}
	atx, mux, sx, aty, muy, sy := *vals[0], *vals[1], *vals[2], *vals[3], *vals[4], *vals[5]
	z := scoring.FinishZ(atx, mux, sx, aty, muy, sy)
	p := scoring.FinishBeforeProb(atx, mux, sx, aty, muy, sy)
	fmt.Fprintf(e.stdout, "x (ahead): arrives %g, builds %g ± %g\n", atx, mux, sx)
	fmt.Fprintf(e.stdout, "y (new):   arrives %g, builds %g ± %g\n", aty, muy, sy)
	fmt.Fprintf(e.stdout, "Z = ((AT_x - AT_y) - (mu_y - mu_x)) / sqrt(sigma_x^2 + sigma_y^2) = %.6g\n", z)
	fmt.Fprintf(e.stdout, "P(FT_y < FT_x) = Phi(Z):\n")
	_, err := fmt.Fprintln(e.stdout, strconv.FormatFloat(p, 'g', -1, 64))
	return err
}
