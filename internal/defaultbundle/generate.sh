#!/usr/bin/env bash
# generate.sh rebuilds the default model bundle that predictd serves when started
# without --registry; "go generate ./internal/defaultbundle" runs it.
#
# It writes the small synthetic history testdata/sample-history (ios profile, 5 days at
# 8 changes an hour, seed 1: byte-identical on every run) unless it is already there,
# trains the champion models (and the Normal NGBoost challenger, which lets tests serve a
# Normal build-time variant) on it with "trainer train --config testdata/trainer.json"
# into a temporary registry, and copies the published bundle folder, manifest included,
# to bundle/. The output is deterministic: the config fixes the window and trained_at
# (which also names the version), and the trainer is built without VCS stamping, so the
# manifest holds no revision that changes with every commit. Run it again whenever the
# feature or training code changes: TestEmbeddedBundle retrains with the same config and
# fails when the models' predictions or metrics differ from the embedded ones.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
history="$here/testdata/sample-history"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
go build -buildvcs=false -o "$tmp/trainer" ./cmd/trainer
if [[ ! -f "$history/changes.csv" ]]; then
	"$tmp/trainer" synth --profile ios --days 5 --rate 8 --seed 1 --format csv --out "$history"
fi
version=$("$tmp/trainer" train --history "$history" --registry "$tmp/registry" \
	--config "$here/testdata/trainer.json" | tail -n 1)
rm -rf "$here/bundle"
cp -r "$tmp/registry/ios/versions/$version" "$here/bundle"
chmod -R u+rw,go+r "$here/bundle"
echo "defaultbundle: bundle $version from $history" >&2
