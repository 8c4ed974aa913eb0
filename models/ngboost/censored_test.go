package ngboost

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

func TestCensoredGradFiniteDifferences(t *testing.T) {
	t.Parallel()
	for _, f := range allFamilies {
		for _, pt := range testPoints {
			p := [2]float64{pt.loc, pt.ls}
			got := GradCensored(f, p, pt.y)
			want := fd.Gradient(nil, func(q []float64) float64 {
				return ScoreCensored(f, [2]float64{q[0], q[1]}, pt.y)
			}, p[:], &fd.Settings{Formula: fd.Central, Step: fdStep})
			if !floats.EqualApprox(got[:], want, fdTol) {
				t.Errorf("GradCensored(%v, %v, %v) = %v, finite differences %v", f, p, pt.y, got, want)
			}
		}
	}
}

// TestLogSurvivalTail checks log Q(z) and the hazard across the switch to the
// asymptotic series at millsAsymptotic: at the switch both forms are computable and must
// agree, and far beyond it log Q must follow -z²/2 - log(z√(2π)).
func TestLogSurvivalTail(t *testing.T) {
	t.Parallel()
	// seriesTol: the series to z⁻⁸ is within 2e-12 relative at z = 30 (see
	// millsAsymptotic); Erfc there is good to a few ulps.
	const seriesTol = 1e-11
	z := float64(millsAsymptotic)
	direct := math.Log(0.5 * math.Erfc(z/math.Sqrt2))
	if got := logStdNormalSF(z); !scalar.EqualWithinAbsOrRel(got, direct, 0, seriesTol) {
		t.Errorf("logStdNormalSF(%v) = %v, Erfc gives %v", z, got, direct)
	}
	hz := stdNormalPDF(z) / (0.5 * math.Erfc(z/math.Sqrt2))
	if got := stdNormalHazard(z); !scalar.EqualWithinAbsOrRel(got, hz, 0, seriesTol) {
		t.Errorf("stdNormalHazard(%v) = %v, Erfc gives %v", z, got, hz)
	}
	for _, z := range []float64{40, 100, 1e3} {
		lead := -0.5*z*z - math.Log(z) - logSqrt2Pi
		// log Q(z) - lead = log(1 - 1/z² + ...) ≈ -1/z²: within 2/z² of it, with room for
		// the rounding of a lead of -z²/2.
		if got := logStdNormalSF(z); !finite(got) || math.Abs(got-lead) > 2/(z*z) || !(got < lead) {
			t.Errorf("logStdNormalSF(%v) = %v, want below %v by at most 2/z²", z, got, lead)
		}
		if got := stdNormalHazard(z); !scalar.EqualWithinAbsOrRel(got, z, 0, 2/(z*z)) {
			t.Errorf("stdNormalHazard(%v) = %v, want about z", z, got)
		}
	}
}

// TestCensoredFisherInformation checks the censored score against the information
// identity, and the metric the natural gradient uses for it. For an observation censored
// at a fixed c on the working target (T itself when T <= c, the event T > c otherwise),
// the Fisher information is E[∇s ∇sᵀ] = E[∇²s] over T drawn from the distribution; both
// are computed by quadrature below c plus the mass Q at c (the Hessian by finite
// differences of the gradients) and must agree. The uncensored information diag(1/σ²,
// 2), which fitting uses for every row, must exceed it (a positive semi-definite
// difference): censoring only loses information.
func TestCensoredFisherInformation(t *testing.T) {
	t.Parallel()
	for _, f := range allFamilies {
		for _, pt := range testPoints {
			p := [2]float64{pt.loc, pt.ls}
			sigma := math.Exp(pt.ls)
			y := func(tv float64) float64 { return fromWorking(f, tv) }
			for _, k := range []float64{-1, 0, 1.5} {
				c := pt.loc + k*sigma
				q := 0.5 * math.Erfc(k/math.Sqrt2)
				below := func(g func(tv float64) float64) float64 {
					return simpson(func(tv float64) float64 {
						return g(tv) * stdNormalPDF((tv-pt.loc)/sigma) / sigma
					}, pt.loc-quadSpan*sigma, c, quadN)
				}
				var outer, hess [2][2]float64
				for j := range 2 {
					for l := range 2 {
						gc := GradCensored(f, p, y(c))
						outer[j][l] = below(func(tv float64) float64 {
							g := LogScore.Grad(f, p, y(tv))
							return g[j] * g[l]
						}) + q*gc[j]*gc[l]
						d2 := func(grad func(p [2]float64) [2]float64) float64 {
							hi, lo := p, p
							hi[l] += fdStep
							lo[l] -= fdStep
							return (grad(hi)[j] - grad(lo)[j]) / (2 * fdStep)
						}
						hess[j][l] = below(func(tv float64) float64 {
							return d2(func(p [2]float64) [2]float64 { return LogScore.Grad(f, p, y(tv)) })
						}) + q*d2(func(p [2]float64) [2]float64 { return GradCensored(f, p, y(c)) })
						if !scalar.EqualWithinAbsOrRel(outer[j][l], hess[j][l], fdTol, fdTol) {
							t.Errorf("%v at %v censored at loc%+vσ: E[∇s∇sᵀ][%d][%d] = %v, E[∇²s] = %v", f, p, k, j, l, outer[j][l], hess[j][l])
						}
					}
				}
				m := LogScore.Metric(f, p)
				d00, d11, d01 := m[0][0]-outer[0][0], m[1][1]-outer[1][1], m[0][1]-outer[0][1]
				if d00 < -quadTol || d11 < -quadTol || d00*d11-d01*d01 < -quadTol {
					t.Errorf("%v at %v censored at loc%+vσ: metric %v minus the censored information %v is not positive semi-definite", f, p, k, m, outer)
				}
			}
		}
	}
}

// TestFitMarginalCensored checks the censored maximum-likelihood fit by its defining
// property, a zero weighted score gradient summed over uncensored and censored rows,
// and the errors of data it cannot fit.
func TestFitMarginalCensored(t *testing.T) {
	t.Parallel()
	// gradTol: EM stops when a step moves μ and σ by less than 1e-10·σ; the gradient
	// is then of that order per row.
	const gradTol = 1e-7
	y := []float64{3, 7, 1.5, 9, 4.25, 6, 8, 2}
	cens := []bool{false, true, false, false, true, false, true, false}
	w := []float64{1, 2, 0.5, 1, 3, 1, 1, 2}
	for _, f := range allFamilies {
		for _, wt := range [][]float64{nil, w} {
			p, err := FitMarginalCensored(f, y, wt, cens)
			if err != nil {
				t.Fatalf("FitMarginalCensored(%v) = %v", f, err)
			}
			var g [2]float64
			for i, yi := range y {
				gi := LogScore.Grad(f, p, yi)
				if cens[i] {
					gi = GradCensored(f, p, yi)
				}
				g[0] += weightOf(wt, i) * gi[0]
				g[1] += weightOf(wt, i) * gi[1]
			}
			if math.Abs(g[0]) > gradTol || math.Abs(g[1]) > gradTol {
				t.Errorf("FitMarginalCensored(%v, weights %v) = %v: score gradient there %v, want 0", f, wt != nil, p, g)
			}
			drop, _ := FitMarginal(f, []float64{3, 1.5, 9, 6, 2}, nil)
			if wt == nil && !(p[0] > drop[0]) {
				t.Errorf("FitMarginalCensored(%v) loc %v, want above %v of the uncensored rows alone (the censored ones are long)", f, p[0], drop[0])
			}
		}
	}
	errCases := []struct {
		name string
		f    Family
		y    []float64
		cens []bool
		want error
	}{
		{"all censored", LogNormal, []float64{2, 3}, []bool{true, true}, ErrInvalidData},
		{"nan bound", Normal, []float64{2, math.NaN(), 3}, []bool{false, true, false}, ErrInvalidData},
		{"gamma", Gamma, []float64{2, 3, 4}, []bool{false, true, false}, ErrInvalidConfig},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FitMarginalCensored(tc.f, tc.y, nil, tc.cens); !errors.Is(err, tc.want) {
				t.Errorf("FitMarginalCensored(%s) = %v, want %v", tc.name, err, tc.want)
			}
		})
	}
}

// censoredSynth draws n rows of synth's LogNormal world and censors each at an
// independent abort time, log c = loc(x) + 0.1 + 0.3·N(0, 1): a build is aborted (its
// duration recorded as the time it ran, and marked censored) when the abort comes
// first. Longer builds are aborted more often, so the uncensored rows are biased short.
func censoredSynth(rng *rand.Rand, n int) (x *mat.Dense, obs []float64, cens []bool, truth []Dist) {
	x, y, truth, _ := synth(rng, n, LogNormal)
	obs = make([]float64, n)
	cens = make([]bool, n)
	for i, yi := range y {
		c := math.Exp(truth[i].Loc + 0.1 + 0.3*rng.NormFloat64())
		obs[i], cens[i] = yi, c < yi
		if cens[i] {
			obs[i] = c
		}
	}
	return x, obs, cens, truth
}

// TestFitCensoredRemovesDropBias fits the LogNormal on a world with known distributions
// whose long builds are often aborted (censoredSynth), once dropping the aborted rows and
// once with them as censored rows, and compares both with the truth on fresh rows: the
// mean error of the predicted log-scale location (the bias) and the NLL of uncensored
// test durations. Dropping biases the location down; the censored fit must remove that.
func TestFitCensoredRemovesDropBias(t *testing.T) {
	t.Parallel()
	const (
		// maxBias bounds the censored fit's mean location error, in log seconds; the
		// dropped fit's must exceed minDropBias. Measured: -0.0008 censored, -0.110
		// dropped, with 39% of the rows aborted, the longest ones; test NLL 0.264
		// against 0.425, Bayes limit 0.229.
		maxBias     = 0.02
		minDropBias = 0.05
	)
	rng := rand.New(rand.NewPCG(1, 1))
	x, obs, cens, _ := censoredSynth(rng, 6000)
	xt, yt, truth, bayes := synth(rng, 4000, LogNormal)
	cfg := Config{Dist: LogNormal, NEstimators: 2000, LearningRate: 0.05, EarlyStoppingRounds: 50, ValidationFraction: 0.2, Refit: true}
	var nCens int
	var keep []int
	for i, c := range cens {
		if c {
			nCens++
		} else {
			keep = append(keep, i)
		}
	}
	xd := mat.NewDense(len(keep), 3, nil)
	yd := make([]float64, len(keep))
	for k, i := range keep {
		xd.SetRow(k, x.RawRowView(i))
		yd[k] = obs[i]
	}
	ctx := context.Background()
	mc, err := FitCensored(ctx, x, obs, nil, cens, cfg)
	if err != nil {
		t.Fatal(err)
	}
	md, err := Fit(ctx, xd, yd, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	bias := func(m *Model) float64 {
		var s float64
		for i, d := range m.PredictDist(xt) {
			s += d.Loc - truth[i].Loc
		}
		return s / float64(len(truth))
	}
	bc, bd := bias(mc), bias(md)
	nc, nd := meanNLL(mc.PredictDist(xt), yt), meanNLL(md.PredictDist(xt), yt)
	t.Logf("%d of %d rows censored; location bias: censored fit %+.4f, dropped %+.4f; test NLL censored %.4f, dropped %.4f, Bayes limit %.4f",
		nCens, len(obs), bc, bd, nc, nd, bayes)
	if math.Abs(bc) > maxBias {
		t.Errorf("censored fit: mean location error %+.4f, want within ±%v", bc, maxBias)
	}
	if !(bd < -minDropBias) {
		t.Errorf("dropped fit: mean location error %+.4f, want below -%v (the bias censoring removes)", bd, minDropBias)
	}
	if !(nc < nd) {
		t.Errorf("test NLL: censored fit %.4f, dropped %.4f; want the censored fit's lower", nc, nd)
	}
}

func TestFitCensoredErrors(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(4, 1, []float64{1, 2, 3, 4})
	y := []float64{1, 2, 3, 4}
	cens := []bool{false, true, false, false}
	cases := []struct {
		name string
		cens []bool
		cfg  Config
		want error
	}{
		{"crps", cens, Config{Dist: LogNormal, Score: CRPScore, NEstimators: 2}, ErrInvalidConfig},
		{"exponential", cens, Config{Dist: Exponential, NEstimators: 2}, ErrInvalidConfig},
		{"length", cens[:3], Config{Dist: LogNormal, NEstimators: 2}, ErrInvalidData},
		{"all censored", []bool{true, true, true, true}, Config{Dist: LogNormal, NEstimators: 2}, ErrInvalidData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FitCensored(context.Background(), x, y, nil, tc.cens, tc.cfg); !errors.Is(err, tc.want) {
				t.Errorf("FitCensored(%s) = %v, want %v", tc.name, err, tc.want)
			}
		})
	}
}
