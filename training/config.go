package training

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/features"
)

// Errors returned by this package, wrapped with the field, file, metric or model they
// concern; match them with errors.Is.
var (
	// ErrConfig is a configuration field out of range or a configuration file that does
	// not parse.
	ErrConfig = errors.New("training: invalid config")
	// ErrNoData is a window or table without the rows a model needs.
	ErrNoData = errors.New("training: not enough data")
	// ErrRepo is a repository that is not in the history, or a history with several
	// repositories and none chosen.
	ErrRepo = errors.New("training: repository")
	// ErrGate is a new model worse than the current champion by more than a gate allows.
	// The error is a *GateError.
	ErrGate = errors.New("training: gate failed")
	// ErrBundle is a bundle whose models cannot be loaded.
	ErrBundle = errors.New("training: bad bundle")
)

// The values of Config.BaselineGate.
const (
	BaselineGateRefuse = "refuse"
	BaselineGateServe  = "serve"
	BaselineGateOff    = "off"
)

// Challenger names, as --challengers and Config.Challengers spell them.
const (
	ChallengerGBMSuccess    = "gbm-success"    // gradient-boosted trees of success
	ChallengerGBMConflict   = "gbm-conflict"   // gradient-boosted trees of conflicts (P-conf)
	ChallengerNGBoostNormal = "ngboost-normal" // NGBoost Normal of build time
	// ChallengerNGBoostLogNormal was the NGBoost LogNormal challenger of build time,
	// which is now the champion: it is accepted, so that older configurations still
	// load, and ignored with a warning.
	ChallengerNGBoostLogNormal = "ngboost-lognormal"
)

// challengers lists the challenger names Config.Challengers accepts.
var challengers = []string{ChallengerGBMSuccess, ChallengerGBMConflict, ChallengerNGBoostNormal, ChallengerNGBoostLogNormal}

// Defaults of the Config fields left zero.
const (
	DefaultWindow          = 90 * 24 * time.Hour // paper 000 §IX-B: three months of history
	DefaultHoldoutFraction = 0.2
	DefaultRetain          = 10
	// NGBoost defaults: a larger learning rate than the reference's 0.01 so that a
	// weekly run on 90 days fits in minutes; early stopping picks the number of
	// iterations on the last tenth of the training rows.
	DefaultNEstimators         = 300
	DefaultLearningRate        = 0.05
	DefaultEarlyStoppingRounds = 30
	DefaultValidationFraction  = 0.1
	// DefaultConflictPrior is the P-conf of overlapping pairs a bundle without a P-conf
	// model states: the order of the mean true_p_conflict of overlapping pending pairs in
	// the synthetic worlds (0.036 on the go profile, see package features), rounded up.
	DefaultConflictPrior = 0.05
)

// Duration is a time.Duration that reads from JSON and flags as a Go duration ("36h")
// or a number of days ("90d").
type Duration time.Duration

// ParseDuration parses "90d" (days, a decimal number) or any time.ParseDuration form.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.ParseFloat(d, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%w: duration %q: not a number of days", ErrConfig, s)
		}
		return Duration(v * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: duration %q: %w", ErrConfig, s, err)
	}
	return Duration(d), nil
}

// String formats d in days when it is a whole number of days, else as a Go duration.
func (d Duration) String() string {
	day := Duration(24 * time.Hour)
	if d != 0 && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return time.Duration(d).String()
}

// Set implements flag.Value.
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes d as a string in the form String gives.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a string in a form ParseDuration accepts.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w: duration: %w", ErrConfig, err)
	}
	return d.Set(s)
}

// LogisticParams are the hyper-parameters of a logistic model (models/logistic); zero
// values are that package's defaults (scikit-learn's).
type LogisticParams struct {
	// C is the inverse L2 regularisation strength; 0 means chosen on validation from
	// LogisticCGrid (SelectC).
	C float64 `json:"c,omitempty"`
	// MaxIter caps the L-BFGS iterations; 0 means 100.
	MaxIter int `json:"max_iter,omitempty"`
	// ClassWeight is "none" (or empty) or "balanced".
	ClassWeight string `json:"class_weight,omitempty"`
}

// NGBoostParams are the hyper-parameters of an NGBoost model (models/ngboost); zero
// values mean this package's defaults (DefaultNEstimators and the others), then the
// reference's.
type NGBoostParams struct {
	NEstimators  int     `json:"n_estimators,omitempty"`
	LearningRate float64 `json:"learning_rate,omitempty"`
	MaxDepth     int     `json:"max_depth,omitempty"`
	// MinibatchFrac is the share of rows each iteration fits on; 0 means 1.
	MinibatchFrac float64 `json:"minibatch_frac,omitempty"`
	// EarlyStoppingRounds stops boosting this many iterations after the best score on
	// the last ValidationFraction of the training rows, then refits on all of them with
	// the best number of iterations. 0 means DefaultEarlyStoppingRounds; -1 disables
	// early stopping.
	EarlyStoppingRounds int     `json:"early_stopping_rounds,omitempty"`
	ValidationFraction  float64 `json:"validation_fraction,omitempty"`
	// Relative says whether the LogNormal champion models the duration relative to the
	// recent mean of succeeded builds (modelset.Relative): RelativeAuto ("", the
	// default) chooses the form per fit on the inner validation rows (SelectRelative),
	// RelativeOn, RelativeOff and RelativeReference force the relative, absolute and
	// reference forms. The Normal challenger is always absolute.
	Relative string `json:"relative,omitempty"`
	// DropAborted fits both NGBoost models on the succeeded and failed builds only, as
	// before issue 12, instead of adding the aborted builds as right-censored rows
	// (censored.go).
	DropAborted bool `json:"drop_aborted,omitempty"`
}

// The values of NGBoostParams.Relative.
const (
	RelativeAuto = ""
	RelativeOn   = "on"
	RelativeOff  = "off"
	// RelativeReference forces FormReference, the recent mean with a fitted shift and
	// scale and no trees.
	RelativeReference = "reference"
)

// Gate is the largest degradation of one metric, relative to the current champion, that
// still lets a new bundle be published. A degradation is the new value minus the old one
// for a loss (lower is better), the old minus the new for a score. It fails the gate when
// it exceeds MaxAbs (if MaxAbs > 0) or MaxRel·|old| (if MaxRel > 0).
type Gate struct {
	MaxRel float64 `json:"max_rel,omitempty"`
	MaxAbs float64 `json:"max_abs,omitempty"`
}

// DefaultGates are the gates used when Config.Gates is nil: the log losses of the two
// classifiers may grow by 2% and 5%, AUCs drop by 0.02, the build-time CRPS grow by 5%
// and its NLL (in nats, which may be of either sign) by 0.05.
func DefaultGates() map[string]Gate {
	return map[string]Gate{
		"success.log_loss":  {MaxRel: 0.02},
		"success.auc":       {MaxAbs: 0.02},
		"conflict.log_loss": {MaxRel: 0.05},
		"conflict.auc":      {MaxAbs: 0.02},
		"buildtime.crps":    {MaxRel: 0.05},
		"buildtime.nll":     {MaxAbs: 0.05},
	}
}

// Config configures Train and Publish. The zero value trains on the last 90 days before
// now of the only repository of the history, with the champion models only, and gates
// with DefaultGates. It is read from JSON by LoadConfig; the JSON names are given.
type Config struct {
	// Repo is the repository to train ("repo"); "" means the only one of the history.
	Repo string `json:"repo,omitempty"`
	// AsOf is the end of the window ("as_of", RFC 3339); zero means now. The trainer's
	// train and schedule commands default to LatestSubmission instead (--as-of latest).
	AsOf time.Time `json:"as_of,omitzero"`
	// Window is the length of history before AsOf ("window": "90d", "2160h"); zero means
	// DefaultWindow.
	Window Duration `json:"window,omitempty"`
	// HoldoutFraction is the share of the latest success rows evaluated on
	// ("holdout_fraction"), in (0, 1); zero means DefaultHoldoutFraction.
	HoldoutFraction float64 `json:"holdout_fraction,omitempty"`
	// Challengers lists the challenger models to train as well ("challengers"):
	// ChallengerGBMSuccess, ChallengerGBMConflict, ChallengerNGBoostNormal
	// (ChallengerNGBoostLogNormal, the champion, is ignored).
	Challengers []string `json:"challengers,omitempty"`
	// Success and Conflict are the logistic champions' parameters ("success",
	// "conflict"); BuildTime those of both NGBoost models ("buildtime"), the LogNormal
	// champion and the Normal challenger.
	Success   LogisticParams `json:"success,omitzero"`
	Conflict  LogisticParams `json:"conflict,omitzero"`
	BuildTime NGBoostParams  `json:"buildtime,omitzero"`
	// GBM holds the LightGBM parameters of the gbm-success challenger ("gbm"), by name or
	// alias as gbm.ParseParams reads them; the objective is always binary. Empty means
	// chosen on validation from SmallGBMGrid (SelectSmallGBM).
	GBM map[string]string `json:"gbm,omitempty"`
	// Gates maps metric keys (as in the manifest, e.g. "success.log_loss") to the
	// degradation they allow ("gates"). Nil means DefaultGates; an empty map gates
	// nothing.
	Gates map[string]Gate `json:"gates,omitempty"`
	// AllowPartial trains what the history supports ("allow_partial"): a model whose
	// table has no rows, or only one class, is left out of the bundle (and logged)
	// instead of failing Train. Real histories without durations or pairs give such
	// partial bundles, which Evaluate and Compare read but a scorer cannot serve.
	AllowPartial bool `json:"allow_partial,omitempty"`
	// AllowMissingFeatures trains even when a feature is missing (NaN) in every training
	// row of its table although the history has its source column elsewhere
	// ("allow_missing_features"), which Train otherwise refuses with ErrNoData naming the
	// features: a misspelled column, or a window older than a column, should be fixed
	// instead. A feature whose source column no change of the history has (an import
	// without affected targets) needs no flag: Train notes it (Result.Notes) and goes on.
	AllowMissingFeatures bool `json:"allow_missing_features,omitempty"`
	// BaselineGate says what Publish does when a champion does not beat the best
	// baseline of its section on the holdout ("baseline_gate"): BaselineGateRefuse (the
	// default, "") refuses the bundle with a *BaselineError; BaselineGateServe publishes
	// it with that baseline as the model a scorer serves for the section (manifest extra
	// ExtraServedBaselines); BaselineGateOff publishes it as it is.
	BaselineGate string `json:"baseline_gate,omitempty"`
	// ConflictPrior is the P-conf of overlapping pairs that a bundle without a P-conf
	// model states for the speculation math ("conflict_prior"), in [0, 1); zero means
	// DefaultConflictPrior.
	ConflictPrior float64 `json:"conflict_prior,omitempty"`
	// TrainedAt is the manifest's trained_at and the time the registry names the version
	// by ("trained_at", RFC 3339); zero means the time of Publish. A reproducible bundle
	// (go generate ./internal/defaultbundle) sets it so that every run writes the same
	// manifest.
	TrainedAt time.Time `json:"trained_at,omitzero"`
	// Seed seeds the models' sampling ("seed").
	Seed uint64 `json:"seed,omitempty"`
	// Retain is how many versions per repository Publish keeps ("retain"); zero means
	// DefaultRetain.
	Retain int `json:"retain,omitempty"`
	// AuthorKey, when set, pseudonymises the authors of the bundle's developer table:
	// each name is replaced by its HMAC-SHA256 under the operator's key
	// (features.AuthorKey) and the manifest records only the key's id (extra
	// modelset.ExtraAuthorKeyID). predictd, eval and compare then need the same key to
	// load the bundle. It is never written out; nil keeps the names in clear.
	AuthorKey *features.AuthorKey `json:"-"`
	// Log receives progress, one record per stage with its duration; nil means none.
	Log *slog.Logger `json:"-"`
}

// LoadConfig reads a Config from the JSON file at path. Unknown fields are an error.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%w: %s: %w", ErrConfig, path, err)
	}
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("training: config %s: %w", path, err)
	}
	return c, nil
}

// validate checks the fields that have a domain.
func (c *Config) validate() error {
	switch {
	case c.Window < 0:
		return fmt.Errorf("%w: window %s is negative", ErrConfig, c.Window)
	case c.HoldoutFraction < 0 || c.HoldoutFraction >= 1 || math.IsNaN(c.HoldoutFraction):
		return fmt.Errorf("%w: holdout_fraction %g is not in (0, 1)", ErrConfig, c.HoldoutFraction)
	case c.Retain < 0:
		return fmt.Errorf("%w: retain %d is negative", ErrConfig, c.Retain)
	case c.BaselineGate != "" && c.BaselineGate != BaselineGateRefuse && c.BaselineGate != BaselineGateServe && c.BaselineGate != BaselineGateOff:
		return fmt.Errorf("%w: baseline_gate %q is not %s, %s or %s", ErrConfig, c.BaselineGate, BaselineGateRefuse, BaselineGateServe, BaselineGateOff)
	case c.ConflictPrior < 0 || c.ConflictPrior >= 1 || math.IsNaN(c.ConflictPrior):
		return fmt.Errorf("%w: conflict_prior %g is not in [0, 1)", ErrConfig, c.ConflictPrior)
	case c.BuildTime.EarlyStoppingRounds < -1:
		return fmt.Errorf("%w: buildtime.early_stopping_rounds %d is below -1", ErrConfig, c.BuildTime.EarlyStoppingRounds)
	case !slices.Contains([]string{RelativeAuto, RelativeOn, RelativeOff, RelativeReference}, c.BuildTime.Relative):
		return fmt.Errorf("%w: buildtime.relative %q is not %q (chosen on validation), %q, %q or %q", ErrConfig, c.BuildTime.Relative, RelativeAuto, RelativeOn, RelativeOff, RelativeReference)
	}
	for _, ch := range c.Challengers {
		if !slices.Contains(challengers, ch) {
			return fmt.Errorf("%w: challenger %q is not one of %s", ErrConfig, ch, strings.Join(challengers, ", "))
		}
	}
	for k, g := range c.Gates {
		if _, ok := metricDirection(k); !ok {
			return fmt.Errorf("%w: gate %q: unknown metric", ErrConfig, k)
		}
		if g.MaxRel < 0 || g.MaxAbs < 0 || math.IsNaN(g.MaxRel) || math.IsNaN(g.MaxAbs) {
			return fmt.Errorf("%w: gate %q: negative or NaN margin", ErrConfig, k)
		}
	}
	return nil
}

// ParseChallengers splits a comma-separated list of challenger names, as the
// --challengers flag gives it.
func ParseChallengers(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(challengers, f) {
			return nil, fmt.Errorf("%w: challenger %q is not one of %s", ErrConfig, f, strings.Join(challengers, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (c *Config) window() time.Duration {
	if c.Window == 0 {
		return DefaultWindow
	}
	return time.Duration(c.Window)
}

func (c *Config) holdout() float64 {
	if c.HoldoutFraction == 0 {
		return DefaultHoldoutFraction
	}
	return c.HoldoutFraction
}

func (c *Config) conflictPrior() float64 {
	if c.ConflictPrior == 0 {
		return DefaultConflictPrior
	}
	return c.ConflictPrior
}

func (c *Config) retain() int {
	if c.Retain == 0 {
		return DefaultRetain
	}
	return c.Retain
}

func (c *Config) gates() map[string]Gate {
	if c.Gates == nil {
		return DefaultGates()
	}
	return c.Gates
}

func (c *Config) has(challenger string) bool { return slices.Contains(c.Challengers, challenger) }

func (c *Config) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}
