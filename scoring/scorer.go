package scoring

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
)

// Errors of the scorer.
// Predictor is a model of a probability: logistic.Model and gbm.Model (binary) satisfy
// it. Predict writes the probability of the positive class of every row of x into dst
// (allocating it when nil) and returns it; NFeatures is the number of columns of x.
type Predictor interface {
	Predict(dst []float64, x mat.Matrix) []float64
	NFeatures() int
}

// DistPredictor is a model of a predictive distribution: ngboost.Model satisfies it.
// Predict writes the mean and the standard deviation of every row of x into dst,
// row-major (dst[2i] = mean, dst[2i+1] = standard deviation), in the target's units.
type DistPredictor interface {
	Predict(dst []float64, x mat.Matrix) []float64
	NFeatures() int
}

// DevLookup gives an author's developer statistics and a change's recency features:
// features.DevTable satisfies it.
type DevLookup interface {
	Lookup(author string) features.DevStats
	Recent(repo string, c *datasets.Change) features.Recent
	Repos() []string
}

// SuccessInput is one change to score for P-succ: its attributes and the speculation
// state at prediction time (see features.Success).
type SuccessInput struct {
	Change *datasets.Change
	Spec   features.Speculation
}

// PairInput is a pair of pending changes to score for P-conf, Ahead earlier in the
// queue than Behind (see features.Conflict).
type PairInput struct {
	Ahead, Behind *datasets.Change
}

// BuildInput is one build to time: the change it decides and the speculation state
// when it starts (see features.BuildTime).
type BuildInput struct {
	Change *datasets.Change
	Spec   features.Speculation
}

// Scorer turns the raw attributes of changes and builds into P-succ, P-conf and
// predictive build times with the models of one bundle. Features are computed by the
// per-row functions of package features, the code the models were trained with, and
// developer statistics come from the bundle's frozen table. A Scorer is read-only once
// built and safe for concurrent use.
type Scorer struct {
	success   Predictor
	conflict  Predictor
	buildTime DistPredictor
	dev       DevLookup
	// noConflict says why the scorer has no P-conf model ("" when it has one), and
	// conflictPrior is the P-conf it uses instead (see NewScorerNoConflict).
	noConflict    string
	conflictPrior float64
	// repo is the repository whose recency state rows read: the developer table's only
	// one (a bundle is trained for one repository, whose name in the history may differ
	// from the name it is served under), or "" to read each change's own.
	repo string
	// successExtra and buildTimeExtra are the extra attributes the success and
	// build-time models take after their kind's features (features.SchemaWithExtra),
	// and nSuccess and nBuildTime the models' widths.
	successExtra, buildTimeExtra []string
	nSuccess, nBuildTime         int
}

// named is a model that names its input columns, as the logistic, GBM and NGBoost
// models and the baselines of a bundle do.
type named interface{ FeatureNames() []string }

// modelExtra returns the extra attributes a model of kind takes: none when it is as wide
// as the kind's schema, else those its column names end with (features.ExtraOf).
func modelExtra(name string, m interface{ NFeatures() int }, kind features.Kind) ([]string, error) {
	base := kind.Schema().NFeatures()
	if m.NFeatures() == base {
		return nil, nil
	}
	nm, ok := m.(named)
	if !ok || m.NFeatures() < base {
		return nil, fmt.Errorf("scoring: %s model takes %d features, the schema has %d: %w", name, m.NFeatures(), base, ErrModelShape)
	}
	extra, err := features.ExtraOf(kind, nm.FeatureNames())
	if err != nil {
		return nil, fmt.Errorf("scoring: %s model: %w: %w", name, ErrModelShape, err)
	}
	return extra, nil
}

// NewScorer returns a scorer of the three models and the developer table. It returns an
// error wrapping ErrNoModel when one is nil, and ErrModelShape when a model's number of
// features differs from its row kind's schema (features.NSuccess, NConflict,
// NBuildTime), unless a success or build-time model names the extra attributes it takes
// after them (features.ExtraOf; see Extra).
func NewScorer(success, conflict Predictor, buildTime DistPredictor, dev DevLookup) (*Scorer, error) {
	switch {
	case success == nil:
		return nil, fmt.Errorf("scoring: success model: %w", ErrNoModel)
	case conflict == nil:
		return nil, fmt.Errorf("scoring: conflict model: %w", ErrNoModel)
	case buildTime == nil:
		return nil, fmt.Errorf("scoring: build-time model: %w", ErrNoModel)
	case dev == nil:
		return nil, fmt.Errorf("scoring: developer table: %w", ErrNoModel)
	}
	if conflict.NFeatures() != features.NConflict {
		return nil, fmt.Errorf("scoring: conflict model takes %d features, the schema has %d: %w", conflict.NFeatures(), features.NConflict, ErrModelShape)
	}
	return newScorer(success, conflict, buildTime, dev)
}

// NewScorerNoConflict returns a scorer of a bundle without a P-conf model: why says why
// it has none (e.g. "the history has no conflict labels"), and prior, in [0, 1), is the
// P-conf PredictConflict gives every pair instead, the stated prior that the
// speculation math uses for overlapping changes. ConflictModel reports the missing
// model, so that a server refuses P-conf questions rather than answer them with the
// prior. The other models are checked as by NewScorer.
func NewScorerNoConflict(success Predictor, buildTime DistPredictor, dev DevLookup, why string, prior float64) (*Scorer, error) {
	switch {
	case success == nil:
		return nil, fmt.Errorf("scoring: success model: %w", ErrNoModel)
	case buildTime == nil:
		return nil, fmt.Errorf("scoring: build-time model: %w", ErrNoModel)
	case dev == nil:
		return nil, fmt.Errorf("scoring: developer table: %w", ErrNoModel)
	case why == "":
		return nil, fmt.Errorf("scoring: a scorer without a P-conf model needs the reason: %w", ErrInvalidConfig)
	case !(prior >= 0 && prior < 1):
		return nil, fmt.Errorf("scoring: conflict prior %v is not in [0, 1): %w", prior, ErrInvalidConfig)
	}
	s, err := newScorer(success, nil, buildTime, dev)
	if err != nil {
		return nil, err
	}
	s.noConflict, s.conflictPrior = why, prior
	return s, nil
}

// newScorer checks the widths of the success and build-time models and builds the
// scorer. A model wider than its kind's schema must name its columns: the extra
// attributes it takes (features.ExtraOf) are then given to it by name.
func newScorer(success, conflict Predictor, buildTime DistPredictor, dev DevLookup) (*Scorer, error) {
	sc := &Scorer{success: success, conflict: conflict, buildTime: buildTime, dev: dev}
	var err error
	if sc.successExtra, err = modelExtra("success", success, features.KindSuccess); err != nil {
		return nil, err
	}
	if sc.buildTimeExtra, err = modelExtra("build-time", buildTime, features.KindBuildTime); err != nil {
		return nil, err
	}
	sc.nSuccess, sc.nBuildTime = success.NFeatures(), buildTime.NFeatures()
	if r := dev.Repos(); len(r) == 1 {
		sc.repo = r[0]
	}
	return sc, nil
}

// recent returns the recency features of c from the developer table.
func (s *Scorer) recent(c *datasets.Change) features.Recent {
	repo := s.repo
	if repo == "" {
		repo = c.Repo
	}
	return s.dev.Recent(repo, c)
}

// Extra returns the extra attributes the scorer's success and build-time models take
// (nil when none): a change's datasets.Extra values of those names reach them, and an
// attribute it lacks is NaN, the models' missing value.
func (s *Scorer) Extra() (success, buildTime []string) {
	return slices.Clone(s.successExtra), slices.Clone(s.buildTimeExtra)
}

// Dev returns the author's statistics from the scorer's developer table.
func (s *Scorer) Dev(author string) features.DevStats { return s.dev.Lookup(author) }

// SuccessRows writes the success-row features of in into dst, row-major, allocating dst
// when nil, and returns it. It panics if dst has the wrong length.
func (s *Scorer) SuccessRows(dst []float64, in []SuccessInput) []float64 {
	n := s.nSuccess
	dst = rowsDst(dst, len(in), n)
	for i, c := range in {
		row := dst[i*n : (i+1)*n]
		features.Success(row[:features.NSuccess], c.Change, c.Spec, s.dev.Lookup(c.Change.Author), s.recent(c.Change))
		features.Extra(row[features.NSuccess:], c.Change, s.successExtra)
	}
	return dst
}

// ConflictRows writes the conflict-row features of in into dst, as SuccessRows.
func (s *Scorer) ConflictRows(dst []float64, in []PairInput) []float64 {
	dst = rowsDst(dst, len(in), features.NConflict)
	for i, p := range in {
		features.Conflict(dst[i*features.NConflict:(i+1)*features.NConflict], p.Ahead, p.Behind,
			s.dev.Lookup(p.Ahead.Author), s.dev.Lookup(p.Behind.Author))
	}
	return dst
}

// BuildTimeRows writes the build-time-row features of in into dst, as SuccessRows.
func (s *Scorer) BuildTimeRows(dst []float64, in []BuildInput) []float64 {
	n := s.nBuildTime
	dst = rowsDst(dst, len(in), n)
	for i, b := range in {
		row := dst[i*n : (i+1)*n]
		features.BuildTime(row[:features.NBuildTime], b.Change, b.Spec, s.dev.Lookup(b.Change.Author), s.recent(b.Change))
		features.Extra(row[features.NBuildTime:], b.Change, s.buildTimeExtra)
	}
	return dst
}

// PredictSuccess writes P-succ of every change of in into dst (allocated when nil) and
// returns it. Empty input returns dst unchanged; a dst whose length differs from in
// panics.
func (s *Scorer) PredictSuccess(dst []float64, in []SuccessInput) []float64 {
	dst = outDst(dst, len(in))
	if len(in) == 0 {
		return dst
	}
	x := s.SuccessRows(nil, in)
	return s.success.Predict(dst, mat.NewDense(len(in), s.nSuccess, x))
}

// ConflictModel returns nil when the scorer has a P-conf model, and otherwise an error
// wrapping ErrNoConflictModel that says why and which prior PredictConflict uses.
func (s *Scorer) ConflictModel() error {
	if s.conflict != nil {
		return nil
	}
	return fmt.Errorf("%w: %s; pairs get the conflict prior %g", ErrNoConflictModel, s.noConflict, s.conflictPrior)
}

// PredictConflict writes P-conf of every pair of in into dst, as PredictSuccess. A
// scorer without a P-conf model (see ConflictModel) writes its conflict prior.
func (s *Scorer) PredictConflict(dst []float64, in []PairInput) []float64 {
	dst = outDst(dst, len(in))
	if len(in) == 0 {
		return dst
	}
	if s.conflict == nil {
		for i := range dst {
			dst[i] = s.conflictPrior
		}
		return dst
	}
	x := s.ConflictRows(nil, in)
	return s.conflict.Predict(dst, mat.NewDense(len(in), features.NConflict, x))
}

// PredictBuildTime writes the predictive mean and standard deviation, in seconds, of
// every build of in into dst, row-major (dst[2i] = mean, dst[2i+1] = standard
// deviation), allocating it when nil, and returns it. A dst whose length is not 2·len(in)
// panics.
func (s *Scorer) PredictBuildTime(dst []float64, in []BuildInput) []float64 {
	if dst == nil {
		dst = make([]float64, 2*len(in))
	}
	if len(dst) != 2*len(in) {
		panic(errDstLength)
	}
	if len(in) == 0 {
		return dst
	}
	x := s.BuildTimeRows(nil, in)
	return s.buildTime.Predict(dst, mat.NewDense(len(in), s.nBuildTime, x))
}

const errDstLength = "scoring: dst length mismatch"

func outDst(dst []float64, n int) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(errDstLength)
	}
	return dst
}

func rowsDst(dst []float64, n, width int) []float64 {
	return outDst(dst, n*width)
}
