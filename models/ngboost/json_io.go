package ngboost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
	"github.com/sqpredict/sqpredict/models/gbm"
)

// FormatVersion is the version of the artifact format WriteJSON writes and ReadJSON
// reads; see the package documentation.
const FormatVersion = 1

// Kind is the "kind" field of an NGBoost artifact.
const Kind = "ngboost"

// paramNames are the names of the boosted parameters of Normal and LogNormal models
// in the artifact, in order.
var paramNames = [2]string{"loc", "log_scale"}

// familyParamNames returns the names of the boosted parameters of family f in the
// artifact, in order.
func familyParamNames(f Family) []string {
	switch f {
	case Exponential:
		return []string{"log_scale"}
	case Gamma:
		return []string{"log_alpha", "log_beta"}
	}
	return paramNames[:]
}

type artifact struct {
	FormatVersion int              `json:"format_version"`
	Kind          string           `json:"kind"`
	Dist          string           `json:"dist"`
	Score         string           `json:"score"`
	FeatureNames  []string         `json:"feature_names"`
	InitParams    [2]float64       `json:"init_params"`
	NIterations   int              `json:"n_iterations"`
	Scalings      []float64        `json:"scalings"`
	Config        artifactConfig   `json:"config"`
	Training      artifactTraining `json:"training"`
	Params        []artifactParams `json:"params"`
}

// artifactConfig holds the hyper-parameters under the reference's names.
type artifactConfig struct {
	NEstimators         int     `json:"n_estimators"`
	LearningRate        float64 `json:"learning_rate"`
	MinibatchFrac       float64 `json:"minibatch_frac"`
	ColSample           float64 `json:"col_sample"`
	NaturalGradient     bool    `json:"natural_gradient"`
	MaxDepth            int     `json:"max_depth"`
	MaxBin              int     `json:"max_bin"`
	Tol                 float64 `json:"tol"`
	RandomState         uint64  `json:"random_state"`
	EarlyStoppingRounds int     `json:"early_stopping_rounds"`
	ValidationFraction  float64 `json:"validation_fraction"`
	Refit               bool    `json:"refit"`
}

type artifactTraining struct {
	BestIteration int       `json:"best_iteration"`
	Refit         bool      `json:"refit"`
	TrainScore    []float64 `json:"train_score"`
	ValScore      scores    `json:"val_score,omitempty"`
}

// scores is a list of per-iteration validation scores. A validation score can be
// +Inf (a validation row whose likelihood underflowed) although training went on, and
// JSON has no such number: it is written as null and read back as NaN.
type scores []float64

// MarshalJSON writes s with every non-finite value as null.
func (s scores) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(s))
	for i := range s {
		if !math.IsNaN(s[i]) && !math.IsInf(s[i], 0) {
			out[i] = &s[i]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a list written by MarshalJSON, null as NaN.
func (s *scores) UnmarshalJSON(b []byte) error {
	var in []*float64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = make(scores, len(in))
	for i, v := range in {
		(*s)[i] = math.NaN()
		if v != nil {
			(*s)[i] = *v
		}
	}
	return nil
}

type artifactParams struct {
	Name     string `json:"name"`
	LightGBM string `json:"lightgbm"`
}

// WriteJSON writes m to w in the artifact format of the package documentation.
func (m *Model) WriteJSON(w io.Writer) error {
	c := m.info.Config
	a := artifact{
		FormatVersion: FormatVersion,
		Kind:          Kind,
		Dist:          m.family.String(),
		Score:         c.Score.String(),
		FeatureNames:  m.featureNames,
		InitParams:    m.init,
		NIterations:   m.NIterations(),
		Scalings:      m.info.Scalings,
		Config: artifactConfig{
			NEstimators: c.NEstimators, LearningRate: c.LearningRate, MinibatchFrac: c.MinibatchFrac,
			ColSample: c.ColSample, NaturalGradient: !c.OrdinaryGradient, MaxDepth: c.MaxDepth,
			MaxBin: c.MaxBin, Tol: c.Tol, RandomState: c.RandomState,
			EarlyStoppingRounds: c.EarlyStoppingRounds, ValidationFraction: c.ValidationFraction, Refit: c.Refit,
		},
		Training: artifactTraining{
			BestIteration: m.info.BestIteration, Refit: m.info.Refit,
			TrainScore: m.info.TrainScore, ValScore: m.info.ValScore,
		},
	}
	for k, name := range familyParamNames(m.family) {
		var b strings.Builder
		if err := gbm.WriteLightGBM(&b, m.ens[k]); err != nil {
			return fmt.Errorf("ngboost: writing the trees of %s: %w", name, err)
		}
		a.Params = append(a.Params, artifactParams{Name: name, LightGBM: b.String()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&a); err != nil {
		return fmt.Errorf("ngboost: writing model: %w", err)
	}
	return nil
}

// SaveFile writes m to path atomically: to a temporary file in the same directory,
// synced and closed, then renamed over path, readable by all (0644).
func (m *Model) SaveFile(path string) error {
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("ngboost: saving model: %w", err)
	}
	return nil
}

// LoadFile reads the model artifact at path (see ReadJSON).
func LoadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ngboost: %w", err)
	}
	defer f.Close()
	m, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadJSON reads a model written by WriteJSON. An artifact of another format_version
// is an error wrapping ErrUnsupportedVersion; one that does not decode or is
// inconsistent wraps ErrFormat.
func ReadJSON(r io.Reader) (*Model, error) {
	var a artifact
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("ngboost: %w: %w", ErrFormat, err)
	}
	if a.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("ngboost: format_version %d (this build reads %d): %w", a.FormatVersion, FormatVersion, ErrUnsupportedVersion)
	}
	bad := func(format string, args ...any) (*Model, error) {
		return nil, fmt.Errorf("ngboost: %w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	if a.Kind != Kind {
		return bad("kind %q, want %q", a.Kind, Kind)
	}
	family, err := ParseFamily(a.Dist)
	if err != nil {
		return bad("dist %q", a.Dist)
	}
	score, err := ParseScoreRule(a.Score)
	if err != nil {
		return bad("score %q", a.Score)
	}
	switch {
	case len(a.FeatureNames) == 0:
		return bad("no feature_names")
	case a.NIterations < 0 || len(a.Scalings) != a.NIterations:
		return bad("n_iterations %d with %d scalings", a.NIterations, len(a.Scalings))
	case !finite(a.InitParams[0]) || !finite(a.InitParams[1]):
		return bad("init_params %v", a.InitParams)
	case family.nParams() == 1 && a.InitParams[1] != 0:
		return bad("init_params %v: the second is unused by dist %s and must be 0", a.InitParams, family)
	}
	m := &Model{
		family:       family,
		init:         a.InitParams,
		featureNames: a.FeatureNames,
		nFeatures:    len(a.FeatureNames),
	}
	names := familyParamNames(family)
	if len(a.Params) != len(names) {
		return bad("%d params for dist %s, want %d (%v)", len(a.Params), family, len(names), names)
	}
	for k, p := range a.Params {
		if p.Name != names[k] {
			return bad("params[%d] is %q, want %q", k, p.Name, names[k])
		}
		e, err := gbm.ReadLightGBM(strings.NewReader(p.LightGBM))
		if err != nil {
			return nil, fmt.Errorf("ngboost: reading the trees of %s: %w: %w", p.Name, ErrFormat, err)
		}
		switch {
		case e.NTrees() != a.NIterations:
			return bad("%s has %d trees for %d iterations", p.Name, e.NTrees(), a.NIterations)
		case !slices.Equal(e.FeatureNames(), a.FeatureNames):
			return bad("%s has feature names %v, want %v", p.Name, e.FeatureNames(), a.FeatureNames)
		case e.NClasses() != 1:
			return bad("%s has %d outputs per row, want 1", p.Name, e.NClasses())
		}
		m.ens[k] = e
		m.trees[k] = make([]*gbm.Tree, e.NTrees())
		for i := range m.trees[k] {
			m.trees[k][i] = e.Tree(i)
		}
	}
	c := a.Config
	m.info = FitInfo{
		Config: Config{
			Dist: family, Score: score, NEstimators: c.NEstimators, LearningRate: c.LearningRate,
			MinibatchFrac: c.MinibatchFrac, ColSample: c.ColSample, OrdinaryGradient: !c.NaturalGradient,
			MaxDepth: c.MaxDepth, MaxBin: c.MaxBin, Tol: c.Tol, RandomState: c.RandomState,
			EarlyStoppingRounds: c.EarlyStoppingRounds, ValidationFraction: c.ValidationFraction, Refit: c.Refit,
		},
		Scalings:      a.Scalings,
		TrainScore:    a.Training.TrainScore,
		ValScore:      a.Training.ValScore,
		BestIteration: a.Training.BestIteration,
		Refit:         a.Training.Refit,
	}
	if b := m.info.BestIteration; b < -1 || (b >= 0 && b >= len(m.info.ValScore)) {
		return bad("best_iteration %d with %d validation scores", b, len(m.info.ValScore))
	}
	if err := m.predictor(); err != nil {
		return nil, err
	}
	return m, nil
}
