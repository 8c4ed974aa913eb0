package queue

import (
	"math"
	"slices"
)

// Metrics are the queue outcomes of one run; the JSON names are those of replay's
// summary.json. Times are seconds unless the name says hours.
type Metrics struct {
	// Changes is the number of changes decided, Landed and Rejected split it.
	Changes  int `json:"changes"`
	Landed   int `json:"landed"`
	Rejected int `json:"rejected"`
	// Builds counts every build started: aborted and infrastructure failures included;
	// a batch (Build.Batch) is one build.
	Builds int `json:"builds"`
	// BuildsPerChange is Builds / Changes; BuildsPerLanded is Builds / Landed (paper
	// 000 §X-A's builds-to-changes ratio is the first).
	BuildsPerChange float64 `json:"builds_per_change"`
	BuildsPerLanded float64 `json:"builds_per_landed"`
	// CPUHours is the run time of every build, aborted ones included, in hours
	// (paper 000 §X-B counts CPU hours; here one worker-hour is one hour; a batch
	// occupies one worker).
	CPUHours float64 `json:"cpu_hours"`
	// AbortedShare is the share of builds aborted; InfraShare of builds that failed for
	// infrastructure reasons.
	AbortedShare float64 `json:"aborted_share"`
	InfraShare   float64 `json:"infra_share"`
	// TurnaroundP50, P95 and P99 are quantiles of decided_at − submitted_at over every
	// change.
	TurnaroundP50 float64 `json:"turnaround_p50_s"`
	TurnaroundP95 float64 `json:"turnaround_p95_s"`
	TurnaroundP99 float64 `json:"turnaround_p99_s"`
	// SmallBehindLarge counts the changes that arrived behind a conflicting change
	// expected to build at least Config.LargeRatio times longer (Record.BehindLarge),
	// and SBLP50, P95 and P99 are their turnaround quantiles (NaN when there is none).
	SmallBehindLarge int     `json:"small_behind_large"`
	SBLP50           float64 `json:"sbl_turnaround_p50_s"`
	SBLP95           float64 `json:"sbl_turnaround_p95_s"`
	SBLP99           float64 `json:"sbl_turnaround_p99_s"`
	// Throughput is decisions per hour between the first arrival and the last decision.
	Throughput float64 `json:"throughput_per_hour"`
	// Waited counts the changes a build of which finished while a conflicting change
	// ahead was pending, Bypassed those decided while one was; BLRDTriggerRate is
	// Bypassed / Waited (paper 000 §IV: changes bypassed over changes that had to wait
	// for conflicting builds in progress), NaN when no change waited.
	Waited          int     `json:"waited"`
	Bypassed        int     `json:"bypassed"`
	BLRDTriggerRate float64 `json:"blrd_trigger_rate"`
	// PlanCalls is the number of times the strategy was asked to plan.
	PlanCalls int `json:"plan_calls"`
}

// Summarize computes the metrics of r.
func Summarize(r *Result) Metrics {
	var m Metrics
	var ta, sbl []float64
	for i, rec := range r.Records {
		if !rec.Decided {
			continue
		}
		m.Changes++
		if rec.Landed {
			m.Landed++
		} else {
			m.Rejected++
		}
		t := rec.DecidedAt - r.Traffic.Changes[i].Arrival
		ta = append(ta, t)
		if rec.BehindLarge {
			sbl = append(sbl, t)
		}
		if rec.Waited {
			m.Waited++
		}
		if rec.Bypassed {
			m.Bypassed++
		}
	}
	aborted, infra := 0, 0
	for id, b := range r.Builds {
		if b.Batch != id {
			continue // counted with the first build of its batch
		}
		m.Builds++
		end := b.End
		if b.Status == Running {
			end = r.End
		}
		m.CPUHours += (end - b.Start) / 3600
		switch b.Status {
		case Aborted:
			aborted++
		case InfraFailed:
			infra++
		}
	}
	m.BuildsPerChange = ratio(m.Builds, m.Changes)
	m.BuildsPerLanded = ratio(m.Builds, m.Landed)
	m.AbortedShare = ratio(aborted, m.Builds)
	m.InfraShare = ratio(infra, m.Builds)
	slices.Sort(ta)
	slices.Sort(sbl)
	m.TurnaroundP50, m.TurnaroundP95, m.TurnaroundP99 = Quantile(ta, 0.5), Quantile(ta, 0.95), Quantile(ta, 0.99)
	m.SmallBehindLarge = len(sbl)
	m.SBLP50, m.SBLP95, m.SBLP99 = Quantile(sbl, 0.5), Quantile(sbl, 0.95), Quantile(sbl, 0.99)
	if len(r.Traffic.Changes) > 0 {
		if span := (r.End - r.Traffic.Changes[0].Arrival) / 3600; span > 0 {
			m.Throughput = float64(m.Changes) / span
		}
	}
	m.BLRDTriggerRate = ratio(m.Bypassed, m.Waited)
	m.PlanCalls = r.Calls
	return m
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Quantile returns the p-quantile of the sorted sample x by linear interpolation between
// order statistics (x[(n−1)p]; type 7 of Hyndman and Fan), NaN for an empty sample.
func Quantile(x []float64, p float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return x[n-1]
	}
	return x[lo] + (h-float64(lo))*(x[lo+1]-x[lo])
}
