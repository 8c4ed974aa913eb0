package features

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// Window lengths of the recency features, in events (decided changes or builds).
const (
	RecentShort = 5   // repo_fail_rate_5
	RecentMid   = 20  // repo_fail_rate_20, targets_fail_rate_20
	RecentLong  = 100 // repo_fail_rate_100
	// RecentAuthor is the number of an author's latest labelled changes in
	// author_fail_rate_10.
	RecentAuthor = 10
	// RecentDurations is the number of latest succeeded builds whose mean duration is
	// Zuul's estimate of the next build's duration (log1p_repo_mean10_success_duration).
	RecentDurations = 10
)

// Recent are the recency features of a change at a time t: what the latest results known
// strictly before t say, read from the same events as the developer statistics (see the
// package comment, "Recency"). A [DevTable] gives them with [DevTable.Recent]. NaN means
// there is nothing to read: no event yet, an unknown author, revision or target list, or
// an unknown t.
type Recent struct {
	// RepoFailRate5, 20 and 100 are the shares of failures (success label 0) among the
	// repository's latest 5, 20 and 100 labelled changes (fewer when there are fewer).
	RepoFailRate5, RepoFailRate20, RepoFailRate100 float64
	// RepoLastFailed is 1 when the repository's latest labelled change failed, else 0.
	RepoLastFailed float64
	// HoursSinceRepoFailure is the time from the repository's latest failure to t.
	HoursSinceRepoFailure float64
	// AuthorLastFailed and AuthorFailRate describe the author's latest labelled
	// change, and the failure share among their latest RecentAuthor; NaN for an
	// unknown (empty) author, never a repository value in disguise.
	AuthorLastFailed, AuthorFailRate float64
	// RevisionLastFailed is 1 when the latest earlier attempt of the change's revision
	// (same revision_id) failed, 0 when it succeeded.
	RevisionLastFailed float64
	// TargetsFailRate is the failure share among the latest RecentMid labelled changes
	// of each of the change's affected targets, pooled over its distinct targets.
	TargetsFailRate float64
	// LastDuration is the duration in seconds of the repository's latest decisive
	// build, and MeanSuccessDuration the mean duration of its latest RecentDurations
	// succeeded builds (Zuul's estimate).
	LastDuration, MeanSuccessDuration float64
}

// labelWindow is the latest labels of a stream of at most 64 events as bits (1 = failed),
// the newest in bit 0, and how many of the bits are set by events.
type labelWindow struct {
	Bits uint64 `json:"b"`
	N    int    `json:"n"`
}

func (w *labelWindow) push(failed bool, max int) {
	w.Bits <<= 1
	if failed {
		w.Bits |= 1
	}
	if w.N < max {
		w.N++
	}
	if max < 64 {
		w.Bits &= 1<<max - 1
	}
}

// failures returns the number of failures and of events among the latest k.
func (w labelWindow) failures(k int) (fails, n int) {
	n = min(k, w.N)
	mask := uint64(math.MaxUint64)
	if n < 64 {
		mask = 1<<n - 1
	}
	return bits.OnesCount64(w.Bits & mask), n
}

func (w labelWindow) rate(k int) float64 {
	f, n := w.failures(k)
	if n == 0 {
		return nan
	}
	return float64(f) / float64(n)
}

func (w labelWindow) last() float64 {
	if w.N == 0 {
		return nan
	}
	return float64(w.Bits & 1)
}

func (w labelWindow) valid(max int) bool {
	return w.N >= 0 && w.N <= max && (max >= 64 || w.Bits < 1<<max)
}

// repoRecent is the recency state of one repository.
type repoRecent struct {
	// Labels holds the latest RecentLong success labels (1 = failed), oldest first.
	Labels      []int8    `json:"labels"`
	LastFailure time.Time `json:"last_failure,omitzero"`
	// LastDuration is the latest decisive build's duration; Durations the latest
	// RecentDurations succeeded builds' durations, oldest first.
	LastDuration *float64  `json:"last_duration,omitempty"`
	Durations    []float64 `json:"success_durations"`
	// Revisions maps a revision id to its latest attempt's label (1 = failed).
	Revisions map[string]int8 `json:"revisions"`
	// Targets maps an affected target to its latest RecentMid labels.
	Targets map[string]*labelWindow `json:"targets"`
}

// recency is the recency state of every repository and author.
type recency struct {
	Repos   map[string]*repoRecent  `json:"repos"`
	Authors map[string]*labelWindow `json:"authors"`
}

func newRecency() *recency {
	return &recency{Repos: map[string]*repoRecent{}, Authors: map[string]*labelWindow{}}
}

func (r *recency) repo(name string) *repoRecent {
	s := r.Repos[name]
	if s == nil {
		s = &repoRecent{Labels: []int8{}, Durations: []float64{}, Revisions: map[string]int8{}, Targets: map[string]*labelWindow{}}
		r.Repos[name] = s
	}
	return s
}

// addLabel records that change c's success label (0 or 1) became known at at.
func (r *recency) addLabel(c *datasets.Change, label int8, at time.Time) {
	failed := label == labelFalse
	var f int8
	if failed {
		f = 1
	}
	s := r.repo(c.Repo)
	s.Labels = append(s.Labels, f)
	if len(s.Labels) > RecentLong {
		s.Labels = append(s.Labels[:0], s.Labels[len(s.Labels)-RecentLong:]...)
	}
	if failed && at.After(s.LastFailure) {
		s.LastFailure = at
	}
	if c.Author != "" {
		w := r.Authors[c.Author]
		if w == nil {
			w = new(labelWindow)
			r.Authors[c.Author] = w
		}
		w.push(failed, RecentAuthor)
	}
	if c.RevisionID != "" {
		s.Revisions[c.RevisionID] = f
	}
	if c.AffectedTargets != nil {
		for _, tg := range sortedSet(c.AffectedTargets) {
			w := s.Targets[tg]
			if w == nil {
				w = new(labelWindow)
				s.Targets[tg] = w
			}
			w.push(failed, RecentMid)
		}
	}
}

// addBuild records a decisive build of repo with its duration in seconds.
func (r *recency) addBuild(repo string, duration float64, succeeded bool) {
	s := r.repo(repo)
	d := duration
	s.LastDuration = &d
	if succeeded {
		s.Durations = append(s.Durations, duration)
		if len(s.Durations) > RecentDurations {
			s.Durations = append(s.Durations[:0], s.Durations[len(s.Durations)-RecentDurations:]...)
		}
	}
}

// unknownRecent is Recent with every field NaN.
var unknownRecent = Recent{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}

// lookup returns the recency features of c in repository repo at t.
func (r *recency) lookup(repo string, c *datasets.Change, t time.Time) Recent {
	if t.IsZero() {
		return unknownRecent
	}
	out := unknownRecent
	if w := r.Authors[c.Author]; c.Author != "" && w != nil {
		out.AuthorLastFailed = w.last()
		out.AuthorFailRate = w.rate(RecentAuthor)
	}
	s := r.Repos[repo]
	if s == nil {
		return out
	}
	if n := len(s.Labels); n > 0 {
		rate := func(k int) float64 {
			k = min(k, n)
			f := 0
			for _, x := range s.Labels[n-k:] {
				f += int(x)
			}
			return float64(f) / float64(k)
		}
		out.RepoFailRate5, out.RepoFailRate20, out.RepoFailRate100 = rate(RecentShort), rate(RecentMid), rate(RecentLong)
		out.RepoLastFailed = float64(s.Labels[n-1])
	}
	if !s.LastFailure.IsZero() {
		out.HoursSinceRepoFailure = t.Sub(s.LastFailure).Hours()
	}
	if f, ok := s.Revisions[c.RevisionID]; ok && c.RevisionID != "" {
		out.RevisionLastFailed = float64(f)
	}
	if c.AffectedTargets != nil {
		var fails, n int
		for _, tg := range sortedSet(c.AffectedTargets) {
			if w := s.Targets[tg]; w != nil {
				f, k := w.failures(RecentMid)
				fails += f
				n += k
			}
		}
		if n > 0 {
			out.TargetsFailRate = float64(fails) / float64(n)
		}
	}
	if s.LastDuration != nil {
		out.LastDuration = *s.LastDuration
	}
	if len(s.Durations) > 0 {
		sum := 0.0
		for _, d := range s.Durations {
			sum += d
		}
		out.MeanSuccessDuration = sum / float64(len(s.Durations))
	}
	return out
}

// validate checks a decoded recency state.
func (r *recency) validate() error {
	for name, s := range r.Repos {
		if s == nil || len(s.Labels) > RecentLong || len(s.Durations) > RecentDurations {
			return fmt.Errorf("repository %q: impossible recency windows", name)
		}
		for _, x := range s.Labels {
			if x != 0 && x != 1 {
				return fmt.Errorf("repository %q: label %d is not 0 or 1", name, x)
			}
		}
		for _, x := range s.Revisions {
			if x != 0 && x != 1 {
				return fmt.Errorf("repository %q: revision label %d is not 0 or 1", name, x)
			}
		}
		for tg, w := range s.Targets {
			if w == nil || !w.valid(RecentMid) {
				return fmt.Errorf("repository %q: target %q: impossible label window", name, tg)
			}
		}
		for _, d := range append(s.Durations, valueOr(s.LastDuration, 0)) {
			if !(d >= 0) || math.IsInf(d, 1) {
				return fmt.Errorf("repository %q: impossible duration %v", name, d)
			}
		}
		if s.Revisions == nil {
			s.Revisions = map[string]int8{}
		}
		if s.Targets == nil {
			s.Targets = map[string]*labelWindow{}
		}
	}
	for a, w := range r.Authors {
		if a == "" || w == nil || !w.valid(RecentAuthor) {
			return fmt.Errorf("author %q: impossible label window", a)
		}
	}
	return nil
}

func valueOr(p *float64, v float64) float64 {
	if p == nil {
		return v
	}
	return *p
}
