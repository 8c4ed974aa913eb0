package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
)

func init() {
	register(command{name: "batch", summary: "expected builds per change of one- and two-phase batching, best batch size", run: runBatch})
}

func runBatch(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "batch", "--p-succ Q[,Q...] [--max-b N] [--json]\n\n"+
		"With one --p-succ value every change succeeds with it and batch sizes 1..--max-b are compared;\n"+
		"with a comma-separated list the batch is exactly those changes, cut into consecutive\n"+
		"batches of every size 1..len(list).")
	pSucc := fs.String("p-succ", "", "success `probabilities`: one value, or a comma-separated list of the batch's changes")
	maxB := fs.Int("max-b", scoring.DefaultMaxBatchSize, "largest batch `size` compared for a single --p-succ")
	asJSON := fs.Bool("json", false, "print one JSON object with one_phase and two_phase")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *pSucc == "" {
		return fmt.Errorf("%w: --p-succ is required", errUsage)
	}
	var ps []float64
	for i, f := range strings.Split(*pSucc, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("%w: --p-succ value %d %q: not a number", errUsage, i+1, f)
		}
		ps = append(ps, v)
	}
	q := scoring.BatchQuery{CommonPSucc: ps[0], MaxBatchSize: *maxB}
	if len(ps) > 1 {
		maxSet := false
		fs.Visit(func(f *flag.Flag) { maxSet = maxSet || f.Name == "max-b" })
		if maxSet {
			return fmt.Errorf("%w: --max-b applies to a single --p-succ value; a list is compared up to its length", errUsage)
		}
		q = scoring.BatchQuery{PSucc: ps}
	}
	if *maxB < 1 {
		return fmt.Errorf("%w: --max-b=%d, want at least 1", errUsage, *maxB)
	}
	c, err := scoring.CompareBatching(q)
	if err != nil {
		return fmt.Errorf("%w: --p-succ: %w", errUsage, err)
	}
	if *asJSON {
		out, err := jsonOut.Marshal(server.BatchToProto(c))
		if err != nil {
			return errors.Join(errors.New("encoding the result"), err)
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", out)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "b\tone-phase\ttwo-phase\t")
	for b := range c.OnePhase.ByB {
		fmt.Fprintf(tw, "%d\t%.6f\t%.6f\t\n", b+1, c.OnePhase.ByB[b], c.TwoPhase.ByB[b])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		s    scoring.BatchSizes
	}{{"one-phase", c.OnePhase}, {"two-phase", c.TwoPhase}} {
		fmt.Fprintf(e.stdout, "best %s: b=%d, %.6f builds per change\n", r.name, r.s.Best, r.s.Cost)
		// The best size at the largest one compared: the curve may still fall beyond it.
		if len(ps) == 1 && r.s.Best == len(r.s.ByB) && r.s.Best > 1 {
			fmt.Fprintf(e.stdout, "  (b=%d is the largest size compared: a larger batch may be better; raise --max-b)\n", r.s.Best)
		}
	}
	return nil
}
