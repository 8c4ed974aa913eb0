package synth

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Dynamics are the ways a world changes while it runs, as real histories do (issue 12
// item 2): episodes during which infrastructure or one team's flaky tests fail many
// builds, build times that drift (a growing repository), jump for hours (a cache
// outage) or shift for good (a toolchain change), and authors whose failure rate
// changes. Every rate is per week of simulated time (nights and weekends included), and
// every episode's length is log-normal with the given median and a log-sd of 0.5. The
// zero value is a world that does not change; Config.NoDynamics turns a profile's
// dynamics off.
//
// The truth columns stay what the world knew at the moment they describe:
// true_p_success uses the author's skill at submission (Developer.SkillAt), and
// true_mu_s and true_sigma_s the build-time distribution at the build's start
// (World.LogShift). Infrastructure failures are not outcomes of a change and have no
// column; World.InfraProb gives their probability.
type Dynamics struct {
	// InfraEpisodesPerWeek is the rate of infrastructure episodes (a broken runner
	// pool, a network outage); during one, a build also fails for infrastructure
	// reasons with probability InfraEpisodeRate. InfraEpisodeHours is the median length.
	InfraEpisodesPerWeek, InfraEpisodeHours, InfraEpisodeRate float64
	// FlakyAreaEpisodesPerWeek is the rate of episodes during which the tests of one
	// team's area are flaky: a build of a change that affects a target of that area also
	// fails for infrastructure reasons with probability FlakyAreaRate (the queue sees a
	// flaky failure and builds again). FlakyAreaDays is the median length.
	FlakyAreaEpisodesPerWeek, FlakyAreaDays, FlakyAreaRate float64
	// DriftPerWeek is how much ln(duration) of every build grows a week: a growing
	// repository.
	DriftPerWeek float64
	// CacheOutagesPerWeek is the rate of cache outages, during which ln(duration) of
	// every build starting grows by CacheOutageShift; CacheOutageHours is the median
	// length.
	CacheOutagesPerWeek, CacheOutageHours, CacheOutageShift float64
	// ShiftsPerWeek is the rate of lasting shifts of ln(duration) (a toolchain upgrade,
	// a build-system change), each Normal(0, ShiftSD).
	ShiftsPerWeek, ShiftSD float64
	// SkillShiftShare is the share of developers whose latent skill changes once, at a
	// uniform time of the arrival window, by Normal(0, SkillShiftSD).
	SkillShiftShare, SkillShiftSD float64
}

// defaultDynamics are the dynamics of every profile. The sizes are modelling choices,
// kept small enough that the trainer stays near the truth (BENCHMARKS.md has the gaps
// on 30 days of ios with and without them): an infrastructure episode about every week (2 hours, 30% of builds
// fail), a flaky area about every week (a day, 25% of its builds), builds 0.5% longer
// every week, a 1-hour cache outage every two weeks (builds 1.16 times longer), and a
// fifth of the developers changing
// skill by a standard deviation of 0.6 (the success logit moves by 0.48 of that).
// Lasting build-time shifts are off (ShiftsPerWeek 0; set it through Config.Dynamics):
// a build-time shift costs a model that does not see it 0.5·(shift/Sigma)² nats per
// build, and with ios's narrow Sigma of 0.18 one lasting shift of 0.066 (ShiftSD 0.05)
// raised the build-time NLL gap of a 30-day world from 0.009 to 0.040: today's
// build-time models do not follow a level that moves for good. A 2-hour cache outage of
// 0.25 during a busy holdout day cost about 0.025 the same way.
var defaultDynamics = Dynamics{
	InfraEpisodesPerWeek: 1, InfraEpisodeHours: 2, InfraEpisodeRate: 0.3,
	FlakyAreaEpisodesPerWeek: 1, FlakyAreaDays: 1, FlakyAreaRate: 0.25,
	DriftPerWeek:        0.005,
	CacheOutagesPerWeek: 0.5, CacheOutageHours: 1, CacheOutageShift: 0.15,
	ShiftsPerWeek: 0, ShiftSD: 0.05,
	SkillShiftShare: 0.2, SkillShiftSD: 0.6,
}

// validate checks that every rate, length and standard deviation of d is finite and
// non-negative, every probability at most 1, and the drift and the cache outage shift
// finite.
func (d *Dynamics) validate() error {
	for _, f := range []struct {
		name  string
		v     float64
		limit float64
	}{
		{"infra episodes per week", d.InfraEpisodesPerWeek, math.Inf(1)},
		{"infra episode hours", d.InfraEpisodeHours, math.Inf(1)},
		{"infra episode rate", d.InfraEpisodeRate, 1},
		{"flaky area episodes per week", d.FlakyAreaEpisodesPerWeek, math.Inf(1)},
		{"flaky area days", d.FlakyAreaDays, math.Inf(1)},
		{"flaky area rate", d.FlakyAreaRate, 1},
		{"drift per week", math.Abs(d.DriftPerWeek), math.Inf(1)},
		{"cache outages per week", d.CacheOutagesPerWeek, math.Inf(1)},
		{"cache outage hours", d.CacheOutageHours, math.Inf(1)},
		{"cache outage shift", math.Abs(d.CacheOutageShift), math.Inf(1)},
		{"shifts per week", d.ShiftsPerWeek, math.Inf(1)},
		{"shift sd", d.ShiftSD, math.Inf(1)},
		{"skill shift share", d.SkillShiftShare, 1},
		{"skill shift sd", d.SkillShiftSD, math.Inf(1)},
	} {
		if !(f.v >= 0 && f.v <= f.limit) || math.IsInf(f.v, 0) {
			return fmt.Errorf("synth: dynamics: %s %v must be finite, non-negative and at most %v", f.name, f.v, f.limit)
		}
	}
	return nil
}

// EpisodeKind says what an Episode does.
type EpisodeKind uint8

// The kinds of episodes.
const (
	// InfraOutage makes every build fail for infrastructure reasons with probability
	// Episode.Value.
	InfraOutage EpisodeKind = iota
	// FlakyArea makes a build of a change affecting a target of team Episode.Area fail
	// for infrastructure reasons with probability Episode.Value.
	FlakyArea
	// CacheOutage adds Episode.Value to ln(duration) of the builds starting during it.
	CacheOutage
	// BuildTimeShift adds Episode.Value to ln(duration) of every build starting from
	// Episode.Start on; its End is the zero time.
	BuildTimeShift
)

// String returns "infra_outage", "flaky_area", "cache_outage" or "build_time_shift".
func (k EpisodeKind) String() string {
	switch k {
	case InfraOutage:
		return "infra_outage"
	case FlakyArea:
		return "flaky_area"
	case CacheOutage:
		return "cache_outage"
	case BuildTimeShift:
		return "build_time_shift"
	}
	return fmt.Sprintf("EpisodeKind(%d)", uint8(k))
}

// Episode is a period during which the world behaves differently (see Dynamics).
type Episode struct {
	Kind EpisodeKind
	// Start and End delimit the episode: it holds for builds starting in [Start, End).
	// End is the zero time for a lasting BuildTimeShift.
	Start, End time.Time
	// Area is the team whose area is flaky (FlakyArea), 0 otherwise.
	Area int
	// Value is a probability (InfraOutage, FlakyArea) or a shift of ln(duration)
	// (CacheOutage, BuildTimeShift).
	Value float64
}

// dynamics is a world's drawn dynamics, in seconds since Config.Start.
type dynamics struct {
	drift float64 // per second
	eps   []episode
}

type episode struct {
	kind     EpisodeKind
	from, to float64 // to is +Inf for a lasting shift
	area     int32
	value    float64
}

// horizonDays is how far past the arrival window episodes are drawn: the queue drains
// after it, and culprit finding goes on a little longer.
const horizonDays = 7

// newDynamics draws the episodes of d over the arrival window of end seconds plus
// horizonDays, and the developers' skill shifts, with r. teams is the number of teams.
func newDynamics(d Dynamics, end float64, teams int, devs []Developer, start time.Time, r *rand.Rand) *dynamics {
	dy := &dynamics{drift: d.DriftPerWeek / (7 * 86400)}
	horizon := end + horizonDays*86400
	// poisson calls add for each arrival of a process of perWeek over the horizon.
	poisson := func(perWeek float64, add func(t float64)) {
		if perWeek <= 0 {
			return
		}
		for t := r.ExpFloat64() * 7 * 86400 / perWeek; t < horizon; t += r.ExpFloat64() * 7 * 86400 / perWeek {
			add(math.Floor(t))
		}
	}
	length := func(median float64) float64 { return math.Max(1, math.Round(median*math.Exp(0.5*r.NormFloat64()))) }
	poisson(d.InfraEpisodesPerWeek, func(t float64) {
		dy.eps = append(dy.eps, episode{kind: InfraOutage, from: t, to: t + length(d.InfraEpisodeHours*3600), value: d.InfraEpisodeRate})
	})
	poisson(d.FlakyAreaEpisodesPerWeek, func(t float64) {
		dy.eps = append(dy.eps, episode{kind: FlakyArea, from: t, to: t + length(d.FlakyAreaDays*86400), area: int32(1 + r.IntN(teams-1)), value: d.FlakyAreaRate})
	})
	poisson(d.CacheOutagesPerWeek, func(t float64) {
		dy.eps = append(dy.eps, episode{kind: CacheOutage, from: t, to: t + length(d.CacheOutageHours*3600), value: d.CacheOutageShift})
	})
	poisson(d.ShiftsPerWeek, func(t float64) {
		dy.eps = append(dy.eps, episode{kind: BuildTimeShift, from: t, to: math.Inf(1), value: d.ShiftSD * r.NormFloat64()})
	})
	slices.SortStableFunc(dy.eps, func(a, b episode) int { return cmp.Compare(a.from, b.from) })
	for i := range devs {
		if r.Float64() < d.SkillShiftShare {
			devs[i].SkillShift = d.SkillShiftSD * r.NormFloat64()
			devs[i].ShiftAt = start.Add(time.Duration(math.Floor(r.Float64()*end)) * time.Second)
		}
	}
	return dy
}

// logShift returns what the dynamics add to ln(duration) of a build starting at t.
func (dy *dynamics) logShift(t float64) float64 {
	v := dy.drift * t
	for _, e := range dy.eps {
		if e.from > t {
			break
		}
		if (e.kind == CacheOutage || e.kind == BuildTimeShift) && t < e.to {
			v += e.value
		}
	}
	return v
}

// infraProb returns the probability that a build starting at t of a change affecting
// the team areas areas (ascending) fails for infrastructure reasons, base outside any
// episode.
func (dy *dynamics) infraProb(base float64, areas []int32, t float64) float64 {
	q := 1.0 // probability that no episode fails the build
	for _, e := range dy.eps {
		if e.from > t {
			break
		}
		if t >= e.to {
			continue
		}
		switch e.kind {
		case InfraOutage:
			q *= 1 - e.value
		case FlakyArea:
			if _, in := slices.BinarySearch(areas, e.area); in {
				q *= 1 - e.value
			}
		}
	}
	if q == 1 {
		return base
	}
	return 1 - (1-base)*q
}

// episodes returns the episodes as World.Episodes lists them.
func (dy *dynamics) episodes(start time.Time) []Episode {
	at := func(t float64) time.Time { return start.Add(time.Duration(t) * time.Second) }
	out := make([]Episode, len(dy.eps))
	for i, e := range dy.eps {
		out[i] = Episode{Kind: e.kind, Start: at(e.from), Area: int(e.area), Value: e.value}
		if !math.IsInf(e.to, 1) {
			out[i].End = at(e.to)
		}
	}
	return out
}
