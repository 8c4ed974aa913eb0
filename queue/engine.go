package queue

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
)

// Config holds the parameters of a run.
type Config struct {
	// Workers is the number of builds that can run at once; it must be at least 1.
	Workers int
	// LargeRatio is the factor by which a conflicting change ahead must be expected to
	// build longer than a change for the change to count as small behind large (see
	// Record.BehindLarge). Zero means DefaultLargeRatio.
	LargeRatio float64
	// MaxPlansPerInstant bounds the Plan calls at one instant, a guard against a
	// strategy that decides forever. Zero means 1000.
	MaxPlansPerInstant int
	// Progress, when not nil, is called from time to time with the share of changes
	// decided so far. RunSource does not call it: only its Source knows how much
	// traffic is to come.
	Progress func(done float64)
}

// DefaultLargeRatio is the default Config.LargeRatio.
const DefaultLargeRatio = 1.2

type changeState int8

const (
	stateFuture changeState = iota
	statePending
	stateLanded
	stateRejected
)

// finish is a build's finish event.
type finish struct {
	t   float64
	seq uint64
	id  int
}

type finishHeap []finish

func (h finishHeap) Len() int { return len(h) }
func (h finishHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h finishHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *finishHeap) Push(x any)   { *h = append(*h, x.(finish)) }
func (h *finishHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type engine struct {
	tr       *Traffic
	src      Source // nil for a fixed traffic (Run)
	truth    TimedTruth
	cfg      Config
	view     *View
	behind   [][]int32
	state    []changeState
	pending  []int
	dirty    bool // pending holds decided changes
	live     [][]int
	builds   []Build
	recs     []Record
	events   finishHeap
	seq      uint64
	now      float64
	free     int
	next     int // changes arrived so far
	decided  int
	end      float64 // time of the last decision
	ended    []int   // builds ended since the last Plan call (View.Finished)
	attempts map[uint64]int
	scratch  []int
}

// Run replays tr under strategy s with the truth, until every change is decided. It
// returns an error wrapping ErrInvalidTraffic for bad input, an *InvariantError when a
// decision breaks the green mainline invariant, the strategy's error, or the context's.
func Run(ctx context.Context, tr *Traffic, truth Truth, s Strategy, cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := tr.validate(); err != nil {
		return nil, err
	}
	n := len(tr.Changes)
	e := newEngine(tr, fixedTruth{truth}, cfg)
	e.behind = tr.behind()
	e.state, e.live, e.recs = make([]changeState, n), make([][]int, n), make([]Record, n)
	for i := range e.recs {
		e.recs[i].Deciding = -1
	}
	return e.run(ctx, s)
}

// RunSource replays the traffic src produces under strategy s with the truth: changes
// arrive when src says, and the run ends once no change is due, every change that
// arrived is decided and no build runs (probes included), so the strategy is called
// again after the last decision and may still start probes. Result.Traffic holds the
// changes that arrived. Errors are those of Run; a change src returns with an arrival
// other than the time Next gave, or with an edge that does not point ahead, wraps
// ErrInvalidTraffic.
func RunSource(ctx context.Context, src Source, truth TimedTruth, s Strategy, cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e := newEngine(&Traffic{}, truth, cfg)
	e.src = src
	return e.run(ctx, s)
}

// check validates cfg and fills in its defaults.
func (cfg *Config) check() error {
	if cfg.Workers < 1 {
		return fmt.Errorf("%w: workers %d, want at least 1", ErrInvalidTraffic, cfg.Workers)
	}
	if cfg.LargeRatio == 0 {
		cfg.LargeRatio = DefaultLargeRatio
	}
	if cfg.MaxPlansPerInstant == 0 {
		cfg.MaxPlansPerInstant = 1000
	}
	return nil
}

func newEngine(tr *Traffic, truth TimedTruth, cfg Config) *engine {
	e := &engine{tr: tr, truth: truth, cfg: cfg, free: cfg.Workers, attempts: make(map[uint64]int)}
	e.view = &View{e: e}
	return e
}

// done reports that the run is over: every change that arrived is decided, no change
// is due and no build runs.
func (e *engine) done() bool {
	if e.decided < e.next || e.free < e.cfg.Workers {
		return false
	}
	_, more := e.nextArrival()
	return !more
}

// run is the event loop of Run and RunSource.
func (e *engine) run(ctx context.Context, s Strategy) (*Result, error) {
	cfg := e.cfg
	progress := cfg.Progress
	if e.src != nil {
		progress = nil
	}
	calls := 0
	for steps := 0; !e.done(); steps++ {
		if steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("queue: %w", err)
			}
			if progress != nil {
				progress(float64(e.decided) / float64(len(e.tr.Changes)))
			}
		}
		ok, err := e.advance()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("queue: strategy %s stalled at %.0fs: %d changes pending, no build running", s.Name(), e.now, e.next-e.decided)
		}
		for c := 0; ; c++ {
			if c == cfg.MaxPlansPerInstant {
				return nil, fmt.Errorf("queue: strategy %s planned %d times at %.0fs without settling", s.Name(), c, e.now)
			}
			calls++
			a, err := s.Plan(e.view)
			e.ended = e.ended[:0]
			if err != nil {
				return nil, fmt.Errorf("queue: strategy %s at %.0fs: %w", s.Name(), e.now, err)
			}
			if err := e.apply(a); err != nil {
				return nil, err
			}
			// A fixed traffic stops at its last decision; a Source's strategy is asked
			// once more, for the probes that decision may call for.
			if len(a.Decisions) == 0 || e.src == nil && e.done() {
				break
			}
		}
	}
	if progress != nil {
		progress(1)
	}
	return &Result{Strategy: s.Name(), Workers: cfg.Workers, Traffic: e.tr, Records: e.recs, Builds: e.builds, End: e.end, Calls: calls}, nil
}

// nextArrival returns the arrival time of the next change, if one is due.
func (e *engine) nextArrival() (float64, bool) {
	if e.src != nil {
		return e.src.Next()
	}
	if e.next < len(e.tr.Changes) {
		return e.tr.Changes[e.next].Arrival, true
	}
	return 0, false
}

// advance moves time to the next instant with events and processes all of them; it
// reports false when there is none.
func (e *engine) advance() (bool, error) {
	at, arr := e.nextArrival()
	fin := len(e.events) > 0
	switch {
	case !arr && !fin:
		return false, nil
	case arr && (!fin || at <= e.events[0].t):
		if at < e.now {
			return false, fmt.Errorf("%w: change %d arrives at %v, before the current time %v", ErrInvalidTraffic, e.next, at, e.now)
		}
		e.now = at
	default:
		e.now = e.events[0].t
	}
	for len(e.events) > 0 && e.events[0].t <= e.now {
		f := heap.Pop(&e.events).(finish)
		e.finish(f.id)
	}
	for {
		at, ok := e.nextArrival()
		if !ok || at > e.now {
			break
		}
		if err := e.arrive(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// arrive makes the next change arrive.
func (e *engine) arrive() error {
	i := e.next
	if e.src != nil {
		c := e.src.Arrive(e.view)
		if c.Arrival != e.now {
			return fmt.Errorf("%w: change %d (%s) arrives at %v, its source said %v", ErrInvalidTraffic, i, c.ID, c.Arrival, e.now)
		}
		if err := c.validateAhead(i); err != nil {
			return err
		}
		e.tr.Changes = append(e.tr.Changes, c)
		e.state = append(e.state, stateFuture)
		e.live = append(e.live, nil)
		e.recs = append(e.recs, Record{Deciding: -1})
		e.behind = append(e.behind, nil)
		for _, k := range c.Ahead {
			e.behind[k] = append(e.behind[k], int32(i))
		}
	}
	e.next++
	e.state[i] = statePending
	e.pending = append(e.pending, i)
	c := &e.tr.Changes[i]
	for _, k := range c.Ahead {
		if e.state[k] == statePending && c.MeanBuild > 0 && e.tr.Changes[k].MeanBuild >= e.cfg.LargeRatio*c.MeanBuild {
			e.recs[i].BehindLarge = true
			break
		}
	}
	return nil
}

func (e *engine) hasPendingAhead(i int) bool {
	for _, k := range e.tr.Changes[i].Ahead {
		if e.state[k] == statePending {
			return true
		}
	}
	return false
}

func (e *engine) finish(id int) {
	if e.builds[id].Status != Running {
		return // aborted before
	}
	e.free++
	for m := id; m < id+e.builds[id].BatchSize; m++ {
		e.finishMember(m)
	}
}

// finishMember ends build id, one change's part of a batch that just finished (a build
// started alone or a probe is a batch of one).
func (e *engine) finishMember(id int) {
	b := &e.builds[id]
	b.End = e.now
	e.ended = append(e.ended, id)
	switch {
	case b.draw.Infra:
		b.Status = InfraFailed
		e.attempts[attemptKey(b.Change, b.Content, b.Probe)]++
		e.unlive(b.Change, id)
		return
	case b.draw.Succeeds:
		b.Status = Succeeded
	default:
		b.Status = Failed
	}
	if !b.Probe && e.hasPendingAhead(b.Change) {
		e.recs[b.Change].Waited = true
	}
}

func (e *engine) unlive(i, id int) {
	l := e.live[i]
	if k := slices.Index(l, id); k >= 0 {
		e.live[i] = slices.Delete(l, k, k+1)
	}
}

// abort stops build id and the rest of its batch.
func (e *engine) abort(id int) {
	if e.builds[id].Status != Running {
		return
	}
	e.free++
	lead := e.builds[id].Batch
	for m := lead; m < lead+e.builds[lead].BatchSize; m++ {
		b := &e.builds[m]
		b.Status, b.End = Aborted, e.now
		e.recs[b.Change].Aborted++
		e.unlive(b.Change, m)
	}
}

func (e *engine) compactPending() {
	if !e.dirty {
		return
	}
	e.pending = slices.DeleteFunc(e.pending, func(i int) bool { return e.state[i] != statePending })
	e.dirty = false
}

// apply carries out a strategy's actions.
func (e *engine) apply(a Actions) error {
	for _, d := range a.Decisions {
		if err := e.decide(d); err != nil {
			return err
		}
	}
	for _, id := range a.Abort {
		if id < 0 || id >= len(e.builds) {
			return fmt.Errorf("queue: abort of unknown build %d", id)
		}
		e.abort(id)
	}
	for _, s := range a.Start {
		if err := e.start([]Start{s}); err != nil {
			return err
		}
	}
	for _, bt := range a.Batches {
		if err := e.start(bt); err != nil {
			return err
		}
	}
	for _, p := range a.Probes {
		if err := e.probe(p); err != nil {
			return err
		}
	}
	return nil
}

// truePath appends to dst the changes of i's Ahead that truly land.
func (e *engine) truePath(i int, dst []int) []int {
	for _, k := range e.tr.Changes[i].Ahead {
		if e.truth.Lands(k) {
			dst = append(dst, k)
		}
	}
	return dst
}

// decide checks d against the truth and applies it.
func (e *engine) decide(d Decision) error {
	i := d.Change
	if i < 0 || i >= len(e.state) || e.state[i] != statePending {
		return fmt.Errorf("queue: decision on change %d, which is not pending", i)
	}
	fail := func(reason string) error {
		return &InvariantError{Change: i, ID: e.tr.Changes[i].ID, Land: d.Land, Reason: reason, At: e.now}
	}
	e.scratch = e.truePath(i, e.scratch[:0])
	deciding := -1
	for _, id := range e.live[i] {
		b := &e.builds[id]
		if b.Status != Running && slices.Equal(b.Content, e.scratch) && e.proves(id) {
			deciding = id
			break
		}
	}
	if deciding < 0 {
		return fail(fmt.Sprintf("no finished build on the true path %v that speaks for it alone", e.scratch))
	}
	if ok := e.builds[deciding].Status == Succeeded; ok != d.Land {
		return fail(fmt.Sprintf("its build %d on the true path %v %s", deciding, e.scratch, e.builds[deciding].Status))
	}
	if d.Land != e.truth.Lands(i) {
		return fail("the truth disagrees with its build on the true path")
	}
	r := &e.recs[i]
	r.Decided, r.Landed, r.DecidedAt, r.Deciding = true, d.Land, e.now, deciding
	e.end = e.now
	if e.hasPendingAhead(i) {
		r.Bypassed, r.Waited = true, true
	}
	e.state[i] = stateRejected
	if d.Land {
		e.state[i] = stateLanded
	}
	e.decided++
	e.dirty = true
	for _, id := range slices.Clone(e.live[i]) {
		e.abort(id)
	}
	e.live[i] = e.live[i][:0]
	for _, j32 := range e.behind[i] {
		j := int(j32)
		if e.state[j] != statePending {
			continue
		}
		for _, id := range slices.Clone(e.live[j]) {
			b := &e.builds[id]
			if _, in := slices.BinarySearch(b.Content, i); in == d.Land {
				continue
			}
			if b.Status == Running {
				e.abort(id)
			} else {
				b.Stale = true
				e.unlive(j, id)
			}
		}
	}
	return nil
}

// proves reports whether finished build id speaks for its change alone: a build started
// alone, a succeeded batch (every change of it succeeded on its content), or a failed
// batch every other change of which has landed (the failure is its change's).
func (e *engine) proves(id int) bool {
	b := &e.builds[id]
	if b.BatchSize == 1 || b.Status == Succeeded {
		return true
	}
	for m := b.Batch; m < b.Batch+b.BatchSize; m++ {
		if m != id && e.state[e.builds[m].Change] != stateLanded {
			return false
		}
	}
	return true
}

// start starts one build of the changes of ss together (a batch; see Build.Batch).
func (e *engine) start(ss []Start) error {
	if len(ss) == 0 {
		return fmt.Errorf("queue: empty batch")
	}
	if e.free < 1 {
		return fmt.Errorf("queue: build of change %d with no free worker", ss[0].Change)
	}
	lead := len(e.builds)
	var d Draw
	for t, s := range ss {
		for _, o := range ss[:t] {
			if o.Change == s.Change {
				return fmt.Errorf("queue: batch holds change %d twice", s.Change)
			}
		}
		content, md, err := e.member(s)
		if err != nil {
			return err
		}
		switch {
		case t == 0:
			d = md
		case !d.Infra:
			d.Succeeds = d.Succeeds && md.Succeeds
			d.Duration = max(d.Duration, md.Duration)
		}
		e.builds = append(e.builds, Build{Change: s.Change, Content: content, Height: len(s.Path), Start: e.now, Status: Running, Batch: lead, BatchSize: len(ss)})
	}
	for id := lead; id < len(e.builds); id++ {
		b := &e.builds[id]
		b.draw = d
		e.live[b.Change] = append(e.live[b.Change], id)
		e.recs[b.Change].Builds++
	}
	e.free--
	e.seq++
	heap.Push(&e.events, finish{t: e.now + d.Duration, seq: e.seq, id: lead})
	return nil
}

// member checks s, one change of a build, and returns the content of its build and the
// truth's draw for it.
func (e *engine) member(s Start) ([]int, Draw, error) {
	i := s.Change
	if i < 0 || i >= e.next || e.state[i] != statePending {
		return nil, Draw{}, fmt.Errorf("queue: build of change %d, which is not pending", i)
	}
	ahead := e.tr.Changes[i].Ahead
	path := slices.Clone(s.Path)
	slices.Sort(path)
	for t, k := range path {
		if _, in := slices.BinarySearch(ahead, k); !in || e.state[k] != statePending || t > 0 && path[t-1] == k {
			return nil, Draw{}, fmt.Errorf("queue: build of change %d on path %v: %d is not a distinct pending change of its ahead list", i, s.Path, k)
		}
	}
	var content []int
	for _, k := range ahead {
		if e.state[k] == stateLanded {
			content = append(content, k)
		} else if _, in := slices.BinarySearch(path, k); in {
			content = append(content, k)
		}
	}
	d := e.draw(BuildStart{Change: i, Content: content, Height: len(path)})
	if !(d.Duration > 0) {
		return nil, Draw{}, fmt.Errorf("queue: truth gave build of change %d a duration of %v", i, d.Duration)
	}
	return content, d, nil
}

// probe starts a probe build (see Probe).
func (e *engine) probe(p Probe) error {
	i := p.Change
	if i < 0 || i >= e.next || e.state[i] != stateLanded && e.state[i] != stateRejected {
		return fmt.Errorf("queue: probe of change %d, which is not decided", i)
	}
	ahead := e.tr.Changes[i].Ahead
	content := slices.Clone(p.Content)
	slices.Sort(content)
	for t, k := range content {
		if _, in := slices.BinarySearch(ahead, k); !in || e.state[k] != stateLanded && e.state[k] != stateRejected || t > 0 && content[t-1] == k {
			return fmt.Errorf("queue: probe of change %d on %v: %d is not a distinct decided change of its ahead list", i, p.Content, k)
		}
	}
	_, err := e.launch(Build{Change: i, Content: content, Probe: true})
	return err
}

// draw asks the truth for the outcome and duration of a build starting now, with the
// attempt number of its content filled in.
func (e *engine) draw(bs BuildStart) Draw {
	bs.Attempt = e.attempts[attemptKey(bs.Change, bs.Content, bs.Probe)]
	bs.At = e.now
	return e.truth.BuildAt(bs)
}

// launch draws the end of b, which starts now, takes a worker for it and schedules its
// end; it returns the build's id.
func (e *engine) launch(b Build) (int, error) {
	if e.free < 1 {
		return 0, fmt.Errorf("queue: build of change %d with no free worker", b.Change)
	}
	d := e.draw(BuildStart{Change: b.Change, Content: b.Content, Height: b.Height, Probe: b.Probe})
	if !(d.Duration > 0) {
		return 0, fmt.Errorf("queue: truth gave build of change %d a duration of %v", b.Change, d.Duration)
	}
	id := len(e.builds)
	b.Start, b.Status, b.draw, b.Batch, b.BatchSize = e.now, Running, d, id, 1
	e.builds = append(e.builds, b)
	e.recs[b.Change].Builds++
	e.free--
	e.seq++
	heap.Push(&e.events, finish{t: e.now + d.Duration, seq: e.seq, id: id})
	return id, nil
}

// attemptKey identifies the content of a build of change i, and whether it is a probe,
// for counting attempts.
func attemptKey(i int, content []int, probe bool) uint64 {
	k := Mix(uint64(i) + 0x51ed27)
	for _, c := range content {
		k ^= Mix(uint64(c))
	}
	if probe {
		k = Mix(k)
	}
	return k
}

// Mix is the splitmix64 finaliser: a fixed pseudo-random 64-bit key for x. Truths use it
// to key their draws by change and content.
func Mix(x uint64) uint64 {
	z := x*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
