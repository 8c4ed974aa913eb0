package features

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"gonum.org/v1/gonum/floats/scalar"
)

// bruteRecent computes the recency features of c at its submission from the history by
// brute force, independently of the index's event sweep: a change's label is known at
// the later of its decision and, for label 1, its first succeeded build's finish, for
// label 0 every decisive build's finish; a decisive build's duration at the later of its
// change's decision and its finish. label gives each change's success label (-1: none).
func bruteRecent(h *datasets.History, label map[string]int8, c *datasets.Change) Recent {
	type ev struct {
		at     time.Time
		c      *datasets.Change
		failed bool
	}
	var labels []ev
	type dur struct {
		at time.Time
		d  float64
		ok bool
	}
	var durs []dur
	decided := func(x *datasets.Change) time.Time {
		if !x.DecidedAt.IsZero() {
			return x.DecidedAt
		}
		return time.Time{}
	}
	for i := range h.Changes {
		x := &h.Changes[i]
		d := decided(x)
		if d.IsZero() {
			continue
		}
		l := label[x.ChangeID]
		at := d
		var firstOK time.Time
		for k := range h.Builds {
			b := &h.Builds[k]
			if b.ChangeID != x.ChangeID || !decisive(b.Status) {
				continue
			}
			if b.Status == datasets.StatusSucceeded && (firstOK.IsZero() || b.FinishedAt.Before(firstOK)) {
				firstOK = b.FinishedAt
			}
			if l != labelTrue && b.FinishedAt.After(at) {
				at = b.FinishedAt
			}
			if b.DurationS >= 0 && x.Repo == c.Repo {
				durs = append(durs, dur{latest(d, b.FinishedAt), b.DurationS, b.Status == datasets.StatusSucceeded})
			}
		}
		if l == labelTrue && firstOK.After(at) {
			at = firstOK
		}
		if l >= 0 {
			labels = append(labels, ev{at, x, l == labelFalse})
		}
	}
	slices.SortStableFunc(labels, func(a, b ev) int { return a.at.Compare(b.at) })
	slices.SortStableFunc(durs, func(a, b dur) int { return a.at.Compare(b.at) })
	t := c.SubmittedAt
	r := unknownRecent
	var repo, author []bool
	var lastFail time.Time
	for _, e := range labels {
		if !e.at.Before(t) {
			break
		}
		if e.c.Repo == c.Repo {
			repo = append(repo, e.failed)
			if e.failed {
				lastFail = e.at
			}
			if e.c.RevisionID == c.RevisionID && c.RevisionID != "" {
				r.RevisionLastFailed = b2f(e.failed)
			}
		}
		if c.Author != "" && e.c.Author == c.Author {
			author = append(author, e.failed)
		}
	}
	share := func(v []bool, k int) float64 {
		if len(v) == 0 {
			return nan
		}
		v = v[max(0, len(v)-k):]
		n := 0
		for _, f := range v {
			if f {
				n++
			}
		}
		return float64(n) / float64(len(v))
	}
	r.RepoFailRate5, r.RepoFailRate20, r.RepoFailRate100 = share(repo, 5), share(repo, 20), share(repo, 100)
	if len(repo) > 0 {
		r.RepoLastFailed = b2f(repo[len(repo)-1])
	}
	if !lastFail.IsZero() {
		r.HoursSinceRepoFailure = t.Sub(lastFail).Hours()
	}
	if len(author) > 0 {
		r.AuthorLastFailed = b2f(author[len(author)-1])
		r.AuthorFailRate = share(author, 10)
	}
	var okDur []float64
	for _, d := range durs {
		if !d.at.Before(t) {
			break
		}
		r.LastDuration = d.d
		if d.ok {
			okDur = append(okDur, d.d)
		}
	}
	if len(okDur) > 0 {
		okDur = okDur[max(0, len(okDur)-10):]
		s := 0.0
		for _, d := range okDur {
			s += d
		}
		r.MeanSuccessDuration = s / float64(len(okDur))
	}
	return r
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestRecentBruteForce checks every change's recency features (but the per-target rate)
// against bruteRecent on random histories with failures, unknown authors and
// resubmitted revisions in two repositories.
func TestRecentBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	h := randomHistory(rng, 400)
	ix, _ := allTables(t, h)
	label := map[string]int8{}
	for i := range h.Changes {
		l, ok := ix.SuccessLabel(i)
		label[h.Changes[i].ChangeID] = -1
		if ok {
			label[h.Changes[i].ChangeID] = int8(l)
		}
	}
	var withAuthor, withRev, withFail int
	for i := range h.Changes {
		c := &h.Changes[i]
		got, want := ix.Recent(i), bruteRecent(h, label, c)
		got.TargetsFailRate, want.TargetsFailRate = 0, 0
		g := []float64{got.RepoFailRate5, got.RepoFailRate20, got.RepoFailRate100, got.RepoLastFailed, got.HoursSinceRepoFailure,
			got.AuthorLastFailed, got.AuthorFailRate, got.RevisionLastFailed, got.LastDuration, got.MeanSuccessDuration}
		w := []float64{want.RepoFailRate5, want.RepoFailRate20, want.RepoFailRate100, want.RepoLastFailed, want.HoursSinceRepoFailure,
			want.AuthorLastFailed, want.AuthorFailRate, want.RevisionLastFailed, want.LastDuration, want.MeanSuccessDuration}
		for k := range g {
			if math.IsNaN(g[k]) != math.IsNaN(w[k]) || (!math.IsNaN(w[k]) && !scalar.EqualWithinAbsOrRel(g[k], w[k], 1e-9, 1e-9)) {
				t.Errorf("change %s (%s, author %q): Recent\n got %+v\nwant %+v", c.ChangeID, c.Repo, c.Author, got, want)
				break
			}
		}
		if !math.IsNaN(want.AuthorFailRate) {
			withAuthor++
		}
		if !math.IsNaN(want.RevisionLastFailed) {
			withRev++
		}
		if want.RepoFailRate20 > 0 {
			withFail++
		}
		if c.Author == "" && !math.IsNaN(got.AuthorLastFailed+got.AuthorFailRate) {
			t.Errorf("change %s has no author but author recency %v, %v", c.ChangeID, got.AuthorLastFailed, got.AuthorFailRate)
		}
	}
	if withAuthor < 200 || withRev < 30 || withFail < 200 {
		t.Errorf("weak test: %d changes with author recency, %d with an earlier attempt, %d with recent failures", withAuthor, withRev, withFail)
	}
}

// TestTargetsFailRate checks the pooled per-target rate by hand: x fails twice in three
// labelled changes, y once in two, so a change on x and y sees 3 of 5.
func TestTargetsFailRate(t *testing.T) {
	h := &datasets.History{
		Changes: []datasets.Change{
			change("a", "ann", 0, 5, reject, "x"),
			change("b", "ann", 6, 10, reject, "x", "y"),
			change("c", "ben", 11, 15, landed, "x", "y"),
			change("d", "ben", 20, 30, landed, "y", "x", "x"),
			change("e", "ben", 21, 30, landed, "z"),
		},
		Builds: []datasets.Build{
			build("a1", "a", fail, 1, 4, 100),
			build("b1", "b", fail, 7, 9, 100),
			build("c1", "c", ok, 12, 14, 100),
			build("d1", "d", ok, 21, 29, 100),
			build("e1", "e", ok, 22, 29, 100),
		},
	}
	ix, _ := allTables(t, h)
	if r := ix.Recent(3); r.TargetsFailRate != 3.0/5 {
		t.Errorf("d: targets_fail_rate_20 = %v, want 0.6", r.TargetsFailRate)
	}
	if r := ix.Recent(4); !math.IsNaN(r.TargetsFailRate) {
		t.Errorf("e (target z never seen): targets_fail_rate_20 = %v, want NaN", r.TargetsFailRate)
	}
	if r := ix.Recent(0); r != unknownRecent && !math.IsNaN(r.RepoFailRate5) {
		t.Errorf("a (nothing before it): %+v, want NaN", r)
	}
}
