package server

import (
	"errors"
	"fmt"
	"math"

	"github.com/sqpredict/sqpredict/scoring"
)

// ErrModelFault is a model that produced an output no caller may receive: a NaN or
// infinite value, a probability outside [0, 1], a negative mean duration (zero too for
// a LogNormal, whose mean is positive) or a negative standard deviation. It is
// the server's fault, never the caller's: the request fails with INTERNAL, the fault is
// logged with the model's version and counted in predictd_model_faults_total.
var ErrModelFault = errors.New("server: model fault")

// ModelFaultError is one faulty output: the model, the kind of prediction, the item of
// the request and the value. It wraps ErrModelFault.
type ModelFaultError struct {
	Version, Role, Kind string
	Item                int
	Output              string
	Value               float64
}

// Error implements error.
func (e *ModelFaultError) Error() string {
	return fmt.Sprintf("server: model fault: %s %s predicted %s %v for item %d (%s)", e.Role, e.Version, e.Output, e.Value, e.Item, e.Kind)
}

// Unwrap returns ErrModelFault.
func (e *ModelFaultError) Unwrap() error { return ErrModelFault }

// checkOutputs returns a *ModelFaultError for the first output of out (width values per
// item, the item predicted by by[i]) that is not a valid prediction of kind, or nil.
func checkOutputs(kind string, by []*Model, out []float64, width int) error {
	for i, m := range by {
		for w := range width {
			x := out[i*width+w]
			var bad bool
			var name string
			switch {
			case kind == kindBuildTime && w == 0:
				ok := x >= 0 && !math.IsInf(x, 1)
				if m.BuildFamily == scoring.BuildLogNormal {
					ok = x > 0 && !math.IsInf(x, 1)
				}
				bad, name = !ok, "mean_seconds"
			case kind == kindBuildTime:
				bad, name = !(x >= 0) || math.IsInf(x, 0), "stddev_seconds"
			case kind == kindSuccess:
				bad, name = !checkUnit(x), "p_succ"
			default:
				bad, name = !checkUnit(x), "p_conf"
			}
			if bad {
				return &ModelFaultError{Version: m.Version, Role: m.Role.String(), Kind: kind, Item: i, Output: name, Value: x}
			}
		}
	}
	return nil
}

// checkUnit reports whether x is a probability (NaN is not).
func checkUnit(x float64) bool { return x >= 0 && x <= 1 }

// faulted counts and logs a model fault; err must come from checkOutputs.
func (p *predictor) faulted(err error) {
	var f *ModelFaultError
	if errors.As(err, &f) {
		p.cfg.Metrics.modelFault(f.Kind, f.Role)
		p.cfg.Log.Error("model produced an invalid output", "version", f.Version, "role", f.Role, "kind", f.Kind, "output", f.Output, "value", f.Value, "item", f.Item)
	}
}

// checkShadow checks the shadow model's outputs: a fault is counted and logged, and the
// outputs are then left out of the prediction log (nil model and outputs returned); the
// request itself is answered by the served model.
func (p *predictor) checkShadow(kind string, shadow *Model, n int, out []float64, width int) (*Model, []float64) {
	if shadow == nil {
		return nil, nil
	}
	by := make([]*Model, n)
	for i := range by {
		by[i] = shadow
	}
	if err := checkOutputs(kind, by, out, width); err != nil {
		p.faulted(err)
		return nil, nil
	}
	return shadow, out
}
