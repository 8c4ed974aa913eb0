// Package bundleload adapts the registry and package modelset's bundle reader to the
// server: it loads a bundle version, verifies it completely and builds the scorer of the
// models it serves (champions, or the baselines its manifest serves instead), with their
// build-time family. It does not import training, so predictd does not link the trainer.
package bundleload
