package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/internal/defaultbundle"
	"github.com/sqpredict/sqpredict/registry"
)

// threeVersions publishes the built-in bundle three times into a new registry (the last
// is the champion) and returns the registry folder, the repository and the versions.
func threeVersions(t *testing.T) (dir, repo string, versions []string) {
	t.Helper()
	dir = t.TempDir()
	reg, err := registry.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, v, err := defaultbundle.Install(context.Background(), reg)
		if err != nil {
			t.Fatal(err)
		}
		repo = r
		versions = append(versions, v)
	}
	return dir, repo, versions
}

func TestRegistryCommand(t *testing.T) {
	dir, repo, vs := threeVersions(t)
	reg, err := registry.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--registry", dir, "--repo", repo}

	out, _, err := runCmd(t, append([]string{"registry", "list"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if !strings.Contains(out, v) {
			t.Errorf("list does not name %s:\n%s", v, out)
		}
	}
	if !hasRow(out, vs[2], "champion") {
		t.Errorf("list does not mark %s as champion:\n%s", vs[2], out)
	}

	// Corrupt the middle version: rollback must skip it and land on the first.
	bad := filepath.Join(dir, repo, "versions", vs[1], "devtable.json")
	if err := os.WriteFile(bad, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCmd(t, append([]string{"registry", "rollback"}, flags...)...)
	if err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got, _ := reg.Champion(repo); got != vs[0] {
		t.Fatalf("after rollback champion is %s, want %s (output %q)", got, vs[0], out)
	}
	// Nothing older than the first version: rollback fails and leaves the pointer.
	if _, _, err := runCmd(t, append([]string{"registry", "rollback"}, flags...)...); err == nil || !strings.Contains(err.Error(), "older than its champion") {
		t.Fatalf("rollback from the oldest version: err %v", err)
	}

	// Promoting the corrupt version is refused; the good one is accepted.
	if _, _, err := runCmd(t, append([]string{"registry", "promote", vs[1]}, flags...)...); err == nil || !strings.Contains(err.Error(), "does not load") {
		t.Fatalf("promote of a corrupt version: err %v", err)
	}
	if _, _, err := runCmd(t, append([]string{"registry", "promote", vs[2]}, flags...)...); err != nil {
		t.Fatal(err)
	}
	if got, _ := reg.Champion(repo); got != vs[2] {
		t.Fatalf("champion %s, want %s", got, vs[2])
	}

	if _, _, err := runCmd(t, append([]string{"registry", "set-challenger", vs[0]}, flags...)...); err != nil {
		t.Fatal(err)
	}
	if got, _ := reg.Challenger(repo); got != vs[0] {
		t.Fatalf("challenger %s, want %s", got, vs[0])
	}
	out, _, err = runCmd(t, append([]string{"registry", "show", vs[0]}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Role     string            `json:"role"`
		Loads    string            `json:"loads"`
		Manifest registry.Manifest `json:"manifest"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("show output is not JSON: %v\n%s", err, out)
	}
	if shown.Role != "challenger" || shown.Loads != "yes" || shown.Manifest.Version != vs[0] {
		t.Errorf("show: role %q loads %q version %q", shown.Role, shown.Loads, shown.Manifest.Version)
	}
	if _, _, err := runCmd(t, append([]string{"registry", "clear-challenger"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Challenger(repo); err == nil {
		t.Fatal("challenger still set after clear-challenger")
	}
}

func TestRegistryCommandUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"registry"}, "a verb is required"},
		{[]string{"registry", "frobnicate"}, `unknown verb "frobnicate"`},
		{[]string{"registry", "promote"}, "--registry and VERSION are required"},
		{[]string{"registry", "list", "v1", "--registry", "x", "--repo", "ios"}, "list takes no version"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want it to contain %q", tc.args, err, tc.want)
		}
	}
}

// hasRow reports whether a line of out starts with the fields first and second.
func hasRow(out, first, second string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == first && f[1] == second {
			return true
		}
	}
	return false
}
