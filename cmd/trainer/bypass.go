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
	fs := newFlagSet(e, "bypass", "--ahead-arrival S --ahead-mu S --ahead-sigma S --arrival S --mu S --sigma S [--family lognormal|normal]\n\n"+
		"Prints P(FT_y < FT_x) (paper 000 §VII) as the last line: x is the change ahead in the queue,\n"+
		"y the new change behind it. Times are seconds (any unit shared by all six flags works); mu and\n"+
		"sigma are the mean and standard deviation of each build time. --family lognormal (the default,\n"+
		"the build-time champion's family, as predictd serves it) integrates the log-normal finish\n"+
		"order; --family normal is the paper's Phi(Z).")
	family := fs.String("family", "lognormal", "build-time `family` of both changes: lognormal (the champion's) or normal (Phi(Z) of the paper)")
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
	var fam scoring.BuildFamily
	switch *family {
	case "lognormal":
		fam = scoring.BuildLogNormal
		for _, m := range []struct {
			name   string
			mu, sd float64
		}{{"ahead-mu", mux, sx}, {"mu", muy, sy}} {
			if m.sd > 0 && !(m.mu > 0) {
				return fmt.Errorf("%w: --%s=%v: a log-normal build time needs a positive mean (or --family normal)", errUsage, m.name, m.mu)
			}
		}
	case "normal":
		fam = scoring.BuildNormal
	default:
		return fmt.Errorf("%w: --family %q is not lognormal or normal", errUsage, *family)
	}
	z := scoring.FinishZ(atx, mux, sx, aty, muy, sy)
	p := scoring.FinishBeforeProbOf(atx, scoring.BuildTime{Family: fam, Mean: mux, StdDev: sx}, aty, scoring.BuildTime{Family: fam, Mean: muy, StdDev: sy})
	fmt.Fprintf(e.stdout, "x (ahead): arrives %g, builds %g ± %g\n", atx, mux, sx)
	fmt.Fprintf(e.stdout, "y (new):   arrives %g, builds %g ± %g\n", aty, muy, sy)
	fmt.Fprintf(e.stdout, "Z = ((AT_x - AT_y) - (mu_y - mu_x)) / sqrt(sigma_x^2 + sigma_y^2) = %.6g\n", z)
	if fam == scoring.BuildLogNormal {
		fmt.Fprintf(e.stdout, "Phi(Z) (Normal build times, --family normal) = %.6g\n", scoring.FinishBeforeProb(atx, mux, sx, aty, muy, sy))
		fmt.Fprintf(e.stdout, "P(FT_y < FT_x) with log-normal build times of these means and standard deviations:\n")
	} else {
		fmt.Fprintf(e.stdout, "P(FT_y < FT_x) = Phi(Z):\n")
	}
	_, err := fmt.Fprintln(e.stdout, strconv.FormatFloat(p, 'g', -1, 64))
	return err
}
