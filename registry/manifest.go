package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"
)

// FormatVersion is the manifest format this package writes and the only one it reads.
// Change it, and teach ReadManifest the old one, whenever the meaning of a manifest
// field or of the folder layout changes.
const FormatVersion = 1

// ManifestName is the name of the manifest file in a bundle folder. Publish writes it
// after every other file, so a folder with a manifest is complete.
const ManifestName = "manifest.json"

// Manifest describes one bundle: what it was trained on and the checksum of each file.
// It is stored as JSON in manifest.json; the field comments give the JSON names.
type Manifest struct {
	// FormatVersion is FormatVersion when written ("format_version").
	FormatVersion int `json:"format_version"`
	// Repo is the repository the bundle was trained for ("repo").
	Repo string `json:"repo"`
	// Version is the bundle's version name in the registry ("version").
	Version string `json:"version"`
	// TrainedAt is when training ran, in UTC ("trained_at").
	TrainedAt time.Time `json:"trained_at"`
	// Window is the span of history the bundle was trained on ("window").
	Window Window `json:"window"`
	// FeatureSchemaHash identifies the feature code the models expect
	// ("feature_schema_hash"). The registry treats it as an opaque string; Load refuses
	// a bundle whose hash differs from the caller's.
	FeatureSchemaHash string `json:"feature_schema_hash"`
	// FeatureSchemaVersion is the human-readable version of that schema
	// ("feature_schema_version"). It is informative only; the hash decides.
	FeatureSchemaVersion int `json:"feature_schema_version"`
	// Metrics are evaluation results keyed by dotted names such as "success.auc"
	// ("metrics"). Every value is finite.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Extra is free-form metadata such as the seed, the trainer configuration and the
	// VCS revision ("extra"). Publish adds ExtraVCSRevision when the caller did not
	// and the binary knows it.
	Extra map[string]string `json:"extra,omitempty"`
	// Files maps the slash-separated path of every file in the bundle folder except
	// the manifest to its sha256 and size ("files"). Publish fills it in.
	Files map[string]FileInfo `json:"files"`
}

// Window is a half-open span of time [From, To).
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// FileInfo is the checksum of one bundle file.
type FileInfo struct {
	SHA256 string `json:"sha256"` // lowercase hex
	Size   int64  `json:"size"`   // bytes
}

// ExtraVCSRevision is the Extra key Publish fills with the VCS revision of the running
// binary (see VCSRevision) when the caller has not set it.
const ExtraVCSRevision = "vcs_revision"

// VCSRevision returns the VCS revision the running binary was built from, with
// "+dirty" appended when the work tree had local changes, or "" when the build did not
// record it (test binaries and builds with -buildvcs=false do not).
func VCSRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return revisionOf(info.Settings)
}

// revisionOf is VCSRevision for the given build settings.
func revisionOf(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

// FileNames returns the paths listed in the manifest, sorted.
func (m *Manifest) FileNames() []string {
	return sortedKeys(m.Files)
}

// validateCaller checks the fields the caller of Publish is responsible for.
func (m *Manifest) validateCaller() error {
	if m.FeatureSchemaHash == "" {
		return fmt.Errorf("%w: feature_schema_hash is empty", ErrInvalidManifest)
	}
	if m.TrainedAt.IsZero() {
		return fmt.Errorf("%w: trained_at is zero", ErrInvalidManifest)
	}
	if m.Window.To.Before(m.Window.From) {
		return fmt.Errorf("%w: window to %s is before from %s", ErrInvalidManifest,
			m.Window.To.Format(time.RFC3339), m.Window.From.Format(time.RFC3339))
	}
	for _, name := range sortedKeys(m.Metrics) {
		// JSON has no NaN or Inf, and a gate cannot compare against one.
		if v := m.Metrics[name]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: metric %q is %v", ErrInvalidManifest, name, v)
		}
	}
	return nil
}

// validate checks a manifest read from disk.
func (m *Manifest) validate() error {
	if err := validRepo(m.Repo); err != nil {
		return fmt.Errorf("%w: repo: %w", ErrInvalidManifest, err)
	}
	if _, _, err := parseVersion(m.Version); err != nil {
		return fmt.Errorf("%w: version: %w", ErrInvalidManifest, err)
	}
	if m.FeatureSchemaHash == "" {
		return fmt.Errorf("%w: feature_schema_hash is empty", ErrInvalidManifest)
	}
	for _, name := range m.FileNames() {
		if !fs.ValidPath(name) || name == "." || name == ManifestName {
			return fmt.Errorf("%w: files: bad path %q", ErrInvalidManifest, name)
		}
		fi := m.Files[name]
		if len(fi.SHA256) != 64 || fi.Size < 0 {
			return fmt.Errorf("%w: files: %q: bad sha256 %q or size %d", ErrInvalidManifest,
				name, fi.SHA256, fi.Size)
		}
	}
	return nil
}

// ReadManifest reads and checks the manifest of the bundle folder dir without verifying
// the files; use LoadDir or Registry.Load for that. It returns an error wrapping
// ErrUnknownFormat for a format version other than FormatVersion, checked before any
// other field is interpreted (Prometheus tsdb readMetaFile).
func ReadManifest(dir string) (*Manifest, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return m, nil
}

// readManifest is ReadManifest with errors that name the file but lack the package
// prefix, for callers that add their own context.
func readManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	var head struct {
		FormatVersion int `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrInvalidManifest, err)
	}
	if head.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s: %w %d (this build reads %d)",
			path, ErrUnknownFormat, head.FormatVersion, FormatVersion)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrInvalidManifest, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// encode returns the manifest as indented JSON. Map keys come out sorted, so the same
// manifest always gives the same bytes.
func (m *Manifest) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "\t")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
