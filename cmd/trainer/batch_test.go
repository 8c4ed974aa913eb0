package main

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

type batchJSON struct {
	OnePhase, TwoPhase struct {
		BestB           int     `json:"best_b"`
		BuildsPerChange float64 `json:"builds_per_change"`
		ByB             []struct {
			BatchSize       int     `json:"batch_size"`
			BuildsPerChange float64 `json:"builds_per_change"`
		} `json:"by_b"`
	}
}

func runBatchJSON(t *testing.T, args ...string) batchJSON {
	t.Helper()
	out, _, err := runCmd(t, append([]string{"batch"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	var r batchJSON
	if err := json.Unmarshal(raw["one_phase"], &r.OnePhase); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw["two_phase"], &r.TwoPhase); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBatch checks the JSON form: Dorfman's optimum for a 10% failure rate is b = 4 at
// 1 + 1/4 − 0.9^4 builds per change.
func TestBatch(t *testing.T) {
	r := runBatchJSON(t, "--p-succ", "0.9", "--json")
	if r.OnePhase.BestB != 4 || math.Abs(r.OnePhase.BuildsPerChange-(1.25-math.Pow(0.9, 4))) > 1e-12 {
		t.Errorf("one phase = %+v, want b=4", r.OnePhase)
	}
	if len(r.OnePhase.ByB) != 32 || len(r.TwoPhase.ByB) != 32 || r.TwoPhase.ByB[31].BatchSize != 32 {
		t.Errorf("by_b has %d and %d sizes, want 32", len(r.OnePhase.ByB), len(r.TwoPhase.ByB))
	}
	r = runBatchJSON(t, "--p-succ", "0.95,0.9,0.99", "--json")
	// b = 3 is the whole list as one batch: 1/3 + 1 − 0.95·0.9·0.99.
	if len(r.OnePhase.ByB) != 3 || math.Abs(r.OnePhase.ByB[2].BuildsPerChange-(1.0/3+1-0.95*0.9*0.99)) > 1e-12 {
		t.Errorf("list one phase = %+v", r.OnePhase)
	}
	out, _, err := runCmd(t, "batch", "--p-succ", "0.9", "--max-b", "5")
	if err != nil || !strings.Contains(out, "best one-phase: b=4") {
		t.Errorf("batch table = %v\n%s", err, out)
	}
}

func TestBatchErrors(t *testing.T) {
	for _, args := range [][]string{
		{"batch"},
		{"batch", "--p-succ", "x"},
		{"batch", "--p-succ", "1.5"},
		{"batch", "--p-succ", "0.9", "--max-b", "0"},
		{"batch", "--p-succ", "0.9,0.8", "--max-b", "4"},
	} {
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v = %v, want a usage error", args, err)
		}
	}
}
