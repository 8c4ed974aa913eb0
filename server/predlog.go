package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// PredictionRecord is one line of the prediction log: one prediction of one model for
// one change, pair or build. Records of the served model have Served true; in shadow
// mode the challenger's records have Served false. "trainer compare" style joins use
// change_id (and ahead_change_id or build_id) as the key and time to pick the
// prediction made before the outcome.
type PredictionRecord struct {
	Time          time.Time `json:"time"`
	Kind          string    `json:"kind"` // success, conflict or buildtime
	Repo          string    `json:"repo"`
	ChangeID      string    `json:"change_id"`
	AheadChangeID string    `json:"ahead_change_id,omitempty"`
	BuildID       string    `json:"build_id,omitempty"`
	ModelVersion  string    `json:"model_version"`
	Role          string    `json:"role"`
	Served        bool      `json:"served"`
	// The prediction: PSucc (success), PConf (conflict) or MeanSeconds and StddevSeconds
	// (build time).
	PSucc         *float64 `json:"p_succ,omitempty"`
	PConf         *float64 `json:"p_conf,omitempty"`
	MeanSeconds   *float64 `json:"mean_seconds,omitempty"`
	StddevSeconds *float64 `json:"stddev_seconds,omitempty"`
}

// PredictionLogger receives the predictions of every request.
type PredictionLogger interface {
	LogPredictions(recs []PredictionRecord) error
}

// Defaults of LogRetention.
const (
	// DefaultMaxLogBytes is the size at which a RotatingLog starts a new file.
	DefaultMaxLogBytes = 64 << 20
	// DefaultLogKeep is the number of rotated files kept.
	DefaultLogKeep = 16
	// DefaultLogTotalBytes bounds the bytes of all the log's files: a day of 2,000
	// predictions/s is about 40 GB of JSON, so the default keeps the last few minutes
	// to hours depending on traffic, never the disk.
	DefaultLogTotalBytes = 1 << 30
)

// LogRetention bounds the disk a RotatingLog uses. Zero fields mean the defaults: there
// is no unbounded setting, since a log that grows without bound fills the disk.
type LogRetention struct {
	// FileBytes is the size at which the current file is rotated.
	FileBytes int64
	// Keep is the number of rotated files kept; the oldest beyond it are removed.
	Keep int
	// TotalBytes bounds the rotated files and the current one together; the oldest
	// rotated files are removed until they fit (the current file alone may reach
	// FileBytes).
	TotalBytes int64
}

// withDefaults returns r with zero fields set to their defaults.
func (r LogRetention) withDefaults() LogRetention {
	if r.FileBytes == 0 {
		r.FileBytes = DefaultMaxLogBytes
	}
	if r.Keep == 0 {
		r.Keep = DefaultLogKeep
	}
	if r.TotalBytes == 0 {
		r.TotalBytes = DefaultLogTotalBytes
	}
	return r
}

// Validate returns an error wrapping ErrConfig when a field of r is negative.
func (r LogRetention) Validate() error {
	if r.FileBytes < 0 || r.Keep < 0 || r.TotalBytes < 0 {
		return fmt.Errorf("%w: negative prediction log retention %+v", ErrConfig, r)
	}
	return nil
}

// RotatingLog writes prediction records as JSON lines to DIR/predictions.jsonl. When
// the file would grow past LogRetention.FileBytes it is closed and renamed to
// predictions-<UTC time>.jsonl, and a new one is started; then the oldest rotated files
// are removed until at most Keep remain and all files hold at most TotalBytes. It
// writes and flushes on the caller's goroutine: serve it through an AsyncLog to keep
// the disk off the request path. Safe for concurrent use.
type RotatingLog struct {
	dir string
	ret LogRetention

	mu   sync.Mutex // protects the fields below
	f    *os.File
	w    *bufio.Writer
	size int64
	buf  []byte
}

// OpenRotatingLog opens (appending) the prediction log in dir, creating dir if needed,
// with retention ret (zero fields meaning the defaults).
func OpenRotatingLog(dir string, ret LogRetention) (*RotatingLog, error) {
	if err := ret.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("server: prediction log: %w", err)
	}
	l := &RotatingLog{dir: dir, ret: ret.withDefaults()}
	if err := l.openLocked(); err != nil {
		return nil, err
	}
	return l, nil
}

// currentName is the file being written.
const currentName = "predictions.jsonl"

func (l *RotatingLog) openLocked() error {
	f, err := os.OpenFile(filepath.Join(l.dir, currentName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("server: prediction log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return errors.Join(fmt.Errorf("server: prediction log: %w", err), f.Close())
	}
	l.f, l.w, l.size = f, bufio.NewWriterSize(f, 64<<10), st.Size()
	return nil
}

// LogPredictions appends recs, one JSON line each, and flushes them to the file.
func (l *RotatingLog) LogPredictions(recs []PredictionRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("server: prediction log: closed")
	}
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			return fmt.Errorf("server: prediction log: %w", err)
		}
		l.buf = append(append(l.buf[:0], b...), '\n')
		if l.size > 0 && l.size+int64(len(l.buf)) > l.ret.FileBytes {
			if err := l.rotateLocked(); err != nil {
				return err
			}
		}
		n, err := l.w.Write(l.buf)
		l.size += int64(n)
		if err != nil {
			return fmt.Errorf("server: prediction log: %w", err)
		}
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("server: prediction log: %w", err)
	}
	return nil
}

// rotateLocked closes the current file, renames it with the time and opens a new one.
func (l *RotatingLog) rotateLocked() error {
	if err := errors.Join(l.w.Flush(), l.f.Close()); err != nil {
		return fmt.Errorf("server: prediction log: %w", err)
	}
	l.f = nil
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(filepath.Join(l.dir, currentName), filepath.Join(l.dir, "predictions-"+stamp+".jsonl")); err != nil {
		return fmt.Errorf("server: prediction log: %w", err)
	}
	if err := l.pruneLocked(); err != nil {
		return err
	}
	return l.openLocked()
}

// pruneLocked removes the oldest rotated files until at most Keep remain and they hold
// at most TotalBytes less the FileBytes the current file may grow to.
func (l *RotatingLog) pruneLocked() error {
	old, err := filepath.Glob(filepath.Join(l.dir, "predictions-*.jsonl"))
	if err != nil {
		return fmt.Errorf("server: prediction log: %w", err)
	}
	sizes := make([]int64, len(old))
	var total int64
	for i, name := range old {
		st, err := os.Stat(name)
		if err != nil {
			return fmt.Errorf("server: prediction log: %s: %w", name, err)
		}
		sizes[i] = st.Size()
		total += sizes[i]
	}
	budget := max(l.ret.TotalBytes-l.ret.FileBytes, 0)
	// Names sort by time: remove from the oldest.
	for i := 0; i < len(old) && (len(old)-i > l.ret.Keep || total > budget); i++ {
		if err := os.Remove(old[i]); err != nil {
			return fmt.Errorf("server: prediction log: %w", err)
		}
		total -= sizes[i]
	}
	return nil
}

// Close flushes and closes the current file.
func (l *RotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := errors.Join(l.w.Flush(), l.f.Close())
	l.f = nil
	if err != nil {
		return fmt.Errorf("server: prediction log: %w", err)
	}
	return nil
}
