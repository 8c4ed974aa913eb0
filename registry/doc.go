// Package registry stores model bundles on disk: versioned folders of files with a
// manifest of checksums, published atomically, with a champion and a challenger
// pointer per repository, verified loading, retention and a watcher for pointer
// changes.
//
// A bundle is whatever files the trainer writes (one per model, the developer table,
// the report); the registry knows nothing of models or features. The caller passes
// the feature schema hash as an opaque string at publication, and again at loading,
// where a different hash is refused with ErrSchemaMismatch.
//
// A typical trainer publishes and promotes in one call:
//
//	reg, err := registry.Open("/var/lib/sqpredict/registry")
//	version, err := reg.Publish(ctx, "ios", writeModels, manifest,
//		registry.PublishOptions{Champion: true})
//
// and a scorer loads the champion, then follows Watch:
//
//	version, err := reg.Champion("ios")
//	bundle, err := reg.Load("ios", version, schemaHash)
//	data, err := bundle.ReadFile("success.json")
//
// # Bundle format
//
// A registry is a folder laid out as
//
//	REG/
//	  <repo>/
//	    current                     champion pointer
//	    challenger                  challenger pointer (optional)
//	    .tmp-*                      pointer being replaced; readers skip it
//	    versions/
//	      20261121T094000Z-000001/  one bundle
//	        manifest.json
//	        <files...>
//	      .tmp-*                    unfinished or abandoned work; readers skip it
//
// A repository name is 1 to 100 of [A-Za-z0-9._-], not starting with '.'.
//
// A version name is the UTC second of publication, "-", and a six-digit sequence
// number: 20261121T094000Z-000001. The sequence number grows by one with every version
// of the repository, so names are unique; the time part never goes below the latest
// version's, so sorting names as strings sorts versions by publication. Retain always
// keeps the newest version, so a name is never reused.
//
// A pointer file holds one version name and a newline, mode 0600 like the manifest.
// It is replaced by writing ".tmp-<name>-*" in the same folder, fsyncing it, renaming it over the pointer and
// fsyncing the folder, so readers see the old version or the new one.
//
// manifest.json is a JSON object (format_version 1):
//
//	{
//		"format_version": 1,
//		"repo": "ios",
//		"version": "20261121T094000Z-000001",
//		"trained_at": "2026-11-21T09:40:00Z",
//		"window": {"from": "2026-08-23T00:00:00Z", "to": "2026-11-21T00:00:00Z"},
//		"feature_schema_hash": "9c1f...",
//		"feature_schema_version": 3,
//		"metrics": {"success.auc": 0.81, "buildtime.crps": 4.2},
//		"extra": {"seed": "1", "vcs_revision": "dd4cf6b..."},
//		"files": {"success.json": {"sha256": "<64 hex digits>", "size": 1234}}
//	}
//
// Times are RFC 3339 in UTC; window is the half-open span [from, to) of history the
// bundle was trained on. metrics are finite numbers keyed by dotted names; extra is
// free-form text. files lists every file of the folder except the manifest, by
// slash-separated relative path, with its lowercase hex sha256 and size in bytes.
// Readers reject any other format_version with ErrUnknownFormat before looking at the
// other fields. A bundle folder is valid when its manifest is, and the files on disk
// are exactly those listed, with those sizes and sums; anything else is a
// *ChecksumError naming the file.
//
// # Publishing
//
// Publish creates versions/.tmp-publish-*, lets the caller write the files, makes
// every file under it mode 0600 and every folder 0700 (a bundle holds per-author
// statistics; the trainer and predictd run as the same user), fsyncs every file and folder under it, writes manifest.json last, fsyncs the folder, renames
// it to versions/<version> and fsyncs versions/. Only then may a pointer name it. A
// crash at any point leaves either no new version or a complete one, plus perhaps a
// .tmp-* entry that Cleanup (called by Publish) removes. Publish holds an exclusive
// flock on its .tmp-publish-* folder while it works, and the kernel drops the lock
// when the process dies, so the next Publish removes the folder of a killed one at once
// (on systems without flock, and for other .tmp-* entries, once older than StaleAge).
package registry
