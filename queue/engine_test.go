package queue

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// tinyTruth: change i is good unless bad[i]; it conflicts with the changes conf[i] ahead;
// every build lasts dur[i] seconds; the first infra[i] attempts of every content fail
// for infrastructure reasons.
type tinyTruth struct {
	bad   []bool
	conf  [][]int
	dur   []float64
	infra []int
}

func (t *tinyTruth) Lands(i int) bool {
	if t.bad[i] {
		return false
	}
	for _, k := range t.conf[i] {
		if t.Lands(k) {
			return false
		}
	}
	return true
}

func (t *tinyTruth) Build(i int, content []int, height, attempt int) Draw {
	ok := !t.bad[i]
	for _, k := range t.conf[i] {
		if slices.Contains(content, k) {
			ok = false
		}
	}
	return Draw{Succeeds: ok, Infra: attempt < t.infra[i], Duration: t.dur[i]}
}

// script is a strategy that plays, at instant t, the actions at[t][k] on its k-th call
// at that instant, and nothing otherwise.
type script struct {
	at    map[float64][]Actions
	last  float64
	calls int
}

func (s *script) Name() string { return "script" }

func (s *script) Plan(v *View) (Actions, error) {
	if v.Now() != s.last {
		s.last, s.calls = v.Now(), 0
	}
	s.calls++
	if l := s.at[v.Now()]; s.calls <= len(l) {
		return l[s.calls-1], nil
	}
	return Actions{}, nil
}

// serial builds every pending change on the path where the pending changes ahead
// that truly land are assumed landed (like an oracle) and decides changes in order.
type serial struct{ t Truth }

func (s *serial) Name() string { return "serial" }

func (s *serial) Plan(v *View) (Actions, error) {
	var a Actions
	for _, i := range v.Pending() {
		if len(v.PendingAhead(i, nil)) == 0 {
			for _, id := range v.Builds(i) {
				if b := v.Build(id); b.Status != Running {
					a.Decisions = append(a.Decisions, Decision{Change: i, Land: b.Status == Succeeded})
					return a, nil
				}
			}
		}
	}
	free := v.Free()
	for _, i := range v.Pending() {
		if free == 0 || len(v.Builds(i)) > 0 {
			continue
		}
		var path []int
		for _, k := range v.PendingAhead(i, nil) {
			if s.t.Lands(k) {
				path = append(path, k)
			}
		}
		a.Start = append(a.Start, Start{Change: i, Path: path})
		free--
	}
	return a, nil
}

// three changes: 1 conflicts with 0, 2 is independent; 0 lands, so 1 is rejected.
func threeChanges() (*Traffic, *tinyTruth) {
	tr := &Traffic{Changes: []Change{
		{ID: "c0", Arrival: 0, MeanBuild: 100},
		{ID: "c1", Arrival: 10, Ahead: []int{0}, MeanBuild: 50},
		{ID: "c2", Arrival: 20, MeanBuild: 50},
	}}
	tt := &tinyTruth{bad: make([]bool, 3), conf: [][]int{nil, {0}, nil}, dur: []float64{100, 50, 50}, infra: make([]int, 3)}
	return tr, tt
}

func TestSerialByHand(t *testing.T) {
	tr, tt := threeChanges()
	tt.infra[2] = 1 // c2's first build fails for infrastructure reasons
	res, err := Run(context.Background(), tr, tt, &serial{tt}, Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// c0 builds 0-100, c1 on {c0} 10-60 (fails, c1 conflicts with c0), c2 waits for a
	// worker until 60, fails for infra at 110, rebuilds 110-160.
	want := []Record{
		{Decided: true, Landed: true, DecidedAt: 100, Deciding: 0, Builds: 1},
		{Decided: true, Landed: false, DecidedAt: 100, Deciding: 1, Builds: 1, BehindLarge: true, Waited: true},
		{Decided: true, Landed: true, DecidedAt: 160, Deciding: 3, Builds: 2},
	}
	if !slices.Equal(res.Records, want) {
		t.Fatalf("records\n got %+v\nwant %+v", res.Records, want)
	}
	m := Summarize(res)
	if m.Builds != 4 || m.Landed != 2 || m.Rejected != 1 || m.InfraShare != 0.25 || m.AbortedShare != 0 {
		t.Errorf("counts %+v", m)
	}
	if got, want := m.CPUHours, (100+50+50+50)/3600.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("cpu hours %v, want %v", got, want)
	}
	// Turnarounds 100, 90, 140: P50 100, P95 = 100 + 0.9*40.
	if m.TurnaroundP50 != 100 || math.Abs(m.TurnaroundP95-136) > 1e-9 {
		t.Errorf("turnaround p50 %v p95 %v", m.TurnaroundP50, m.TurnaroundP95)
	}
	if m.SmallBehindLarge != 1 || m.SBLP50 != 90 || m.Waited != 1 || m.Bypassed != 0 || m.BLRDTriggerRate != 0 {
		t.Errorf("sbl/blrd %+v", m)
	}
	if got, want := m.Throughput, 3/(160.0/3600); math.Abs(got-want) > 1e-9 {
		t.Errorf("throughput %v, want %v", got, want)
	}
}

// TestInvariantCatchesWrongDecision injects decisions the truth contradicts.
func TestInvariantCatchesWrongDecision(t *testing.T) {
	cases := []struct {
		name string
		at   map[float64][]Actions
		want int
	}{
		{
			// c1 built on HEAD without c0 succeeds at 60; landing it on that build
			// would break the mainline once c0 lands.
			name: "wrong path",
			at: map[float64][]Actions{
				0:  {{Start: []Start{{Change: 0}}}},
				10: {{Start: []Start{{Change: 1}}}},
				60: {{Decisions: []Decision{{Change: 1, Land: true}}}},
			},
			want: 1,
		},
		{
			// c1 built on {c0} fails: landing it anyway.
			name: "failed build",
			at: map[float64][]Actions{
				0:  {{Start: []Start{{Change: 0}}}},
				10: {{Start: []Start{{Change: 1, Path: []int{0}}}}},
				60: {{Decisions: []Decision{{Change: 1, Land: true}}}},
			},
			want: 1,
		},
		{
			// The batch of c0 and c1 (on {c0}) fails because c1 conflicts with c0:
			// it says nothing of c0 ...
			name: "good change of a failed batch",
			at: map[float64][]Actions{
				10:  {{Batches: [][]Start{{{Change: 0}, {Change: 1, Path: []int{0}}}}}},
				110: {{Decisions: []Decision{{Change: 0}}}},
			},
			want: 0,
		},
		{
			// ... nor of c1 while c0 is pending.
			name: "failed batch before the rest landed",
			at: map[float64][]Actions{
				10:  {{Batches: [][]Start{{{Change: 0}, {Change: 1, Path: []int{0}}}}}},
				110: {{Decisions: []Decision{{Change: 1}}}},
			},
			want: 1,
		},
		{
			// c2 rejected while its build is still running.
			name: "no finished build",
			at: map[float64][]Actions{
				0:  {{Start: []Start{{Change: 0}}}},
				10: {{Start: []Start{{Change: 1, Path: []int{0}}}}},
				20: {{Start: []Start{{Change: 2}}}},
				60: {{Decisions: []Decision{{Change: 2}}}},
			},
			want: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, tt := threeChanges()
			_, err := Run(context.Background(), tr, tt, &script{at: c.at}, Config{Workers: 3})
			var ie *InvariantError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an invariant error", err)
			}
			if ie.Change != c.want {
				t.Errorf("offending change %d, want %d (%v)", ie.Change, c.want, err)
			}
		})
	}
}

func TestStaleOnContradiction(t *testing.T) {
	tr, tt := threeChanges()
	tt.bad[0] = true // c0 is rejected, so c1 lands
	st := &script{at: map[float64][]Actions{
		0:  {{Start: []Start{{Change: 0}}}},
		10: {{Start: []Start{{Change: 1, Path: []int{0}}, {Change: 1}}}},
		20: {{Start: []Start{{Change: 2}}}},
		70: {{Decisions: []Decision{{Change: 2, Land: true}}}},
		100: {
			{Decisions: []Decision{{Change: 0, Land: false}}},
			{Decisions: []Decision{{Change: 1, Land: true}}},
		},
	}}
	res, err := Run(context.Background(), tr, tt, st, Config{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Builds
	if b[1].Status != Failed || !b[1].Stale || b[2].Status != Succeeded || b[2].Stale {
		t.Errorf("builds of c1: %+v %+v", b[1], b[2])
	}
	if res.Records[1].Deciding != 2 {
		t.Errorf("c1 decided by build %d, want 2", res.Records[1].Deciding)
	}
}

func TestAbortRunningOnDecision(t *testing.T) {
	tr, tt := threeChanges()
	tt.dur[1] = 500 // c1's builds outlast c0's
	st := &script{at: map[float64][]Actions{
		0:   {{Start: []Start{{Change: 0}}}},
		10:  {{Start: []Start{{Change: 1, Path: []int{0}}, {Change: 1}}}},
		20:  {{Start: []Start{{Change: 2}}}},
		70:  {{Decisions: []Decision{{Change: 2, Land: true}}}},
		100: {{Decisions: []Decision{{Change: 0, Land: true}}}}, // aborts c1 on HEAD
		510: {{Decisions: []Decision{{Change: 1, Land: false}}}},
	}}
	res, err := Run(context.Background(), tr, tt, st, Config{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Builds[2]; b.Status != Aborted || b.End != 100 {
		t.Errorf("c1's build on HEAD: %+v, want aborted at 100", b)
	}
	m := Summarize(res)
	if m.AbortedShare != 0.25 || res.Records[1].Aborted != 1 {
		t.Errorf("aborted share %v, record %+v", m.AbortedShare, res.Records[1])
	}
	// c0 100 s, c1 on {c0} 500 s, c1 on HEAD 10-100, c2 50 s.
	if got, want := m.CPUHours, 740/3600.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("cpu hours %v, want %v", got, want)
	}
}

func TestBadInput(t *testing.T) {
	tr, tt := threeChanges()
	cases := []struct {
		name string
		tr   *Traffic
		cfg  Config
		s    Strategy
	}{
		{"no workers", tr, Config{}, &serial{tt}},
		{"arrivals out of order", &Traffic{Changes: []Change{{Arrival: 5}, {Arrival: 1}}}, Config{Workers: 1}, &serial{tt}},
		{"edge behind", &Traffic{Changes: []Change{{Arrival: 0, Ahead: []int{0}}}}, Config{Workers: 1}, &serial{tt}},
		{"too many starts", tr, Config{Workers: 1}, &script{at: map[float64][]Actions{0: {{Start: []Start{{Change: 0}, {Change: 0}}}}}}},
		{"batch without a worker", tr, Config{Workers: 1}, &script{at: map[float64][]Actions{0: {{Start: []Start{{Change: 0}}, Batches: [][]Start{{{Change: 0}}}}}}}},
		{"change twice in a batch", tr, Config{Workers: 1}, &script{at: map[float64][]Actions{0: {{Batches: [][]Start{{{Change: 0}, {Change: 0}}}}}}}},
		{"empty batch", tr, Config{Workers: 1}, &script{at: map[float64][]Actions{0: {{Batches: [][]Start{{}}}}}}},
		{"path not ahead", tr, Config{Workers: 3}, &script{at: map[float64][]Actions{0: {{Start: []Start{{Change: 0, Path: []int{0}}}}}}}},
		{"stall", tr, Config{Workers: 3}, &script{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Run(context.Background(), c.tr, tt, c.s, c.cfg); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.5, 3}, {0.9, 4.6}, {1, 5}} {
		if got := Quantile(x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty sample")
	}
}

// TestBatchByHand builds c0 and c1 (on {c0}) as one batch, which fails because c1
// conflicts with c0, then c0 and c2 as one batch, which succeeds: it proves both, and
// once c0 has landed the failed batch proves c1 failing on its true path.
func TestBatchByHand(t *testing.T) {
	tr, tt := threeChanges()
	st := &script{at: map[float64][]Actions{
		// The batch lasts max(100, 50) s.
		10:  {{Batches: [][]Start{{{Change: 0}, {Change: 1, Path: []int{0}}}}}},
		110: {{Batches: [][]Start{{{Change: 0}, {Change: 2}}}}},
		210: {
			{Decisions: []Decision{{Change: 0, Land: true}, {Change: 2, Land: true}}},
			{Decisions: []Decision{{Change: 1}}},
		},
	}}
	res, err := Run(context.Background(), tr, tt, st, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Builds
	if len(b) != 4 || b[1].Batch != 0 || b[0].BatchSize != 2 || b[3].Batch != 2 || b[3].BatchSize != 2 {
		t.Fatalf("builds %+v", b)
	}
	if b[0].Status != Failed || b[1].Status != Failed || b[0].End != 110 || b[1].End != 110 {
		t.Errorf("first batch %+v %+v, want both failed at 110", b[0], b[1])
	}
	if b[2].Status != Succeeded || b[3].Status != Succeeded || b[3].End != 210 {
		t.Errorf("second batch %+v %+v, want both succeeded at 210", b[2], b[3])
	}
	for i, want := range []int{2, 1, 3} {
		if d := res.Records[i].Deciding; d != want {
			t.Errorf("c%d decided by build %d, want %d", i, d, want)
		}
	}
	m := Summarize(res)
	if m.Builds != 2 || res.Records[0].Builds != 2 || res.Records[1].Builds != 1 || res.Records[2].Builds != 1 {
		t.Errorf("builds %d (records %+v), want 2", m.Builds, res.Records)
	}
	if got, want := m.CPUHours, 200/3600.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("cpu hours %v, want %v", got, want)
	}
}

// TestAbortBatch aborts one change's part of a running batch: the whole batch stops and
// its one worker is free again.
func TestAbortBatch(t *testing.T) {
	tr, tt := threeChanges()
	st := &script{at: map[float64][]Actions{
		10: {{Batches: [][]Start{{{Change: 0}, {Change: 1, Path: []int{0}}}}}},
		// Aborting build 1 (c1's part) frees the only worker for c0 alone.
		20: {{Abort: []int{1}, Start: []Start{{Change: 0}}}},
		120: {
			{Decisions: []Decision{{Change: 0, Land: true}}},
			{Start: []Start{{Change: 1}}},
		},
		170: {
			{Decisions: []Decision{{Change: 1}}},
			{Start: []Start{{Change: 2}}},
		},
		220: {{Decisions: []Decision{{Change: 2, Land: true}}}},
	}}
	res, err := Run(context.Background(), tr, tt, st, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Builds; b[0].Status != Aborted || b[1].Status != Aborted || b[0].End != 20 {
		t.Errorf("batch %+v %+v, want aborted at 20", b[0], b[1])
	}
	m := Summarize(res)
	if m.Builds != 4 || m.AbortedShare != 0.25 || res.Records[0].Aborted != 1 || res.Records[1].Aborted != 1 {
		t.Errorf("builds %d, aborted share %v, records %+v", m.Builds, m.AbortedShare, res.Records)
	}
	// The batch 10-20, then c0 100 s, c1 50 s and c2 50 s.
	if got, want := m.CPUHours, 210/3600.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("cpu hours %v, want %v", got, want)
	}
}
