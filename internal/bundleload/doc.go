// Package bundleload adapts the registry and the training package's bundle reader to
// the server: it loads a bundle version, verifies it completely and builds the scorer of
// its champion models.
package bundleload
