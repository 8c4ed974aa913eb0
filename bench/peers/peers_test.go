package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSelectTasks(t *testing.T) {
	t.Parallel()
	all := allTasks()
	tests := []struct {
		name    string
		sel     string
		want    []string
		wantErr string
	}{
		{name: "names in table order", sel: "logistic,gbm-train", want: []string{"gbm-train", "logistic"}},
		{name: "group", sel: "ngboost-uci", want: []string{"ngboost-uci/kin8nm", "ngboost-uci/power-plant"}},
		{name: "member of a group", sel: " ngboost-uci/kin8nm ", want: []string{"ngboost-uci/kin8nm"}},
		{name: "repeated", sel: "gbm-1m,gbm-1m,", want: []string{"gbm-1m"}},
		{name: "unknown", sel: "gbm-train,gbm-nope,zz", wantErr: "unknown task gbm-nope, zz"},
		{name: "empty", sel: " , ", wantErr: "no task named"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := selectTasks(all, tc.sel)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("selectTasks(%q) error = %v, want %q", tc.sel, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("selectTasks(%q): %v", tc.sel, err)
			}
			var names []string
			for _, tk := range got {
				names = append(names, tk.name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("selectTasks(%q) = %v, want %v", tc.sel, names, tc.want)
			}
		})
	}
	got, err := selectTasks(all, "all")
	if err != nil || len(got) != len(all) {
		t.Errorf("selectTasks(all) = %d tasks, %v; want %d", len(got), err, len(all))
	}
}

// TestTasksConsistent checks that task names are unique and that a task has a peer
// command exactly when it names a peer.
func TestTasksConsistent(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tk := range allTasks() {
		if seen[tk.name] {
			t.Errorf("task %s twice", tk.name)
		}
		seen[tk.name] = true
		if (tk.peer == "") != (tk.theirs == nil) {
			t.Errorf("task %s: peer %q but theirs set = %v", tk.name, tk.peer, tk.theirs != nil)
		}
		if tk.threads < 1 || tk.prepare == nil || tk.ours == nil || tk.about == "" {
			t.Errorf("task %s is incomplete", tk.name)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []float64
		want stat
	}{
		{name: "odd", in: []float64{3, 1, 2}, want: stat{median: 2, lo: 1, hi: 3, n: 3}},
		{name: "even", in: []float64{4, 1, 2, 10}, want: stat{median: 3, lo: 1, hi: 10, n: 4}},
		{name: "one", in: []float64{5}, want: stat{median: 5, lo: 5, hi: 5, n: 1}},
		{name: "none", in: nil, want: stat{}},
	}
	for _, tc := range tests {
		if got := summarize(tc.in); got != tc.want {
			t.Errorf("%s: summarize(%v) = %+v, want %+v", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	t.Parallel()
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	gbm := gbmTrain("gbm-train", 1, "x", regTrain, "regression", 500)
	ng := ngboostTask("ngboost-1m-2t", 2, "x", hetero1M, 500, false)
	uci := ngboostTask("ngboost-uci/kin8nm", 1, "x", dataSet{kind: kindUCI, uci: "kin8nm"}, 500, true)
	results := []result{
		{task: gbm,
			ours: []sample{{wall: sec(9), user: sec(8), maxRSS: 300e6}, {wall: sec(11), user: sec(8.5), maxRSS: 310e6}, {wall: sec(10), user: sec(9), maxRSS: 320e6}},
			peer: []sample{{wall: sec(5), user: sec(4), maxRSS: 200e6}, {wall: sec(4), user: sec(4), maxRSS: 200e6}, {wall: sec(6), user: sec(4), maxRSS: 200e6}}},
		{task: ng, ours: []sample{{wall: sec(20), user: sec(35), maxRSS: 900e6}}},
		{task: uci, ours: []sample{{wall: sec(0.5), user: sec(0.25), maxRSS: 50e6}},
			peer: []sample{{wall: sec(100), user: sec(50), maxRSS: 200e6}}},
	}
	var b bytes.Buffer
	writeTable(&b, results)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"| gbm-train | 1 | LightGBM 4.6.0 | 10.00 (9.00–11.00) | 5.00 (4.00–6.00) | 2.00× | 8.50 (8.00–9.00) | 4.00 (4.00–4.00) | 2.12× | 310 (300–320) | 200 (200–200) | 1.55× |",
		"| ngboost-1m-2t | 2 | none | 20.00 | – | – | 35.00 | – | – | 900 | – | – |",
		"| ngboost-uci/kin8nm | 1 | NGBoost (Python) | 0.50 | 100.00 | 0.005× | 0.25 | 50.00 | 0.005× | 50 | 200 | 0.25× |",
	}
	if len(lines) != 5 {
		t.Fatalf("writeTable wrote %d lines, want 5:\n%s", len(lines), b.String())
	}
	for i, w := range want {
		if lines[i+2] != w {
			t.Errorf("writeTable line %d = %q, want %q", i+3, lines[i+2], w)
		}
	}
	if n := strings.Count(lines[0], "|"); n != strings.Count(lines[1], "|") || n != strings.Count(lines[2], "|") {
		t.Errorf("header, rule and rows have different column counts:\n%s", b.String())
	}
}

// TestGenerateDeterministic checks that a generated data set has its header and rows
// and is the same file for the same seed.
func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	ws := &workspace{dir: t.TempDir()}
	for _, kind := range []string{kindRegression, kindBinary, kindLogistic, kindHetero} {
		d := dataSet{kind: kind, rows: 50, cols: 6, seed: 3}
		p, err := d.path(ws)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		first, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if _, err := d.path(ws); err != nil {
			t.Fatal(err)
		}
		again, _ := os.ReadFile(p)
		if !bytes.Equal(first, again) {
			t.Errorf("%s: the same seed gave different files", kind)
		}
		lines := strings.Split(strings.TrimSpace(string(first)), "\n")
		if len(lines) != 51 || lines[0] != "y,x0,x1,x2,x3,x4,x5" {
			t.Errorf("%s: %d lines, header %q; want 51 lines and y,x0..x5", kind, len(lines), lines[0])
		}
		for i, l := range lines[1:] {
			if n := strings.Count(l, ","); n != 6 {
				t.Fatalf("%s: row %d has %d commas, want 6", kind, i+1, n)
			}
			if kind == kindBinary || kind == kindLogistic {
				if y, _, _ := strings.Cut(l, ","); y != "0" && y != "1" {
					t.Fatalf("%s: row %d label %q, want 0 or 1", kind, i+1, y)
				}
			}
		}
	}
}

func TestWriteUCI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"data.txt":           "1 2 3.25\n4 5 6\n7 8 9.5\n",
		"index_features.txt": "0\n1\n",
		"index_target.txt":   "2\n",
		"index_train_0.txt":  "2\n0\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "train.csv")
	if err := writeUCI(out, dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if want := "y,x0,x1\n9.5,7,8\n3.25,1,2\n"; string(got) != want {
		t.Errorf("writeUCI wrote %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "index_train_0.txt"), []byte("3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeUCI(out+"2", dir); err == nil || !strings.Contains(err.Error(), "row 3 out of range") {
		t.Errorf("writeUCI with a row out of range: error %v", err)
	}
	if _, err := os.Stat(out + "2"); err == nil {
		t.Errorf("writeUCI left a file after an error")
	}
}
