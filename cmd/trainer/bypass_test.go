package main

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestBypass prints paper 000 §VII worked example 3 (minutes): P(FT_y < FT_x) ≈ 0.9977.
func TestBypass(t *testing.T) {
	out, _, err := runCmd(t, "bypass", "--ahead-arrival", "0", "--ahead-mu", "35", "--ahead-sigma", "6",
		"--arrival", "1", "--mu", "15", "--sigma", "3", "--family", "normal")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	p, err := strconv.ParseFloat(lines[len(lines)-1], 64)
	if err != nil {
		t.Fatalf("last line %q is not a number", lines[len(lines)-1])
	}
	// The paper prints four decimals.
	if math.Abs(p-0.9977) > 5e-5 {
		t.Errorf("bypass = %v, want 0.9977", p)
	}
}

func TestBypassErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bypass", "--ahead-arrival", "0", "--ahead-mu", "35", "--ahead-sigma", "6", "--arrival", "1", "--mu", "15"},
		{"bypass", "--ahead-arrival", "0", "--ahead-mu", "35", "--ahead-sigma", "-6", "--arrival", "1", "--mu", "15", "--sigma", "3"},
		{"bypass", "--ahead-arrival", "0", "--ahead-mu", "35", "--ahead-sigma", "6", "--arrival", "1", "--mu", "15", "--sigma", "3", "--family", "gamma"},
		{"bypass", "--ahead-arrival", "0", "--ahead-mu", "-35", "--ahead-sigma", "6", "--arrival", "1", "--mu", "15", "--sigma", "3"},
		{"bypass", "--ahead-arrival", "NaN", "--ahead-mu", "35", "--ahead-sigma", "6", "--arrival", "1", "--mu", "15", "--sigma", "3"},
	} {
		if _, _, err := runCmd(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v = %v, want a usage error", args, err)
		}
	}
}
