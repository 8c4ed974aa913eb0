package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bundleFiles is the content of the bundle the verification tests damage.
var bundleFiles = map[string]string{
	"success.json":      `{"w":[0.5,-1]}`,
	"models/build.json": `{"mu":1}`,
}

func TestLoadChecksum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		damage      func(dir string) error
		wantFile    string
		wantProblem string
		wantDetail  string
	}{
		{name: "altered same size", damage: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "success.json"), []byte(`{"w":[0.5,-2]}`), 0o644)
		}, wantFile: "success.json", wantProblem: ProblemAltered,
			wantDetail: "sha256 " + sha256Hex(`{"w":[0.5,-2]}`) + ", want " + sha256Hex(`{"w":[0.5,-1]}`)},
		{name: "altered size", damage: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "models", "build.json"), []byte(`{}`), 0o644)
		}, wantFile: "models/build.json", wantProblem: ProblemAltered, wantDetail: "size 2, want 8"},
		{name: "missing", damage: func(dir string) error {
			return os.Remove(filepath.Join(dir, "models", "build.json"))
		}, wantFile: "models/build.json", wantProblem: ProblemMissing},
		{name: "extra", damage: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
		}, wantFile: "notes.txt", wantProblem: ProblemExtra},
		{name: "extra nested", damage: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "models", "old.json"), nil, 0o644)
		}, wantFile: "models/old.json", wantProblem: ProblemExtra},
		{name: "replaced by folder", damage: func(dir string) error {
			p := filepath.Join(dir, "success.json")
			return errors.Join(os.Remove(p), os.Mkdir(p, 0o755))
		}, wantFile: "success.json", wantProblem: ProblemAltered, wantDetail: "not a regular file"},
		{name: "replaced by symlink", damage: func(dir string) error {
			p := filepath.Join(dir, "success.json")
			return errors.Join(os.Remove(p), os.Symlink("models/build.json", p))
		}, wantFile: "success.json", wantProblem: ProblemAltered, wantDetail: "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t)
			v := publish(t, r, bundleFiles, PublishOptions{})
			if err := tc.damage(r.versionDir(testRepo, v)); err != nil {
				t.Fatal(err)
			}
			_, err := r.Load(testRepo, v, testSchema)
			var ce *ChecksumError
			if !errors.Is(err, ErrChecksum) || !errors.As(err, &ce) {
				t.Fatalf("Load = %v, want a *ChecksumError", err)
			}
			if ce.File != tc.wantFile || ce.Problem != tc.wantProblem || !strings.Contains(ce.Detail, tc.wantDetail) {
				t.Errorf("Load error = %+v, want file %q %s with detail %q", ce, tc.wantFile, tc.wantProblem, tc.wantDetail)
			}
			if msg := err.Error(); !strings.Contains(msg, `"`+tc.wantFile+`"`) || !strings.HasPrefix(msg, "registry: ") {
				t.Errorf("Load error %q does not name file %q", msg, tc.wantFile)
			}
		})
	}
}

// A file changed after Load is caught by ReadFile.
func TestReadFileRechecks(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	v := publish(t, r, bundleFiles, PublishOptions{})
	b, err := r.Load(testRepo, v, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := b.Path("success.json")
	if err := os.WriteFile(path, []byte(`{"w":[9.5,-1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *ChecksumError
	if _, err := b.ReadFile("success.json"); !errors.As(err, &ce) || ce.File != "success.json" {
		t.Errorf("ReadFile(altered) error = %v, want a *ChecksumError for success.json", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReadFile("success.json"); !errors.As(err, &ce) || ce.Problem != ProblemMissing {
		t.Errorf("ReadFile(removed) error = %v, want a missing *ChecksumError", err)
	}
}

func TestLoadSchemaMismatch(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	v := publish(t, r, bundleFiles, PublishOptions{})
	_, err := r.Load(testRepo, v, "schema-hash-b")
	if !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("Load with another schema: error = %v, want ErrSchemaMismatch", err)
	}
	for _, hash := range []string{testSchema, "schema-hash-b"} {
		if !strings.Contains(err.Error(), hash) {
			t.Errorf("Load error %q does not name hash %q", err, hash)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Load with an empty schema hash did not panic")
		}
	}()
	r.Load(testRepo, v, "")
}

// rewriteManifest edits the JSON manifest of a published version as generic JSON, the
// way a newer or broken writer could have produced it.
func rewriteManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadBadManifest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(m map[string]any)
		raw     string // replaces the manifest when set
		wantErr error
		wantMsg string
	}{
		{name: "future format", edit: func(m map[string]any) {
			m["format_version"] = 2
			m["files"] = "a different shape"
		}, wantErr: ErrUnknownFormat, wantMsg: "format version 2"},
		{name: "no format", edit: func(m map[string]any) { delete(m, "format_version") },
			wantErr: ErrUnknownFormat, wantMsg: "format version 0"},
		{name: "not JSON", raw: "{", wantErr: ErrInvalidManifest},
		{name: "other repo", edit: func(m map[string]any) { m["repo"] = "android" },
			wantErr: ErrInvalidManifest, wantMsg: `"android"`},
		{name: "escaping path", edit: func(m map[string]any) {
			m["files"].(map[string]any)["../../x"] = map[string]any{"sha256": strings.Repeat("0", 64)}
		}, wantErr: ErrInvalidManifest, wantMsg: `"../../x"`},
		{name: "short sha256", edit: func(m map[string]any) {
			m["files"].(map[string]any)["success.json"] = map[string]any{"sha256": "abc", "size": 14}
		}, wantErr: ErrInvalidManifest, wantMsg: `"success.json"`},
		{name: "empty schema hash", edit: func(m map[string]any) { m["feature_schema_hash"] = "" },
			wantErr: ErrInvalidManifest, wantMsg: "feature_schema_hash"},
		{name: "missing manifest", raw: "-", wantErr: os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t)
			v := publish(t, r, bundleFiles, PublishOptions{})
			dir := r.versionDir(testRepo, v)
			switch {
			case tc.raw == "-":
				if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil {
					t.Fatal(err)
				}
			case tc.raw != "":
				if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(tc.raw), 0o644); err != nil {
					t.Fatal(err)
				}
			default:
				rewriteManifest(t, dir, tc.edit)
			}
			_, err := r.Load(testRepo, v, testSchema)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Load = %v, want %v mentioning %q", err, tc.wantErr, tc.wantMsg)
			}
			if _, err := ReadManifest(dir); tc.name != "other repo" && !errors.Is(err, tc.wantErr) {
				t.Errorf("ReadManifest = %v, want %v", err, tc.wantErr)
			}
			if err := r.SetChampion(testRepo, v); !errors.Is(err, tc.wantErr) {
				t.Errorf("SetChampion = %v, want %v", err, tc.wantErr)
			}
			if _, err := r.Champion(testRepo); !errors.Is(err, ErrNoPointer) {
				t.Errorf("Champion after refused SetChampion: error = %v, want ErrNoPointer", err)
			}
		})
	}
}

// The manifest is deterministic: the same bundle published twice differs only in the
// version name.
func TestManifestDeterministic(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t)
	var got [2][]byte
	var versions [2]string
	for i := range got {
		versions[i] = publish(t, r, bundleFiles, PublishOptions{})
		data, err := os.ReadFile(filepath.Join(r.versionDir(testRepo, versions[i]), ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		got[i] = bytes.ReplaceAll(data, []byte(versions[i]), []byte("VERSION"))
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("manifests differ beyond the version:\n%s\n%s", got[0], got[1])
	}
}
