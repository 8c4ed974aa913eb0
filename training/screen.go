package training

import (
	"fmt"
	"math"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
)

// OutputError is a champion model that answers out of range on its own holdout rows: a
// probability that is NaN or outside [0, 1], or a build-time distribution whose
// location, scale or moments are not finite or whose scale is not positive. Train
// returns it and publishes nothing (issue 14: a served model answered p_succ NaN with
// status OK). It wraps ErrGate.
type OutputError struct {
	Model string // bundle file name without extension, e.g. "success.logistic"
	Row   int    // index of the holdout row in its table
	ID    string // the row's id: change, "ahead/behind" pair or build
	What  string // the output and why it is out of range
}

// Error implements error.
func (e *OutputError) Error() string {
	return fmt.Sprintf("training: model %s answers %s on holdout row %d (%s); it is not published", e.Model, e.What, e.Row, e.ID)
}

// Unwrap returns ErrGate.
func (e *OutputError) Unwrap() error { return ErrGate }

// rowID names row r of t: its change, its "ahead/behind" pair or its build.
func rowID(t *features.Table, r int) string {
	switch {
	case t.Schema.Kind == features.KindBuildTime && r < len(t.BuildID):
		return "build " + t.BuildID[r]
	case t.Schema.Kind == features.KindConflict && r < len(t.AheadID) && r < len(t.ChangeID):
		return "pair " + t.AheadID[r] + "/" + t.ChangeID[r]
	case r < len(t.ChangeID):
		return "change " + t.ChangeID[r]
	}
	return "?"
}

// badProbability returns the first row of p that is NaN or outside [0, 1], or -1.
func badProbability(p []float64) (int, string) {
	for i, v := range p {
		if !(v >= 0 && v <= 1) {
			return i, fmt.Sprintf("probability %v", v)
		}
	}
	return -1, ""
}

// badDistribution returns the first row of p whose location or scale is not finite,
// whose scale is not positive, or whose mean or standard deviation in seconds is not
// finite, or -1.
func badDistribution(p eval.Predictive) (int, string) {
	for i := range p.Len() {
		mu, s := p.Mu[i], p.Sigma[i]
		switch {
		case math.IsNaN(mu) || math.IsInf(mu, 0):
			return i, fmt.Sprintf("location %v", mu)
		case !(s > 0) || math.IsInf(s, 0):
			return i, fmt.Sprintf("scale %v", s)
		}
		if m, sd := p.Mean(i), p.StdDev(i); math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(sd) || math.IsInf(sd, 0) {
			return i, fmt.Sprintf("mean %v s, standard deviation %v s (location %v, scale %v)", m, sd, mu, s)
		}
	}
	return -1, ""
}

// screenOutputs checks the outputs of every model of m on the holdout tables t. A
// champion out of range is an *OutputError; a challenger out of range is dropped from m
// (with its reason in m.LeftOut and a warning) and its file name returned.
func screenOutputs(m *Models, t tables, cfg *Config) (dropped []string, err error) {
	pr := m.Predict(t.success, t.conflict, t.buildtime)
	type check struct {
		file string
		tb   *features.Table
		bad  func() (int, string)
		drop func() // nil for a champion
	}
	prob := func(p []float64) func() (int, string) { return func() (int, string) { return badProbability(p) } }
	dist := func(p eval.Predictive) func() (int, string) {
		return func() (int, string) { return badDistribution(p) }
	}
	checks := []check{
		{FileSuccess, t.success, prob(pr.Success), nil},
		{FileConflict, t.conflict, prob(pr.Conflict), nil},
		{FileSuccessGBM, t.success, prob(pr.SuccessGBM), func() { m.SuccessGBM = nil }},
		{FileConflictGBM, t.conflict, prob(pr.ConflictGBM), func() { m.ConflictGBM = nil }},
	}
	if m.BuildTime != nil {
		checks = append(checks, check{m.BuildTime.File(), t.buildtime, dist(pr.BuildTime), nil})
	}
	if m.BuildTimeChallenger != nil {
		checks = append(checks, check{m.BuildTimeChallenger.File(), t.buildtime, dist(pr.BuildTimeChallenger), func() { m.BuildTimeChallenger = nil }})
	}
	for _, c := range checks {
		r, what := c.bad()
		if r < 0 {
			continue
		}
		e := &OutputError{Model: modelName(c.file), Row: r, ID: rowID(c.tb, r), What: what}
		if c.drop == nil {
			return dropped, e
		}
		c.drop()
		m.LeftOut[c.file] = e.Error()
		cfg.log().Warn("challenger dropped: out-of-range output on the holdout", "model", e.Model, "row", r, "id", e.ID, "output", what)
		dropped = append(dropped, c.file)
	}
	return dropped, nil
}

// dropFiles drops the challengers in files from m, recording why. The build-time
// challenger is dropped only by its own file: the other NGBoost file is the champion's.
func dropFiles(m *Models, files []string, why map[string]string) {
	for _, f := range files {
		switch {
		case f == FileSuccessGBM:
			m.SuccessGBM = nil
		case f == FileConflictGBM:
			m.ConflictGBM = nil
		case m.BuildTimeChallenger != nil && f == m.BuildTimeChallenger.File():
			m.BuildTimeChallenger = nil
		}
		m.LeftOut[f] = why[f]
	}
}
