package replay

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MetricDocs documents every metric of summary.json, by JSON name.
var MetricDocs = map[string]string{
	"changes":              "changes decided",
	"landed":               "changes landed",
	"rejected":             "changes rejected",
	"builds":               "builds started, aborted and infrastructure failures included",
	"builds_per_change":    "builds / changes (paper 000 §X-A builds-to-changes ratio)",
	"builds_per_landed":    "builds / landed changes",
	"cpu_hours":            "run time of every build, aborted ones included, in worker-hours",
	"aborted_share":        "share of builds aborted",
	"infra_share":          "share of builds that failed for infrastructure reasons",
	"turnaround_p50_s":     "median of decided_at - submitted_at, seconds",
	"turnaround_p95_s":     "95th percentile of the turnaround, seconds",
	"turnaround_p99_s":     "99th percentile of the turnaround, seconds",
	"small_behind_large":   "changes that arrived behind a pending conflicting change expected to build at least 1.2 times longer",
	"sbl_turnaround_p50_s": "median turnaround of those small-behind-large changes, seconds",
	"sbl_turnaround_p95_s": "95th percentile of their turnaround, seconds",
	"sbl_turnaround_p99_s": "99th percentile of their turnaround, seconds",
	"throughput_per_hour":  "decisions per hour from the first arrival to the last decision",
	"waited":               "changes with a build that finished while a conflicting change ahead was pending",
	"bypassed":             "changes decided while a conflicting change ahead was pending (BLRD)",
	"blrd_trigger_rate":    "bypassed / waited (paper 000 §IV)",
	"plan_calls":           "times the strategy planned",
}

// Meta describes the replayed world in summary.json.
type Meta struct {
	World     string  `json:"world"`
	Source    string  `json:"source"`
	Synthetic bool    `json:"synthetic"`
	Changes   int     `json:"changes"`
	Threshold float64 `json:"threshold"`
	// KeepMargin is Setting.KeepMargin of the runs.
	KeepMargin float64 `json:"keep_margin"`
	// NoLearning is Setting.NoLearning of the runs.
	NoLearning bool `json:"no_learning"`
	Seeds      int  `json:"seeds"`
	// Limits says what the world cannot model (real histories).
	Limits string `json:"limits,omitempty"`
}

// RealLimits is what a real history cannot model (see the package documentation).
const RealLimits = "no conflicts are known: a change's outcome is the observed one on every path, " +
	"so speculation never meets disagreeing paths and P-conf does not matter; a change's builds all " +
	"take its mean observed duration; infrastructure failures are not replayed; conflict edges exist " +
	"only where the history lists affected targets"

// Summary is the content of summary.json.
type Summary struct {
	Meta   Meta              `json:"meta"`
	Fields map[string]string `json:"fields"`
	Cells  []*Cell           `json:"cells"`
	// Pairs holds the paired comparisons of probability sources, if any.
	Pairs []*Paired `json:"paired,omitempty"`
}

// WriteSummary writes s as indented JSON.
func WriteSummary(w io.Writer, s *Summary) error {
	if s.Fields == nil {
		s.Fields = MetricDocs
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("replay: summary: %w", err)
	}
	return nil
}

// DecisionsHeader is the header of decisions.csv.
var DecisionsHeader = []string{"strategy", "probs", "workers", "rate", "seed", "change_id",
	"submitted_at_s", "decided_at_s", "outcome", "deciding_path", "builds", "aborted"}

// DecisionsWriter writes decisions.csv: one row per change and run.
type DecisionsWriter struct {
	w *csv.Writer
}

// NewDecisionsWriter writes the header to w.
func NewDecisionsWriter(w io.Writer) (*DecisionsWriter, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(DecisionsHeader); err != nil {
		return nil, fmt.Errorf("replay: decisions: %w", err)
	}
	return &DecisionsWriter{w: cw}, nil
}

// Write writes the rows of one run: the deciding path lists the ids of the changes the
// deciding build included, space separated.
func (d *DecisionsWriter) Write(r *RunOutput) error {
	res := r.Result
	st := r.Setting
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	var sb strings.Builder
	for i, rec := range res.Records {
		c := &res.Traffic.Changes[i]
		outcome := "rejected"
		if rec.Landed {
			outcome = "landed"
		}
		sb.Reset()
		if rec.Deciding >= 0 {
			for t, k := range res.Builds[rec.Deciding].Content {
				if t > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(res.Traffic.Changes[k].ID)
			}
		}
		row := []string{st.Strategy, st.Probs, strconv.Itoa(st.Workers), f(st.Rate), strconv.FormatUint(st.Seed, 10), c.ID,
			f(c.Arrival), f(rec.DecidedAt), outcome, sb.String(), strconv.Itoa(rec.Builds), strconv.Itoa(rec.Aborted)}
		if err := d.w.Write(row); err != nil {
			return fmt.Errorf("replay: decisions: %w", err)
		}
	}
	d.w.Flush()
	if err := d.w.Error(); err != nil {
		return fmt.Errorf("replay: decisions: %w", err)
	}
	return nil
}
