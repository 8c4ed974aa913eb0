package synth

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/sqpredict/sqpredict/datasets"
)

// exactTol compares truth columns recomputed in the test with the generator's: the same
// formula evaluated in a different order differs by a few ulps.
const exactTol = 1e-12

// binomialSigmas is how many standard deviations of a binomial count a Monte Carlo
// comparison allows (false alarm rate about 6e-5 per comparison).
const binomialSigmas = 4

func simulate(t *testing.T, cfg Config) *World {
	t.Helper()
	w, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Simulate(%+v) = %v", cfg, err)
	}
	return w
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	cfg := Config{Profile: "ios", Days: 2, Seed: 7}
	a, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("Generate with the same seed gave different histories")
	}
	cfg.Seed = 8
	c, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Changes, c.Changes) {
		t.Fatal("Generate with seeds 7 and 8 gave the same changes")
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"unknown profile", Config{Profile: "rust", Days: 1}, "profile"},
		{"no days", Config{Profile: "go"}, "days"},
		{"NaN days", Config{Profile: "go", Days: math.NaN()}, "days"},
		{"negative rate", Config{Profile: "go", Days: 1, ChangesPerHour: -1}, "changes per hour"},
		{"flaky 1", Config{Profile: "go", Days: 1, FlakyRate: 1}, "flaky"},
		{"negative workers", Config{Profile: "go", Days: 1, Workers: -2}, "workers"},
		{"infra rate above 1", Config{Profile: "go", Days: 1, Dynamics: &Dynamics{InfraEpisodeRate: 1.5}}, "infra episode rate"},
		{"NaN drift", Config{Profile: "go", Days: 1, Dynamics: &Dynamics{DriftPerWeek: math.NaN()}}, "drift"},
		{"negative shift sd", Config{Profile: "go", Days: 1, Dynamics: &Dynamics{ShiftSD: -1}}, "shift sd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "synth: ") {
				t.Fatalf("Generate(%+v) = %v, want an error about %s", tc.cfg, err, tc.wantErr)
			}
		})
	}
}

func TestContextCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, Config{Profile: "go", Days: 1}); err == nil {
		t.Fatal("Generate with a canceled context succeeded")
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	w := simulate(t, Config{Profile: "go", Days: 1, Seed: 1})
	p, _ := LookupProfile("go")
	if w.Config.Start != DefaultStart || w.Config.Repo != "go" || w.Config.Workers != p.Workers ||
		w.Config.FlakyRate != p.FlakyRate || w.Config.ChangesPerHour != p.ChangesPerHour {
		t.Fatalf("resolved config %+v, want the go profile's defaults from %v", w.Config, DefaultStart)
	}
	for _, c := range w.History.Changes {
		if c.SubmittedAt.Before(DefaultStart) || !c.SubmittedAt.Before(DefaultStart.Add(24*time.Hour)) || c.Repo != "go" {
			t.Fatalf("change %s submitted at %v in repo %q, want within the first day from %v in go", c.ChangeID, c.SubmittedAt, c.Repo, DefaultStart)
		}
	}
}

// TestRateShapeMean checks that the arrival cycle has mean 1 over a week, so that
// ChangesPerHour is the mean rate.
func TestRateShapeMean(t *testing.T) {
	t.Parallel()
	sum := 0.0
	for h := range 7 * 24 {
		sum += RateShape(DefaultStart.Add(time.Duration(h) * time.Hour))
	}
	if !scalar.EqualWithinAbsOrRel(sum/(7*24), 1, exactTol, exactTol) {
		t.Fatalf("mean of RateShape over a week = %v, want 1", sum/(7*24))
	}
}

// TestHistoryInvariants checks, for every profile, the structure of the tables and that
// every truth column is the documented function of the data.
func TestHistoryInvariants(t *testing.T) {
	t.Parallel()
	for _, prof := range Profiles {
		t.Run(prof, func(t *testing.T) {
			t.Parallel()
			w := simulate(t, Config{Profile: prof, Days: 3, Seed: 11, ChangesPerHour: w0rate(prof)})
			checkHistory(t, w)
		})
	}
}

// w0rate returns a rate low enough for a quick test.
func w0rate(prof string) float64 {
	p, _ := LookupProfile(prof)
	return p.ChangesPerHour / 2
}

func checkHistory(t *testing.T, w *World) {
	t.Helper()
	h := w.History
	devs := map[string]*Developer{}
	for i := range w.Developers {
		devs[w.Developers[i].Name] = &w.Developers[i]
	}
	idx := map[string]int{}
	for i := range h.Changes {
		c := &h.Changes[i]
		if _, dup := idx[c.ChangeID]; dup {
			t.Fatalf("duplicate change id %s", c.ChangeID)
		}
		idx[c.ChangeID] = i
		if i > 0 && c.SubmittedAt.Before(h.Changes[i-1].SubmittedAt) {
			t.Fatalf("change %s submitted before the change listed before it", c.ChangeID)
		}
		if c.Outcome == datasets.OutcomeUnknown || c.DecidedAt.Before(c.SubmittedAt) {
			t.Fatalf("change %s: outcome %v decided at %v, submitted %v", c.ChangeID, c.Outcome, c.DecidedAt, c.SubmittedAt)
		}
		for _, v := range []float64{c.TargetsChanged, c.TargetsAdded, c.TargetsRemoved, c.LinesAdded, c.LinesRemoved,
			c.Hunks, c.FilesChanged, c.Commits, c.BinariesAdded, c.BinariesRemoved, c.InitialChecksPassed,
			c.InitialChecksFailed, c.RevisionSubmissions, c.AuthorTenureDays, c.AuthorLevel} {
			if !(v >= 0) || v != math.Trunc(v) && v != c.AuthorTenureDays {
				t.Fatalf("change %s has attribute %v, want a non-negative count: %+v", c.ChangeID, v, c)
			}
		}
		if c.RevisionHasTestPlan == datasets.FlagUnknown || c.RevisionHasRevertPlan == datasets.FlagUnknown ||
			c.TargetsChanged < 1 || len(c.AffectedTargets) < int(c.TargetsChanged) || c.Commits < 1 || c.RevisionSubmissions < 1 ||
			c.Hunks < c.FilesChanged || c.FilesChanged < c.TargetsChanged {
			t.Fatalf("change %s is inconsistent: %+v", c.ChangeID, c)
		}
		if !slices.IsSorted(c.AffectedTargets[:len(c.AffectedTargets)-int(c.TargetsAdded)]) {
			t.Fatalf("change %s: affected targets not sorted", c.ChangeID)
		}
		// true_p_success, written out independently of SuccessModel.Logit.
		m := w.Params.Success
		bin := 0.0
		if c.BinariesAdded+c.BinariesRemoved > 0 {
			bin = 1
		}
		z := m.Intercept + m.Skill*devs[c.Author].SkillAt(c.SubmittedAt) + m.Level*(c.AuthorLevel-3) +
			m.LogTenure*math.Log(1+c.AuthorTenureDays/365) + m.LogLines*math.Log(1+c.LinesAdded+c.LinesRemoved) +
			m.LogFiles*math.Log(1+c.FilesChanged) + m.LogAffected*math.Log(1+float64(len(c.AffectedTargets))) +
			m.LogCommits*math.Log(c.Commits) + m.LogTargetsNew*math.Log(1+c.TargetsAdded+c.TargetsRemoved) +
			m.Binaries*bin + m.TestPlan*c.RevisionHasTestPlan.Float() + m.RevertPlan*c.RevisionHasRevertPlan.Float() +
			m.ChecksPassed*c.InitialChecksPassed + m.ChecksFailed*c.InitialChecksFailed +
			m.LogSubmission*math.Log(c.RevisionSubmissions)
		if want := 1 / (1 + math.Exp(-z)); !scalar.EqualWithinAbsOrRel(c.TrueProbSuccess, want, exactTol, exactTol) {
			t.Fatalf("change %s: true_p_success = %v, want %v", c.ChangeID, c.TrueProbSuccess, want)
		}
	}

	// Pairs: ahead earlier than behind, overlapping, probability as documented.
	ahead := map[string][]int{} // behind id -> indices of ahead changes
	for _, p := range h.Pairs {
		a, okA := idx[p.AheadChangeID]
		b, okB := idx[p.BehindChangeID]
		if !okA || !okB || a >= b {
			t.Fatalf("pair %+v: ids unknown or not in queue order", p)
		}
		ca, cb := &h.Changes[a], &h.Changes[b]
		if !ca.DecidedAt.After(cb.SubmittedAt) && !ca.DecidedAt.Equal(cb.SubmittedAt) {
			t.Fatalf("pair %+v: ahead decided at %v before behind submitted at %v", p, ca.DecidedAt, cb.SubmittedAt)
		}
		ov := 0
		set := map[string]bool{}
		for _, n := range ca.AffectedTargets {
			set[n] = true
		}
		for _, n := range cb.AffectedTargets {
			if set[n] {
				ov++
			}
		}
		z := w.Params.Conflict.Intercept + w.Params.Conflict.LogOverlap*math.Log(float64(ov)) +
			w.Params.Conflict.Containment*float64(ov)/float64(min(len(ca.AffectedTargets), len(cb.AffectedTargets))) +
			w.Params.Conflict.Blast*math.Min(1, float64(len(ca.AffectedTargets))/float64(w.Params.Targets))
		if want := 1 / (1 + math.Exp(-z)); ov == 0 || !scalar.EqualWithinAbsOrRel(p.TrueProbConflict, want, exactTol, exactTol) {
			t.Fatalf("pair %+v: overlap %d, want true_p_conflict %v", p, ov, want)
		}
		if n := len(ahead[p.BehindChangeID]); n > 0 && ahead[p.BehindChangeID][n-1] >= a {
			t.Fatalf("pairs of %s not in queue order", p.BehindChangeID)
		}
		ahead[p.BehindChangeID] = append(ahead[p.BehindChangeID], a)
	}
	conflicted := map[[2]string]bool{}
	for _, p := range h.Pairs {
		conflicted[[2]string{p.AheadChangeID, p.BehindChangeID}] = p.Conflicted
	}

	// Builds: known ids, times, durations, paths within the ahead set, truth columns.
	deciding := map[string]int{}
	culprit := map[int][]*datasets.Build{} // builds started once their change was decided
	for i := range h.Builds {
		b := &h.Builds[i]
		ci, ok := idx[b.ChangeID]
		if !ok {
			t.Fatalf("build %s names unknown change %s", b.BuildID, b.ChangeID)
		}
		c := &h.Changes[ci]
		if b.FinishedAt.Before(b.StartedAt) || b.StartedAt.Before(c.SubmittedAt) ||
			b.DurationS != b.FinishedAt.Sub(b.StartedAt).Seconds() || b.Status == datasets.StatusUnknown {
			t.Fatalf("build %s: started %v finished %v duration %v status %v (change submitted %v)",
				b.BuildID, b.StartedAt, b.FinishedAt, b.DurationS, b.Status, c.SubmittedAt)
		}
		if !b.StartedAt.Before(c.DecidedAt) {
			culprit[ci] = append(culprit[ci], b)
		} else if b.Status != datasets.StatusAborted && b.FinishedAt.After(c.DecidedAt) {
			t.Fatalf("build %s of %s finished at %v after the change was decided at %v", b.BuildID, b.ChangeID, b.FinishedAt, c.DecidedAt)
		}
		k := 0
		for _, id := range b.Path {
			j, ok := idx[id]
			if !ok {
				t.Fatalf("build %s: path entry %s is not a change", b.BuildID, id)
			}
			for k < len(ahead[b.ChangeID]) && ahead[b.ChangeID][k] < j {
				k++
			}
			if k == len(ahead[b.ChangeID]) || ahead[b.ChangeID][k] != j {
				t.Fatalf("build %s: path entry %s is not in the ahead set of %s, in order", b.BuildID, id, b.ChangeID)
			}
		}
		if float64(len(b.Path)) < b.SpeculationHeight {
			t.Fatalf("build %s: height %v above path length %d", b.BuildID, b.SpeculationHeight, len(b.Path))
		}
		var want []string
		for _, j := range ahead[b.ChangeID] {
			if h.Changes[j].Outcome == datasets.OutcomeLanded {
				want = append(want, h.Changes[j].ChangeID)
			}
		}
		if slices.Equal(want, b.Path) && (b.Status == datasets.StatusSucceeded || b.Status == datasets.StatusFailed) {
			if prev, dup := deciding[b.ChangeID]; dup {
				t.Fatalf("change %s has two finished builds on its landed path: %d and %d", b.ChangeID, prev, i)
			}
			deciding[b.ChangeID] = i
		}
		m, s := w.Params.Duration.LogParams(c, b.SpeculationHeight)
		m += w.LogShift(b.StartedAt) // the build-time truth at the build's start
		mean, sd := math.Exp(m+s*s/2), math.Exp(m+s*s/2)*math.Sqrt(math.Exp(s*s)-1)
		if !scalar.EqualWithinAbsOrRel(b.TrueMuS, mean, exactTol, exactTol) || !scalar.EqualWithinAbsOrRel(b.TrueSigmaS, sd, exactTol, exactTol) {
			t.Fatalf("build %s: true mean, sd = %v, %v, want %v, %v", b.BuildID, b.TrueMuS, b.TrueSigmaS, mean, sd)
		}
	}

	// The deciding build fails iff the change is intrinsically bad or conflicts with a
	// landed change ahead; among changes without such a conflict, the success rate of
	// deciding builds is the mean of true_p_success.
	var nOK, sumP, varP float64
	for i := range h.Changes {
		c := &h.Changes[i]
		bi, ok := deciding[c.ChangeID]
		if !ok {
			t.Fatalf("change %s has no finished build on its landed path", c.ChangeID)
		}
		st := h.Builds[bi].Status
		if (st == datasets.StatusSucceeded) != (c.Outcome == datasets.OutcomeLanded) {
			t.Fatalf("change %s: outcome %v but deciding build %s %v", c.ChangeID, c.Outcome, h.Builds[bi].BuildID, st)
		}
		conf := false
		for _, id := range h.Builds[bi].Path {
			conf = conf || conflicted[[2]string{id, c.ChangeID}]
		}
		if conf {
			if st != datasets.StatusFailed {
				t.Fatalf("change %s conflicts with a landed change ahead but its deciding build %v", c.ChangeID, st)
			}
			continue
		}
		if st == datasets.StatusSucceeded {
			nOK++
		}
		sumP += c.TrueProbSuccess
		varP += c.TrueProbSuccess * (1 - c.TrueProbSuccess)
	}
	checkCulprits(t, w, culprit, deciding, conflicted)
	if math.Abs(nOK-sumP) > binomialSigmas*math.Sqrt(varP) {
		t.Errorf("deciding builds succeeded %v times, want %.1f ± %.1f (sum of true_p_success)", nOK, sumP, binomialSigmas*math.Sqrt(varP))
	}
}

// checkCulprits checks the culprit-finding builds of every change against an
// independent replay of the bisection of Simulate: a change rejected on a non-empty path
// is built on the empty path until that build ends succeeded or failed; when it
// succeeded, the failing path is split in halves (the first one rounded up), each built,
// and each failing half of two or more changes split again. Every such build has height
// 0 and succeeds iff the change is intrinsically good and conflicts with no change of
// its path. No other change gets a build after its decision.
func checkCulprits(t *testing.T, w *World, culprit map[int][]*datasets.Build, deciding map[string]int, conflicted map[[2]string]bool) {
	t.Helper()
	h := w.History
	for i := range h.Changes {
		c := &h.Changes[i]
		path := h.Builds[deciding[c.ChangeID]].Path
		bs := culprit[i]
		if c.Outcome == datasets.OutcomeLanded || len(path) == 0 {
			if len(bs) > 0 {
				t.Fatalf("change %s (%v, deciding path %v) has build %s after its decision", c.ChangeID, c.Outcome, path, bs[0].BuildID)
			}
			continue
		}
		status := func(p []string) datasets.Status {
			for _, id := range p {
				if conflicted[[2]string{id, c.ChangeID}] {
					return datasets.StatusFailed
				}
			}
			if !w.Good[i] {
				return datasets.StatusFailed
			}
			return datasets.StatusSucceeded
		}
		want := []string{";" + status(nil).String()}
		var bisect func(p []string)
		bisect = func(p []string) {
			if len(p) < 2 {
				return
			}
			mid := (len(p) + 1) / 2
			for _, half := range [][]string{p[:mid], p[mid:]} {
				st := status(half)
				want = append(want, pathKey(half)+";"+st.String())
				if st == datasets.StatusFailed {
					bisect(half)
				}
			}
		}
		if w.Good[i] {
			bisect(path)
		}
		var got []string
		for _, b := range bs {
			if b.SpeculationHeight != 0 || b.Status == datasets.StatusAborted {
				t.Fatalf("change %s: culprit build %s at height %v, %v", c.ChangeID, b.BuildID, b.SpeculationHeight, b.Status)
			}
			if b.Status != datasets.StatusInfraFailed {
				got = append(got, pathKey(b.Path)+";"+b.Status.String())
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("change %s (good %v) rejected on path %v: culprit builds (path;status)\n%q, want\n%q", c.ChangeID, w.Good[i], path, got, want)
		}
	}
}

// TestStatistics checks the generator's statistics against the bands of the issue.
func TestStatistics(t *testing.T) {
	t.Parallel()
	const flaky = 0.08
	w := simulate(t, Config{Profile: "ios", Days: 14, Seed: 3, ChangesPerHour: 6, FlakyRate: flaky})
	h := w.History
	s := Summarize(h)
	t.Logf("summary %+v", s)

	// Infrastructure failures: drawn for every build with World.InfraProb (flaky, raised
	// during the dynamics' episodes), seen unless the build is aborted first.
	// Infra-failed builds stop early and so are aborted a little less often; allow 25%
	// relative bias on top of the binomial noise.
	idx := map[string]int{}
	for i := range h.Changes {
		idx[h.Changes[i].ChangeID] = i
	}
	var seen, infra, want, vr float64
	for i := range h.Builds {
		b := &h.Builds[i]
		if b.Status == datasets.StatusAborted {
			continue
		}
		p := w.InfraProb(idx[b.ChangeID], b.StartedAt)
		seen, want, vr = seen+1, want+p, vr+p*(1-p)
		if b.Status == datasets.StatusInfraFailed {
			infra++
		}
	}
	if want < seen*flaky {
		t.Errorf("infrastructure failure probability %v on average, below the flaky rate %v", want/seen, flaky)
	}
	if tol := binomialSigmas*math.Sqrt(vr) + 0.25*want; math.Abs(infra-want) > tol {
		t.Errorf("%v infra_failed builds of %v, want %.0f ± %.0f", infra, seen, want, tol)
	}
	if s.Builds[datasets.StatusAborted] == 0 || s.Resubmissions == 0 || s.Rejected == 0 {
		t.Errorf("no aborted builds, resubmissions or rejections: %+v", s)
	}

	// Daily and weekly cycle of first submissions.
	var night, day, weekend, weekday float64
	for i := range h.Changes {
		c := &h.Changes[i]
		if c.RevisionSubmissions > 1 {
			continue
		}
		at := c.SubmittedAt
		if at.Weekday() == time.Saturday || at.Weekday() == time.Sunday {
			weekend++
			continue
		}
		weekday++
		switch hr := at.Hour(); {
		case hr < 6:
			night++
		case hr >= 9 && hr < 17:
			day++
		}
	}
	// Per hour: 6 night hours and 8 day hours per weekday; 10 weekdays and 4 weekend days.
	if night/6 > 0.2*day/8 {
		t.Errorf("night rate %.1f per weekday hour vs day rate %.1f: no daily cycle", night/6/10, day/8/10)
	}
	if weekend/4 > 0.4*weekday/10 {
		t.Errorf("weekend rate %.1f per day vs weekday rate %.1f: no weekly cycle", weekend/4, weekday/10)
	}

	// Resubmissions: same revision, one more submission, after the previous was rejected.
	last := map[string]*datasets.Change{}
	for i := range h.Changes {
		c := &h.Changes[i]
		if prev := last[c.RevisionID]; prev != nil {
			if prev.Outcome != datasets.OutcomeRejected || c.RevisionSubmissions != prev.RevisionSubmissions+1 ||
				c.SubmittedAt.Before(prev.DecidedAt) || c.Author != prev.Author {
				t.Fatalf("resubmission %+v of %+v", c, prev)
			}
		} else if c.RevisionSubmissions != 1 {
			t.Fatalf("change %s is submission %v of a new revision", c.ChangeID, c.RevisionSubmissions)
		}
		last[c.RevisionID] = c
	}

	// Heavy tails: lines added, and large diffs that affect most targets.
	lines := make([]float64, len(h.Changes))
	most := 0
	for i := range h.Changes {
		lines[i] = h.Changes[i].LinesAdded
		if len(h.Changes[i].AffectedTargets) > w.Params.Targets/2 {
			most++
		}
	}
	sort.Float64s(lines)
	q50, q99 := lines[len(lines)/2], lines[len(lines)*99/100]
	if q99 < 20*q50 || most == 0 {
		t.Errorf("lines added median %v, 99th percentile %v; %d changes affect most targets: tail too light", q50, q99, most)
	}
	var height float64
	for _, b := range h.Builds {
		height = math.Max(height, b.SpeculationHeight)
	}
	if height < 2 {
		t.Errorf("highest speculation %v, want some speculation", height)
	}
}

// TestDurations checks the build-time bands: iOS builds mostly take 30 to 60 minutes
// (paper 001, Figure 9), Go builds are shorter and Android builds in between.
func TestDurations(t *testing.T) {
	t.Parallel()
	median := map[string]float64{}
	for _, prof := range Profiles {
		w := simulate(t, Config{Profile: prof, Days: 2, Seed: 5, ChangesPerHour: w0rate(prof)})
		var d []float64
		in := 0
		for _, b := range w.History.Builds {
			if b.Status == datasets.StatusSucceeded || b.Status == datasets.StatusFailed {
				d = append(d, b.DurationS)
				if b.DurationS >= 30*60 && b.DurationS <= 60*60 {
					in++
				}
			}
		}
		sort.Float64s(d)
		median[prof] = d[len(d)/2]
		if share := float64(in) / float64(len(d)); prof == "ios" && share < 0.75 {
			t.Errorf("ios: %.2f of builds take 30 to 60 minutes, want at least 0.75", share)
		}
	}
	if !(median["go"] < 15*60 && median["go"] < median["android"] && median["android"] < median["ios"]) {
		t.Errorf("median build times %v, want go (< 15 min) < android < ios", median)
	}
}

// TestConflictCurve checks the share of changes with a real conflict against paper
// 001's Figure 1: about 5% with 2 concurrent potentially conflicting changes and about
// 40% with 16. Bands: [2%, 9%] at N = 2 and [25%, 60%] pooled over N = 13..19, wide
// enough for the sampling noise of a week of history (about 1 and 4 points).
func TestConflictCurve(t *testing.T) {
	t.Parallel()
	w := simulate(t, Config{Profile: "ios", Days: 7, Seed: 1})
	var two, sixteen CurvePoint
	for _, p := range ConflictCurve(w.History) {
		switch {
		case p.N == 2:
			two = p
		case p.N >= 13 && p.N <= 19:
			sixteen.Changes += p.Changes
			sixteen.Conflicted += p.Conflicted
		}
	}
	if two.Changes < 100 || sixteen.Changes < 50 {
		t.Fatalf("too few changes to measure: %+v at 2, %+v at 13-19", two, sixteen)
	}
	if s := two.Share(); s < 0.02 || s > 0.09 {
		t.Errorf("conflict share at 2 concurrent changes = %.3f (%d changes), want 0.02-0.09", s, two.Changes)
	}
	if s := sixteen.Share(); s < 0.25 || s > 0.60 {
		t.Errorf("conflict share at 13-19 concurrent changes = %.3f (%d changes), want 0.25-0.60", s, sixteen.Changes)
	}
}

func TestConflictProbPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("ConflictModel.Prob(0, 3, 4) did not panic")
		}
	}()
	ConflictModel{}.Prob(0, 3, 4, 10)
}

func TestMeanSD(t *testing.T) {
	t.Parallel()
	// Moment matching recovers the log-normal parameters.
	const m, s = 7.5, 0.2
	mean, sd := MeanSD(m, s)
	s2 := math.Log(1 + (sd/mean)*(sd/mean))
	if !scalar.EqualWithinAbsOrRel(math.Sqrt(s2), s, exactTol, exactTol) || !scalar.EqualWithinAbsOrRel(math.Log(mean)-s2/2, m, exactTol, exactTol) {
		t.Fatalf("MeanSD(%v, %v) = %v, %v: moment matching does not recover the parameters", m, s, mean, sd)
	}
}

func BenchmarkGenerateIOS90Days(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(context.Background(), Config{Profile: "ios", Days: 90, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
