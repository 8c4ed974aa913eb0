package scoring

import "math"

// The fixed rules of finishBeforeFixed, tried in turn: 20-, 32- and 64-point
// Gauss–Hermite rules, each for integrands the previous one cannot resolve.
var (
	hermite20 = newHermiteTable(20, 1.1)
	hermite   = newHermiteTable(32, 1.6)
	hermite64 = newHermiteTable(64, 2.4)
	hermites  = [...]*hermiteTable{&hermite20, &hermite, &hermite64}
)

// hermiteTable is a Gauss–Hermite rule for the standard-normal weight with φ at its
// nodes, in increasing order of the nodes, and the largest slope of an integrand's
// inner score that it resolves.
//
// The slopes come from E[Phi(a + S·z)] = Phi(a/sqrt(1 + S²)): for every a, the 20-point
// rule is within 2e-9 of it for S <= 1.2 (2e-11 at S = 1), the 32-point rule within
// 1e-10 for S <= 1.5 (1.5e-7 at S = 2, 1e-4 at S = 3), the 64-point rule within 1e-9 for
// S <= 2.5 (1e-7 at S = 3).
type hermiteTable struct {
	z, w, phi []float64
	slope     float64
}

// newHermiteTable returns the n-point rule without the nodes whose weights are below
// 1e-18 (4 of 32, 20 of 64): together they weigh less than 1e-17.
func newHermiteTable(n int, slope float64) hermiteTable {
	z, w := hermiteRule(n)
	r := hermiteTable{slope: slope}
	for i, zi := range z {
		if w[i] >= 1e-18 {
			r.z = append(r.z, zi)
			r.w = append(r.w, w[i])
			r.phi = append(r.phi, stdNormalPDF(zi))
		}
	}
	return r
}

// hermiteRule returns the n nodes and weights of Gauss–Hermite quadrature for the
// standard-normal weight: E[g(Z)] ≈ Σ w_i g(z_i), exact for polynomials of degree up to
// 2n − 1. The nodes are roots of the physicists' Hermite polynomial H_n, found by
// Newton's method from the starting points of Numerical Recipes' gauher, and scaled by
// √2 (the weights by 1/√π).
func hermiteRule(n int) (z, w []float64) {
	x := make([]float64, n)
	wt := make([]float64, n)
	const pim4 = 0.7511255444649425 // π^(−1/4)
	m := (n + 1) / 2
	var r float64
	for i := range m {
		switch i {
		case 0:
			r = math.Sqrt(float64(2*n+1)) - 1.85575*math.Pow(float64(2*n+1), -0.16667)
		case 1:
			r -= 1.14 * math.Pow(float64(n), 0.426) / r
		case 2:
			r = 1.86*r - 0.86*x[0]
		case 3:
			r = 1.91*r - 0.91*x[1]
		default:
			r = 2*r - x[i-2]
		}
		var pp float64
		for range 100 {
			p1, p2 := pim4, 0.0
			for j := 1; j <= n; j++ {
				p3 := p2
				p2 = p1
				p1 = r*math.Sqrt(2/float64(j))*p2 - math.Sqrt(float64(j-1)/float64(j))*p3
			}
			pp = math.Sqrt(2*float64(n)) * p2
			r1 := r
			r = r1 - p1/pp
			if math.Abs(r-r1) <= 1e-15*math.Max(1, math.Abs(r)) {
				break
			}
		}
		x[i], x[n-1-i] = r, -r
		wt[i] = 2 / (pp * pp)
		wt[n-1-i] = wt[i]
	}
	z = make([]float64, n)
	w = make([]float64, n)
	for i := range n {
		z[i] = math.Sqrt2 * x[n-1-i]
		w[i] = wt[n-1-i] / math.Sqrt(math.Pi)
	}
	return z, w
}

// finishSide is one build time prepared for the fixed rule: its family, its moments and,
// for a LogNormal, its log-scale parameters, computed once per pair.
type finishSide struct {
	logNormal bool
	mean, sd  float64 // Normal
	m, s      float64 // LogNormal
}

// prepareSide returns b prepared; b.StdDev must be positive.
func prepareSide(b BuildTime) finishSide {
	f := finishSide{logNormal: b.Family == BuildLogNormal, mean: b.Mean, sd: b.StdDev}
	if f.logNormal {
		f.m, f.s = LogNormalParams(b.Mean, b.StdDev)
	}
	return f
}

// quantile is the build time at standard-normal score z.
func (f *finishSide) quantile(z float64) float64 {
	if f.logNormal {
		return math.Exp(f.m + f.s*z)
	}
	return f.mean + f.sd*z
}

// score is the standard-normal score of build time t: −Inf for t <= 0 under a LogNormal.
func (f *finishSide) score(t float64) float64 {
	if f.logNormal {
		if t <= 0 {
			return math.Inf(-1)
		}
		return (math.Log(t) - f.m) / f.s
	}
	return (t - f.mean) / f.sd
}

// fixedSure bounds the mass of the integrand in doubt (hermiteTable.finishBefore)
// under which a fixed rule's result is accepted.
const fixedSure = 1e-9

// finishBeforeFixed returns P(T_y < T_x + d) for two build times with positive
// standard deviations, not both Normal, with a fixed number of evaluations where that
// is exact enough, and by finishBeforeIntegral's adaptive rule where it is not.
//
// Two log-normal build times with d = 0 have a closed form: log T_y < log T_x is a
// comparison of two Normals, Phi((m_x − m_y)/sqrt(s_x² + s_y²)). Otherwise the
// probability is an expectation over the standard-normal score z of one build time
// (the outer one) of the other's CDF,
//
//	E[F_y(q_x(z) + d)] = E[Phi(h(z))],  h(z) = score_y(q_x(z) + d)   (outer x), or
//	E[S_x(q_y(z) − d)] = E[Phi(h(z))],  h(z) = −score_x(q_y(z) − d)  (outer y),
//
// taken by Gauss–Hermite quadrature. The rule is accurate when Phi(h(z)) is smooth on
// the scale of the node spacing, that is when h moves slowly in z. For two LogNormals
// the slope of h is (s_x/s_y)·T_x/(T_x + d) with outer x and (s_y/s_x)·T_y/(T_y − d)
// with outer y: one is at most 1 where the other is at least 1 when d = 0, and d bends
// the boundary, which can make both steep somewhere (for d < 0 with outer x the slope
// is infinite where T_x = −d). So the outer variable is the one whose h is flatter
// (for two LogNormals x when d > 0 and y when d < 0, otherwise by steepness on
// z ∈ [−5, 5]), then the other one; for each, the 20-, 32- and 64-point rules are
// tried, and a result is accepted only if h stays below the rule's slope wherever the
// integrand moves by a non-negligible mass (fixedSure). Otherwise the adaptive rule
// decides.
func finishBeforeFixed(d float64, x, y BuildTime) float64 {
	xs, ys := prepareSide(x), prepareSide(y)
	return finishBeforeSides(d, &xs, &ys, x, y)
}

// finishBeforeSides is finishBeforeFixed with the build times x and y already prepared
// as xs and ys.
func finishBeforeSides(d float64, xs, ys *finishSide, x, y BuildTime) float64 {
	if xs.logNormal && ys.logNormal && d == 0 {
		return stdNormalCDF((xs.m - ys.m) / math.Hypot(xs.s, ys.s))
	}
	var outerX bool
	if xs.logNormal && ys.logNormal {
		// The slope with x outer is at most s_x/s_y when d > 0, the one with y outer
		// at most s_y/s_x when d < 0; the other one is unbounded.
		outerX = d > 0
	} else {
		outerX = steepness(xs, ys, d) <= steepness(ys, xs, -d)
	}
	for _, ox := range [2]bool{outerX, !outerX} {
		for _, r := range hermites {
			if p, doubt := r.finishBefore(d, xs, ys, ox); doubt <= fixedSure {
				return min(1, max(0, p))
			}
		}
	}
	return finishBeforeIntegral(d, x, y)
}

// steepness returns the largest dh/dz at z ∈ {−5, −2.5, 0, 2.5, 5} for the outer build
// time o and the inner one i, the inner's argument being o's quantile plus shift: +Inf
// where a LogNormal inner gets a non-positive argument.
func steepness(o, i *finishSide, shift float64) float64 {
	var worst float64
	for _, z := range [5]float64{-5, -2.5, 0, 2.5, 5} {
		q := o.quantile(z)
		dq := o.sd
		if o.logNormal {
			dq = o.s * q
		}
		switch t := q + shift; {
		case !i.logNormal:
			worst = max(worst, dq/i.sd)
		case t > 0:
			worst = max(worst, dq/(i.s*t))
		default:
			return math.Inf(1)
		}
	}
	return worst
}

// finishBefore returns the rule's estimate of P(T_y < T_x + d) with x (outerX) or y as
// the outer build time, and the mass in doubt: the sum over neighbouring nodes between
// which h rises faster than r.slope of φ·(node gap)·|ΔPhi(h)|, a bound on
// what a transition of the integrand between them can hold. h is monotone in z, so
// where Phi(h) does not move between two nodes it does not move between them either.
func (r *hermiteTable) finishBefore(d float64, x, y *finishSide, outerX bool) (p, doubt float64) {
	var prevH, prevV float64
	for i, z := range r.z {
		var h float64
		if outerX {
			h = y.score(x.quantile(z) + d)
		} else {
			h = -x.score(y.quantile(z) - d)
		}
		// Phi is 0 or 1 to the last bit beyond ±38.5; Erfc is the cost of a node.
		v := 0.0
		switch {
		case h > 38.5:
			v = 1
		case h > -38.5:
			v = stdNormalCDF(h)
		}
		p += r.w[i] * v
		// Two infinite scores of one sign give NaN here, and the integrand does not move.
		if i > 0 && math.Abs(h-prevH) > r.slope*(z-r.z[i-1]) {
			doubt += max(r.phi[i], r.phi[i-1]) * (z - r.z[i-1]) * math.Abs(v-prevV)
		}
		prevH, prevV = h, v
	}
	return p, doubt
}

// boundZ are the standard-normal scores of the ahead build time x at which
// finishBeforeBelow splits, the likeliest to settle first, and boundS = Phi(−z) at each.
var (
	boundZ = [...]float64{1, 2, 0, 3, -1}
	boundS = func() (s [len(boundZ)]float64) {
		for k, z := range boundZ {
			s[k] = stdNormalCDF(-z)
		}
		return s
	}()
)

// finishBeforeBelow reports whether P(FT_j < FT_i) < p0 for the ahead change ci and the
// change cj behind it, not both Normal, and returns P when it had to compute it (NaN
// otherwise). It splits T_x at a few of its quantiles a: the event T_y < T_x + d holds
// when T_x > a and T_y < a + d, and implies T_x > a or T_y < a + d, so for independent
// build times
//
//	S_x(a)·F_y(a + d) <= P <= S_x(a) + F_y(a + d).
//
// A split costs about as much as one node of the fixed rule and settles the question
// for most pairs of a queue, where P is far from p0 (with a margin of 1e-9 for
// rounding); changeFinishBefore decides the others.
func finishBeforeBelow(ci, cj Change, p0 float64) (below bool, p float64) {
	if ci.BuildSigma > 0 && cj.BuildSigma > 0 {
		x, y := prepareSide(buildTimeOf(ci)), prepareSide(buildTimeOf(cj))
		below, p, _, _ = finishBeforeBelowSides(ci.Arrival-cj.Arrival, &x, &y, buildTimeOf(ci), buildTimeOf(cj), p0)
		return below, p
	}
	p = changeFinishBefore(ci, cj)
	return p < p0, p
}

// finishBeforeBelowSides is finishBeforeBelow for d = AT_x − AT_y and the build times x
// (ahead) and y, prepared as xs and ys, both with positive standard deviations. It also
// returns the bounds lo <= P <= hi it found (both P when it computed P).
func finishBeforeBelowSides(d float64, xs, ys *finishSide, x, y BuildTime, p0 float64) (below bool, p, lo, hi float64) {
	settled, below, lo, hi := finishBeforeBounds(d, xs, ys, p0)
	if settled {
		return below, math.NaN(), lo, hi
	}
	p = finishBeforeExact(d, xs, ys, x, y)
	return p < p0, p, p, p
}

// finishBeforeBounds runs finishBeforeBelow's splits: settled reports that the bounds
// lo <= P <= hi answer P < p0 (below).
func finishBeforeBounds(d float64, xs, ys *finishSide, p0 float64) (settled, below bool, lo, hi float64) {
	hi = 1
	for k, z := range boundZ {
		f := stdNormalCDF(ys.score(xs.quantile(z) + d))
		lo, hi = max(lo, boundS[k]*f), min(hi, boundS[k]+f)
		switch {
		case hi < p0-1e-9:
			return true, true, lo, hi
		case lo > p0+1e-9:
			return true, false, lo, hi
		}
	}
	return false, false, lo, hi
}

// finishBeforeExact is P(T_y < T_x + d) for prepared build times with positive
// standard deviations: Phi(Z) for two Normals, finishBeforeSides otherwise.
func finishBeforeExact(d float64, xs, ys *finishSide, x, y BuildTime) float64 {
	if x.Family == BuildNormal && y.Family == BuildNormal {
		return FinishBeforeProb(d, x.Mean, x.StdDev, 0, y.Mean, y.StdDev)
	}
	return finishBeforeSides(d, xs, ys, x, y)
}
