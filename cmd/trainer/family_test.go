package main

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestBypassLogNormal checks bypass's default family, the log-normal finish order,
// against a Monte Carlo estimate from log-normal build times with the flags' means and
// standard deviations (seeded; 400000 draws give a standard error below 8e-4 for any p,
// so 4e-3 is five of them).
func TestBypassLogNormal(t *testing.T) {
	const (
		n   = 400000
		tol = 4e-3
	)
	atx, mux, sx, aty, muy, sy := 0.0, 600.0, 300.0, 120.0, 420.0, 250.0
	out, _, err := runCmd(t, "bypass", "--ahead-arrival", "0", "--ahead-mu", "600", "--ahead-sigma", "300",
		"--arrival", "120", "--mu", "420", "--sigma", "250")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	p, err := strconv.ParseFloat(lines[len(lines)-1], 64)
	if err != nil {
		t.Fatalf("last line %q is not a number", lines[len(lines)-1])
	}
	params := func(mean, sd float64) (m, s float64) {
		s2 := math.Log(1 + sd*sd/(mean*mean))
		return math.Log(mean) - s2/2, math.Sqrt(s2)
	}
	mx, sgx := params(mux, sx)
	my, sgy := params(muy, sy)
	rng := rand.New(rand.NewPCG(1, 2))
	hits := 0
	for range n {
		ftx := atx + math.Exp(mx+sgx*rng.NormFloat64())
		fty := aty + math.Exp(my+sgy*rng.NormFloat64())
		if fty < ftx {
			hits++
		}
	}
	if mc := float64(hits) / n; math.Abs(p-mc) > tol {
		t.Errorf("bypass (lognormal) = %v, Monte Carlo %v", p, mc)
	}
	normal, _, err := runCmd(t, "bypass", "--ahead-arrival", "0", "--ahead-mu", "600", "--ahead-sigma", "300",
		"--arrival", "120", "--mu", "420", "--sigma", "250", "--family", "normal")
	if err != nil {
		t.Fatal(err)
	}
	nl := strings.Split(strings.TrimSpace(normal), "\n")
	if pn, _ := strconv.ParseFloat(nl[len(nl)-1], 64); math.Abs(pn-p) < 1e-3 {
		t.Errorf("--family normal %v equals the log-normal %v: the flag changes nothing", pn, p)
	}
}

// TestBatchAtLimit checks that batch says a larger batch may be better when the best
// size is --max-b itself, and not otherwise.
func TestBatchAtLimit(t *testing.T) {
	out, _, err := runCmd(t, "batch", "--p-succ", "0.99", "--max-b", "4")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "best one-phase: b=4") || !strings.Contains(out, "a larger batch may be better") {
		t.Errorf("batch at the limit:\n%s\nwant b=4 and the note", out)
	}
	out, _, err = runCmd(t, "batch", "--p-succ", "0.6", "--max-b", "4")
	if err != nil || strings.Contains(out, "larger batch") {
		t.Errorf("batch with the best below the limit (%v):\n%s\nwant no note", err, out)
	}
}
