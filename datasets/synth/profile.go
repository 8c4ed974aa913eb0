package synth

import (
	"fmt"
	"math"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// DefaultStart is the simulated time at which a history starts when Config.Start is zero:
// Monday 5 January 2026, 00:00 UTC. A fixed default keeps the output of the same flags
// and seed byte-identical from one run to the next.
var DefaultStart = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// Config says which synthetic world to generate. The zero value of every field but
// Profile and Days means the profile's default.
type Config struct {
	// Profile is the monorepo to imitate: "go", "ios" or "android".
	Profile string
	// Days is the length of the arrival window in days; it must be positive. Arrivals
	// stop at Start + Days; the queue then drains, so the last decisions come a little
	// later.
	Days float64
	// ChangesPerHour is the mean rate of first submissions per hour over a whole week
	// (nights and weekends included). Resubmissions of rejected revisions come on top
	// (about 15-20% more changes). 0 means the profile's default (Params.ChangesPerHour).
	// The queue has a finite capacity: well above twice the default rate it falls behind
	// during working hours, and the pending changes and the pairs table grow quickly.
	ChangesPerHour float64
	// FlakyRate is the probability that a build fails for a reason that has nothing to do
	// with the change (status infra_failed), in which case the change is built again.
	// 0 means the profile's default (Params.FlakyRate); use a tiny positive value such as
	// 1e-12 to get practically no infrastructure failures. It must be below 1.
	FlakyRate float64
	// Workers is the number of builds that can run at once. 0 means the profile's
	// default (Params.Workers).
	Workers int
	// Seed seeds every random draw; the same Config gives the same History.
	Seed uint64
	// Start is the time of the beginning of the window. The zero value means
	// DefaultStart. Times are truncated to whole seconds.
	Start time.Time
	// Repo is written in the repo column of every row. "" means the profile name.
	Repo string
	// NoCulpritFinding turns off the builds the queue runs after a rejection to find
	// its culprits (see Simulate): the builds table then holds the queue's own builds
	// only, and a conflict can seldom be told from a broken change.
	NoCulpritFinding bool
	// NoDynamics turns off the profile's Dynamics: a world that does not change while
	// it runs, as the generator made before issue 12.
	NoDynamics bool
	// Dynamics, when not nil, replaces the profile's Params.Dynamics (lasting
	// build-time shifts, for instance, are off by default).
	Dynamics *Dynamics
	// Progress, when not nil, is called from time to time with the share of the
	// simulation done so far, in [0, 1]. It does not affect the result.
	Progress func(done float64)
}

// Params are the fixed parameters of a profile: the size of the world and the ground
// truth models. They are exported so that tests and evaluations can recompute the truth.
type Params struct {
	// Name is the profile name.
	Name string
	// World size.
	Targets    int // build targets in the graph
	Teams      int // teams; team 0 is the platform team that owns the core targets
	Developers int
	// CoreShare is the share of targets that are core libraries owned by team 0.
	CoreShare float64
	// Checks is the number of initial checks run before submission.
	Checks int
	// BinaryRate is the probability that a change adds binaries (assets).
	BinaryRate float64

	// Defaults of Config: the queue keeps up with ChangesPerHour with Workers workers,
	// deciding most changes within a few build times.
	ChangesPerHour float64
	FlakyRate      float64
	Workers        int

	// The ground truth.
	Success  SuccessModel
	Conflict ConflictModel
	Duration DurationModel
	// Dynamics are the ways the world changes while it runs.
	Dynamics Dynamics
}

// Profiles lists the profile names Config.Profile accepts.
var Profiles = []string{"go", "ios", "android"}

// LookupProfile returns the parameters of the named profile.
func LookupProfile(name string) (Params, error) {
	success := SuccessModel{
		Intercept:     3.2,
		Skill:         0.8,
		Level:         0.15,
		LogTenure:     0.3,
		LogLines:      -0.25,
		LogFiles:      -0.15,
		LogAffected:   -0.2,
		LogCommits:    -0.15,
		LogTargetsNew: -0.3,
		Binaries:      -0.4,
		TestPlan:      0.5,
		RevertPlan:    0.3,
		ChecksPassed:  0.08,
		ChecksFailed:  -0.9,
		LogSubmission: 0.4,
	}
	conflict := ConflictModel{Intercept: -6.8, LogOverlap: 0.5, Containment: 1.5, Blast: 2.5}
	switch name {
	case "go":
		// The Go monorepo: many small services, short builds (median about 10 minutes).
		return Params{
			Name: name, Targets: 3000, Teams: 30, Developers: 450, CoreShare: 0.06,
			Checks: 5, BinaryRate: 0.01,
			ChangesPerHour: 40, FlakyRate: 0.03, Workers: 80,
			Success:  success,
			Conflict: conflict,
			Duration: DurationModel{Intercept: 6.1, LogAffected: 0.06, LogLines: 0.03, Height: 0.02, Sigma: 0.35},
			Dynamics: defaultDynamics,
		}, nil
	case "ios":
		// The iOS monorepo: most builds take 30 to 60 minutes (paper 001, Figure 9);
		// the median build of a typical change is about 42 minutes.
		return Params{
			Name: name, Targets: 2000, Teams: 20, Developers: 250, CoreShare: 0.05,
			Checks: 7, BinaryRate: 0.06,
			ChangesPerHour: 15, FlakyRate: 0.04, Workers: 50,
			Success:  success,
			Conflict: conflict,
			Duration: DurationModel{Intercept: 7.54, LogAffected: 0.06, LogLines: 0.03, Height: 0.02, Sigma: 0.18},
			Dynamics: defaultDynamics,
		}, nil
	case "android":
		// Paper 001 (Figure 9) finds Android's build times similar to iOS's; this profile
		// sits a little below iOS (median about 35 minutes) with a wider spread.
		return Params{
			Name: name, Targets: 2400, Teams: 24, Developers: 300, CoreShare: 0.05,
			Checks: 7, BinaryRate: 0.05,
			ChangesPerHour: 20, FlakyRate: 0.04, Workers: 60,
			Success:  success,
			Conflict: conflict,
			Duration: DurationModel{Intercept: 7.36, LogAffected: 0.06, LogLines: 0.03, Height: 0.02, Sigma: 0.22},
			Dynamics: defaultDynamics,
		}, nil
	}
	return Params{}, fmt.Errorf("synth: unknown profile %q (want go, ios or android)", name)
}

// SuccessModel is the ground truth of a change's success: true_p_success is
// Sigmoid(Logit(c, skill)), the probability that the change's build on HEAD alone
// succeeds (its intrinsic outcome; infrastructure failures aside).
//
// The logit is the sum of Intercept and each coefficient times its attribute:
//
//	Skill         the author's latent skill (Developer.Skill, standard normal)
//	Level         author_level - 3
//	LogTenure     ln(1 + author_tenure_days/365)
//	LogLines      ln(1 + lines_added + lines_removed)
//	LogFiles      ln(1 + files_changed)
//	LogAffected   ln(1 + len(affected_targets))
//	LogCommits    ln(commits)
//	LogTargetsNew ln(1 + targets_added + targets_removed)
//	Binaries      1 when binaries_added + binaries_removed > 0
//	TestPlan      1 when revision_has_test_plan
//	RevertPlan    1 when revision_has_revert_plan
//	ChecksPassed  initial_checks_passed
//	ChecksFailed  initial_checks_failed
//	LogSubmission ln(revision_submissions)
//
// Resubmissions help (paper 001 §7.2: revisions with several submissions succeed more
// often) once skill is held fixed; since weak developers resubmit more, the marginal
// association can still be negative, as the paper's fitted weights are.
type SuccessModel struct {
	Intercept, Skill, Level, LogTenure, LogLines, LogFiles, LogAffected, LogCommits,
	LogTargetsNew, Binaries, TestPlan, RevertPlan, ChecksPassed, ChecksFailed, LogSubmission float64
}

// Logit returns the log-odds of success of c written by a developer of the given latent
// skill. c must have every attribute of the logit filled in.
func (m SuccessModel) Logit(c *datasets.Change, skill float64) float64 {
	b := 0.0
	if c.BinariesAdded+c.BinariesRemoved > 0 {
		b = 1
	}
	return m.Intercept +
		m.Skill*skill +
		m.Level*(c.AuthorLevel-3) +
		m.LogTenure*math.Log1p(c.AuthorTenureDays/365) +
		m.LogLines*math.Log1p(c.LinesAdded+c.LinesRemoved) +
		m.LogFiles*math.Log1p(c.FilesChanged) +
		m.LogAffected*math.Log1p(float64(len(c.AffectedTargets))) +
		m.LogCommits*math.Log(c.Commits) +
		m.LogTargetsNew*math.Log1p(c.TargetsAdded+c.TargetsRemoved) +
		m.Binaries*b +
		m.TestPlan*c.RevisionHasTestPlan.Float() +
		m.RevertPlan*c.RevisionHasRevertPlan.Float() +
		m.ChecksPassed*c.InitialChecksPassed +
		m.ChecksFailed*c.InitialChecksFailed +
		m.LogSubmission*math.Log(c.RevisionSubmissions)
}

// Prob returns Sigmoid(m.Logit(c, skill)).
func (m SuccessModel) Prob(c *datasets.Change, skill float64) float64 {
	return Sigmoid(m.Logit(c, skill))
}

// ConflictModel is the ground truth of conflicts: two changes pending at the same time,
// the ahead one affecting a targets and the behind one b, overlap of them in common, in a
// world of n targets, conflict with probability
//
//	Sigmoid(Intercept + LogOverlap*ln(overlap) + Containment*overlap/min(a, b) + Blast*a/n)
//
// Three terms carry the signal, each a claim of the papers:
//
//   - LogOverlap: the more affected targets two changes share, the likelier they touch
//     the same code (paper 001 §5 builds conflict analysis on that overlap); targets
//     that many changes affect (the hot ones) put many shared targets into a pair.
//   - Containment: a small change lying wholly inside a large one is as risky as two
//     similar changes.
//   - Blast: a large diff that affects most targets conflicts with most changes behind
//     it (paper 000 §IV). a/n is the ahead change's blast radius, the share of the
//     world's targets it affects.
//
// The coefficients were tuned on generated histories (seed 1, 7 and 30 days of each
// profile) to keep paper 001's Figure 1 (about 5% of changes conflict at N = 2
// concurrent overlapping changes, about 40% at N = 16; see ConflictCurve) while the
// truth separates conflicts well: the AUC of true_p_conflict over the pairs table is
// 0.86-0.88 (it was 0.60-0.61 with the earlier Intercept -4.1, LogOverlap 0.05,
// Containment 1.1 and no Blast term). On 30 days the shares moved from 3.9-4.3% to
// 3.8-4.7% at N = 2 and from 41-42% to 42-49% at N = 13..19; the mean true_p_conflict of
// a pair stayed about 0.04.
type ConflictModel struct {
	Intercept, LogOverlap, Containment, Blast float64
}

// Prob returns the probability that two pending changes conflict: the ahead one affects
// ahead targets, the behind one behind targets, overlap of them in common, in a world of
// targets targets. It panics unless 1 <= overlap <= min(ahead, behind) and targets >= 1.
func (m ConflictModel) Prob(overlap, ahead, behind, targets int) float64 {
	if overlap < 1 || overlap > min(ahead, behind) || targets < 1 {
		panic(fmt.Sprintf("synth: conflict probability of overlap %d between %d and %d of %d targets", overlap, ahead, behind, targets))
	}
	return Sigmoid(m.Intercept + m.LogOverlap*math.Log(float64(overlap)) +
		m.Containment*float64(overlap)/float64(min(ahead, behind)) +
		m.Blast*math.Min(1, float64(ahead)/float64(targets)))
}

// DurationModel is the ground truth of build times: a build's duration in seconds is
// log-normal, ln(duration) ~ Normal(m, Sigma²) with
//
//	m = Intercept + LogAffected*ln(1 + len(affected_targets)) +
//	    LogLines*ln(1 + lines_added + lines_removed) + Height*speculation_height
//
// A history's true_mu_s and true_sigma_s are the mean and the standard deviation of
// that log-normal in seconds (see MeanSD); consumers recover m and Sigma by moment
// matching: Sigma² = ln(1 + (sd/mean)²), m = ln(mean) - Sigma²/2.
type DurationModel struct {
	Intercept, LogAffected, LogLines, Height, Sigma float64
}

// LogParams returns the parameters (m, s) of ln(duration) of a build of c at the given
// speculation height.
func (d DurationModel) LogParams(c *datasets.Change, height float64) (m, s float64) {
	m = d.Intercept +
		d.LogAffected*math.Log1p(float64(len(c.AffectedTargets))) +
		d.LogLines*math.Log1p(c.LinesAdded+c.LinesRemoved) +
		d.Height*height
	return m, d.Sigma
}

// MeanSD returns the mean and the standard deviation of a log-normal variable whose
// logarithm has mean m and standard deviation s.
func MeanSD(m, s float64) (mean, sd float64) {
	mean = math.Exp(m + s*s/2)
	return mean, mean * math.Sqrt(math.Expm1(s*s))
}

// Sigmoid returns 1/(1+exp(-x)).
func Sigmoid(x float64) float64 {
	return 1 / (1 + math.Exp(-x))
}
