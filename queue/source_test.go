package queue

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// listSource delivers changes at the times in due (ascending, appended to while the run
// goes); each change's Ahead is the pending changes at its arrival, or ahead[i] when
// set.
type listSource struct {
	due   []float64
	ahead map[int][]int
	arr   map[int]float64 // arrival times to report instead of the due ones
	n     int
}

func (s *listSource) Next() (float64, bool) {
	if s.n < len(s.due) {
		return s.due[s.n], true
	}
	return 0, false
}

func (s *listSource) Arrive(v *View) Change {
	i := s.n
	s.n++
	c := Change{ID: string(rune('a' + i)), Arrival: s.due[i], MeanBuild: 50, Ahead: slices.Clone(v.Pending())}
	if i == 0 {
		c.MeanBuild = 100
	}
	if a, ok := s.ahead[i]; ok {
		c.Ahead = a
	}
	if at, ok := s.arr[i]; ok {
		c.Arrival = at
	}
	return c
}

// timedTiny is tinyTruth with probes lasting 30 s; it records every build's start.
type timedTiny struct {
	*tinyTruth
	starts []BuildStart
}

func (t *timedTiny) BuildAt(b BuildStart) Draw {
	t.starts = append(t.starts, b)
	d := t.Build(b.Change, b.Content, b.Height, b.Attempt)
	if b.Probe {
		d.Duration = 30
	}
	return d
}

// prober is serial that submits a rejected change again 50 s after its rejection and
// probes it alone once the rejection is applied; it records the builds View.Finished
// reports.
type prober struct {
	serial
	src      *listSource
	rejected []int
	finished []int
}

func (p *prober) Plan(v *View) (Actions, error) {
	p.finished = append(p.finished, v.Finished()...)
	var a Actions
	for _, i := range p.rejected {
		if v.Free() > len(a.Probes) {
			a.Probes = append(a.Probes, Probe{Change: i})
		}
	}
	p.rejected = p.rejected[len(a.Probes):]
	if len(a.Probes) > 0 {
		return a, nil
	}
	a, err := p.serial.Plan(v)
	for _, d := range a.Decisions {
		if !d.Land {
			p.rejected = append(p.rejected, d.Change)
			p.src.due = append(p.src.due, v.Now()+50)
		}
	}
	return a, err
}

// TestRunSourceByHand: c0 arrives at 0 and lands at 100; c1 arrives at 10 behind c0,
// conflicts with it and is rejected at 100, then probed alone (100-130, succeeded: it
// is good on its own) and submitted again as c2 at 150, when nothing is pending, so c2
// lands at 200. The run ends after the probe and the resubmission.
func TestRunSourceByHand(t *testing.T) {
	src := &listSource{due: []float64{0, 10}}
	tt := &timedTiny{tinyTruth: &tinyTruth{bad: make([]bool, 3), conf: [][]int{nil, {0}, nil}, dur: []float64{100, 50, 50}, infra: make([]int, 3)}}
	p := &prober{serial: serial{tt}, src: src}
	res, err := RunSource(context.Background(), src, tt, p, Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Traffic.Changes); got != 3 || !slices.Equal(res.Traffic.Changes[1].Ahead, []int{0}) || len(res.Traffic.Changes[2].Ahead) != 0 || res.Traffic.Changes[2].Arrival != 150 {
		t.Fatalf("traffic %+v, want c1 behind c0 and c2 alone at 150", res.Traffic.Changes)
	}
	want := []Record{
		{Decided: true, Landed: true, DecidedAt: 100, Deciding: 0, Builds: 1},
		{Decided: true, Landed: false, DecidedAt: 100, Deciding: 1, Builds: 2, BehindLarge: true, Waited: true},
		{Decided: true, Landed: true, DecidedAt: 200, Deciding: 3, Builds: 1},
	}
	if !slices.Equal(res.Records, want) {
		t.Fatalf("records\n got %+v\nwant %+v", res.Records, want)
	}
	type row struct {
		change  int
		content string
		start   float64
		end     float64
		status  BuildStatus
		probe   bool
	}
	var got []row
	for _, b := range res.Builds {
		got = append(got, row{b.Change, string(rune('0' + len(b.Content))), b.Start, b.End, b.Status, b.Probe})
	}
	wantB := []row{{0, "0", 0, 100, Succeeded, false}, {1, "1", 10, 60, Failed, false}, {1, "0", 100, 130, Succeeded, true}, {2, "0", 150, 200, Succeeded, false}}
	if !slices.Equal(got, wantB) {
		t.Fatalf("builds\n got %+v\nwant %+v", got, wantB)
	}
	if res.End != 200 {
		t.Errorf("End = %v, want the last decision's 200", res.End)
	}
	if !slices.Equal(p.finished, []int{1, 0, 2, 3}) {
		t.Errorf("View.Finished reported %v, want builds 1, 0, 2, 3 in the order they ended", p.finished)
	}
	var at []float64
	for _, b := range tt.starts {
		at = append(at, b.At)
	}
	if !slices.Equal(at, []float64{0, 10, 100, 150}) || !tt.starts[2].Probe || tt.starts[2].Height != 0 {
		t.Errorf("truth asked for builds %+v, want starts at 0, 10, 100 (the probe), 150", tt.starts)
	}
	if m := Summarize(res); m.Builds != 4 || m.Changes != 3 {
		t.Errorf("summary %+v, want 4 builds and 3 changes", m)
	}
}

func TestRunSourceBadInput(t *testing.T) {
	tiny := func() *timedTiny {
		return &timedTiny{tinyTruth: &tinyTruth{bad: make([]bool, 3), conf: make([][]int, 3), dur: []float64{100, 50, 50}, infra: make([]int, 3)}}
	}
	cases := []struct {
		name    string
		src     *listSource
		s       func(tt Truth) Strategy
		invalid bool // the error wraps ErrInvalidTraffic
	}{
		{"arrival other than Next's", &listSource{due: []float64{0, 10}, arr: map[int]float64{1: 12}}, func(tt Truth) Strategy { return &serial{tt} }, true},
		{"edge behind", &listSource{due: []float64{0, 10}, ahead: map[int][]int{1: {1}}}, func(tt Truth) Strategy { return &serial{tt} }, true},
		{"arrival in the past", &listSource{due: []float64{10, 5}}, func(tt Truth) Strategy { return &serial{tt} }, true},
		{"probe of a pending change", &listSource{due: []float64{0}}, func(Truth) Strategy {
			return &script{at: map[float64][]Actions{0: {{Probes: []Probe{{Change: 0}}}}}}
		}, false},
		{"probe on a pending change", &listSource{due: []float64{0, 0}}, func(Truth) Strategy {
			// c1 lands by bypass at 50, while c0 is pending, then is probed with c0.
			return &script{at: map[float64][]Actions{
				0: {{Start: []Start{{Change: 0}, {Change: 1, Path: []int{0}}}}},
				50: {
					{Decisions: []Decision{{Change: 1, Land: true}}},
					{Probes: []Probe{{Change: 1, Content: []int{0}}}},
				},
			}}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := tiny()
			_, err := RunSource(context.Background(), c.src, tt, c.s(tt), Config{Workers: 2})
			if err == nil || errors.Is(err, ErrInvalidTraffic) != c.invalid {
				t.Errorf("RunSource = %v, want an error (wrapping ErrInvalidTraffic: %v)", err, c.invalid)
			}
		})
	}
}
