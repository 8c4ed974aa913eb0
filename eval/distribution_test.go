package eval

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
)

// distTol bounds the difference to the reference values, which were computed by direct
// quadrature of the densities and of ∫(F - 1{z >= y})² with mpmath at 30 digits
// (testdata/distribution_ref.py) and printed to 17 significant digits.
const distTol = 1e-12

// Reference rows: (mu, sigma, y) with NLL, CRPS and PIT from testdata/distribution_ref.py.
var (
	normalRows = Predictive{Family: FamilyNormal, Mu: []float64{0, 10, -2}, Sigma: []float64{1, 2, 0.5}}
	normalY    = []float64{0, 13, -2.25}
	normalNLL  = []float64{0.91893853320467274, 2.7370857137646181, 0.35079135264472743}
	normalCRPS = []float64{0.23369497725510907, 1.9888480079549059, 0.16570176562742789}
	normalPIT  = []float64{0.5, 0.93319279873114193, 0.3085375387259869}

	logNormalRows = Predictive{Family: FamilyLogNormal, Mu: []float64{0, 4.605170185988092, 1, 0.5}, Sigma: []float64{1, 0.25, 0.5, 0.8}}
	logNormalY    = []float64{1, 120, 0.5, -1}
	logNormalNLL  = []float64{0.91893853320467274, 4.5860651154409966, 5.2661389221609662, math.Inf(1)}
	logNormalCRPS = []float64{0.26740546702269388, 11.628279982718458, 1.7291123396897609, 2.2978350649987995}
	logNormalPIT  = []float64{0.5, 0.76708670233455353, 0.00035421674466618944, 0}
	logNormalMean = []float64{1.6487212707001281, 103.17434074991031, 3.0802168489180312, 2.2704998375324059}
)

func TestDistributionReferenceValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    Predictive
		y    []float64
		nll  []float64
		crps []float64
		pit  []float64
	}{
		{"normal", normalRows, normalY, normalNLL, normalCRPS, normalPIT},
		{"lognormal", logNormalRows, logNormalY, logNormalNLL, logNormalCRPS, logNormalPIT},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, y := range tc.y {
				if got := -tc.p.LogPDF(i, y); !scalar.EqualWithinAbsOrRel(got, tc.nll[i], distTol, distTol) && got != tc.nll[i] {
					t.Errorf("-LogPDF(%d, %v) = %v, want %v", i, y, got, tc.nll[i])
				}
				if got := tc.p.CRPS(i, y); !scalar.EqualWithinAbsOrRel(got, tc.crps[i], distTol, distTol) {
					t.Errorf("CRPS(%d, %v) = %v, want %v", i, y, got, tc.crps[i])
				}
			}
			if got := PIT(nil, tc.p, tc.y); !floats.EqualApprox(got, tc.pit, distTol) {
				t.Errorf("PIT = %v, want %v", got, tc.pit)
			}
			if got, want := MeanCRPS(tc.p, tc.y), floats.Sum(tc.crps)/float64(len(tc.y)); !scalar.EqualWithinAbsOrRel(got, want, distTol, distTol) {
				t.Errorf("MeanCRPS = %v, want %v", got, want)
			}
		})
	}
	if got, want := MeanNLL(normalRows, normalY), floats.Sum(normalNLL)/3; !scalar.EqualWithinAbsOrRel(got, want, distTol, distTol) {
		t.Errorf("MeanNLL(normal) = %v, want %v", got, want)
	}
	for i, want := range logNormalMean {
		if got := logNormalRows.Mean(i); !scalar.EqualWithinAbsOrRel(got, want, distTol, distTol) {
			t.Errorf("lognormal Mean(%d) = %v, want %v", i, got, want)
		}
	}
}

func TestCoverageAndPITHistogram(t *testing.T) {
	t.Parallel()
	// Four standard Normals. Central intervals: 50% ±0.674, 80% ±1.282, 95% ±1.960.
	// PITs: Φ(0)=0.5, Φ(1)=0.841, Φ(1.5)=0.933, Φ(2.5)=0.994.
	p := Predictive{Family: FamilyNormal, Mu: make([]float64, 4), Sigma: []float64{1, 1, 1, 1}}
	y := []float64{0, 1, 1.5, 2.5}
	for _, tc := range []struct {
		level, want float64
	}{{0.5, 0.25}, {0.8, 0.5}, {0.95, 0.75}} {
		if got := IntervalCoverage(p, y, tc.level); !scalar.EqualWithinAbsOrRel(got, tc.want, distTol, distTol) {
			t.Errorf("IntervalCoverage(%v) = %v, want %v", tc.level, got, tc.want)
		}
	}
	wantHist := []float64{0, 0, 0, 0, 0, 0.25, 0, 0, 0.25, 0.5}
	if got := PITHistogram(p, y, 10); !floats.EqualApprox(got, wantHist, distTol) {
		t.Errorf("PITHistogram = %v, want %v", got, wantHist)
	}
	m := EvaluateDistribution(p, y)
	if m.Coverage != [3]float64{0.25, 0.5, 0.75} || !floats.EqualApprox(m.PIT, wantHist, distTol) || m.Point.N != 4 {
		t.Errorf("EvaluateDistribution = %+v", m)
	}
	// A PIT of exactly 1 lands in the last bin.
	far := Predictive{Family: FamilyNormal, Mu: []float64{0}, Sigma: []float64{1}}
	if got := PITHistogram(far, []float64{100}, 4); !floats.Equal(got, []float64{0, 0, 0, 1}) {
		t.Errorf("PITHistogram(PIT=1) = %v, want the last bin", got)
	}
}

func TestParseDistFamily(t *testing.T) {
	t.Parallel()
	for _, f := range []DistFamily{FamilyNormal, FamilyLogNormal} {
		if got, err := ParseDistFamily(f.String()); err != nil || got != f {
			t.Errorf("ParseDistFamily(%q) = %v, %v", f.String(), got, err)
		}
	}
	if got := DistFamily(5).String(); got != "DistFamily(5)" {
		t.Errorf("DistFamily(5).String() = %q", got)
	}
	if _, err := ParseDistFamily("weibull"); !errors.Is(err, ErrUnknownFamily) {
		t.Errorf("ParseDistFamily(weibull) = %v, want ErrUnknownFamily", err)
	}
}

// TestPredictiveEdges checks the values at the edges of the support and of (0, 1), where
// Predictive follows ngboost.Dist: the LogNormal log density at 0 is -Inf (it was
// NaN, from -Inf - -Inf, through distuv.LogNormal) and a quantile level outside [0, 1]
// is NaN (distuv panicked).
func TestPredictiveEdges(t *testing.T) {
	t.Parallel()
	nrm := Predictive{Family: FamilyNormal, Mu: []float64{1}, Sigma: []float64{2}}
	lgn := Predictive{Family: FamilyLogNormal, Mu: []float64{1}, Sigma: []float64{2}}
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"lognormal LogPDF(0)", lgn.LogPDF(0, 0), -inf},
		{"lognormal LogPDF(-1)", lgn.LogPDF(0, -1), -inf},
		{"lognormal CDF(0)", lgn.CDF(0, 0), 0},
		{"lognormal CDF(+Inf)", lgn.CDF(0, inf), 1},
		{"lognormal Quantile(0)", lgn.Quantile(0, 0), 0},
		{"lognormal Quantile(1)", lgn.Quantile(0, 1), inf},
		{"lognormal Quantile(1.5)", lgn.Quantile(0, 1.5), nan},
		{"normal Quantile(0)", nrm.Quantile(0, 0), -inf},
		{"normal Quantile(1)", nrm.Quantile(0, 1), inf},
		{"normal Quantile(-0.5)", nrm.Quantile(0, -0.5), nan},
		{"normal CDF(-Inf)", nrm.CDF(0, -inf), 0},
		{"normal LogPDF(+Inf)", nrm.LogPDF(0, inf), -inf},
	}
	for _, tc := range cases {
		if !scalar.Same(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	defer func() {
		if recover() == nil {
			t.Errorf("Mean with DistFamily(5) did not panic")
		}
	}()
	Predictive{Family: DistFamily(5), Mu: []float64{0}, Sigma: []float64{1}}.Mean(0)
}

func TestParseDistFamilyErrorPrefix(t *testing.T) {
	t.Parallel()
	_, err := ParseDistFamily("weibull")
	if err == nil || !strings.HasPrefix(err.Error(), "eval: ") || !strings.Contains(err.Error(), `"weibull"`) {
		t.Errorf(`ParseDistFamily("weibull") = %v, want an error with the eval: prefix naming "weibull"`, err)
	}
}

// TestPredictiveStdDev checks StdDev against the closed forms: sigma for a Normal, and
// sqrt((exp(s²) − 1)·exp(2m + s²)) for a LogNormal of log-mean m and log-sd s.
func TestPredictiveStdDev(t *testing.T) {
	const tol = 1e-12 // closed forms, a few operations
	p := Predictive{Family: FamilyNormal, Mu: []float64{300}, Sigma: []float64{40}}
	if got := p.StdDev(0); !scalar.EqualWithinAbsOrRel(got, 40, tol, tol) {
		t.Errorf("Normal StdDev = %v, want 40", got)
	}
	m, s := 6.0, 0.5
	p = Predictive{Family: FamilyLogNormal, Mu: []float64{m}, Sigma: []float64{s}}
	want := math.Sqrt(math.Expm1(s*s) * math.Exp(2*m+s*s))
	if got := p.StdDev(0); !scalar.EqualWithinAbsOrRel(got, want, tol, tol) {
		t.Errorf("LogNormal StdDev = %v, want %v", got, want)
	}
}

// TestPointForecast checks the point forecast of both families, the median unless
// MeanPoint, and that EvaluateDistribution's point errors are of it (issue 12: the
// LogNormal's mean, pulled up by its tail, made its APE worse than Zuul's).
func TestPointForecast(t *testing.T) {
	t.Parallel()
	y := []float64{2, 100, 2.5, 1}
	for _, tc := range []struct {
		name string
		p    Predictive
		want []float64
	}{
		{"normal", normalRows, normalRows.Mu},
		{"lognormal median", logNormalRows, []float64{1, 100, math.E, math.Exp(0.5)}},
		{"lognormal mean", Predictive{Family: FamilyLogNormal, Mu: logNormalRows.Mu, Sigma: logNormalRows.Sigma, MeanPoint: true}, logNormalMean},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				if got := tc.p.Point(i); !scalar.EqualWithinAbsOrRel(got, want, distTol, distTol) {
					t.Errorf("Point(%d) = %v, want %v", i, got, want)
				}
			}
			yy := y[:len(tc.want)]
			got := EvaluateDistribution(tc.p, yy).Point
			if want := EvaluateRegression(yy, tc.want); !scalar.EqualWithinAbsOrRel(got.MdAPE, want.MdAPE, distTol, distTol) ||
				!scalar.EqualWithinAbsOrRel(got.RMSE, want.RMSE, distTol, distTol) {
				t.Errorf("EvaluateDistribution(...).Point = %+v, want %+v", got, want)
			}
		})
	}
}
