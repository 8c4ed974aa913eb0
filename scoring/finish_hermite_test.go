package scoring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// TestHermiteRule checks the rules against the moments of the standard normal: the
// n-point rule integrates z^k exactly for k <= 2n − 1 (E[z^2j] = (2j − 1)!!, odd
// moments 0) to 1e-13 of Σ w|z|^k (rounding), and E[cos z] = exp(−1/2) to 1e-12.
func TestHermiteRule(t *testing.T) {
	t.Parallel()
	for _, n := range []int{5, 21, 32, 64} {
		z, w := hermiteRule(n)
		for k := 0; k <= min(2*n-1, 24); k++ {
			var got, scale float64
			for i := range z {
				got += w[i] * math.Pow(z[i], float64(k))
				scale += w[i] * math.Abs(math.Pow(z[i], float64(k)))
			}
			want := 0.0
			if k%2 == 0 {
				want = 1
				for j := k - 1; j > 1; j -= 2 {
					want *= float64(j)
				}
			}
			if math.Abs(got-want) > 1e-13*scale {
				t.Errorf("%d-point rule: E[z^%d] = %v, want %v", n, k, got, want)
			}
		}
		if n >= 21 {
			var got float64
			for i := range z {
				got += w[i] * math.Cos(z[i])
			}
			if want := math.Exp(-0.5); !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
				t.Errorf("%d-point rule: E[cos z] = %v, want %v", n, got, want)
			}
		}
		for i := 1; i < n; i++ {
			if !(z[i] > z[i-1]) || w[i] <= 0 {
				t.Fatalf("%d-point rule: nodes not increasing or weight not positive at %d", n, i)
			}
		}
	}
	// The trimmed tables lose less than 1e-17 of the mass: E[1] and E[z²] stay 1.
	for _, r := range []hermiteTable{hermite20, hermite, hermite64} {
		var m0, m2 float64
		for i, z := range r.z {
			m0 += r.w[i]
			m2 += r.w[i] * z * z
		}
		if math.Abs(m0-1) > 1e-14 || math.Abs(m2-1) > 1e-14 {
			t.Errorf("trimmed %d-node table: E[1] = %v, E[z²] = %v", len(r.z), m0, m2)
		}
	}
}

// TestFinishBeforeFixedGrid compares FinishBeforeProbOf (fixed rule, closed form or
// adaptive fallback) with a brute-force integral (denseReference) on a grid of
// log-sigmas from 0.001 to 3 (sigma ratios up to 3000), arrival gaps d from −3 to +3
// medians of the ahead build and every family pairing but Normal–Normal: within 1e-7
// absolute. (The adaptive rule alone misses by up to 5e-5 at the extreme ratios: a step
// of width s_small/s_large in z can fall between its nodes.)
func TestFinishBeforeFixedGrid(t *testing.T) {
	t.Parallel()
	ss := []float64{1e-3, 0.03, 0.3, 1, 3}
	ds := []float64{-3, -1, -0.3, -0.01, 0, 0.3, 1, 3}
	fams := [][2]BuildFamily{{BuildLogNormal, BuildLogNormal}, {BuildLogNormal, BuildNormal}, {BuildNormal, BuildLogNormal}}
	for _, f := range fams {
		t.Run(fmt.Sprintf("%v-%v", f[0], f[1]), func(t *testing.T) {
			t.Parallel()
			var worst float64
			for _, sx := range ss {
				for _, sy := range ss {
					for _, dr := range ds {
						for _, medY := range []float64{300, 1200} {
							x, y := BuildTime{Family: f[0]}, BuildTime{Family: f[1]}
							x.Mean, x.StdDev = LogNormalMoments(math.Log(900), sx)
							y.Mean, y.StdDev = LogNormalMoments(math.Log(medY), sy)
							// A Normal with the moments of a heavy LogNormal is no build time.
							x.StdDev = min(x.StdDev, x.Mean/2)
							y.StdDev = min(y.StdDev, y.Mean/2)
							d := dr * 900
							got := FinishBeforeProbOf(d, x, 0, y)
							want := denseReference(d, x, y)
							worst = max(worst, math.Abs(got-want))
							if !(math.Abs(got-want) <= 1e-7) {
								t.Errorf("%v ahead (%.4g, %.4g), %v behind (%.4g, %.4g), d = %v: %.10f, reference %.10f",
									x.Family, x.Mean, x.StdDev, y.Family, y.Mean, y.StdDev, d, got, want)
							}
						}
					}
				}
			}
			t.Logf("largest difference from the reference %.2g", worst)
		})
	}
}

// TestFinishBeforeFixedNoFallback: on the pairs a queue meets (two LogNormals, log-sigmas
// 0.1 to 0.8 within a factor 2 of each other, the change behind arriving up to two
// median build times later) the 32-point rule is accepted without the adaptive
// fallback, and agrees with the adaptive rule within 1e-8.
func TestFinishBeforeFixedNoFallback(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		sx := 0.1 + 0.7*rng.Float64()
		sy := sx * math.Exp2(2*rng.Float64()-1)
		x, y := BuildTime{Family: BuildLogNormal}, BuildTime{Family: BuildLogNormal}
		x.Mean, x.StdDev = LogNormalMoments(math.Log(300+3000*rng.Float64()), sx)
		y.Mean, y.StdDev = LogNormalMoments(math.Log(300+3000*rng.Float64()), sy)
		d := -2 * x.Mean * rng.Float64()
		xs, ys := prepareSide(x), prepareSide(y)
		// Two LogNormals with d < 0: y is the outer build time.
		var p, doubt float64
		for _, r := range hermites {
			if p, doubt = r.finishBefore(d, &xs, &ys, false); doubt <= fixedSure {
				break
			}
		}
		if doubt > fixedSure {
			t.Errorf("(%.4g, %.4g) ahead, (%.4g, %.4g) behind, d = %.4g: fixed rules refused (doubt %.3g)",
				x.Mean, x.StdDev, y.Mean, y.StdDev, d, doubt)
		}
		if want := finishBeforeIntegral(d, x, y); math.Abs(p-want) > 1e-8 {
			t.Errorf("(%.4g, %.4g) ahead, (%.4g, %.4g) behind, d = %.4g: fixed %.12f, adaptive %.12f",
				x.Mean, x.StdDev, y.Mean, y.StdDev, d, p, want)
		}
	}
}

// TestFinishBeforeLogNormalClosedForm: with equal arrivals two LogNormals compare as
// their logs do, Phi((m_x − m_y)/sqrt(s_x² + s_y²)); the adaptive rule agrees within 1e-9.
func TestFinishBeforeLogNormalClosedForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mx, sx, my, sy float64 }{
		{6, 0.3, 6.2, 0.3}, {6, 0.001, 7, 2.5}, {7, 3, 6, 0.01}, {5, 1, 5, 1},
	} {
		x, y := BuildTime{Family: BuildLogNormal}, BuildTime{Family: BuildLogNormal}
		x.Mean, x.StdDev = LogNormalMoments(tc.mx, tc.sx)
		y.Mean, y.StdDev = LogNormalMoments(tc.my, tc.sy)
		got := FinishBeforeProbOf(0, x, 0, y)
		want := finishBeforeIntegral(0, x, y)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%+v: closed form %.12f, adaptive %.12f", tc, got, want)
		}
	}
}

// finishPairs returns n pairs of log-normal build times and arrival gaps as a queue
// meets them: means of 5 to 60 minutes, coefficients of variation 0.1 to 0.6 (each
// drawn, or one for both with equalCV, as in a synthetic world), the change behind
// arriving 0 to 30 minutes later.
func finishPairs(n int, equalCV bool) (d []float64, x, y []BuildTime) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range n {
		mx, my := 300+3300*rng.Float64(), 300+3300*rng.Float64()
		cx, cy := 0.1+0.5*rng.Float64(), 0.1+0.5*rng.Float64()
		if equalCV {
			cy = cx
		}
		x = append(x, BuildTime{BuildLogNormal, mx, mx * cx})
		y = append(y, BuildTime{BuildLogNormal, my, my * cy})
		d = append(d, -1800*rng.Float64())
	}
	return d, x, y
}

var benchProb float64

// BenchmarkFinishBeforeLogNormal measures one pair of log-normal build times: "adaptive"
// is the Gauss–Kronrod integral, "fixed" FinishBeforeProbOf, on pairs whose
// coefficients of variation are drawn apart or equal.
func BenchmarkFinishBeforeLogNormal(b *testing.B) {
	for _, equal := range []bool{false, true} {
		d, x, y := finishPairs(256, equal)
		for _, m := range []struct {
			name string
			f    func(d float64, x, y BuildTime) float64
		}{
			{"adaptive", finishBeforeIntegral},
			{"fixed", func(d float64, x, y BuildTime) float64 { return FinishBeforeProbOf(d, x, 0, y) }},
		} {
			b.Run(fmt.Sprintf("%s/equal-cv=%v", m.name, equal), func(b *testing.B) {
				defer lockThread()()
				cpu0 := threadCPUTime()
				i := 0
				for b.Loop() {
					benchProb = m.f(d[i&255], x[i&255], y[i&255])
					i++
				}
				// The one-core cost, as in benchmarkSpeculate.
				b.ReportMetric(float64(threadCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkSpeculateLogNormal is BenchmarkSpeculate's 500-change queues with every
// change's build time log-normal (BuildLogNormal) instead of Normal.
func BenchmarkSpeculateLogNormal(b *testing.B) {
	for _, p := range []Policy{PolicySQ2024, PolicyExpected} {
		for _, d := range []float64{0.05, 0.3} {
			b.Run(fmt.Sprintf("%v/n=500/density=%v", p, d), func(b *testing.B) {
				benchmarkSpeculateFamily(b, 500, d, p, BuildLogNormal)
			})
		}
	}
}

// denseReference is denseFinishBefore with 2,000 panels over the build time of the
// smaller spread (log-sigma, or CV for a Normal), where the other's CDF moves slowest.
func denseReference(d float64, x, y BuildTime) float64 {
	spread := func(b BuildTime) float64 {
		if b.Family == BuildLogNormal {
			_, s := LogNormalParams(b.Mean, b.StdDev)
			return s
		}
		return b.StdDev / b.Mean
	}
	return denseFinishBefore(d, x, y, spread(x) <= spread(y), 2000)
}

// denseFinishBefore is a brute-force P(T_y < T_x + d): the 15-point Kronrod rule on
// panels equal panels over z ∈ [−9, 9] of the outer build time (x when outerX).
func denseFinishBefore(d float64, x, y BuildTime, outerX bool, panels int) float64 {
	xs, ys := prepareSide(x), prepareSide(y)
	f := func(z float64) float64 {
		if outerX {
			return stdNormalPDF(z) * stdNormalCDF(ys.score(xs.quantile(z)+d))
		}
		return stdNormalPDF(z) * stdNormalCDF(-xs.score(ys.quantile(z)-d))
	}
	var sum float64
	h := 18 / float64(panels) / 2
	for k := range panels {
		c := -9 + (2*float64(k)+1)*h
		s := gkKronrod[0] * f(c)
		for i := 1; i < 8; i++ {
			s += gkKronrod[i] * (f(c-h*gkNodes[i]) + f(c+h*gkNodes[i]))
		}
		sum += s * h
	}
	return sum
}

// TestFinishBeforeBelow checks the split bounds on random pairs of every family pairing
// against the computed probability: lo <= P <= hi (to 1e-12), and the threshold test
// agrees with P < p0 for thresholds 0.05, 0.5 and 0.9 (ties within 1e-9 excepted).
func TestFinishBeforeBelow(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 42))
	settled := 0
	for k := range 3000 {
		fams := [][2]BuildFamily{{BuildLogNormal, BuildLogNormal}, {BuildLogNormal, BuildNormal}, {BuildNormal, BuildLogNormal}}[k%3]
		mx, my := 300+3000*rng.Float64(), 300+3000*rng.Float64()
		x := BuildTime{fams[0], mx, mx * (0.05 + 0.5*rng.Float64())}
		y := BuildTime{fams[1], my, my * (0.05 + 0.5*rng.Float64())}
		d := (2*rng.Float64() - 1.5) * mx
		want := FinishBeforeProbOf(d, x, 0, y)
		xs, ys := prepareSide(x), prepareSide(y)
		for _, p0 := range []float64{0.05, 0.5, 0.9} {
			below, p, lo, hi := finishBeforeBelowSides(d, &xs, &ys, x, y, p0)
			if lo > want+1e-12 || hi < want-1e-12 {
				t.Fatalf("%+v ahead, %+v behind, d = %v: bounds [%v, %v] miss P = %v", x, y, d, lo, hi, want)
			}
			if math.IsNaN(p) {
				settled++
			} else if math.Abs(p-want) > 1e-15 {
				t.Fatalf("%+v ahead, %+v behind, d = %v: P = %v, FinishBeforeProbOf %v", x, y, d, p, want)
			}
			if math.Abs(want-p0) > 1e-9 && below != (want < p0) {
				t.Fatalf("%+v ahead, %+v behind, d = %v: below %v = %v, P = %v", x, y, d, p0, below, want)
			}
		}
	}
	if settled == 0 {
		t.Fatal("the bounds settled no test")
	}
	t.Logf("%d of 9000 threshold tests settled by the bounds", settled)
}
