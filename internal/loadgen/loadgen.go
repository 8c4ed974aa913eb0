package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Config says how to drive the call.
type Config struct {
	// Rate is the number of requests per second; it must be positive.
	Rate float64
	// Duration is how long requests are started for; it must be positive.
	Duration time.Duration
	// Concurrency is the number of requests that may be in flight; zero means 256.
	// When all are busy, the next request waits (and its wait counts in its latency).
	Concurrency int
	// Call sends one request; i numbers the requests from 0.
	Call func(ctx context.Context, i int) error
}

// Result summarises a run.
type Result struct {
	Requests int
	Errors   int
	// FirstError is the first error seen, if any.
	FirstError error
	// Elapsed is the time from the start to the last response.
	Elapsed time.Duration
	// Latency quantiles, measured from each request's scheduled time.
	P50, P90, P99, Max time.Duration
	// SendP50 and SendP99 are quantiles of the latency measured from the moment the call
	// was made: the difference to P50 and P99 is the generator's own lag (timer wake-up,
	// waiting for a free slot).
	SendP50, SendP99 time.Duration
}

// Achieved is the rate of completed requests per second.
func (r Result) Achieved() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// String formats r on one line.
func (r Result) String() string {
	return fmt.Sprintf("requests %d (%.0f/s) errors %d p50 %v p90 %v p99 %v max %v (from the call: p50 %v p99 %v)",
		r.Requests, r.Achieved(), r.Errors, r.P50, r.P90, r.P99, r.Max, r.SendP50, r.SendP99)
}

// Run drives cfg.Call until cfg.Duration has passed and every request has returned, or
// ctx is done. It returns an error only for a bad Config or a cancelled ctx.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if !(cfg.Rate > 0) || cfg.Duration <= 0 || cfg.Call == nil {
		return Result{}, errors.New("loadgen: rate and duration must be positive and call set")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 256
	}
	n := int(cfg.Rate * cfg.Duration.Seconds())
	lat := make([]time.Duration, n)
	sendLat := make([]time.Duration, n)
	errs := make([]error, n)
	sem := make(chan struct{}, cfg.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
				wg.Wait()
				return Result{}, ctx.Err()
			case <-time.After(d):
			}
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			sent := time.Now()
			errs[i] = cfg.Call(ctx, i)
			lat[i], sendLat[i] = time.Since(at), time.Since(sent)
		}()
	}
	wg.Wait()
	res := Result{Requests: n, Elapsed: time.Since(start)}
	for _, err := range errs {
		if err != nil {
			if res.FirstError == nil {
				res.FirstError = err
			}
			res.Errors++
		}
	}
	slices.Sort(lat)
	slices.Sort(sendLat)
	q := func(l []time.Duration, p float64) time.Duration {
		if n == 0 {
			return 0
		}
		return l[min(n-1, int(p*float64(n)))]
	}
	res.P50, res.P90, res.P99, res.Max = q(lat, 0.5), q(lat, 0.9), q(lat, 0.99), q(lat, 1)
	res.SendP50, res.SendP99 = q(sendLat, 0.5), q(sendLat, 0.99)
	return res, nil
}
