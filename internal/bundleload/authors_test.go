package bundleload_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/internal/bundleload"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/training"
)

// TestPseudonymisedBundle trains the same bundle twice, with authors in clear and
// pseudonymised under an operator key: the pseudonymised bundle names no author, records
// only the key id, is owner-only on disk (files 0600, folders 0700), is refused without
// the key and with another one (naming the key id it needs), and with the key predicts
// exactly what the bundle in clear predicts for every change of the history, authors
// known, unknown and empty alike.
func TestPseudonymisedBundle(t *testing.T) {
	h := goHistory(t, 2, 6)
	key, err := features.NewAuthorKey([]byte("the operator's 32-byte secret..."))
	if err != nil {
		t.Fatal(err)
	}
	asOf := lastSubmission(h).Add(time.Hour)
	publish := func(k *features.AuthorKey) *registry.Bundle {
		t.Helper()
		res, err := training.Train(context.Background(), h, training.Config{AsOf: asOf, Window: training.Duration(30 * 24 * time.Hour),
			Seed: 1, BaselineGate: training.BaselineGateOff, BuildTime: training.NGBoostParams{NEstimators: 20}, AuthorKey: k})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := registry.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		v, err := training.Publish(context.Background(), reg, res)
		if err != nil {
			t.Fatal(err)
		}
		return mustLoad(t, reg, training.RegistryName(res.Repo), v)
	}
	clear, keyed := publish(nil), publish(key)

	if id := keyed.Manifest.Extra[modelset.ExtraAuthorKeyID]; id != key.ID() {
		t.Errorf("manifest %s = %q, want %s", modelset.ExtraAuthorKeyID, id, key.ID())
	}
	if _, ok := clear.Manifest.Extra[modelset.ExtraAuthorKeyID]; ok {
		t.Error("the bundle in clear records an author key id")
	}
	dev, err := keyed.ReadFile(modelset.FileDevTable)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for i := range h.Changes {
		if a := h.Changes[i].Author; a != "" && bytes.Contains(dev, []byte(`"`+a+`"`)) {
			named++
		}
	}
	if named > 0 || !bytes.Contains(dev, []byte(key.ID())) {
		t.Errorf("the pseudonymised developer table names %d authors; holds the key id: %v", named, bytes.Contains(dev, []byte(key.ID())))
	}
	err = filepath.WalkDir(filepath.Dir(keyed.Dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	other, _ := features.NewAuthorKey([]byte("someone else's 32-byte secret..."))
	for _, tc := range []struct {
		name string
		key  *features.AuthorKey
		ids  []string
	}{{"no key", nil, []string{key.ID()}}, {"another key", other, []string{key.ID(), other.ID()}}} {
		_, err := bundleload.Options{AuthorKey: tc.key}.FromBundle(keyed, registry.RoleChampion)
		if !errors.Is(err, features.ErrAuthorKey) {
			t.Errorf("%s: %v, want ErrAuthorKey", tc.name, err)
			continue
		}
		for _, id := range tc.ids {
			if !strings.Contains(err.Error(), id) {
				t.Errorf("%s: %q does not name key id %s", tc.name, err, id)
			}
		}
	}
	if _, err := training.LoadModels(keyed); !errors.Is(err, features.ErrAuthorKey) {
		t.Errorf("training.LoadModels without a key: %v, want ErrAuthorKey", err)
	}

	mc, err := bundleload.FromBundle(clear, registry.RoleChampion)
	if err != nil {
		t.Fatal(err)
	}
	mk, err := bundleload.Options{AuthorKey: key}.FromBundle(keyed, registry.RoleChampion)
	if err != nil {
		t.Fatal(err)
	}
	// A bundle in clear ignores a key.
	if _, err := (bundleload.Options{AuthorKey: other}).FromBundle(clear, registry.RoleChampion); err != nil {
		t.Errorf("a bundle in clear with a key: %v", err)
	}
	var succ []scoring.SuccessInput
	var builds []scoring.BuildInput
	var pairs []scoring.PairInput
	for i := range h.Changes {
		c := h.Changes[i]
		switch i % 7 {
		case 0:
			c.Author = "" // unknown
		case 1:
			c.Author = "never-seen-" + c.Author
		}
		succ = append(succ, scoring.SuccessInput{Change: &c})
		builds = append(builds, scoring.BuildInput{Change: &c})
		if i > 0 {
			pairs = append(pairs, scoring.PairInput{Ahead: succ[i-1].Change, Behind: &c})
		}
	}
	if a, b := mc.Scorer.PredictSuccess(nil, succ), mk.Scorer.PredictSuccess(nil, succ); !slices.Equal(a, b) {
		t.Error("P-succ differs between the bundle in clear and the pseudonymised one")
	}
	if a, b := mc.Scorer.PredictConflict(nil, pairs), mk.Scorer.PredictConflict(nil, pairs); !slices.Equal(a, b) {
		t.Error("P-conf differs between the bundle in clear and the pseudonymised one")
	}
	if a, b := mc.Scorer.PredictBuildTime(nil, builds), mk.Scorer.PredictBuildTime(nil, builds); !slices.Equal(a, b) {
		t.Error("build times differ between the bundle in clear and the pseudonymised one")
	}
	// The check has teeth: the keyed table read in clear (no hashing) predicts otherwise.
	ms, err := modelset.Load(keyed, modelset.LoadOptions{AuthorKey: key})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := features.ReadDevTable(bytes.NewReader(dev))
	if err != nil {
		t.Fatal(err)
	}
	sRaw, err := scoring.NewScorer(ms.Success, ms.Conflict, ms.BuildTime, raw)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(sRaw.PredictSuccess(nil, succ), mk.Scorer.PredictSuccess(nil, succ)) {
		t.Error("unhashed lookups into the pseudonymised table predict the same: authors play no part in this test")
	}
}
