package features

import (
	"math"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// t0 is the origin of the hand-made histories' clocks.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns t0 plus m minutes; a negative m gives the zero time (unknown).
func at(m float64) time.Time {
	if m < 0 {
		return time.Time{}
	}
	return t0.Add(time.Duration(m * float64(time.Minute)))
}

// change returns a change of repo "r" with every count known and small.
func change(id, author string, sub, dec float64, out datasets.Outcome, targets ...string) datasets.Change {
	return datasets.Change{
		ChangeID: id, Repo: "r", RevisionID: "rev-" + id, Author: author,
		SubmittedAt: at(sub), DecidedAt: at(dec), Outcome: out,
		TargetsChanged: 2, TargetsAdded: 1, TargetsRemoved: 0,
		LinesAdded: 10, LinesRemoved: 5, Hunks: 3, FilesChanged: 2, Commits: 1,
		BinariesAdded: 0, BinariesRemoved: 0, InitialChecksPassed: 4, InitialChecksFailed: 1,
		AffectedTargets:     targets,
		RevisionSubmissions: 1, RevisionHasRevertPlan: datasets.FlagFalse, RevisionHasTestPlan: datasets.FlagTrue,
		AuthorTenureDays: 100, AuthorLevel: 3,
		TrueProbSuccess: math.NaN(),
	}
}

// build returns a build of change cid on path, started and finished at the given minutes.
func build(id, cid string, st datasets.Status, start, finish, dur float64, path ...string) datasets.Build {
	return datasets.Build{
		BuildID: id, Repo: "r", ChangeID: cid, Path: path,
		SpeculationHeight: float64(len(path)),
		StartedAt:         at(start), FinishedAt: at(finish), DurationS: dur, Status: st,
		TrueMuS: math.NaN(), TrueSigmaS: math.NaN(),
	}
}

const (
	ok      = datasets.StatusSucceeded
	fail    = datasets.StatusFailed
	infra   = datasets.StatusInfraFailed
	abort   = datasets.StatusAborted
	landed  = datasets.OutcomeLanded
	reject  = datasets.OutcomeRejected
	pending = datasets.OutcomeUnknown
)

// sameBits reports whether a and b hold the same float64 values bit for bit (NaN equal to
// NaN): the two extraction paths must agree exactly, not approximately.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

func colOf(s Schema, name string) int {
	for i, n := range s.Names {
		if n == name {
			return i
		}
	}
	panic("no feature " + name)
}
