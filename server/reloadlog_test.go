package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
)

// TestReloadFailureLog checks the log of a failed load: with no bundle of the role
// loaded (predictd started without its author key) it says none is loaded and names
// the fix, not "keeping the current one"; with one loaded it says that one is kept.
func TestReloadFailureLog(t *testing.T) {
	var buf bytes.Buffer
	models := &Models{}
	fail := fmt.Errorf("devtable.json: %w: give that key with --author-key-file", features.ErrAuthorKey)
	r := &Reloader{Models: models, Log: slog.New(slog.NewTextHandler(&buf, nil)),
		Load: func(registry.Role, string) (*Model, error) { return nil, fail }}
	if err := r.Reload(registry.RoleChampion, "v1"); !errors.Is(err, features.ErrAuthorKey) {
		t.Fatalf("Reload = %v, want the load error", err)
	}
	out := buf.String()
	if strings.Contains(out, "keeping the current one") || !strings.Contains(out, "no champion bundle is loaded") || !strings.Contains(out, "--author-key-file") {
		t.Errorf("first failed load logged %q, want no bundle loaded and the author key fix", out)
	}
	buf.Reset()
	models.Set(registry.RoleChampion, &Model{Version: "v0"})
	if err := r.Reload(registry.RoleChampion, "v1"); err == nil {
		t.Fatal("Reload succeeded")
	}
	if out := buf.String(); !strings.Contains(out, "keeping the current one") || !strings.Contains(out, "current=v0") {
		t.Errorf("failed load beside v0 logged %q, want v0 kept", out)
	}
}
