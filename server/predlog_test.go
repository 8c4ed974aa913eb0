package server_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sqpredict/sqpredict/server"
)

// record returns a success record of change i.
func record(i int) server.PredictionRecord {
	p := 0.5
	return server.PredictionRecord{Kind: "success", ChangeID: strconv.Itoa(i), ModelVersion: "v", Role: "champion", Served: true, PSucc: &p}
}

// TestRotatingLogRetention writes 200 records of 140-142 bytes into files of at most
// 300 bytes: the rotated files kept are bounded by Keep and by TotalBytes, whichever
// is smaller, and no file is over FileBytes. Issue 14 item 6.
func TestRotatingLogRetention(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ret      server.LogRetention
		wantKept int
	}{
		// 300-byte files hold 2 records: 284 bytes each. The rotated files get the
		// total less one file: 3 files of 284 bytes fit in 3*290, 4 do not.
		{"by count", server.LogRetention{FileBytes: 300, Keep: 2, TotalBytes: 1 << 20}, 2},
		{"by bytes", server.LogRetention{FileBytes: 300, Keep: 100, TotalBytes: 300 + 3*290}, 3},
		{"bytes below one file", server.LogRetention{FileBytes: 300, Keep: 100, TotalBytes: 100}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := server.OpenRotatingLog(dir, tc.ret)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				if err := l.LogPredictions([]server.PredictionRecord{record(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			rotated, err := filepath.Glob(filepath.Join(dir, "predictions-*.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if len(rotated) != tc.wantKept {
				t.Errorf("%d rotated files, want %d", len(rotated), tc.wantKept)
			}
			var total int64
			for _, name := range append(rotated, filepath.Join(dir, "predictions.jsonl")) {
				st, err := os.Stat(name)
				if err != nil {
					t.Fatal(err)
				}
				if st.Size() > tc.ret.FileBytes {
					t.Errorf("%s holds %d bytes, over the %d-byte file limit", name, st.Size(), tc.ret.FileBytes)
				}
				total += st.Size()
			}
			if total > max(tc.ret.TotalBytes, tc.ret.FileBytes) {
				t.Errorf("files hold %d bytes, over the %d-byte total", total, tc.ret.TotalBytes)
			}
		})
	}
	if _, err := server.OpenRotatingLog(t.TempDir(), server.LogRetention{Keep: -1}); err == nil {
		t.Error("OpenRotatingLog with Keep -1 = nil error, want ErrConfig")
	}
}

// gatedLogger records the batches it is given, each only once gate yields; entered
// (capacity 1) says that a batch is waiting at the gate.
type gatedLogger struct {
	gate, entered chan struct{}
	got           []server.PredictionRecord
}

func (g *gatedLogger) LogPredictions(recs []server.PredictionRecord) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	g.got = append(g.got, recs...)
	return nil
}

// TestAsyncLogDrops: while the writer is stuck, LogPredictions keeps returning at once;
// records beyond the queue are dropped whole and counted in the metric, and Close
// writes every queued record, in order. Issue 14 item 6.
func TestAsyncLogDrops(t *testing.T) {
	out := &gatedLogger{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	reg := prometheus.NewRegistry()
	a := server.NewAsyncLog(out, 10, server.NewMetrics(reg), discard)
	go a.Run()
	// The first record is taken by Run, which then waits at the gate with it.
	if err := a.LogPredictions([]server.PredictionRecord{record(0)}); err != nil {
		t.Fatal(err)
	}
	<-out.entered
	// 1..10 fill the queue of 10; 11..49 are dropped, without waiting.
	for i := 1; i < 50; i++ {
		if err := a.LogPredictions([]server.PredictionRecord{record(i)}); err != nil {
			t.Fatal(err)
		}
	}
	const wantDropped = 39
	dropped := a.Dropped()
	if dropped != wantDropped {
		t.Errorf("Dropped() = %d with a queue of 10, 50 records and one taken, want %d", dropped, wantDropped)
	}
	if got := counter(t, reg, "predictd_prediction_log_dropped_records_total"); got != float64(dropped) {
		t.Errorf("predictd_prediction_log_dropped_records_total = %v, want %d", got, dropped)
	}
	close(out.gate)
	a.Close()
	if int64(len(out.got)) != 50-dropped {
		t.Fatalf("%d records written, want %d", len(out.got), 50-dropped)
	}
	for i, r := range out.got {
		if r.ChangeID != strconv.Itoa(i) {
			t.Fatalf("record %d is change %s, want %d (in order, drops at the end)", i, r.ChangeID, i)
		}
	}
	if err := a.LogPredictions([]server.PredictionRecord{record(99)}); err == nil {
		t.Error("LogPredictions after Close = nil error")
	}
}

// TestAsyncLogFlushesOnClose: records queued through a RotatingLog are all on disk
// after Close.
func TestAsyncLogFlushesOnClose(t *testing.T) {
	dir := t.TempDir()
	l, err := server.OpenRotatingLog(dir, server.LogRetention{})
	if err != nil {
		t.Fatal(err)
	}
	a := server.NewAsyncLog(l, 0, nil, discard)
	go a.Run()
	for i := range 1000 {
		if err := a.LogPredictions([]server.PredictionRecord{record(i)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var r server.PredictionRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.ChangeID != strconv.Itoa(n) {
			t.Fatalf("line %d = %s, %v, want change %d", n, sc.Text(), err, n)
		}
	}
	if n != 1000 {
		t.Errorf("%d records on disk after Close, want 1000", n)
	}
}
