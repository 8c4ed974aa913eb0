package eval

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

const (
	// bootExactTol is zero: identical models give bit-identical metrics on every resample.
	bootExactTol = 0
	// bootPathTol bounds the rounding difference between the mean path (mean of B-A) and
	// the general path (mean B minus mean A) over the same draws.
	bootPathTol = 1e-12
	// bootNormalTol bounds |bootstrap bound - normal bound| in units of the standard
	// error: the Monte Carlo error of a 2.5% percentile from 4000 resamples is
	// sqrt(.025·.975/4000)/φ(1.96) ≈ 0.042 SE, so 0.15 SE is about 3.5 Monte Carlo
	// standard deviations; at n = 20000 normal differences the bootstrap distribution
	// itself is normal to well within that.
	bootNormalTol = 0.15
	// bootPBetterTol bounds the Monte Carlo error of PBetter (sd ≤ sqrt(.25/4000) ≈ 0.008).
	bootPBetterTol = 0.03
)

// classifierPair returns labels drawn from true probabilities q, the true probabilities
// (model B) and a noisy, miscalibrated version of them (model A).
func classifierPair(n int, rng *rand.Rand) (y, pA, pB []float64) {
	y = make([]float64, n)
	pA = make([]float64, n)
	pB = make([]float64, n)
	for i := range n {
		x := rng.NormFloat64()
		q := 1 / (1 + math.Exp(-(1 + 1.5*x)))
		if rng.Float64() < q {
			y[i] = 1
		}
		pB[i] = q
		pA[i] = 1 / (1 + math.Exp(-(0.5 + 0.4*x + rng.NormFloat64())))
	}
	return y, pA, pB
}

func logLossRows(y, p []float64) []float64 {
	l := make([]float64, len(y))
	for i := range y {
		l[i] = LogLoss(y[i:i+1], p[i:i+1])
	}
	return l
}

func TestPairedBootstrapClearWinner(t *testing.T) {
	t.Parallel()
	const tol = 1e-14 // observed values against the metric functions, same arithmetic
	y, pA, pB := classifierPair(1000, rand.New(rand.NewPCG(1, 1)))

	auc, err := PairedBootstrapAUC(y, pA, pB, BootstrapConfig{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !scalar.EqualWithinAbsOrRel(auc.Diff, ROCAUC(y, pB)-ROCAUC(y, pA), tol, tol) {
		t.Errorf("AUC Diff = %v, want %v", auc.Diff, ROCAUC(y, pB)-ROCAUC(y, pA))
	}
	if !(auc.Lo > 0) || !auc.Significant() || auc.PBetter < 1 {
		t.Errorf("AUC: interval [%v, %v], PBetter %v: want B clearly better", auc.Lo, auc.Hi, auc.PBetter)
	}
	if !(auc.Lo <= auc.Diff && auc.Diff <= auc.Hi) {
		t.Errorf("AUC: Diff %v outside [%v, %v]", auc.Diff, auc.Lo, auc.Hi)
	}
	if auc.Resamples != DefaultResamples || auc.Level != DefaultLevel || auc.N != len(y) {
		t.Errorf("AUC: Resamples, Level, N = %d, %v, %d", auc.Resamples, auc.Level, auc.N)
	}

	ll, err := PairedBootstrapMean(logLossRows(y, pA), logLossRows(y, pB), LowerIsBetter, BootstrapConfig{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !scalar.EqualWithinAbsOrRel(ll.A, LogLoss(y, pA), tol, tol) || !scalar.EqualWithinAbsOrRel(ll.B, LogLoss(y, pB), tol, tol) {
		t.Errorf("log loss A, B = %v, %v, want %v, %v", ll.A, ll.B, LogLoss(y, pA), LogLoss(y, pB))
	}
	if !(ll.Hi < 0) || ll.PBetter < 1 {
		t.Errorf("log loss: interval [%v, %v], PBetter %v: want B clearly better", ll.Lo, ll.Hi, ll.PBetter)
	}
}

func TestPairedBootstrapIdentical(t *testing.T) {
	t.Parallel()
	y, p, _ := classifierPair(500, rand.New(rand.NewPCG(2, 2)))
	loss := logLossRows(y, p)
	mean, err := PairedBootstrapMean(loss, loss, LowerIsBetter, BootstrapConfig{})
	if err != nil {
		t.Fatal(err)
	}
	auc, err := PairedBootstrap(y, p, p, ROCAUC, HigherIsBetter, BootstrapConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := PairedBootstrapAUC(y, p, p, BootstrapConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]PairedDiff{"mean": mean, "AUC": auc, "weighted AUC": fast} {
		for _, v := range []float64{d.Diff, d.Lo, d.Hi, d.PBetter} {
			if !scalar.EqualWithinAbs(v, 0, bootExactTol) {
				t.Errorf("%s: Diff, Lo, Hi, PBetter = %v, %v, %v, %v, want all 0", name, d.Diff, d.Lo, d.Hi, d.PBetter)
				break
			}
		}
		if d.Significant() {
			t.Errorf("%s: Significant() = true for identical models", name)
		}
	}
}

// TestPairedBootstrapNormalApprox checks the percentile interval of a mean difference
// against the closed-form normal interval dbar ± z·s/√n (s the plug-in standard
// deviation of the row differences, which is what the bootstrap resamples), and PBetter
// against Φ(-dbar/se) for a loss.
func TestPairedBootstrapNormalApprox(t *testing.T) {
	t.Parallel()
	const n = 20000
	rng := rand.New(rand.NewPCG(3, 3))
	a := make([]float64, n)
	b := make([]float64, n)
	d := make([]float64, n)
	for i := range n {
		a[i] = 1 + rng.NormFloat64()
		b[i] = a[i] - 0.01 + rng.NormFloat64()
		d[i] = b[i] - a[i]
	}
	got, err := PairedBootstrapMean(a, b, LowerIsBetter, BootstrapConfig{Resamples: 4000, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	mean, sd := stat.PopMeanStdDev(d, nil)
	se := sd / math.Sqrt(n)
	z := distuv.UnitNormal.Quantile(0.975)
	if !scalar.EqualWithinAbs(got.Diff, mean, 1e-12) {
		t.Errorf("Diff = %v, want %v", got.Diff, mean)
	}
	if math.Abs(got.Lo-(mean-z*se)) > bootNormalTol*se || math.Abs(got.Hi-(mean+z*se)) > bootNormalTol*se {
		t.Errorf("interval [%v, %v], want [%v, %v] within %v SE (SE %v)", got.Lo, got.Hi, mean-z*se, mean+z*se, bootNormalTol, se)
	}
	if want := distuv.UnitNormal.CDF(-mean / se); math.Abs(got.PBetter-want) > bootPBetterTol {
		t.Errorf("PBetter = %v, want %v", got.PBetter, want)
	}
}

// TestPairedBootstrapPathsAgree checks that the mean path and the general path draw the
// same rows: Brier over predictions against per-row squared errors.
func TestPairedBootstrapPathsAgree(t *testing.T) {
	t.Parallel()
	y, pA, pB := classifierPair(300, rand.New(rand.NewPCG(4, 4)))
	sq := func(p []float64) []float64 {
		l := make([]float64, len(p))
		for i := range p {
			l[i] = (p[i] - y[i]) * (p[i] - y[i])
		}
		return l
	}
	cfg := BootstrapConfig{Resamples: 200, Level: 0.9, Seed: 5}
	gen, err := PairedBootstrap(y, pA, pB, Brier, LowerIsBetter, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mean, err := PairedBootstrapMean(sq(pA), sq(pB), LowerIsBetter, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]float64{{gen.A, mean.A}, {gen.B, mean.B}, {gen.Diff, mean.Diff}, {gen.Lo, mean.Lo}, {gen.Hi, mean.Hi}, {gen.PBetter, mean.PBetter}}
	for k, p := range pairs {
		if !scalar.EqualWithinAbsOrRel(p[0], p[1], bootPathTol, bootPathTol) {
			t.Errorf("field %d: general %v, mean %v", k, p[0], p[1])
		}
	}
	if gen.Level != 0.9 || gen.Resamples != 200 {
		t.Errorf("Level, Resamples = %v, %d, want 0.9, 200", gen.Level, gen.Resamples)
	}
}

// TestPairedBootstrapAUC checks the weighted AUC path against ROCAUC on the expanded
// resamples (the general path), with ties in the probabilities.
func TestPairedBootstrapAUC(t *testing.T) {
	t.Parallel()
	y, pA, pB := classifierPair(300, rand.New(rand.NewPCG(6, 6)))
	for i := range pA {
		pA[i] = math.Round(pA[i]*20) / 20 // ties within and across classes
	}
	cfg := BootstrapConfig{Resamples: 300, Seed: 9}
	fast, err := PairedBootstrapAUC(y, pA, pB, cfg)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := PairedBootstrap(y, pA, pB, ROCAUC, HigherIsBetter, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]float64{{fast.A, slow.A}, {fast.B, slow.B}, {fast.Diff, slow.Diff}, {fast.Lo, slow.Lo}, {fast.Hi, slow.Hi}, {fast.PBetter, slow.PBetter}}
	for k, p := range pairs {
		if !scalar.EqualWithinAbsOrRel(p[0], p[1], bootPathTol, bootPathTol) {
			t.Errorf("field %d: PairedBootstrapAUC %v, PairedBootstrap(ROCAUC) %v", k, p[0], p[1])
		}
	}
	if _, err := PairedBootstrapAUC([]float64{0, 2}, []float64{.1, .2}, []float64{.1, .2}, cfg); !errors.Is(err, ErrLabel) {
		t.Errorf("PairedBootstrapAUC(label 2): err = %v, want ErrLabel", err)
	}
	if _, err := PairedBootstrapAUC([]float64{0, 1}, []float64{.1, .2}, []float64{.1, 1.2}, cfg); !errors.Is(err, ErrProbability) {
		t.Errorf("PairedBootstrapAUC(p 1.2): err = %v, want ErrProbability", err)
	}
	if _, err := PairedBootstrapAUC([]float64{0, 1}, []float64{.1, .2}, []float64{.2, .1}, cfg); !errors.Is(err, ErrNotFinite) {
		t.Errorf("PairedBootstrapAUC(one-class resamples): err = %v, want ErrNotFinite", err)
	}
}

func TestPairedBootstrapDeterministic(t *testing.T) {
	t.Parallel()
	y, pA, pB := classifierPair(400, rand.New(rand.NewPCG(5, 5)))
	run := func(seed uint64) PairedDiff {
		d, err := PairedBootstrap(y, pA, pB, ROCAUC, HigherIsBetter, BootstrapConfig{Resamples: 100, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if a, b := run(1), run(1); a != b {
		t.Errorf("same seed: %+v != %+v", a, b)
	}
	if a, b := run(1), run(2); a.Lo == b.Lo && a.Hi == b.Hi {
		t.Errorf("seeds 1 and 2 give the same interval [%v, %v]", a.Lo, a.Hi)
	}
}

func TestPairedBootstrapErrors(t *testing.T) {
	t.Parallel()
	oneClass := []float64{1, 1, 1}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"mean no rows", func() error { _, err := PairedBootstrapMean(nil, nil, LowerIsBetter, BootstrapConfig{}); return err }, ErrNoRows},
		{"func no rows", func() error {
			_, err := PairedBootstrap(nil, nil, nil, Brier, LowerIsBetter, BootstrapConfig{})
			return err
		}, ErrNoRows},
		{"NaN loss A", func() error {
			_, err := PairedBootstrapMean([]float64{1, math.NaN()}, []float64{1, 1}, LowerIsBetter, BootstrapConfig{})
			return err
		}, ErrNotFinite},
		{"Inf loss B", func() error {
			_, err := PairedBootstrapMean([]float64{1, 1}, []float64{math.Inf(1), 1}, LowerIsBetter, BootstrapConfig{})
			return err
		}, ErrNotFinite},
		{"AUC of one class", func() error {
			_, err := PairedBootstrap(oneClass, []float64{.1, .2, .3}, []float64{.3, .2, .1}, ROCAUC, HigherIsBetter, BootstrapConfig{})
			return err
		}, ErrNotFinite},
		{"AUC of one class in a resample", func() error {
			_, err := PairedBootstrap([]float64{0, 1}, []float64{.1, .2}, []float64{.2, .1}, ROCAUC, HigherIsBetter, BootstrapConfig{})
			return err
		}, ErrNotFinite},
		{"level 1", func() error {
			_, err := PairedBootstrapMean([]float64{1}, []float64{1}, LowerIsBetter, BootstrapConfig{Level: 1})
			return err
		}, ErrBootstrapConfig},
		{"negative resamples", func() error {
			_, err := PairedBootstrapMean([]float64{1}, []float64{1}, LowerIsBetter, BootstrapConfig{Resamples: -1})
			return err
		}, ErrBootstrapConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestPairedBootstrapPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func()
	}{
		{"mean lengths", func() { PairedBootstrapMean([]float64{1}, nil, LowerIsBetter, BootstrapConfig{}) }},
		{"lengths", func() { PairedBootstrap([]float64{1}, []float64{1}, nil, Brier, LowerIsBetter, BootstrapConfig{}) }},
		{"direction", func() { PairedBootstrapMean([]float64{1}, []float64{1}, Direction(2), BootstrapConfig{}) }},
		{"negative n", func() {
			PairedBootstrapFunc(-1, func([]int) (float64, float64) { return 0, 0 }, LowerIsBetter, BootstrapConfig{})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tc.name)
				}
			}()
			tc.run()
		})
	}
}

func TestDirectionString(t *testing.T) {
	t.Parallel()
	for d, want := range map[Direction]string{LowerIsBetter: "lower", HigherIsBetter: "higher", Direction(5): "Direction(5)"} {
		if got := d.String(); got != want {
			t.Errorf("Direction(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}

func BenchmarkPairedBootstrapMean(b *testing.B) {
	const n = 10000
	rng := rand.New(rand.NewPCG(1, 1))
	la := make([]float64, n)
	lb := make([]float64, n)
	for i := range n {
		la[i], lb[i] = rng.Float64(), rng.Float64()
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PairedBootstrapMean(la, lb, LowerIsBetter, BootstrapConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPairedBootstrapAUC(b *testing.B) {
	y, pA, pB := classifierPair(10000, rand.New(rand.NewPCG(1, 1)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PairedBootstrap(y, pA, pB, ROCAUC, HigherIsBetter, BootstrapConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPairedBootstrapAUCWeighted(b *testing.B) {
	y, pA, pB := classifierPair(10000, rand.New(rand.NewPCG(1, 1)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PairedBootstrapAUC(y, pA, pB, BootstrapConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}
