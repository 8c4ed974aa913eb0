// Package defaultbundle holds the model bundle that predictd serves when it is started
// without a registry: a registry bundle folder (manifest.json, the champion models, the
// developer table and the evaluation report) trained on a small synthetic history kept
// in testdata/sample-history, embedded into the binary.
//
// "go generate ./internal/defaultbundle" rebuilds it with generate.sh (trainer synth,
// then trainer train). The bundle pins the feature schema hash of the code that trained
// it; TestEmbeddedBundle fails, asking for the regeneration, once the feature code
// changes.
package defaultbundle
