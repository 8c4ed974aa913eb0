package server

import (
	"errors"
	"log/slog"
	"sync"
)

// DefaultLogQueue is the number of prediction records an AsyncLog holds waiting for
// the disk: about 3 s of 2,000 single-build requests/s with a shadow, some 20 MB.
const DefaultLogQueue = 1 << 16

// errLogClosed is the error of LogPredictions after Close.
var errLogClosed = errors.New("server: prediction log: closed")

// AsyncLog takes the prediction log off the request path: LogPredictions only appends
// the records to a bounded queue, and Run, on one goroutine, writes them to the
// underlying logger. When the queue is full the records of a request are dropped
// whole and counted (predictd_prediction_log_dropped_records_total): a slow or full
// disk never blocks a request. Close stops taking records, waits until Run has written
// every queued one and returns. Safe for concurrent use.
type AsyncLog struct {
	out     PredictionLogger
	max     int
	metrics *Metrics
	log     *slog.Logger
	wake    chan struct{} // capacity 1: records are waiting, or Close was called
	done    chan struct{} // closed when Run returns

	mu      sync.Mutex // protects queue, closed and warned
	queue   []PredictionRecord
	closed  bool
	warned  bool
	dropped int64
}

// NewAsyncLog returns an AsyncLog of at most max queued records (zero means
// DefaultLogQueue) writing to out, counting drops in m and logging write errors and the
// first drop to log (nil means slog.Default()). Run must be started for records to be
// written.
func NewAsyncLog(out PredictionLogger, max int, m *Metrics, log *slog.Logger) *AsyncLog {
	if max <= 0 {
		max = DefaultLogQueue
	}
	if log == nil {
		log = slog.Default()
	}
	return &AsyncLog{out: out, max: max, metrics: m, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// LogPredictions queues recs, or drops and counts them when they do not fit. It never
// waits for the disk. It returns an error only after Close.
func (a *AsyncLog) LogPredictions(recs []PredictionRecord) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errLogClosed
	}
	if len(a.queue)+len(recs) > a.max {
		a.dropped += int64(len(recs))
		first := !a.warned
		a.warned = true
		a.mu.Unlock()
		a.metrics.logDropped(len(recs))
		if first {
			a.log.Warn("prediction log queue full: dropping records (counted in predictd_prediction_log_dropped_records_total)",
				"queue", a.max)
		}
		return nil
	}
	a.queue = append(a.queue, recs...)
	a.mu.Unlock()
	a.signal()
	return nil
}

// signal wakes Run without waiting.
func (a *AsyncLog) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Dropped returns the number of records dropped so far.
func (a *AsyncLog) Dropped() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dropped
}

// Run writes the queued records to the underlying logger, in order, until Close; it
// then writes what is left and returns. Write errors are logged; the records of a
// failed write are lost.
func (a *AsyncLog) Run() {
	defer close(a.done)
	var spare []PredictionRecord
	for range a.wake {
		for {
			a.mu.Lock()
			batch, closed := a.queue, a.closed
			a.queue = spare[:0]
			a.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			if err := a.out.LogPredictions(batch); err != nil {
				a.log.Error("writing the prediction log failed", "records", len(batch), "err", err)
			}
			// The batch's records point into responses: clear them so that they are
			// not kept alive by the reused buffer.
			clear(batch)
			spare = batch
		}
	}
}

// Close stops taking records and returns once Run has written the queued ones. It
// must be called once, with Run started.
func (a *AsyncLog) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.signal()
	<-a.done
}
