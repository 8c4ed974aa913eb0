package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

// TestRegistryDefaultRepo checks that registry verbs default --repo to the registry's
// only repository, as predictd does, name the fix when there is none or several, and
// that a registry error is not printed with "registry:" twice.
func TestRegistryDefaultRepo(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runCmd(t, "registry", "list", "--registry", dir); err == nil || !strings.Contains(err.Error(), "holds no repository yet") {
		t.Errorf("list of an empty registry = %v, want it to say there is no repository", err)
	}
	reg, err := registry.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 2, Seed: 4, ChangesPerHour: 6})
	if err != nil {
		t.Fatal(err)
	}
	res, err := training.Train(context.Background(), h, training.Config{AsOf: h.Changes[len(h.Changes)-1].SubmittedAt.Add(time.Hour),
		Window: training.Duration(30 * 24 * time.Hour), Seed: 1, BaselineGate: training.BaselineGateOff,
		BuildTime: training.NGBoostParams{NEstimators: 10}, Gates: map[string]training.Gate{}})
	if err != nil {
		t.Fatal(err)
	}
	version, err := training.Publish(context.Background(), reg, res)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, "registry", "list", "--registry", dir)
	if err != nil || !hasRow(out, version, "champion") {
		t.Errorf("list without --repo = %v:\n%s\nwant the only repository's champion %s", err, out, version)
	}
	_, _, err = runCmd(t, "registry", "show", "nonexist", "--registry", dir)
	if err == nil || strings.Contains(err.Error(), "registry: registry:") || !strings.HasPrefix(err.Error(), "registry: ") {
		t.Errorf("show nonexist = %v, want one registry: prefix", err)
	}
	// A second repository: --repo is needed, and the error lists both.
	h2, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 2, Seed: 5, ChangesPerHour: 6, Repo: "other"})
	if err != nil {
		t.Fatal(err)
	}
	res2, err := training.Train(context.Background(), h2, training.Config{AsOf: h2.Changes[len(h2.Changes)-1].SubmittedAt.Add(time.Hour),
		Window: training.Duration(30 * 24 * time.Hour), Seed: 1, BaselineGate: training.BaselineGateOff,
		BuildTime: training.NGBoostParams{NEstimators: 10}, Gates: map[string]training.Gate{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := training.Publish(context.Background(), reg, res2); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCmd(t, "registry", "list", "--registry", dir)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--repo") || !strings.Contains(err.Error(), "go, other") {
		t.Errorf("list of two repositories without --repo = %v, want a usage error naming --repo and both", err)
	}

	// train's --as-of latest on a history of both names --repo and lists them.
	both := *h
	both.Changes = append(both.Changes[:len(both.Changes):len(both.Changes)], h2.Changes...)
	_, err = training.LatestSubmission(&both, "")
	err = repoHint(err)
	if !errors.Is(err, training.ErrRepo) || !strings.Contains(err.Error(), "--repo") || !strings.Contains(err.Error(), "go, other") {
		t.Errorf("LatestSubmission of two repositories with the hint = %v, want --repo and both names", err)
	}
}
