package modelset

import (
	"fmt"
	"strings"

	"github.com/sqpredict/sqpredict/features"
)

// Manifest extra keys a loader reads (registry.Manifest.Extra).
const (
	// ExtraLeftOut lists, comma-separated, the champion model files a partial bundle
	// (the trainer's AllowPartial) does not have.
	ExtraLeftOut = "left_out"
	// ExtraConflictLeftOut and ExtraConflictPrior belong to a bundle without a P-conf
	// model: why it has none, and the P-conf (the trainer's ConflictPrior) a scorer of
	// the bundle uses for overlapping pairs in its speculation math.
	ExtraConflictLeftOut = "conflict_left_out"
	ExtraConflictPrior   = "conflict_prior"
	// ExtraServedBaselines names, as "section=baseline" pairs separated by spaces (e.g.
	// "conflict=constant-rate"), the sections whose scorer model is a baseline because
	// the champion did not beat it (the trainer's BaselineGateServe).
	ExtraServedBaselines = "served_baselines"
	// ExtraChampions names the champion model of each section as "section=model" pairs
	// separated by spaces, e.g. "success=logistic conflict=logistic
	// buildtime=ngboost-lognormal". A build-time champion ModelNGBoostLogNormal makes the
	// bundle serve its LogNormal NGBoost (FileBuildTimeLogNormal); ModelNGBoostNormal, or
	// no build-time pair (bundles published before LogNormal became the champion), its
	// Normal one (FileBuildTime).
	ExtraChampions = "champions"
	// ExtraAuthorKeyID is the id (features.AuthorKey.ID) of the operator's author key
	// under which the developer table's authors are pseudonymised; absent when they are
	// in clear. Only the id is recorded: a loader needs the key itself (LoadOptions).
	ExtraAuthorKeyID = "author_key_id"
	// ExtraAttributes names, comma-separated, the extra attributes (source columns
	// outside the schema, datasets.Extra) that the success and build-time models take
	// after their kind's features (features.Kind.SchemaWithExtra); absent when they take
	// none. A scorer gives a change's attributes to the models by these names.
	ExtraAttributes = "extra_attributes"
)

// ExtraAttributeNames returns the extra attributes a manifest's extra map lists
// (ExtraAttributes), nil when none. A name datasets.CheckExtraName refuses (one that
// leaks the label) is an error wrapping ErrBundle.
func ExtraAttributeNames(extra map[string]string) ([]string, error) {
	v := extra[ExtraAttributes]
	if v == "" {
		return nil, nil
	}
	names := strings.Split(v, ",")
	// ExtraOf checks every name (datasets.CheckExtraName) as the column of a schema.
	if _, err := features.ExtraOf(features.KindSuccess, features.KindSuccess.SchemaWithExtra(names).Names); err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %w", ErrBundle, ExtraAttributes, err)
	}
	return names, nil
}

// Challenger model names, as the trainer's --challengers and predictd's
// --challenger-models spell them (training.ChallengerGBMSuccess and
// training.ChallengerGBMConflict and training.ChallengerNGBoostLogNormal have the same
// values).
const (
	// ChallengerGBMSuccess is the gradient-boosted trees of success, FileSuccessGBM.
	ChallengerGBMSuccess = "gbm-success"
	// ChallengerGBMConflict is the gradient-boosted trees of conflicts (P-conf),
	// FileConflictGBM.
	ChallengerGBMConflict = "gbm-conflict"
	// ChallengerNGBoostLogNormal is the NGBoost LogNormal of build time,
	// FileBuildTimeLogNormal, the challenger of bundles whose build-time champion is
	// Normal (published before LogNormal became the champion).
	ChallengerNGBoostLogNormal = "ngboost-lognormal"
	// ChallengerNGBoostNormal is the NGBoost Normal of build time, FileBuildTime, the
	// challenger beside a LogNormal champion.
	ChallengerNGBoostNormal = "ngboost-normal"
)

// ModelNGBoostNormal is the name of the Normal NGBoost build-time model in
// ExtraChampions, in metric keys and in the names of served models.
const ModelNGBoostNormal = "ngboost-normal"

// ServedBaselines returns the sections of a manifest's ExtraServedBaselines with the
// baseline each serves: "success", "conflict" or "buildtime" to a baseline name. A pair
// that is not section=baseline of that section is an error wrapping ErrBundle.
func ServedBaselines(extra map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for f := range strings.FieldsSeq(extra[ExtraServedBaselines]) {
		sec, name, ok := strings.Cut(f, "=")
		kind, known := baselineKind[name]
		if !ok || !known || kind.String() != sec {
			return nil, fmt.Errorf("%w: manifest %s: %q is not section=baseline of that section", ErrBundle, ExtraServedBaselines, f)
		}
		out[sec] = name
	}
	return out, nil
}

// Champions returns the sections of a manifest's ExtraChampions with the model each
// names. A pair that is not section=model is an error wrapping ErrBundle.
func Champions(extra map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for f := range strings.FieldsSeq(extra[ExtraChampions]) {
		sec, name, ok := strings.Cut(f, "=")
		if !ok || sec == "" || name == "" {
			return nil, fmt.Errorf("%w: manifest %s: %q is not section=model", ErrBundle, ExtraChampions, f)
		}
		out[sec] = name
	}
	return out, nil
}

// ChampionsText returns the ExtraChampions value naming the champion models m holds,
// e.g. "success=logistic conflict=logistic buildtime=ngboost-lognormal"; a champion
// left out of a partial bundle is not named.
func ChampionsText(m *Models) string {
	var f []string
	if m.Success != nil {
		f = append(f, "success="+ModelLogistic)
	}
	if m.Conflict != nil {
		f = append(f, "conflict="+ModelLogistic)
	}
	if m.BuildTime != nil {
		f = append(f, "buildtime="+m.BuildTime.Name())
	}
	return strings.Join(f, " ")
}
