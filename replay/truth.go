package replay

import (
	"math"

	"github.com/sqpredict/sqpredict/queue"
)

// truth is the queue.Truth of a world for one seed.
type truth struct {
	w    *World
	seed uint64
}

// Truth returns the world's ground truth with the draws of seed.
func (w *World) Truth(seed uint64) queue.Truth { return &truth{w: w, seed: seed} }

// Lands implements queue.Truth.
func (t *truth) Lands(i int) bool { return t.w.Lands[i] }

// Build implements queue.Truth.
func (t *truth) Build(i int, content []int, height, attempt int) queue.Draw {
	w := t.w
	if !w.Synthetic {
		return queue.Draw{Succeeds: w.Lands[i], Duration: w.durM[i]}
	}
	ok := w.Good[i]
	if ok {
		conf := w.Conflicted[i]
		for a, b := 0, 0; a < len(content) && b < len(conf); {
			switch {
			case content[a] == conf[b]:
				ok = false
				a = len(content)
			case content[a] < conf[b]:
				a++
			default:
				b++
			}
		}
	}
	key := queue.Mix(t.seed*0x2545f4914f6cdd1d + uint64(i))
	for _, k := range content {
		key ^= queue.Mix(uint64(k) ^ 0x1234567)
	}
	key = queue.Mix(key + uint64(attempt))
	u1, u2 := uniform(queue.Mix(key^1)), uniform(queue.Mix(key^2))
	z := math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
	m, s := w.Params.Duration.LogParams(&w.History.Changes[w.Index[i]], float64(height))
	d := queue.Draw{Succeeds: ok, Duration: math.Max(1, math.Round(math.Exp(m+s*z)))}
	if u := uniform(queue.Mix(key ^ 3)); u < w.Flaky {
		d.Infra = true
		d.Duration = math.Max(1, math.Round(d.Duration*(0.1+0.9*uniform(queue.Mix(key^4)))))
	}
	return d
}
