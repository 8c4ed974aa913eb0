package bundleload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
)

// Options are the settings of bundle loading that come from the operator rather than
// the bundle. The zero value loads bundles whose authors are in clear.
type Options struct {
	// AuthorKey is the operator's author key (features.ReadAuthorKeyFile): a bundle whose
	// developer table is pseudonymised needs the key it was trained with, and its scorer
	// then hashes the incoming authors the same way before looking them up. A bundle is
	// refused without it, or with another key, with an error naming the key id it needs.
	AuthorKey *features.AuthorKey
}

// Loader returns a server.LoadFunc that loads versions of repo from reg: registry.Load
// checks the manifest, every checksum and the feature schema hash against
// modelset.SchemaHash (the code of this binary), modelset.Load reads every model and
// checks its columns (and the author key, see Options), and scoring.NewScorer checks
// the models' widths. Any failure leaves the server with the model it has. Loading goes
// through modelset, not training, so that predictd does not link the trainer.
func Loader(reg *registry.Registry, repo string) server.LoadFunc { return Options{}.Loader(reg, repo) }

// Loader is the package's Loader with the options o.
func (o Options) Loader(reg *registry.Registry, repo string) server.LoadFunc {
	return o.ChallengerLoader(reg, repo, nil)
}

// FromBundle builds the server model of the verified bundle b. A section the manifest
// serves with a baseline (modelset.ExtraServedBaselines) is scored by that baseline. A
// bundle without a P-conf model (left out because its history had no conflict labels)
// gets a scorer without one (scoring.NewScorerNoConflict), whose conflict prior is the
// manifest's modelset.ExtraConflictPrior; a bundle without a success or build-time
// model cannot be served.
func FromBundle(b *registry.Bundle, role registry.Role) (*server.Model, error) {
	return Options{}.fromBundle(b, role, nil)
}

// FromBundle is the package's FromBundle with the options o.
func (o Options) FromBundle(b *registry.Bundle, role registry.Role) (*server.Model, error) {
	return o.fromBundle(b, role, nil)
}

// FromBundleChallengers is FromBundle with the bundle's own challenger models named in
// challengers (ParseChallengerModels) serving their sections in place of the champions:
// modelset.ChallengerGBMSuccess the success section, modelset.ChallengerGBMConflict the
// conflict (P-conf) section, modelset.ChallengerNGBoostNormal or
// modelset.ChallengerNGBoostLogNormal (whichever is not the champion) the build-time
// section. The other sections are served as by FromBundle. A
// bundle trained without a named challenger is refused, naming it.
func FromBundleChallengers(b *registry.Bundle, role registry.Role, challengers []string) (*server.Model, error) {
	return Options{}.fromBundle(b, role, challengers)
}

// ChallengerLoader returns a server.LoadFunc like Loader's, except that the challenger
// role loads the version's own challenger models named in challengers
// (FromBundleChallengers): with server.Reloader.ChallengerFollowsChampion, the champion
// bundle's challenger models are served, routed or in shadow, beside its champions.
func ChallengerLoader(reg *registry.Registry, repo string, challengers []string) server.LoadFunc {
	return Options{}.ChallengerLoader(reg, repo, challengers)
}

// ChallengerLoader is the package's ChallengerLoader with the options o.
func (o Options) ChallengerLoader(reg *registry.Registry, repo string, challengers []string) server.LoadFunc {
	return func(role registry.Role, version string) (*server.Model, error) {
		b, err := reg.Load(repo, version, modelset.SchemaHash())
		if err != nil {
			return nil, err
		}
		if role == registry.RoleChallenger {
			return o.fromBundle(b, role, challengers)
		}
		return o.fromBundle(b, role, nil)
	}
}

// ParseChallengerModels splits a comma-separated list of challenger model names
// (modelset.ChallengerGBMSuccess, modelset.ChallengerGBMConflict,
// modelset.ChallengerNGBoostNormal beside a LogNormal
// build-time champion, modelset.ChallengerNGBoostLogNormal beside a Normal one), as predictd's
// --challenger-models gives it, dropping repeats. An unknown name is an error naming it.
func ParseChallengerModels(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "":
			continue
		case modelset.ChallengerGBMSuccess, modelset.ChallengerGBMConflict, modelset.ChallengerNGBoostNormal, modelset.ChallengerNGBoostLogNormal:
		default:
			return nil, fmt.Errorf("bundleload: challenger model %q is not %s, %s, %s or %s", f,
				modelset.ChallengerGBMSuccess, modelset.ChallengerGBMConflict, modelset.ChallengerNGBoostNormal, modelset.ChallengerNGBoostLogNormal)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (o Options) fromBundle(b *registry.Bundle, role registry.Role, challengers []string) (*server.Model, error) {
	ms, err := modelset.Load(b, modelset.LoadOptions{Partial: true, AuthorKey: o.AuthorKey})
	if err != nil {
		return nil, err
	}
	served, err := modelset.ServedBaselines(b.Manifest.Extra)
	if err != nil {
		return nil, err
	}
	var success, conflict scoring.Predictor
	var buildTime scoring.DistPredictor
	names := map[string]string{"success": "none", "conflict": "none", "buildtime": "none"}
	family := scoring.BuildNormal
	if ms.Success != nil {
		success, names["success"] = ms.Success, modelset.ModelLogistic
	}
	if ms.Conflict != nil {
		conflict, names["conflict"] = ms.Conflict, modelset.ModelLogistic
	}
	// modelset put the manifest's build-time champion (ExtraChampions) in BuildTime.
	if ms.BuildTime != nil {
		buildTime, names["buildtime"], family = ms.BuildTime, ms.BuildTime.Name(), familyOf(ms.BuildTime)
	}
	for sec, name := range served {
		bl := ms.Baselines[name]
		if bl == nil {
			return nil, fmt.Errorf("bundleload: %s: the manifest serves %s with baseline %s, which the bundle lacks", b.Dir, sec, name)
		}
		names[sec] = "baseline:" + name
		switch sec {
		case "success":
			success = bl
		case "conflict":
			conflict = bl
		case "buildtime":
			// Both build-time baselines predict a LogNormal (modelset.Baseline.LogNormal).
			buildTime, family = bl, scoring.BuildLogNormal
		}
	}
	for _, c := range challengers {
		switch c {
		case modelset.ChallengerGBMSuccess:
			if ms.SuccessGBM == nil {
				return nil, fmt.Errorf("bundleload: %s: %w: no challenger model %s (%s; train with --challengers %s)",
					b.Dir, scoring.ErrNoModel, c, modelset.FileSuccessGBM, c)
			}
			success, names["success"] = ms.SuccessGBM, modelset.ModelGBM
		case modelset.ChallengerGBMConflict:
			if ms.ConflictGBM == nil {
				return nil, fmt.Errorf("bundleload: %s: %w: no challenger model %s (%s; train with --challengers %s)",
					b.Dir, scoring.ErrNoModel, c, modelset.FileConflictGBM, c)
			}
			conflict, names["conflict"] = ms.ConflictGBM, modelset.ModelGBM
		case modelset.ChallengerNGBoostLogNormal, modelset.ChallengerNGBoostNormal:
			ch := ms.BuildTimeChallenger
			if ch == nil || ch.Name() != c {
				return nil, fmt.Errorf("bundleload: %s: %w: no challenger model %s (the build-time champion is %s; train with --challengers %s)",
					b.Dir, scoring.ErrNoModel, c, names["buildtime"], c)
			}
			buildTime, names["buildtime"], family = ch, ch.Name(), familyOf(ch)
		default:
			return nil, fmt.Errorf("bundleload: unknown challenger model %q", c)
		}
	}
	var sc *scoring.Scorer
	switch {
	case success == nil || buildTime == nil:
		return nil, fmt.Errorf("bundleload: %s: %w: a scorer needs the success and build-time models (left out: %s)",
			b.Dir, scoring.ErrNoModel, b.Manifest.Extra[modelset.ExtraLeftOut])
	case conflict == nil:
		prior, perr := strconv.ParseFloat(b.Manifest.Extra[modelset.ExtraConflictPrior], 64)
		if perr != nil {
			return nil, fmt.Errorf("bundleload: %s: no P-conf model and no valid %s in the manifest: %w", b.Dir, modelset.ExtraConflictPrior, perr)
		}
		why := "the bundle has no P-conf model"
		if r := b.Manifest.Extra[modelset.ExtraConflictLeftOut]; r != "" {
			why += ": " + r
		}
		sc, err = scoring.NewScorerNoConflict(success, buildTime, ms.DevTable, why, prior)
	default:
		sc, err = scoring.NewScorer(success, conflict, buildTime, ms.DevTable)
	}
	if err != nil {
		return nil, fmt.Errorf("bundleload: %s: %w", b.Dir, err)
	}
	return &server.Model{
		Role: role, Version: b.Manifest.Version, Manifest: b.Manifest, Scorer: sc, LoadedAt: time.Now(),
		BuildFamily: family, Served: names,
	}, nil
}

// familyOf returns the scoring family of an NGBoost build-time model.
func familyOf(m *modelset.BuildTimeModel) scoring.BuildFamily {
	if m.Name() == modelset.ModelNGBoostLogNormal {
		return scoring.BuildLogNormal
	}
	return scoring.BuildNormal
}
