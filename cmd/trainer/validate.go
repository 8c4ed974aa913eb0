package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

func init() {
	register(command{name: "validate", summary: "check a history folder and summarise its tables and problems", run: runValidate})
}

const validateUsage = "--history DIR [--lenient]"

func runValidate(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "validate", validateUsage)
	dir := fs.String("history", "", "history folder to check (required)")
	lenient := fs.Bool("lenient", false, "count rows with problems as skipped and exit 0, instead of failing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	t0 := time.Now()
	_, rep, err := readHistoryWithProgress(ctx, e, "validate", *dir, *lenient)
	var problems *datasets.ProblemsError
	if err != nil && !errors.As(err, &problems) {
		return err
	}
	if rep != nil {
		fmt.Fprintf(e.stdout, "history %s (%v)\n", *dir, rep.Format)
		fmt.Fprint(e.stdout, rep.String())
		for _, p := range rep.Problems {
			fmt.Fprintf(e.stdout, "  %v\n", p)
		}
		if rep.NProblems > len(rep.Problems) {
			fmt.Fprintf(e.stdout, "  ... and %d more\n", rep.NProblems-len(rep.Problems))
		}
		e.summaryLog("validated history", "dir", *dir, "lenient", *lenient, "problems", rep.NProblems,
			"took", time.Since(t0).Round(time.Millisecond))
	}
	if problems != nil {
		if problems.Truncated {
			return fmt.Errorf("at least %d problems (stopped at the limit)", len(problems.Problems))
		}
		return fmt.Errorf("%d problems", len(problems.Problems))
	}
	return nil
}
