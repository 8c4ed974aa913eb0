package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPublishVersionAndAt checks PublishOptions.At and Version and NextVersion (issue 15:
// the default bundle's version is stable, and a report names its bundle's version).
func TestPublishVersionAndAt(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC)
	next, err := r.NextVersion("ios", at)
	if err != nil || next != "20260111T000000Z-000001" {
		t.Fatalf("NextVersion(empty repo) = %q, %v", next, err)
	}
	write := func(dir string) error { return os.WriteFile(filepath.Join(dir, "m.json"), []byte("{}"), 0o644) }
	m := Manifest{TrainedAt: at, Window: Window{From: at.Add(-time.Hour), To: at}, FeatureSchemaHash: "h"}
	v, err := r.Publish(context.Background(), "ios", write, m, PublishOptions{At: at})
	if err != nil || v != next {
		t.Fatalf("Publish(At) = %q, %v, want %q", v, err, next)
	}
	if next, err = r.NextVersion("ios", at); err != nil || next != "20260111T000000Z-000002" {
		t.Fatalf("NextVersion after one = %q, %v", next, err)
	}
	if v, err = r.Publish(context.Background(), "ios", write, m, PublishOptions{Version: next}); err != nil || v != next {
		t.Fatalf("Publish(Version %s) = %q, %v", next, v, err)
	}
	if _, err := r.Publish(context.Background(), "ios", write, m, PublishOptions{Version: "20250101T000000Z-000001"}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Publish(an older Version) = %v, want ErrInvalidName", err)
	}
	if _, err := r.Publish(context.Background(), "ios", write, m, PublishOptions{Version: "v1"}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Publish(Version v1) = %v, want ErrInvalidName", err)
	}
}
