package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Peer names, as the table shows them.
const (
	peerLightGBM = "LightGBM 4.6.0"
	peerSklearn  = "scikit-learn"
	peerNGBoost  = "NGBoost (Python)"
)

// workspace is where the tasks find their programs and data.
type workspace struct {
	dir      string // data sets (kept between runs) and outputs (-work)
	trainer  string // the trainer binary built for this run
	lightgbm string // the LightGBM command-line program
	python   string // the Python with scikit-learn and pandas
	ngboost  string // the reference NGBoost source folder, for PYTHONPATH
	uci      string // the UCI data sets folder
}

// out returns the path of an output file of the runs.
func (ws *workspace) out(name string) string {
	return filepath.Join(ws.dir, "out", name)
}

// task is one line of the table: a piece of work done by sqpredict and by a peer on the
// same data with the same settings.
type task struct {
	name    string
	threads int
	about   string
	peer    string // one of the peer names; "" when no peer is run
	// prepare makes the data (and any model the task reads); it is not timed.
	prepare func(ctx context.Context, ws *workspace) error
	ours    func(ws *workspace) command
	theirs  func(ws *workspace) command // nil when peer is ""
}

// peerName returns the peer's name for the table, "none" without a peer.
func (t *task) peerName() string {
	if t.peer == "" {
		return "none"
	}
	return t.peer
}

// gbmTrain is a GBM training task: 31 leaves, learning rate 0.1, max_bin 255, on the
// data set made by data, objective obj, iters trees.
func gbmTrain(name string, threads int, about string, data dataSet, obj string, iters int) *task {
	file := strings.ReplaceAll(name, "/", "_")
	params := []string{"objective=" + obj, "num_iterations=" + strconv.Itoa(iters), "num_leaves=31",
		"learning_rate=0.1", "num_threads=" + strconv.Itoa(threads)}
	return &task{
		name: name, threads: threads, about: about, peer: peerLightGBM,
		prepare: func(ctx context.Context, ws *workspace) error { _, err := data.path(ws); return err },
		ours: func(ws *workspace) command {
			argv := []string{ws.trainer, "fit", "--algo", "gbm", "--train", data.file(ws), "--target", "y"}
			for _, p := range params {
				argv = append(argv, "--param", p)
			}
			return command{argv: append(argv, "--model", ws.out("ours-"+file+".txt")), env: goThreads(threads)}
		},
		theirs: func(ws *workspace) command {
			argv := []string{ws.lightgbm, "task=train", "data=" + data.file(ws), "header=true", "label_column=name:y"}
			argv = append(argv, params...)
			return command{argv: append(argv, "output_model="+ws.out("lgb-"+file+".txt"))}
		},
	}
}

// gbmPredict scores the 100k-row test set with one 500-tree LightGBM model (trained by
// LightGBM once, untimed, on one thread: its OpenMP threads spin for minutes on a busy
// machine): both programs read the same model file.
func gbmPredict(name string, threads int) *task {
	file := strings.ReplaceAll(name, "/", "_")
	model := func(ws *workspace) string { return filepath.Join(ws.dir, "gbm-predict-500trees.txt") }
	return &task{
		name: name, threads: threads, peer: peerLightGBM,
		about: "predict 100k × 50 rows with a 500-tree, 31-leaf LightGBM model, CSV in, predictions out",
		prepare: func(ctx context.Context, ws *workspace) error {
			if _, err := regTest.path(ws); err != nil {
				return err
			}
			if _, err := regTrain.path(ws); err != nil {
				return err
			}
			if _, err := os.Stat(model(ws)); err == nil {
				return nil
			}
			tmp := model(ws) + ".tmp"
			c := command{argv: []string{ws.lightgbm, "task=train", "data=" + regTrain.file(ws), "header=true",
				"label_column=name:y", "objective=regression", "num_iterations=500", "num_leaves=31",
				"learning_rate=0.1", "num_threads=1", "output_model=" + tmp}}
			if _, err := measure(ctx, ws.dir, c); err != nil {
				return fmt.Errorf("training the model to predict with: %w", err)
			}
			return os.Rename(tmp, model(ws))
		},
		ours: func(ws *workspace) command {
			return command{argv: []string{ws.trainer, "predict", "--model", model(ws), "--data", regTest.file(ws),
				"--out", ws.out("ours-" + file + ".csv")}, env: goThreads(threads)}
		},
		theirs: func(ws *workspace) command {
			return command{argv: []string{ws.lightgbm, "task=predict", "data=" + regTest.file(ws), "header=true",
				"input_model=" + model(ws), "num_threads=" + strconv.Itoa(threads),
				"output_result=" + ws.out("lgb-"+file+".txt")}}
		},
	}
}

// sklearnLogistic is the peer of the logistic task: read the CSV with pandas,
// standardise, fit scikit-learn's L2 logistic regression (lbfgs, C 1, tol 1e-4), as
// trainer fit --algo logistic does.
const sklearnLogistic = `import sys
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
df = pd.read_csv(sys.argv[1])
y = df.pop("y").to_numpy()
x = StandardScaler().fit_transform(df.to_numpy())
m = LogisticRegression(C=1.0, tol=1e-4, max_iter=100).fit(x, y)
print(m.n_iter_)
`

// pyNGBoost is the peer of the NGBoost tasks: read the CSV with pandas and fit the
// reference NGBRegressor (Normal, depth-3 trees) with argv[2] iterations at learning
// rate 0.01. Its file is not called ngboost.py, which would shadow the package.
const pyNGBoost = `import sys
import pandas as pd
import ngb_compat
ngb_compat.install()
from ngboost import NGBRegressor
df = pd.read_csv(sys.argv[1])
y = df.pop("y").to_numpy()
NGBRegressor(n_estimators=int(sys.argv[2]), learning_rate=0.01, verbose=False).fit(df.to_numpy(), y)
`

// pythonThreads are the variables that hold numpy's and scikit-learn's threads to n.
func pythonThreads(n int) []string {
	s := strconv.Itoa(n)
	return []string{"OMP_NUM_THREADS=" + s, "OPENBLAS_NUM_THREADS=" + s, "MKL_NUM_THREADS=" + s}
}

// goThreads holds a Go program to n threads of Go code.
func goThreads(n int) []string { return []string{"GOMAXPROCS=" + strconv.Itoa(n)} }

// script writes a Python script into the workspace and returns its path.
func (ws *workspace) script(name, text string) (string, error) {
	p := filepath.Join(ws.dir, name)
	return p, os.WriteFile(p, []byte(text), 0o644)
}

// logisticTask fits the L2 logistic regression on 350k × 40 rows.
func logisticTask(name string, threads int) *task {
	file := strings.ReplaceAll(name, "/", "_")
	return &task{
		name: name, threads: threads, peer: peerSklearn,
		about: "logistic regression 350k × 40 CSV: sqpredict read + fit + write, scikit-learn read + standardise + fit",
		prepare: func(ctx context.Context, ws *workspace) error {
			if _, err := ws.script("logistic.py", sklearnLogistic); err != nil {
				return err
			}
			_, err := logit.path(ws)
			return err
		},
		ours: func(ws *workspace) command {
			return command{argv: []string{ws.trainer, "fit", "--algo", "logistic", "--train", logit.file(ws),
				"--target", "y", "--model", ws.out("ours-" + file + ".json")}, env: goThreads(threads)}
		},
		theirs: func(ws *workspace) command {
			return command{argv: []string{ws.python, filepath.Join(ws.dir, "logistic.py"), logit.file(ws)},
				env: pythonThreads(threads)}
		},
	}
}

// ngboostTask fits a Normal NGBoost (depth-3 trees, learning rate 0.01, iters
// iterations) on data; withPeer runs the reference Python too.
func ngboostTask(name string, threads int, about string, data dataSet, iters int, withPeer bool) *task {
	file := strings.ReplaceAll(name, "/", "_")
	t := &task{
		name: name, threads: threads, about: about,
		prepare: func(ctx context.Context, ws *workspace) error {
			if _, err := ws.script("ngboost_peer.py", pyNGBoost); err != nil {
				return err
			}
			_, err := data.path(ws)
			return err
		},
		ours: func(ws *workspace) command {
			return command{argv: []string{ws.trainer, "fit", "--algo", "ngboost", "--train", data.file(ws), "--target", "y",
				"--param", "n_estimators=" + strconv.Itoa(iters), "--param", "learning_rate=0.01", "--param", "max_depth=3",
				"--param", "num_threads=" + strconv.Itoa(threads), "--param", "verbose_eval=0",
				"--model", ws.out("ours-" + file + ".json")}, env: goThreads(threads)}
		},
	}
	if withPeer {
		t.peer = peerNGBoost
		t.theirs = func(ws *workspace) command {
			env := append(pythonThreads(threads), "PYTHONPATH="+ws.ngboost)
			return command{argv: []string{ws.python, filepath.Join(ws.dir, "ngboost_peer.py"), data.file(ws), strconv.Itoa(iters)}, env: env}
		}
	}
	return t
}

// The data sets of the tasks.
var (
	regTrain = dataSet{kind: kindRegression, rows: 100_000, cols: 50, seed: 1}
	regTest  = dataSet{kind: kindRegression, rows: 100_000, cols: 50, seed: 2}
	binTrain = dataSet{kind: kindBinary, rows: 100_000, cols: 50, seed: 1}
	reg1M    = dataSet{kind: kindRegression, rows: 1_000_000, cols: 50, seed: 1}
	logit    = dataSet{kind: kindLogistic, rows: 350_000, cols: 40, seed: 1}
	hetero1M = dataSet{kind: kindHetero, rows: 1_000_000, cols: 10, seed: 1}
)

// allTasks returns every task in table order.
func allTasks() []*task {
	const train = "GBM regression 100k × 50, 500 trees, 31 leaves"
	const m1 = "GBM regression 1M × 50, 100 trees"
	return []*task{
		gbmTrain("gbm-train", 1, train, regTrain, "regression", 500),
		gbmTrain("gbm-train-2t", 2, train, regTrain, "regression", 500),
		gbmTrain("gbm-binary", 1, "GBM binary 100k × 50, 500 trees, 31 leaves", binTrain, "binary", 500),
		gbmTrain("gbm-1m", 1, m1, reg1M, "regression", 100),
		gbmTrain("gbm-1m-2t", 2, m1, reg1M, "regression", 100),
		gbmPredict("gbm-predict", 1),
		gbmPredict("gbm-predict-2t", 2),
		logisticTask("logistic", 1),
		logisticTask("logistic-2t", 2),
		ngboostTask("ngboost-uci/kin8nm", 1, "NGBoost Normal, UCI kin8nm split 0 training rows, 500 iterations",
			dataSet{kind: kindUCI, uci: "kin8nm"}, 500, true),
		ngboostTask("ngboost-uci/power-plant", 1, "NGBoost Normal, UCI power-plant split 0 training rows, 500 iterations",
			dataSet{kind: kindUCI, uci: "power-plant"}, 500, true),
		ngboostTask("ngboost-1m-2t", 2, "NGBoost Normal 1M × 10, 500 iterations (no peer: the reference would take hours)",
			hetero1M, 500, false),
	}
}

// selectTasks returns the tasks named by the comma-separated list sel, in table
// order: a task is selected by its name or by its group (the part of its name before a
// slash); "all" selects every task. A name that selects nothing is an error.
func selectTasks(all []*task, sel string) ([]*task, error) {
	want := map[string]bool{}
	for _, s := range strings.Split(sel, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = false
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("-tasks: no task named")
	}
	var out []*task
	for _, t := range all {
		group, _, _ := strings.Cut(t.name, "/")
		hit := false
		for _, key := range []string{"all", t.name, group} {
			if _, ok := want[key]; ok {
				want[key] = true
				hit = true
			}
		}
		if hit {
			out = append(out, t)
		}
	}
	var unknown []string
	for s, used := range want {
		if !used {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("-tasks: unknown task %s (see -list)", strings.Join(unknown, ", "))
	}
	return out, nil
}
