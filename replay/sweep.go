package replay

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sqpredict/sqpredict/queue"
)

// Plan is a sweep: every strategy × probability source × workers × rate, each over
// the seeds.
type Plan struct {
	Strategies []string
	Probs      []string
	Workers    []int
	// Rates are the re-timing rates in changes per hour; 0 keeps the history's times.
	Rates     []float64
	Threshold float64
	// KeepMargin is Setting.KeepMargin of every run.
	KeepMargin float64
	// NoLearning is Setting.NoLearning of every run.
	NoLearning bool
	// BatchSize is Setting.BatchSize of the batch strategy's runs.
	BatchSize int
	Seeds     []uint64
}

// RunOutput is one replay of a sweep.
type RunOutput struct {
	Setting Setting
	Metrics queue.Metrics
	// Turnaround holds every change's turnaround in seconds, ascending.
	Turnaround []float64
	// PerChange holds, in traffic order, each change's turnaround in seconds, builds
	// and build seconds (aborted ones included): the rows of paired comparisons.
	PerChange [3][]float64
	// Result is the whole run; Sweep drops it after its onRun callback, to bound memory.
	Result *queue.Result
}

// Interval is a mean over seeds with its 95% interval (Student t over the seeds; the
// interval is the mean itself for one seed). Seeds whose value is NaN are left out; N
// counts the others.
type Interval struct {
	Mean, Lo, Hi float64
	N            int
}

// MarshalJSON writes {"mean","lo","hi","n"} with null for NaN.
func (iv Interval) MarshalJSON() ([]byte, error) {
	f := func(x float64) any {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	}
	return json.Marshal(map[string]any{"mean": f(iv.Mean), "lo": f(iv.Lo), "hi": f(iv.Hi), "n": iv.N})
}

// NewInterval returns the interval of the values x.
func NewInterval(x []float64) Interval {
	var v []float64
	for _, a := range x {
		if !math.IsNaN(a) {
			v = append(v, a)
		}
	}
	iv := Interval{N: len(v), Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	switch len(v) {
	case 0:
		return iv
	case 1:
		iv.Mean, iv.Lo, iv.Hi = v[0], v[0], v[0]
		return iv
	}
	m, sd := stat.MeanStdDev(v, nil)
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(v) - 1)}.Quantile(0.975) * sd / math.Sqrt(float64(len(v)))
	iv.Mean, iv.Lo, iv.Hi = m, m-h, m+h
	return iv
}

// Cell is one configuration of a sweep with its metrics over seeds.
type Cell struct {
	Strategy  string  `json:"strategy"`
	Probs     string  `json:"probs"`
	Workers   int     `json:"workers"`
	Rate      float64 `json:"rate"`
	Threshold float64 `json:"threshold"`
	// KeepMargin is Setting.KeepMargin (0: running builds are not kept).
	KeepMargin float64 `json:"keep_margin"`
	// BatchSize is Setting.BatchSize of a batch cell (-1: chosen for each batch from
	// the probabilities), absent for the other strategies.
	BatchSize int `json:"batch_size,omitempty"`
	// BuildFamily is the build-time family the cell's source plans with ("normal": Phi(Z);
	// "lognormal": the log-normal finish order), as Probs.BuildFamily names it.
	BuildFamily string `json:"build_family"`
	Seeds       int    `json:"seeds"`
	// Metrics maps every queue.Metrics JSON name to its interval over seeds.
	Metrics map[string]Interval `json:"metrics"`
	// Runs are the runs of the cell, by seed.
	Runs []*RunOutput `json:"-"`
}

// metricValues returns every field of m by its JSON name, as float64.
func metricValues(m queue.Metrics) map[string]float64 {
	out := map[string]float64{}
	v := reflect.ValueOf(m)
	t := v.Type()
	for f := range t.NumField() {
		name := t.Field(f).Tag.Get("json")
		switch x := v.Field(f); x.Kind() {
		case reflect.Int:
			out[name] = float64(x.Int())
		case reflect.Float64:
			out[name] = x.Float()
		}
	}
	return out
}

// MetricNames lists the JSON names of queue.Metrics in declaration order.
func MetricNames() []string {
	t := reflect.TypeOf(queue.Metrics{})
	var out []string
	for f := range t.NumField() {
		out = append(out, t.Field(f).Tag.Get("json"))
	}
	return out
}

// Aggregate fills c.Metrics from c.Runs.
func (c *Cell) Aggregate() {
	vals := map[string][]float64{}
	for _, r := range c.Runs {
		for k, x := range metricValues(r.Metrics) {
			vals[k] = append(vals[k], x)
		}
	}
	c.Metrics = map[string]Interval{}
	for k, x := range vals {
		c.Metrics[k] = NewInterval(x)
	}
	c.Seeds = len(c.Runs)
}

// Sweep runs every configuration of p on the worlds: world(seed) returns the world of a
// seed (the same world for every seed when replaying a folder). probs, when not nil,
// builds a source that ParseProbs does not know (a bundle). progress, when not nil, is
// told which run starts and how far the current run is; onRun, when not nil, sees every
// run with its whole Result (to write decisions) before the result is dropped.
func Sweep(ctx context.Context, p Plan, world func(seed uint64) (*World, error),
	probs func(w *World, spec string) (Probs, error),
	progress func(run, runs int, st Setting, done float64),
	onRun func(*RunOutput) error) ([]*Cell, error) {
	var cells []*Cell
	for _, pr := range p.Probs {
		for _, s := range p.Strategies {
			for _, wk := range p.Workers {
				for _, rate := range p.Rates {
					c := &Cell{Strategy: s, Probs: pr, Workers: wk, Rate: rate, Threshold: p.Threshold, KeepMargin: p.KeepMargin}
					if s == "batch" {
						c.BatchSize = cmp.Or(p.BatchSize, DefaultBatchSize)
					}
					cells = append(cells, c)
				}
			}
		}
	}
	runs, k := len(cells)*len(p.Seeds), 0
	for _, seed := range p.Seeds {
		w, err := world(seed)
		if err != nil {
			return nil, err
		}
		sources := map[string]Probs{}
		for _, c := range cells {
			src, ok := sources[c.Probs]
			if !ok {
				if probs != nil {
					src, err = probs(w, c.Probs)
				} else {
					src, err = ParseProbs(w, c.Probs)
				}
				if err != nil {
					return nil, err
				}
				sources[c.Probs] = src
			}
			st := Setting{Strategy: c.Strategy, Probs: c.Probs, Workers: c.Workers, Rate: c.Rate, Threshold: c.Threshold, KeepMargin: c.KeepMargin, NoLearning: p.NoLearning, BatchSize: c.BatchSize, Seed: seed}
			k++
			var prog func(float64)
			if progress != nil {
				progress(k, runs, st, 0)
				prog = func(d float64) { progress(k, runs, st, d) }
			}
			res, err := Run(ctx, w, st, src, prog)
			if err != nil {
				return nil, err
			}
			c.BuildFamily = src.BuildFamily().String()
			out := &RunOutput{Setting: st, Metrics: queue.Summarize(res), Result: res}
			if onRun != nil {
				if err := onRun(out); err != nil {
					return nil, err
				}
			}
			n := len(res.Records)
			pc := [3][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
			for i, r := range res.Records {
				pc[0][i] = r.DecidedAt - res.Traffic.Changes[i].Arrival
				pc[1][i] = float64(r.Builds)
			}
			for _, b := range res.Builds {
				pc[2][b.Change] += (b.End - b.Start) / float64(b.BatchSize) // a batch's share
			}
			out.PerChange = pc
			out.Turnaround = slices.Clone(pc[0])
			slices.Sort(out.Turnaround)
			out.Result = nil
			c.Runs = append(c.Runs, out)
		}
	}
	for _, c := range cells {
		c.Aggregate()
	}
	return cells, nil
}

// String names the setting for progress lines.
func (st Setting) String() string {
	s := fmt.Sprintf("%s %s workers=%d seed=%d", st.Strategy, st.Probs, st.Workers, st.Seed)
	if st.Rate > 0 {
		s += fmt.Sprintf(" rate=%g/h", st.Rate)
	}
	switch {
	case st.Strategy != "batch":
	case st.BatchSize == BatchAuto:
		s += " b=auto"
	default:
		s += fmt.Sprintf(" b=%d", cmp.Or(st.BatchSize, DefaultBatchSize))
	}
	return s
}
