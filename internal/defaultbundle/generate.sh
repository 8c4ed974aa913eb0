#!/usr/bin/env bash
# generate.sh rebuilds the default model bundle that predictd serves when started
# without --registry; "go generate ./internal/defaultbundle" runs it.
#
# It writes the small synthetic history testdata/sample-history (ios profile, 5 days at
# 8 changes an hour, seed 1: byte-identical on every run) unless it is already there,
# trains the champion models (and the Normal NGBoost challenger, which lets tests serve a
# Normal build-time variant) on it with "trainer train" into a temporary registry, and
# copies the published bundle folder, manifest included, to bundle/. Run it again
# whenever the feature code changes: TestEmbeddedBundle fails on a stale bundle.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
history="$here/testdata/sample-history"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
go build -o "$tmp/trainer" ./cmd/trainer
if [[ ! -f "$history/changes.csv" ]]; then
	"$tmp/trainer" synth --profile ios --days 5 --rate 8 --seed 1 --format csv --out "$history"
fi
version=$("$tmp/trainer" train --history "$history" --registry "$tmp/registry" \
	--as-of 2026-01-11T00:00:00Z --window 90d --baseline-gate off --challengers ngboost-normal | tail -n 1)
rm -rf "$here/bundle"
cp -r "$tmp/registry/ios/versions/$version" "$here/bundle"
chmod -R u+rw,go+r "$here/bundle"
echo "defaultbundle: bundle $version from $history" >&2
