package registry

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadManifest checks that ReadManifest never panics and that a manifest it accepts
// survives a write and a second read unchanged.
func FuzzReadManifest(f *testing.F) {
	m := testManifest()
	m.FormatVersion, m.Repo, m.Version = FormatVersion, testRepo, "20261121T094000Z-000001"
	m.Files = map[string]FileInfo{"a/b.json": {SHA256: sha256Hex("x"), Size: 1}}
	valid, err := m.encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(bytes.Replace(valid, []byte(`"format_version": 1`), []byte(`"format_version": 2`), 1))
	f.Add([]byte(`{"format_version": 1}`))
	f.Add([]byte(`{"format_version": 1, "repo": "x", "version": "20261121T094000Z-000001",
		"feature_schema_hash": "h", "files": {"../x": {"sha256": "", "size": -1}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ManifestName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m1, err := ReadManifest(dir)
		if err != nil {
			return
		}
		enc1, err := m1.encode()
		if err != nil {
			t.Fatalf("encoding an accepted manifest: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestName), enc1, 0o644); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadManifest(dir)
		if err != nil {
			t.Fatalf("rereading a written manifest: %v\n%s", err, enc1)
		}
		enc2, err := m2.encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Errorf("manifest changed on a round trip:\n%s\n%s", enc1, enc2)
		}
	})
}
