// Command peers measures sqpredict against the reference tools of issue 16 on the same
// data, one process at a time: LightGBM 4.6.0's command-line program for gradient-boosted
// trees, scikit-learn for logistic regression and the reference Python NGBoost.
//
// It builds cmd/trainer once into a temporary folder, generates the data sets (or
// reuses them from -work), then runs every selected task -reps times, sqpredict and the
// peer alternating (the peer first on odd repetitions), and prints a markdown table of
// the medians of wall time, user CPU time and peak RSS (both from the wait4 rusage of
// the child) with the sqpredict/peer ratio of each, and the load average at start and
// end. The machine's load shows in wall time first: compare user CPU time when it is
// busy.
//
//	go run ./bench/peers -peers ../shared/peers -uci ../shared/testdata/uci -tasks gbm-train,logistic -reps 3
//
// -tasks takes task names or their groups (ngboost-uci is ngboost-uci/kin8nm and
// ngboost-uci/power-plant), comma-separated, or all; -list prints the tasks. The tasks
// and their data are described by -list and in BENCHMARKS.md. The command is a main
// package, so `go test ./...` compiles and unit-tests it but never runs a benchmark.
package main
