package logistic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// FormatVersion is the newest artifact format version: WriteJSON writes it for a model
// that clips its inputs (Config.ClipToTrainingRange) and FormatVersionNoClip, which
// older readers accept, for one that does not; ReadJSON accepts both.
const FormatVersion = 2

// FormatVersionNoClip is the artifact format version of a model without clip_lo and
// clip_hi.
const FormatVersionNoClip = 1

// Kind is the value of the artifact's "kind" field.
const Kind = "logistic"

// consistencyTol is the relative tolerance between the stored original-scale
// coefficients and those recomputed from the standardised ones: both come from the same
// float64 operations, so only a hand edit can make them differ.
const consistencyTol = 1e-9

type artifact struct {
	FormatVersion        int            `json:"format_version"`
	Kind                 string         `json:"kind"`
	FeatureNames         []string       `json:"feature_names"`
	Means                []float64      `json:"means"`
	Scales               []float64      `json:"scales"`
	Selected             []bool         `json:"selected"`
	Coefficients         []float64      `json:"coefficients"`
	Intercept            float64        `json:"intercept"`
	OriginalCoefficients []float64      `json:"original_coefficients"`
	OriginalIntercept    float64        `json:"original_intercept"`
	Config               artifactConfig `json:"config"`
	Training             artifactStats  `json:"training"`
	// ClipLo and ClipHi are the training range Predict clips to (format_version 2).
	ClipLo []float64 `json:"clip_lo,omitempty"`
	ClipHi []float64 `json:"clip_hi,omitempty"`
}

type artifactConfig struct {
	C                 float64 `json:"C"`
	Penalty           string  `json:"penalty"`
	MaxIter           int     `json:"max_iter"`
	Tol               float64 `json:"tol"`
	ClassWeight       string  `json:"class_weight"`
	NFeaturesToSelect int     `json:"n_features_to_select"`
	Step              int     `json:"step"`
	// Unpenalized is Config.Unpenalized, left out when empty (as every model written
	// before it existed).
	Unpenalized []int `json:"unpenalized,omitempty"`
}

type artifactStats struct {
	Rows       int     `json:"rows"`
	Iterations int     `json:"iterations"`
	Converged  bool    `json:"converged"`
	LogLoss    float64 `json:"log_loss"`
}

// WriteJSON writes m to w in the artifact format of the package documentation.
func (m *Model) WriteJSON(w io.Writer) error {
	version := FormatVersionNoClip
	if m.lo != nil {
		version = FormatVersion
	}
	a := artifact{
		FormatVersion:        version,
		ClipLo:               m.lo,
		ClipHi:               m.hi,
		Kind:                 Kind,
		FeatureNames:         m.names,
		Means:                m.mean,
		Scales:               m.scale,
		Selected:             m.selected,
		Coefficients:         m.w,
		Intercept:            m.b,
		OriginalCoefficients: m.beta,
		OriginalIntercept:    m.beta0,
		Config: artifactConfig{
			C: m.cfg.C, Penalty: m.cfg.Penalty.String(), MaxIter: m.cfg.MaxIter, Tol: m.cfg.Tol,
			ClassWeight: m.cfg.ClassWeight.String(), NFeaturesToSelect: m.cfg.NFeaturesToSelect,
			Step: m.cfg.Step, Unpenalized: m.cfg.Unpenalized,
		},
		Training: artifactStats(m.stats),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&a); err != nil {
		return fmt.Errorf("logistic: writing model: %w", err)
	}
	return nil
}

// SaveFile writes m to path atomically, mode 0644: to a temporary file in the same
// directory, synced and closed, then renamed over path, so a reader sees the old model
// or the whole new one.
func (m *Model) SaveFile(path string) error {
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("logistic: saving model %s: %w", path, err)
	}
	return nil
}

// ReadJSON reads a model written by WriteJSON. An artifact of another format_version is
// an error wrapping ErrUnsupportedVersion; one that does not decode or is inconsistent
// wraps ErrMalformed.
func ReadJSON(r io.Reader) (*Model, error) {
	var a artifact
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if a.FormatVersion != FormatVersion && a.FormatVersion != FormatVersionNoClip {
		return nil, fmt.Errorf("%w: format_version %d (this build reads %d and %d)", ErrUnsupportedVersion, a.FormatVersion, FormatVersionNoClip, FormatVersion)
	}
	if a.Kind != Kind {
		return nil, fmt.Errorf("%w: kind %q, want %q", ErrMalformed, a.Kind, Kind)
	}
	d := len(a.FeatureNames)
	switch {
	case d == 0:
		return nil, fmt.Errorf("%w: no features", ErrMalformed)
	case len(a.Means) != d, len(a.Scales) != d, len(a.Selected) != d, len(a.Coefficients) != d,
		len(a.OriginalCoefficients) != d:
		return nil, fmt.Errorf("%w: feature_names, means, scales, selected, coefficients and original_coefficients lengths %d, %d, %d, %d, %d, %d differ",
			ErrMalformed, d, len(a.Means), len(a.Scales), len(a.Selected), len(a.Coefficients), len(a.OriginalCoefficients))
	}
	seen := make(map[string]bool, d)
	for _, n := range a.FeatureNames {
		if seen[n] {
			return nil, fmt.Errorf("%w: duplicate feature name %q", ErrMalformed, n)
		}
		seen[n] = true
	}
	for j := range d {
		if !finite(a.Means[j]) || !finite(a.Coefficients[j]) || !(a.Scales[j] > 0) || math.IsInf(a.Scales[j], 0) {
			return nil, fmt.Errorf("%w: feature %q: mean %v, scale %v, coefficient %v", ErrMalformed, a.FeatureNames[j], a.Means[j], a.Scales[j], a.Coefficients[j])
		}
		if !a.Selected[j] && a.Coefficients[j] != 0 {
			return nil, fmt.Errorf("%w: feature %q is not selected but has coefficient %v", ErrMalformed, a.FeatureNames[j], a.Coefficients[j])
		}
	}
	if !finite(a.Intercept) {
		return nil, fmt.Errorf("%w: intercept %v", ErrMalformed, a.Intercept)
	}
	pen, err := ParsePenalty(a.Config.Penalty)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	cw, err := ParseClassWeight(a.Config.ClassWeight)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	cfg := Config{C: a.Config.C, Penalty: pen, MaxIter: a.Config.MaxIter, Tol: a.Config.Tol,
		ClassWeight: cw, NFeaturesToSelect: a.Config.NFeaturesToSelect, Step: a.Config.Step, Unpenalized: a.Config.Unpenalized}
	if err := cfg.validate(d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	switch clip := a.ClipLo != nil || a.ClipHi != nil; {
	case a.FormatVersion == FormatVersionNoClip && clip:
		return nil, fmt.Errorf("%w: clip_lo and clip_hi need format_version %d", ErrMalformed, FormatVersion)
	case a.FormatVersion == FormatVersion && (len(a.ClipLo) != d || len(a.ClipHi) != d):
		return nil, fmt.Errorf("%w: format_version %d needs clip_lo and clip_hi of %d numbers, got %d and %d", ErrMalformed, FormatVersion, d, len(a.ClipLo), len(a.ClipHi))
	}
	for j := range a.ClipLo {
		if !finite(a.ClipLo[j]) || !finite(a.ClipHi[j]) || a.ClipLo[j] > a.ClipHi[j] {
			return nil, fmt.Errorf("%w: feature %q: clip range [%v, %v]", ErrMalformed, a.FeatureNames[j], a.ClipLo[j], a.ClipHi[j])
		}
	}
	cfg.ClipToTrainingRange = a.ClipLo != nil
	m := newModel(a.FeatureNames, a.Means, a.Scales, a.Coefficients, a.Intercept, a.Selected, cfg)
	m.lo, m.hi = a.ClipLo, a.ClipHi
	m.stats = TrainStats(a.Training)
	for j := range d {
		if !finite(m.beta[j]) {
			return nil, fmt.Errorf("%w: feature %q: coefficient/scale = %v", ErrMalformed, a.FeatureNames[j], m.beta[j])
		}
		if !near(m.beta[j], a.OriginalCoefficients[j]) {
			return nil, fmt.Errorf("%w: feature %q: original_coefficient %v, but coefficient/scale = %v", ErrMalformed, a.FeatureNames[j], a.OriginalCoefficients[j], m.beta[j])
		}
	}
	if !finite(m.beta0) || !near(m.beta0, a.OriginalIntercept) {
		return nil, fmt.Errorf("%w: original_intercept %v, but the standardised parameters give %v", ErrMalformed, a.OriginalIntercept, m.beta0)
	}
	return m, nil
}

// LoadFile reads the model artifact at path with ReadJSON.
func LoadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("logistic: %w", err)
	}
	defer f.Close()
	m, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func near(a, b float64) bool {
	return math.Abs(a-b) <= consistencyTol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
