package replay

import (
	"context"
	"math"
	"testing"

	"github.com/sqpredict/sqpredict/queue"
)

// TestOracles replays a day under both oracles: oracle-bypass decides each change when
// its one build finishes, and oracle (paper 001 §8.1) at the later of that time and the
// decisions of its conflicting changes ahead: conflicting changes in queue order, none
// bypassed. (Their build times differ: a build's duration depends on how many changes
// of its path are pending.) Some changes must bypass under oracle-bypass, or the test
// proves nothing.
func TestOracles(t *testing.T) {
	w, _ := smallWorld(t, 1, 11)
	run := func(s string) *queue.Result {
		res, err := Run(context.Background(), w, Setting{Strategy: s, Probs: "truth", Workers: 30, Seed: 3}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ord, byp := run("oracle"), run("oracle-bypass")
	bypassed := 0
	for i := range ord.Records {
		r, b := ord.Records[i], byp.Records[i]
		if r.Bypassed {
			t.Fatalf("oracle bypassed change %d", i)
		}
		if b.Bypassed {
			bypassed++
		}
		if done := byp.Builds[b.Deciding].End; b.DecidedAt != done {
			t.Fatalf("change %d: oracle-bypass decided at %v, its build finished at %v", i, b.DecidedAt, done)
		}
		want := ord.Builds[r.Deciding].End
		for _, k := range w.Traffic.Changes[i].Ahead {
			want = math.Max(want, ord.Records[k].DecidedAt)
		}
		if r.DecidedAt != want {
			t.Fatalf("change %d: oracle decided at %v, want %v (build done at %v)", i, r.DecidedAt, want, ord.Builds[r.Deciding].End)
		}
	}
	if bypassed == 0 {
		t.Fatal("oracle-bypass bypassed no change")
	}
	mo, mb := queue.Summarize(ord), queue.Summarize(byp)
	t.Logf("%d of %d changes bypassed; P50 %.1f min (oracle) vs %.1f (oracle-bypass), P95 %.1f vs %.1f",
		bypassed, len(ord.Records), mo.TurnaroundP50/60, mb.TurnaroundP50/60, mo.TurnaroundP95/60, mb.TurnaroundP95/60)
}
