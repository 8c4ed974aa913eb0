package training

import (
	"math"
	"slices"

	"github.com/sqpredict/sqpredict/eval"
)

// ChallengerScore is the holdout headline of one challenger: the loss the gates compare
// (log loss for the classifiers, NLL for build time), its skill over the section's best
// baseline (1 − loss/best for the classifiers, best − NLL in nats for build time; positive
// when the challenger beats the baseline), and that baseline.
type ChallengerScore struct {
	// Section is "success", "conflict" or "buildtime".
	Section string
	// Model is the challenger's model name (ModelGBM, ModelNGBoostNormal, ...).
	Model string
	// Metric names Loss: "log_loss" or "nll".
	Metric string
	// Loss is the challenger's holdout loss.
	Loss float64
	// Baseline is the best baseline of the section; "" when the section has none.
	Baseline string
	// BaselineLoss is Baseline's holdout loss; NaN without a baseline.
	BaselineLoss float64
	// Skill is the challenger's skill over Baseline; NaN without a baseline.
	Skill float64
}

// WorseThanBaseline reports whether the challenger lost to the section's best baseline:
// a challenger that would serve worse than a constant. A NaN loss counts as worse.
func (c ChallengerScore) WorseThanBaseline() bool {
	if c.Baseline == "" {
		return false
	}
	return !(c.Skill >= 0)
}

// Challengers returns the holdout headline of every challenger e evaluated, by section
// (success, conflict, buildtime) and then model name. Only challengers present in e are
// listed, so a run that trained none returns nil.
func (e *Evaluation) Challengers() []ChallengerScore {
	var out []ChallengerScore
	add := func(section, metric string, names []string, loss func(string) float64) {
		slices.Sort(names)
		base, bl := e.BestBaseline(section)
		for _, model := range names {
			if roleOf(model) != roleChallenger {
				continue
			}
			c := ChallengerScore{Section: section, Model: model, Metric: metric, Loss: loss(model),
				Baseline: base, BaselineLoss: bl, Skill: math.NaN()}
			if base != "" {
				if section == "buildtime" {
					c.Skill = bl - c.Loss
				} else {
					c.Skill = 1 - c.Loss/bl
				}
			}
			out = append(out, c)
		}
	}
	for _, s := range []struct {
		name string
		m    map[string]eval.ClassifierMetrics
	}{{"success", e.Success}, {"conflict", e.Conflict}} {
		m := s.m
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		add(s.name, "log_loss", names, func(k string) float64 { return m[k].LogLoss })
	}
	names := make([]string, 0, len(e.BuildTime))
	for k := range e.BuildTime {
		names = append(names, k)
	}
	add("buildtime", "nll", names, func(k string) float64 { return e.BuildTime[k].NLL })
	return out
}

// challengerNote is the "challenger: ...; " clause of a section note, empty when the run
// trained no challenger for the section: the report names only models it scored.
func challengerNote(present bool, what string) string {
	if !present {
		return ""
	}
	return "challenger: " + what + "; "
}

// has reports whether byRole has a column for role.
func has[M any](byRole map[string]M, role string) bool {
	_, ok := byRole[role]
	return ok
}
