package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Developer is one synthetic developer: the hidden truth behind the author column.
type Developer struct {
	// Name is the author column value.
	Name string
	// Team indexes the team the developer belongs to; team 0 is the platform team
	// that owns the core targets.
	Team int
	// Skill is the latent skill, standard normal, that enters SuccessModel, at the
	// start of the history.
	Skill float64
	// SkillShift is added to Skill from ShiftAt on (Dynamics.SkillShiftShare); ShiftAt
	// is the zero time for a developer whose skill does not change.
	SkillShift float64
	ShiftAt    time.Time
	// Level is the seniority level, 1 to 7, written to author_level.
	Level int
	// TenureDays is the tenure at the start of the history, in days; a change's
	// author_tenure_days adds the days elapsed since the start.
	TenureDays float64
	// Activity is the developer's relative rate of submitting revisions.
	Activity float64
}

// SkillAt returns the developer's latent skill at t.
func (d *Developer) SkillAt(t time.Time) float64 {
	if !d.ShiftAt.IsZero() && !t.Before(d.ShiftAt) {
		return d.Skill + d.SkillShift
	}
	return d.Skill
}

// graph is the build-target graph. Targets are numbered in topological order: a target
// depends only on targets with a lower number. The first nCore targets are the core
// libraries of team 0; each other team owns a contiguous block of targets.
type graph struct {
	names []string
	area  []int32   // team owning each target
	rdeps [][]int32 // reverse dependencies: who depends on each target
	// areaFirst[t], areaFirst[t+1] delimit the targets of team t.
	areaFirst []int
}

// Shape of the target graph: the share of targets with a second dependency in their
// own area, and with a dependency outside their area.
const (
	extraDepRate = 0.15
	crossDepRate = 0.05
)

// newGraph builds a random target graph for p. Teams other than 0 get areas
// proportional to their number of developers.
func newGraph(p Params, teamSize []int, r *rand.Rand) *graph {
	n := p.Targets
	g := &graph{names: make([]string, n), area: make([]int32, n), rdeps: make([][]int32, n)}
	nCore := max(2, int(p.CoreShare*float64(n)))
	others := 0
	for t := 1; t < p.Teams; t++ {
		others += teamSize[t]
	}
	g.areaFirst = make([]int, p.Teams+1)
	g.areaFirst[1] = nCore
	acc := 0
	for t := 1; t < p.Teams; t++ {
		acc += teamSize[t]
		g.areaFirst[t+1] = nCore + int(math.Round(float64(n-nCore)*float64(acc)/float64(others)))
	}
	g.areaFirst[p.Teams] = n
	for t := 0; t < p.Teams; t++ {
		for i := g.areaFirst[t]; i < g.areaFirst[t+1]; i++ {
			g.area[i] = int32(t)
			if t == 0 {
				g.names[i] = fmt.Sprintf("//core/lib%04d", i)
			} else {
				g.names[i] = fmt.Sprintf("//team%02d/t%04d", t, i)
			}
		}
	}
	addDep := func(from, to int) { // from depends on to, to < from
		for _, d := range g.rdeps[to] {
			if int(d) == from {
				return
			}
		}
		g.rdeps[to] = append(g.rdeps[to], int32(from))
	}
	for i := 1; i < n; i++ {
		t := int(g.area[i])
		lo := g.areaFirst[t]
		if i == lo {
			// The root of a team's area builds on one or two core libraries.
			for range 1 + r.IntN(2) {
				addDep(i, r.IntN(nCore))
			}
			continue
		}
		// Within an area (the core included) targets form a random recursive tree, so
		// the reverse closure of a target is its subtree: heavy-tailed in size, and the
		// whole area for the root. A few extra edges make it a DAG.
		addDep(i, lo+r.IntN(i-lo))
		if r.Float64() < extraDepRate {
			addDep(i, lo+r.IntN(i-lo))
		}
		if t > 0 && r.Float64() < crossDepRate {
			// A dependency on a core library or on another team's target.
			addDep(i, r.IntN(lo))
		}
	}
	for i := range g.rdeps {
		slices.Sort(g.rdeps[i])
	}
	return g
}

// closure returns the sorted reverse-dependency closure of the changed targets: every
// target whose build changes when they do. seen is scratch of len(g.names), all false
// on entry and on return.
func (g *graph) closure(changed []int32, seen []bool) []int32 {
	out := make([]int32, 0, 2*len(changed))
	stack := make([]int32, 0, 16)
	for _, c := range changed {
		if !seen[c] {
			seen[c] = true
			stack = append(stack, c)
		}
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, v)
		for _, d := range g.rdeps[v] {
			if !seen[d] {
				seen[d] = true
				stack = append(stack, d)
			}
		}
	}
	for _, v := range out {
		seen[v] = false
	}
	slices.Sort(out)
	return out
}

// overlap returns the number of elements two sorted slices share.
func overlap(a, b []int32) int {
	if len(a) == 0 || len(b) == 0 || a[len(a)-1] < b[0] || b[len(b)-1] < a[0] {
		return 0
	}
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// newDevelopers draws the developers of p and the size of each team.
func newDevelopers(p Params, r *rand.Rand) ([]Developer, []int) {
	devs := make([]Developer, p.Developers)
	teamSize := make([]int, p.Teams)
	for i := range devs {
		// Team sizes vary: a developer joins team t with weight 1 + t mod 3, and the
		// platform team is as large as an average team.
		team := i % p.Teams
		if i >= p.Teams {
			team = pickWeighted(r, p.Teams, func(t int) float64 { return 1 + float64(t%3) })
		}
		tenure := math.Exp(math.Log(600) + r.NormFloat64())
		level := 1 + int(math.Floor(0.8*tenure/365+r.NormFloat64()))
		devs[i] = Developer{
			Name:       fmt.Sprintf("dev%04d", i),
			Team:       team,
			Skill:      r.NormFloat64(),
			Level:      min(7, max(1, level)),
			TenureDays: math.Round(tenure),
			Activity:   math.Exp(0.8 * r.NormFloat64()),
		}
		teamSize[team]++
	}
	return devs, teamSize
}

// pickWeighted returns an index in [0, n) drawn with probability proportional to w.
func pickWeighted(r *rand.Rand, n int, w func(int) float64) int {
	total := 0.0
	for i := 0; i < n; i++ {
		total += w(i)
	}
	u := r.Float64() * total
	for i := 0; i < n; i++ {
		u -= w(i)
		if u < 0 {
			return i
		}
	}
	return n - 1
}

// hourWeight is the relative submission rate in each hour of a working day (times are
// the repository's local time, written as UTC): quiet at night, a morning and an
// afternoon peak around lunch.
var hourWeight = [24]float64{
	0.15, 0.10, 0.08, 0.08, 0.10, 0.15, 0.30, 0.60, 1.00, 1.40, 1.70, 1.70,
	1.30, 1.50, 1.70, 1.70, 1.50, 1.20, 0.80, 0.60, 0.50, 0.40, 0.30, 0.20,
}

// weekendWeight is the rate on Saturdays and Sundays relative to weekdays.
const weekendWeight = 0.2

// RateShape returns the arrival rate during the hour that contains t (in UTC, taken as
// the repository's local time) relative to the mean rate over a week: a working-day
// profile by the hour (quiet from 20:00 to 07:00, peaks in the late morning and the
// afternoon), times 0.2 on Saturdays and Sundays, normalised to a weekly mean of 1.
func RateShape(t time.Time) float64 {
	sum := 0.0
	for _, w := range hourWeight {
		sum += w
	}
	weekly := sum * (5 + 2*weekendWeight) / 7 / 24 // mean weight over a week
	w := hourWeight[t.Hour()]
	if d := t.Weekday(); d == time.Saturday || d == time.Sunday {
		w *= weekendWeight
	}
	return w / weekly
}
