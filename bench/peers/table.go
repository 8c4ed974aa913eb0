package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// result holds the runs of one task: sqpredict's and the peer's samples, one per
// repetition (peer empty for a task without a peer).
type result struct {
	task       *task
	ours, peer []sample
}

// stat is a median with the range of the samples it came from.
type stat struct {
	median, lo, hi float64
	n              int
}

// summarize returns the median, minimum and maximum of v; n = 0 when v is empty.
func summarize(v []float64) stat {
	if len(v) == 0 {
		return stat{}
	}
	s := slices.Sorted(slices.Values(v))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{median: m, lo: s[0], hi: s[len(s)-1], n: len(s)}
}

// field returns one quantity of every sample of ss: wall or user seconds, or peak RSS
// in MB (10^6 bytes).
func field(ss []sample, which string) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		switch which {
		case "wall":
			out[i] = s.wall.Seconds()
		case "user":
			out[i] = s.user.Seconds()
		case "rss":
			out[i] = float64(s.maxRSS) / 1e6
		default:
			panic("peers: unknown field " + which)
		}
	}
	return out
}

// format writes st with prec decimals: the median, and its range when there was more
// than one sample; "–" when there was none.
func (st stat) format(prec int) string {
	if st.n == 0 {
		return "–"
	}
	s := fmt.Sprintf("%.*f", prec, st.median)
	if st.n > 1 {
		s += fmt.Sprintf(" (%.*f–%.*f)", prec, st.lo, prec, st.hi)
	}
	return s
}

// ratio writes a/b's medians as "1.23×", "–" when either is missing.
func ratio(a, b stat) string {
	if a.n == 0 || b.n == 0 || b.median == 0 {
		return "–"
	}
	r := a.median / b.median
	if r < 0.1 {
		return fmt.Sprintf("%.3f×", r) // NGBoost against the Python reference
	}
	return fmt.Sprintf("%.2f×", r)
}

// writeTable writes the results as a markdown table: per task the medians (with their
// range) of wall time, user CPU time and peak RSS of sqpredict and the peer, and the
// ratios sqpredict/peer.
func writeTable(w io.Writer, results []result) {
	fmt.Fprintln(w, "| task | threads | peer | wall s: sqpredict | peer | ratio | user CPU s: sqpredict | peer | ratio | peak RSS MB: sqpredict | peer | ratio |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		cells := []string{r.task.name, fmt.Sprint(r.task.threads), r.task.peerName()}
		for _, q := range []struct {
			which string
			prec  int
		}{{"wall", 2}, {"user", 2}, {"rss", 0}} {
			a, b := summarize(field(r.ours, q.which)), summarize(field(r.peer, q.which))
			cells = append(cells, a.format(q.prec), b.format(q.prec), ratio(a, b))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// writeHeader writes the lines above the table: the date, the load average at start
// and end, and the repetitions.
func writeHeader(w io.Writer, start, end time.Time, loadStart, loadEnd string, reps int) {
	fmt.Fprintf(w, "Measured %s to %s (UTC), %d repetition(s), sqpredict and the peer alternating; medians (range).\n",
		start.UTC().Format("2006-01-02 15:04"), end.UTC().Format("15:04"), reps)
	fmt.Fprintf(w, "Load average at start: %s; at end: %s.\n\n", loadStart, loadEnd)
}
