package modelset

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
)

// The baselines: the estimates a merge queue has without sqpredict. Each is a model like
// the others (a bundle holds it in baseline.<name>.json and a scorer can serve it), and
// every evaluation shows it beside the champion and the challengers. The trainer fits
// them (training.FitBaseline).
const (
	// BaselinePassRate is P-succ = the repository's pass rate over the training rows,
	// (k+1)/(n+2).
	BaselinePassRate = "pass-rate"
	// BaselineLastOutcome is P-succ given the outcome of the repository's latest
	// labelled change before the submission (feature repo_last_failed: succeeded,
	// failed, or none yet): the training pass rate of each of the three cells, smoothed
	// towards the pass rate with the weight of two rows.
	BaselineLastOutcome = "last-outcome"
	// BaselineConstantRate is P-conf = the training conflict rate, (k+1)/(n+2).
	BaselineConstantRate = "constant-rate"
	// BaselineZuulMean10 is Zuul's build-time estimate, the mean of the repository's
	// latest 10 succeeded builds (feature log1p_repo_mean10_success_duration), as the
	// mean of a LogNormal whose log-scale deviation is that of log(y/estimate) on the
	// training rows; rows without an estimate get the repository LogNormal.
	BaselineZuulMean10 = "zuul-mean10"
	// BaselineRepoLogNormal is a LogNormal fitted to the log durations of the
	// repository's latest training builds (the trainer's RecentBuilds).
	BaselineRepoLogNormal = "repo-lognormal"
)

// BaselineVersion is the format version of a baseline's JSON file.
const BaselineVersion = 1

// MinLogSigma bounds the log-scale deviation of the build-time baselines from below, so
// that a training set of identical durations does not give an infinitely sharp density.
const MinLogSigma = 1e-3

// Baselines lists the baseline names of each row kind, in the order reports show them.
var Baselines = map[features.Kind][]string{
	features.KindSuccess:   {BaselinePassRate, BaselineLastOutcome},
	features.KindConflict:  {BaselineConstantRate},
	features.KindBuildTime: {BaselineZuulMean10, BaselineRepoLogNormal},
}

// Baseline is a fitted baseline model of one row kind. It reads at most one feature
// column of its kind's schema. A Baseline is immutable and safe for concurrent use.
type Baseline struct {
	name  string
	kind  features.Kind
	names []string // the schema's feature names
	col   int      // the column read, -1 for none
	p     BaselineParams
}

// BaselineParams are a baseline's fitted numbers, as its JSON file holds them.
type BaselineParams struct {
	// P is the probability of the positive class: success (pass-rate) or conflict
	// (constant-rate), and for last-outcome the one of rows without a latest outcome.
	P float64 `json:"p"`
	// PLastSucceeded and PLastFailed are last-outcome's probabilities after a latest
	// success and a latest failure.
	PLastSucceeded float64 `json:"p_last_succeeded,omitempty"`
	PLastFailed    float64 `json:"p_last_failed,omitempty"`
	// Mu and Sigma are the log-scale parameters of the repository LogNormal (the
	// fallback of zuul-mean10).
	Mu    float64 `json:"mu,omitempty"`
	Sigma float64 `json:"sigma,omitempty"`
	// RelSigma is zuul-mean10's log-scale deviation around the estimate.
	RelSigma float64 `json:"rel_sigma,omitempty"`
}

// baselineColumn is the feature each baseline reads, "" for none.
var baselineColumn = map[string]string{
	BaselineLastOutcome: "repo_last_failed",
	BaselineZuulMean10:  "log1p_repo_mean10_success_duration",
}

var baselineKind = map[string]features.Kind{
	BaselinePassRate:      features.KindSuccess,
	BaselineLastOutcome:   features.KindSuccess,
	BaselineConstantRate:  features.KindConflict,
	BaselineZuulMean10:    features.KindBuildTime,
	BaselineRepoLogNormal: features.KindBuildTime,
}

// BaselineKind returns the row kind of the named baseline, and false for an unknown
// name.
func BaselineKind(name string) (features.Kind, bool) {
	k, ok := baselineKind[name]
	return k, ok
}

// NewBaseline returns the named baseline over the columns names (its kind's schema)
// with the fitted parameters p. It returns an error wrapping ErrBundle for an unknown
// name, a schema without the column the baseline reads, or parameters no fit gives
// (probabilities outside (0, 1), a non-finite mu, a log-scale deviation below
// MinLogSigma or infinite).
func NewBaseline(name string, names []string, p BaselineParams) (*Baseline, error) {
	b, err := newBaseline(name, names)
	if err != nil {
		return nil, err
	}
	if err := b.checkParams(p); err != nil {
		return nil, err
	}
	b.p = p
	return b, nil
}

func newBaseline(name string, names []string) (*Baseline, error) {
	kind, ok := baselineKind[name]
	if !ok {
		return nil, fmt.Errorf("%w: unknown baseline %q", ErrBundle, name)
	}
	b := &Baseline{name: name, kind: kind, names: names, col: -1}
	if c := baselineColumn[name]; c != "" {
		b.col = slices.Index(names, c)
		if b.col < 0 {
			return nil, fmt.Errorf("%w: baseline %s: the %s schema has no column %s", ErrBundle, name, kind, c)
		}
	}
	return b, nil
}

// checkParams reports parameters of b's kind that no fit gives.
func (b *Baseline) checkParams(p BaselineParams) error {
	prob := func(v float64) bool { return v > 0 && v < 1 }
	switch b.kind {
	case features.KindBuildTime:
		if math.IsNaN(p.Mu) || math.IsInf(p.Mu, 0) || !(p.Sigma >= MinLogSigma) || math.IsInf(p.Sigma, 1) ||
			(b.name == BaselineZuulMean10 && (!(p.RelSigma >= MinLogSigma) || math.IsInf(p.RelSigma, 1))) {
			return fmt.Errorf("%w: baseline %s: impossible parameters %+v", ErrBundle, b.name, p)
		}
	default:
		if !prob(p.P) || (b.name == BaselineLastOutcome && !(prob(p.PLastSucceeded) && prob(p.PLastFailed))) {
			return fmt.Errorf("%w: baseline %s: probabilities outside (0, 1): %+v", ErrBundle, b.name, p)
		}
	}
	return nil
}

// BaselineColumn returns the name of the feature column the named baseline reads, ""
// for none (or an unknown name).
func BaselineColumn(name string) string { return baselineColumn[name] }

// Column returns the index of the feature column the baseline reads in its rows, or -1
// when it reads none.
func (b *Baseline) Column() int { return b.col }

// Params returns the baseline's fitted parameters.
func (b *Baseline) Params() BaselineParams { return b.p }

// Name returns the baseline's name (BaselinePassRate, ...).
func (b *Baseline) Name() string { return b.name }

// Kind returns the row kind the baseline predicts.
func (b *Baseline) Kind() features.Kind { return b.kind }

// NFeatures returns the width of the rows the baseline takes: its kind's schema.
func (b *Baseline) NFeatures() int { return len(b.names) }

// FeatureNames returns the names of the columns the baseline takes, a copy.
func (b *Baseline) FeatureNames() []string { return slices.Clone(b.names) }

// Probability returns P(label = 1) of a row x (success for success baselines, conflict
// for the conflict baseline). It panics for a build-time baseline.
func (b *Baseline) Probability(x []float64) float64 {
	switch b.name {
	case BaselineLastOutcome:
		switch x[b.col] {
		case 0:
			return b.p.PLastSucceeded
		case 1:
			return b.p.PLastFailed
		}
		return b.p.P
	case BaselinePassRate, BaselineConstantRate:
		return b.p.P
	}
	panic("modelset: Probability of build-time baseline " + b.name)
}

// LogNormal returns the log-scale parameters (mu, sigma) of the predictive LogNormal of
// a build-time row x. It panics for a classification baseline.
func (b *Baseline) LogNormal(x []float64) (mu, sigma float64) {
	switch b.name {
	case BaselineRepoLogNormal:
		return b.p.Mu, b.p.Sigma
	case BaselineZuulMean10:
		if est := math.Expm1(x[b.col]); est > 0 && !math.IsInf(est, 1) {
			s := b.p.RelSigma
			return math.Log(est) - s*s/2, s // its mean is the estimate
		}
		return b.p.Mu, b.p.Sigma
	}
	panic("modelset: LogNormal of classification baseline " + b.name)
}

// Predict implements scoring.Predictor and scoring.DistPredictor: for a classification
// baseline it writes the probability of every row of x into dst (length r); for a
// build-time baseline the mean and standard deviation in seconds, row-major (length
// 2r). dst is allocated when nil.
func (b *Baseline) Predict(dst []float64, x mat.Matrix) []float64 {
	r, c := x.Dims()
	if c != len(b.names) {
		panic(fmt.Sprintf("modelset: baseline %s: %d columns, want %d", b.name, c, len(b.names)))
	}
	w := 1
	if b.kind == features.KindBuildTime {
		w = 2
	}
	if dst == nil {
		dst = make([]float64, w*r)
	}
	if len(dst) != w*r {
		panic("modelset: baseline dst length mismatch")
	}
	row := make([]float64, c)
	for i := range r {
		mat.Row(row, i, x)
		if w == 1 {
			dst[i] = b.Probability(row)
			continue
		}
		mu, s := b.LogNormal(row)
		mean := math.Exp(mu + s*s/2)
		dst[2*i], dst[2*i+1] = mean, mean*math.Sqrt(math.Expm1(s*s))
	}
	return dst
}

// Predictive returns the baseline's LogNormal distributions of the rows of t, a table of
// its kind. It panics for a classification baseline.
func (b *Baseline) Predictive(t *features.Table) eval.Predictive {
	// zuul-mean10's point forecast is Zuul's estimate itself, its LogNormal's mean; the
	// repository LogNormal's is its median, like the NGBoost models' (eval.Predictive.Point).
	p := eval.Predictive{Family: eval.FamilyLogNormal, Mu: make([]float64, t.NRows()), Sigma: make([]float64, t.NRows()),
		MeanPoint: b.name == BaselineZuulMean10}
	for r := range p.Mu {
		p.Mu[r], p.Sigma[r] = b.LogNormal(t.Row(r))
	}
	return p
}

// Probabilities returns the baseline's probabilities of the rows of t, a table of its
// kind. It panics for a build-time baseline.
func (b *Baseline) Probabilities(t *features.Table) []float64 {
	out := make([]float64, t.NRows())
	for r := range out {
		out[r] = b.Probability(t.Row(r))
	}
	return out
}

// baselineJSON is the on-disk form of a Baseline.
type baselineJSON struct {
	FormatVersion int            `json:"format_version"`
	Name          string         `json:"baseline"`
	Kind          features.Kind  `json:"kind"`
	FeatureNames  []string       `json:"feature_names"`
	Params        BaselineParams `json:"params"`
}

// WriteJSON writes b as a JSON object: format_version (BaselineVersion), baseline (the
// name), kind, feature_names and params.
func (b *Baseline) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(baselineJSON{BaselineVersion, b.name, b.kind, b.names, b.p}, "", "  ")
	if err != nil {
		return fmt.Errorf("modelset: encoding baseline %s: %w", b.name, err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadBaseline reads a baseline written by WriteJSON and checks it as NewBaseline does.
// Errors wrap ErrBundle.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	var j baselineJSON
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%w: reading baseline: %w", ErrBundle, err)
	}
	if j.FormatVersion != BaselineVersion {
		return nil, fmt.Errorf("%w: baseline %s: format version %d, want %d", ErrBundle, j.Name, j.FormatVersion, BaselineVersion)
	}
	b, err := newBaseline(j.Name, j.FeatureNames)
	if err != nil {
		return nil, err
	}
	if b.kind != j.Kind {
		return nil, fmt.Errorf("%w: baseline %s: kind %s, want %s", ErrBundle, j.Name, j.Kind, b.kind)
	}
	return NewBaseline(j.Name, j.FeatureNames, j.Params)
}

// BaselineFile returns the bundle file name of a baseline: baseline.<name>.json.
func BaselineFile(name string) string { return "baseline." + name + ".json" }

// BaselineNames returns every baseline name, sorted.
func BaselineNames() []string {
	var out []string
	for n := range baselineKind {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
