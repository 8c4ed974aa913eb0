package synth

import (
	"math"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

func TestEpisodeKindString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		k    EpisodeKind
		want string
	}{
		{InfraOutage, "infra_outage"},
		{FlakyArea, "flaky_area"},
		{CacheOutage, "cache_outage"},
		{BuildTimeShift, "build_time_shift"},
		{BuildTimeShift + 1, "EpisodeKind(4)"},
	}
	for _, tc := range tests {
		if got := tc.k.String(); got != tc.want {
			t.Errorf("EpisodeKind(%d).String() = %q, want %q", uint8(tc.k), got, tc.want)
		}
	}
}

// inEpisode reports whether at falls in an episode of kind k of w.
func inEpisode(w *World, k EpisodeKind, at time.Time) bool {
	for _, e := range w.Episodes {
		if e.Kind == k && !at.Before(e.Start) && (e.End.IsZero() || at.Before(e.End)) {
			return true
		}
	}
	return false
}

// TestDynamics checks on four weeks of ios, with the profile's dynamics plus lasting
// build-time shifts (off by default), that the world's dynamics act as World says:
// builds starting during a cache outage, and after the first lasting shift, take as
// long as the shifted truth says (their standardised log durations match those of the
// other builds, where the unshifted ones would be the shift over Sigma higher), builds
// during infrastructure episodes fail for infrastructure reasons as often as
// World.InfraProb says, and about SkillShiftShare of the developers change skill.
func TestDynamics(t *testing.T) {
	t.Parallel()
	p, err := LookupProfile("ios")
	if err != nil {
		t.Fatal(err)
	}
	dyn := p.Dynamics
	dyn.ShiftsPerWeek, dyn.ShiftSD = 0.5, 0.3
	w := simulate(t, Config{Profile: "ios", Days: 28, Seed: 2, Dynamics: &dyn})
	h, d := w.History, w.Params.Dynamics
	if d != dyn {
		t.Fatalf("World.Params.Dynamics = %+v, want Config.Dynamics %+v", d, dyn)
	}
	kinds := map[EpisodeKind]int{}
	var shiftAt time.Time // the first lasting shift
	for _, e := range w.Episodes {
		kinds[e.Kind]++
		if e.Kind == BuildTimeShift && shiftAt.IsZero() {
			shiftAt = e.Start
		}
	}
	if kinds[InfraOutage] == 0 || kinds[FlakyArea] == 0 || kinds[CacheOutage] == 0 || kinds[BuildTimeShift] == 0 {
		t.Fatalf("episodes by kind %v: too few to measure", kinds)
	}
	idx := map[string]int{}
	for i := range h.Changes {
		idx[h.Changes[i].ChangeID] = i
	}
	// Standardised residuals of ln(duration) under the truth at the build's start. Both
	// groups lose the builds that were aborted (the longer ones more often), so only
	// their difference is compared: 4 standard errors plus 0.1 for the difference in
	// abort rates between busy and quiet times.
	var n, sum, nShift, sumShift [2]float64
	var seenIn, infraIn, pIn, varIn float64
	for i := range h.Builds {
		b := &h.Builds[i]
		ci := idx[b.ChangeID]
		switch b.Status {
		case datasets.StatusSucceeded, datasets.StatusFailed:
			m, s := w.Params.Duration.LogParams(&h.Changes[ci], b.SpeculationHeight)
			z := (math.Log(b.DurationS) - m - w.LogShift(b.StartedAt)) / s
			g := 0
			if inEpisode(w, CacheOutage, b.StartedAt) {
				g = 1
			}
			n[g]++
			sum[g] += z
			g = 0
			if !b.StartedAt.Before(shiftAt) {
				g = 1
			}
			nShift[g]++
			sumShift[g] += z
		}
		if b.Status != datasets.StatusAborted && inEpisode(w, InfraOutage, b.StartedAt) {
			p := w.InfraProb(ci, b.StartedAt)
			seenIn++
			pIn += p
			varIn += p * (1 - p)
			if b.Status == datasets.StatusInfraFailed {
				infraIn++
			}
		}
	}
	if n[1] < 50 {
		t.Fatalf("%v builds during cache outages: too few to measure", n[1])
	}
	diff := sum[1]/n[1] - sum[0]/n[0]
	if diff := sumShift[1]/nShift[1] - sumShift[0]/nShift[0]; math.Abs(diff) > binomialSigmas*math.Sqrt(1/nShift[0]+1/nShift[1])+0.1 {
		t.Errorf("mean standardised log duration after the lasting shift at %v minus before = %.3f (%v and %v builds), want 0", shiftAt, diff, nShift[1], nShift[0])
	}
	t.Logf("episodes %v; cache outages: %v builds, standardised log-duration difference %.3f; infrastructure episodes: %v of %v builds infra_failed, %.1f expected",
		kinds, n[1], diff, infraIn, seenIn, pIn)
	if tol := binomialSigmas*math.Sqrt(1/n[0]+1/n[1]) + 0.1; math.Abs(diff) > tol {
		t.Errorf("mean standardised log duration during cache outages minus outside = %.3f (%v and %v builds), want 0 ± %.3f (%.2f without the shift)",
			diff, n[1], n[0], tol, d.CacheOutageShift/w.Params.Duration.Sigma)
	}
	if tol := binomialSigmas*math.Sqrt(varIn) + 0.25*pIn; seenIn < 50 || math.Abs(infraIn-pIn) > tol {
		t.Errorf("%v infra_failed of %v builds during infrastructure episodes, want %.0f ± %.0f", infraIn, seenIn, pIn, tol)
	}
	shifted := 0.0
	for _, dev := range w.Developers {
		if !dev.ShiftAt.IsZero() {
			shifted++
			if before := dev.ShiftAt.Add(-time.Second); dev.SkillAt(before) != dev.Skill || dev.SkillAt(dev.ShiftAt) != dev.Skill+dev.SkillShift {
				t.Fatalf("developer %s: SkillAt does not switch at %v", dev.Name, dev.ShiftAt)
			}
		}
	}
	nd, q := float64(len(w.Developers)), d.SkillShiftShare
	if tol := binomialSigmas * math.Sqrt(nd*q*(1-q)); math.Abs(shifted-nd*q) > tol {
		t.Errorf("%v of %v developers change skill, want %.0f ± %.0f", shifted, nd, nd*q, tol)
	}
}

// TestNoDynamics checks that Config.NoDynamics gives a world that does not change.
func TestNoDynamics(t *testing.T) {
	t.Parallel()
	w := simulate(t, Config{Profile: "go", Days: 2, Seed: 3, NoDynamics: true})
	if len(w.Episodes) != 0 {
		t.Fatalf("NoDynamics: %d episodes", len(w.Episodes))
	}
	for _, dev := range w.Developers {
		if !dev.ShiftAt.IsZero() {
			t.Fatalf("NoDynamics: developer %s changes skill at %v", dev.Name, dev.ShiftAt)
		}
	}
	idx := map[string]int{}
	for i := range w.History.Changes {
		idx[w.History.Changes[i].ChangeID] = i
	}
	for i, b := range w.History.Builds {
		ci := idx[b.ChangeID]
		if w.LogShift(b.StartedAt) != 0 || w.InfraProb(ci, b.StartedAt) != w.Config.FlakyRate {
			t.Fatalf("NoDynamics: build %d starts with a log shift %v and an infrastructure failure probability %v",
				i, w.LogShift(b.StartedAt), w.InfraProb(ci, b.StartedAt))
		}
	}
	checkHistory(t, w)
}
