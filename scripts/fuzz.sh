#!/usr/bin/env bash
# Runs every fuzz target of the module for a while each, one after the other, on one
# worker, and prints a line per target. Not part of CI (go test ./... only replays the
# seed corpora): run it by hand or from a nightly job.
#
#   scripts/fuzz.sh            # 10 minutes per target
#   FUZZTIME=30s scripts/fuzz.sh
#   scripts/fuzz.sh ./server   # only the targets of some packages
#   FUZZMINTIME=60s scripts/fuzz.sh   # go test's default minimisation time
#
# The engine minimises every input that reaches new code before it goes on, for up to
# -fuzzminimizetime (go test's default: 60 s), and counts no execs meanwhile. On the
# Parquet and Arrow targets, whose inputs are kilobytes of arrow-go metadata, that
# left FuzzReadParquet at about 110 counted execs in 10 minutes: most of the time went
# to minimising. 10 s per input keeps the search moving (15 new inputs in 90 s instead
# of 0 to 1).
#
# A crash leaves its input under the package's testdata/fuzz/ folder (commit it: it
# becomes a regression test) and makes the script exit 1 after the other targets ran.
set -u
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10m}
mintime=${FUZZMINTIME:-10s}
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  mapfile -t pkgs < <(go list ./...)
fi
failed=0
for pkg in "${pkgs[@]}"; do
  dir=$(go list -f '{{.Dir}}' "$pkg") || exit 1
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u)
  for t in $targets; do
    start=$(date +%s)
    if out=$(go test "$pkg" -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" -fuzzminimizetime "$mintime" -parallel 1 2>&1); then
      status=ok
    else
      status=FAIL
      failed=1
    fi
    execs=$(printf '%s\n' "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2)
    printf '%-5s %-45s %-28s %5ds  execs %s\n' "$status" "$pkg" "$t" $(( $(date +%s) - start )) "${execs:-?}"
    if [ "$status" = FAIL ]; then
      printf '%s\n' "$out" | tail -30
    fi
  done
done
exit $failed
