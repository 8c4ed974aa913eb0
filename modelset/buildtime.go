package modelset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/models/ngboost"
)

// FileBuildTimeBounds holds the parameter bounds of a bundle's NGBoost build-time models
// (ParamBounds), by model name, and the reference of those whose location is relative
// to a recent mean (Relative). Bundles published before the bounds existed lack it, and
// their models predict unclipped.
const FileBuildTimeBounds = "buildtime.bounds.json"

// BoundsVersion is the latest format version of FileBuildTimeBounds: version 2 adds the
// "relative" object, version 3 a relative model's "log_shift" (Relative.Shift). A file
// is written with the lowest version that holds it (1 without relative models, 2 for
// relative models without a shift) and every version is read; a reader that knows an
// older version refuses a newer file instead of serving its relative locations as
// absolute ones, or without their shift.
const BoundsVersion = 3

// ParamBounds are the closed intervals the boosted parameters of an NGBoost build-time
// model are clipped to: Loc (the mean of Y for a Normal, of log Y for a LogNormal) and
// LogScale (the log of the standard deviation of Y, or of log Y). The trainer sets them
// to the range the model's own predictions span on the rows it was fitted on, without
// the most extreme BoundsTrim of them (BoundsOf): trees cannot extrapolate, but the sum of leaves that no training row
// reached together can, and an input outside the training range (a speculation height
// of 60 when training saw 20) then gets a scale no training row had (issue 12: a 73-day
// sigma). Clipped, no prediction is wider, narrower or further out than one the model
// made for all but the BoundsTrim most extreme of the rows it learnt from.
type ParamBounds struct {
	Loc      [2]float64 `json:"loc"`
	LogScale [2]float64 `json:"log_scale"`
}

// BoundsTrim is the share of the training rows, at each end of each parameter's
// range, whose predicted parameters BoundsOf leaves outside the bounds (at least one row
// at each end once there are three). The base trees split down to single-row leaves (the
// reference's min_samples_leaf=1), so a model can give one training row parameters of
// its own: on brettwooldridge/HikariCP's BuildFast history, a failed build of 2 s
// against a recent mean of 188 s, isolated by the source columns, got a log scale of 3.74
// (sigma 42 in log seconds, an infinite mean), and bounds spanning every training row
// let holdout rows falling into its leaves have it too (issue 12). A parameter that
// fewer than 0.5% of the training rows reached is the model's fit to those rows, not a
// range the repository's builds support.
const BoundsTrim = 0.005

// BoundsOf returns the ParamBounds of the parameters params (row-major pairs of loc and
// log scale, as ngboost.Model.PredictParams gives them), ignoring the pairs with a
// non-finite value: for each parameter, the range of its values without the
// ceil(BoundsTrim·n) smallest and largest of the n finite pairs (none when n < 3, and
// never all of them). It returns false when no pair is finite.
func BoundsOf(params []float64) (ParamBounds, bool) {
	var loc, ls []float64
	for i := 0; i+1 < len(params); i += 2 {
		l, s := params[i], params[i+1]
		if math.IsNaN(l) || math.IsInf(l, 0) || math.IsNaN(s) || math.IsInf(s, 0) {
			continue
		}
		loc, ls = append(loc, l), append(ls, s)
	}
	n := len(loc)
	if n == 0 {
		return ParamBounds{}, false
	}
	slices.Sort(loc)
	slices.Sort(ls)
	k := min(int(math.Ceil(BoundsTrim*float64(n))), (n-1)/2)
	return ParamBounds{Loc: [2]float64{loc[k], loc[n-1-k]}, LogScale: [2]float64{ls[k], ls[n-1-k]}}, true
}

// clip returns p clipped to [lo, hi]; NaN stays NaN.
func clip(p float64, r [2]float64) float64 {
	switch {
	case p < r[0]:
		return r[0]
	case p > r[1]:
		return r[1]
	}
	return p
}

// valid reports whether b's intervals are finite and not reversed.
func (b ParamBounds) valid() bool {
	for _, r := range [][2]float64{b.Loc, b.LogScale} {
		if math.IsNaN(r[0]) || math.IsNaN(r[1]) || math.IsInf(r[0], 0) || math.IsInf(r[1], 0) || r[0] > r[1] {
			return false
		}
	}
	return true
}

// BuildTimeModel is an NGBoost build-time model of a bundle with the bounds its
// predicted parameters are clipped to and, for a relative model, the reference duration
// its location is relative to. Every prediction method of the embedded model is
// overridden to clip and add the reference, so that the scorer, the evaluation and the
// trainer's checks see the same numbers. Make one with NewBuildTimeModel, which refuses
// the families a bundle cannot serve. A BuildTimeModel is read-only and safe for
// concurrent use.
type BuildTimeModel struct {
	*ngboost.Model
	// Bounds clip the predicted parameters; nil means none (bundles without
	// FileBuildTimeBounds). For a relative model they bound the relative location.
	Bounds *ParamBounds
	// Relative, when not nil, makes the model's location relative to a reference
	// duration read from each row (see Relative); nil means absolute.
	Relative *Relative
}

// ErrBuildTimeFamily is an NGBoost whose distribution family a bundle cannot hold as a
// build-time model: only the Normal and the LogNormal can.
var ErrBuildTimeFamily = errors.New("modelset: unsupported build-time NGBoost family")

// NewBuildTimeModel returns m with bounds (nil for none) as a build-time model. It
// returns an error wrapping ErrBuildTimeFamily when m's family is neither Normal nor
// LogNormal: a bundle names, files, clips and predicts its build-time models by their
// (Loc, log Scale) pair, which is the mean and log standard deviation of Y or log Y for
// those two families only (an Exponential has no Loc and a Gamma boosts log shape and
// log rate), and has a file and a model name for those two only.
func NewBuildTimeModel(m *ngboost.Model, bounds *ParamBounds) (*BuildTimeModel, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no model", ErrBuildTimeFamily)
	}
	if f := m.Family(); f != ngboost.Normal && f != ngboost.LogNormal {
		return nil, fmt.Errorf("%w: distribution %s (want %s or %s)", ErrBuildTimeFamily, f, ngboost.Normal, ngboost.LogNormal)
	}
	return &BuildTimeModel{Model: m, Bounds: bounds}, nil
}

// Name returns the model's name in manifests and metric keys: ModelNGBoostLogNormal or
// ModelNGBoostNormal.
func (m *BuildTimeModel) Name() string {
	if m.Family() == ngboost.LogNormal {
		return ModelNGBoostLogNormal
	}
	return ModelNGBoostNormal
}

// File returns the model's bundle file: FileBuildTimeLogNormal or FileBuildTime (the
// Normal's).
func (m *BuildTimeModel) File() string {
	if m.Family() == ngboost.LogNormal {
		return FileBuildTimeLogNormal
	}
	return FileBuildTime
}

// PredictParams is ngboost.Model.PredictParams with the parameters clipped to Bounds
// and, for a relative model, the log of each row's reference added to the location.
func (m *BuildTimeModel) PredictParams(dst []float64, x mat.Matrix) []float64 {
	dst = m.Model.PredictParams(dst, x)
	if b := m.Bounds; b != nil {
		for i := 0; i+1 < len(dst); i += 2 {
			dst[i], dst[i+1] = clip(dst[i], b.Loc), clip(dst[i+1], b.LogScale)
		}
	}
	if r := m.Relative; r != nil {
		for i := 0; i+1 < len(dst); i += 2 {
			dst[i] += r.Offset(x.At(i/2, r.col))
		}
	}
	return dst
}

// Predict is ngboost.Model.Predict (mean and standard deviation of Y per row, in
// seconds) of the clipped parameters.
func (m *BuildTimeModel) Predict(dst []float64, x mat.Matrix) []float64 {
	dst = m.PredictParams(dst, x)
	for i := 0; i+1 < len(dst); i += 2 {
		d := ngboost.Dist{Family: m.Family(), Loc: dst[i], Scale: math.Exp(dst[i+1])}
		dst[i], dst[i+1] = d.Mean(), d.StdDev()
	}
	return dst
}

// PredictDist is ngboost.Model.PredictDist of the clipped parameters.
func (m *BuildTimeModel) PredictDist(x mat.Matrix) []ngboost.Dist {
	p := m.PredictParams(nil, x)
	out := make([]ngboost.Dist, len(p)/2)
	for i := range out {
		out[i] = ngboost.Dist{Family: m.Family(), Loc: p[2*i], Scale: math.Exp(p[2*i+1])}
	}
	return out
}

// PredictRow is ngboost.Model.PredictRow of the clipped parameters, relative ones
// moved to the row's reference.
func (m *BuildTimeModel) PredictRow(row []float64) ngboost.Dist {
	d := m.Model.PredictRow(row)
	if b := m.Bounds; b != nil {
		d.Loc = clip(d.Loc, b.Loc)
		d.Scale = math.Exp(clip(math.Log(d.Scale), b.LogScale))
	}
	if r := m.Relative; r != nil {
		d.Loc += r.Offset(row[r.col])
	}
	return d
}

// boundsJSON is the JSON form of FileBuildTimeBounds.
type boundsJSON struct {
	FormatVersion int                    `json:"format_version"`
	Models        map[string]ParamBounds `json:"models"`
	// Relative holds the relative models' references, by model name (version 2).
	Relative map[string]Relative `json:"relative,omitempty"`
}

// writeBounds writes the bounds of the models among ms that have some, and the
// references of the relative ones; version 1 when none is relative.
func writeBounds(w io.Writer, ms ...*BuildTimeModel) error {
	j := boundsJSON{FormatVersion: 1, Models: map[string]ParamBounds{}}
	for _, m := range ms {
		if m != nil && m.Bounds != nil {
			j.Models[m.Name()] = *m.Bounds
		}
		if m != nil && m.Relative != nil {
			if j.Relative == nil {
				j.Relative = map[string]Relative{}
			}
			j.Relative[m.Name()] = *m.Relative
			j.FormatVersion = max(j.FormatVersion, m.Relative.boundsVersion())
		}
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// readBounds decodes FileBuildTimeBounds and sets the Bounds of the models among ms
// that it names. A bound that is not a finite, ordered interval, or one naming a model
// the bundle lacks, is an error.
func readBounds(data []byte, ms ...*BuildTimeModel) error {
	var j boundsJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.FormatVersion < 1 || j.FormatVersion > BoundsVersion || j.FormatVersion == 1 && j.Relative != nil {
		return fmt.Errorf("format version %d, want 1 to %d (relative models need 2)", j.FormatVersion, BoundsVersion)
	}
	names := make([]string, 0, len(j.Models))
	for n := range j.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := j.Models[n]
		if !b.valid() {
			return fmt.Errorf("model %s: bounds %+v are not finite ordered intervals", n, b)
		}
		i := slices.IndexFunc(ms, func(m *BuildTimeModel) bool { return m != nil && m.Name() == n })
		if i < 0 {
			return fmt.Errorf("bounds of model %s, which the bundle lacks", n)
		}
		ms[i].Bounds = &b
	}
	names = names[:0]
	for n := range j.Relative {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		i := slices.IndexFunc(ms, func(m *BuildTimeModel) bool { return m != nil && m.Name() == n })
		if i < 0 {
			return fmt.Errorf("reference of model %s, which the bundle lacks", n)
		}
		r := j.Relative[n]
		rel, err := NewRelative(ms[i].Model, r.FallbackS)
		if err != nil {
			return fmt.Errorf("model %s: %w", n, err)
		}
		if rel.Shift = r.Shift; math.IsNaN(r.Shift) || math.IsInf(r.Shift, 0) || r.boundsVersion() > j.FormatVersion {
			return fmt.Errorf("model %s: relative log_shift %v in format version %d (want a finite shift, in version %d)", n, r.Shift, j.FormatVersion, BoundsVersion)
		}
		if r.Column != rel.Column {
			return fmt.Errorf("model %s: relative to column %q, want %q", n, r.Column, rel.Column)
		}
		ms[i].Relative = rel
	}
	return nil
}
