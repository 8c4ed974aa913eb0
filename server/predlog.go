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

// DefaultMaxLogBytes is the size at which a RotatingLog starts a new file.
const DefaultMaxLogBytes = 64 << 20

// RotatingLog writes prediction records as JSON lines to DIR/predictions.jsonl. When
// the file would grow past its size limit it is closed and renamed to
// predictions-<UTC time>.jsonl, and a new one is started; at most keep rotated files are
// kept (the oldest are removed). Safe for concurrent use.
type RotatingLog struct {
	dir      string
	maxBytes int64
	keep     int

	mu   sync.Mutex // protects the fields below
	f    *os.File
	w    *bufio.Writer
	size int64
	buf  []byte
}

// OpenRotatingLog opens (appending) the prediction log in dir, creating dir if needed.
// maxBytes zero means DefaultMaxLogBytes; keep zero keeps every rotated file.
func OpenRotatingLog(dir string, maxBytes int64, keep int) (*RotatingLog, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxLogBytes
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("server: prediction log: %w", err)
	}
	l := &RotatingLog{dir: dir, maxBytes: maxBytes, keep: keep}
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
		if l.size > 0 && l.size+int64(len(l.buf)) > l.maxBytes {
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
	if l.keep > 0 {
		old, err := filepath.Glob(filepath.Join(l.dir, "predictions-*.jsonl"))
		if err != nil {
			return fmt.Errorf("server: prediction log: %w", err)
		}
		// Names sort by time: remove all but the newest keep.
		for len(old) > l.keep {
			if err := os.Remove(old[0]); err != nil {
				return fmt.Errorf("server: prediction log: %w", err)
			}
			old = old[1:]
		}
	}
	return l.openLocked()
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
