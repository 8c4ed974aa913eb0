package modelset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/models/gbm"
	"github.com/sqpredict/sqpredict/models/logistic"
	"github.com/sqpredict/sqpredict/models/ngboost"
	"github.com/sqpredict/sqpredict/registry"
)

// ErrBundle is a bundle whose models cannot be loaded: a missing or malformed model
// file, columns that do not match the feature schema, or a manifest whose extra keys
// make no sense.
var ErrBundle = errors.New("modelset: bad bundle")

// Bundle file names.
const (
	FileSuccess            = "success.logistic.json"
	FileConflict           = "conflict.logistic.json"
	FileBuildTime          = "buildtime.ngboost.json"
	FileSuccessGBM         = "success.gbm.txt"
	FileConflictGBM        = "conflict.gbm.txt"
	FileBuildTimeLogNormal = "buildtime.ngboost-lognormal.json"
	FileDevTable           = "devtable.json"
	FileFeatures           = "features.json"
	FileMetrics            = "metrics.json"
)

// Model names, as they appear in metric keys: the champions ModelLogistic (success and
// conflict) and ModelNGBoost (build time), the challengers ModelGBM and
// ModelNGBoostLogNormal, and ModelTruth for the ground truth of synthetic histories.
const (
	ModelLogistic         = "logistic"
	ModelNGBoost          = "ngboost"
	ModelGBM              = "gbm"
	ModelNGBoostLogNormal = "ngboost-lognormal"
	ModelTruth            = "truth"
)

// SchemaHash returns the combined feature schema hash of a bundle: the hex SHA-256 of
// "success <hash>\nconflict <hash>\nbuildtime <hash>\n" over the features.Schema hashes
// of the three row kinds. The trainer writes it into the manifest, and a loader passes it
// to registry.Load so that a bundle trained with other feature code is refused.
func SchemaHash() string {
	h := sha256.New()
	for _, k := range []features.Kind{features.KindSuccess, features.KindConflict, features.KindBuildTime} {
		fmt.Fprintf(h, "%s %s\n", k, k.Schema().Hash())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Models are the fitted models of a bundle and its frozen developer table. The
// challengers are nil when they were not trained, and so is a champion left out of a
// partial bundle (the trainer's AllowPartial). Models are read-only once built and safe
// for concurrent use.
type Models struct {
	Success  *logistic.Model // P-succ champion
	Conflict *logistic.Model // P-conf champion
	// BuildTime is the build-time champion: the NGBoost LogNormal (FileBuildTimeLogNormal)
	// when the manifest's ExtraChampions names ModelNGBoostLogNormal, as the trainer
	// publishes it, and the NGBoost Normal (FileBuildTime) in bundles that name
	// ModelNGBoostNormal or no build-time champion (published before LogNormal became
	// the champion).
	BuildTime *BuildTimeModel
	// SuccessGBM and ConflictGBM are the challengers gbm-success and gbm-conflict.
	SuccessGBM  *gbm.Model
	ConflictGBM *gbm.Model
	// BuildTimeChallenger is the NGBoost of the other family: the challenger
	// ngboost-normal beside a LogNormal champion, ngboost-lognormal beside a Normal one.
	BuildTimeChallenger *BuildTimeModel
	// LeftOut says why each model file left out of a partial bundle, or each challenger
	// dropped by the trainer, is missing, by bundle file name (set by training; empty for
	// a loaded bundle).
	LeftOut map[string]string
	// Baselines are the fitted baselines by name (BaselinePassRate, ...); a baseline
	// whose table had no rows is absent.
	Baselines map[string]*Baseline
	// DevTable is the developer table frozen at the end of the training window; nil for
	// the models fitted for the holdout evaluation.
	DevTable *features.DevTable
	// Extra names the extra attributes the success and build-time models take after
	// their kind's features (features.Kind.SchemaWithExtra), nil when none; the manifest
	// records them (ExtraAttributes).
	Extra []string
}

// featuresFile is the JSON form of features.json.
type featuresFile struct {
	SchemaHash string          `json:"schema_hash"`
	Schemas    []featuresEntry `json:"schemas"`
}

type featuresEntry struct {
	Kind    string   `json:"kind"`
	Version int      `json:"version"`
	Hash    string   `json:"hash"`
	Names   []string `json:"names"`
}

// FeaturesJSON returns the content of FileFeatures for this build and the extra
// attributes extra (nil for none): the combined schema hash of the feature code and, per
// row kind, the schema version, hash and ordered feature names, with the extra
// attributes at the end of the success and build-time schemas (and so in their hashes).
func FeaturesJSON(extra []string) ([]byte, error) {
	f := featuresFile{SchemaHash: SchemaHash()}
	for _, k := range []features.Kind{features.KindSuccess, features.KindConflict, features.KindBuildTime} {
		s := k.SchemaWithExtra(extra)
		f.Schemas = append(f.Schemas, featuresEntry{Kind: k.String(), Version: s.Version, Hash: s.Hash(), Names: s.Names})
	}
	return json.MarshalIndent(f, "", "  ")
}

// Files returns the model files of m by bundle name, in the artifact format of each
// model package: the models, the baselines and the developer table m holds.
func (m *Models) Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	put := func(name string, write func(io.Writer) error) error {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fmt.Errorf("modelset: writing %s: %w", name, err)
		}
		out[name] = b.Bytes()
		return nil
	}
	for _, l := range []struct {
		name string
		m    *logistic.Model
	}{{FileSuccess, m.Success}, {FileConflict, m.Conflict}} {
		if l.m != nil {
			if err := put(l.name, l.m.WriteJSON); err != nil {
				return nil, err
			}
		}
	}
	for _, bt := range []*BuildTimeModel{m.BuildTime, m.BuildTimeChallenger} {
		if bt != nil {
			if err := put(bt.File(), bt.WriteJSON); err != nil {
				return nil, err
			}
		}
	}
	if hasAdjustments(m.BuildTime) || hasAdjustments(m.BuildTimeChallenger) {
		if err := put(FileBuildTimeBounds, func(w io.Writer) error { return writeBounds(w, m.BuildTime, m.BuildTimeChallenger) }); err != nil {
			return nil, err
		}
	}
	for _, g := range []struct {
		name string
		m    *gbm.Model
	}{{FileSuccessGBM, m.SuccessGBM}, {FileConflictGBM, m.ConflictGBM}} {
		if g.m != nil {
			if err := put(g.name, func(w io.Writer) error { return gbm.WriteLightGBM(w, g.m) }); err != nil {
				return nil, err
			}
		}
	}
	for _, name := range BaselineNames() {
		if b := m.Baselines[name]; b != nil {
			if err := put(BaselineFile(name), b.WriteJSON); err != nil {
				return nil, err
			}
		}
	}
	if m.DevTable != nil {
		if err := put(FileDevTable, func(w io.Writer) error { return features.WriteDevTable(w, m.DevTable) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hasAdjustments reports whether m has bounds or a reference for FileBuildTimeBounds.
func hasAdjustments(m *BuildTimeModel) bool {
	return m != nil && (m.Bounds != nil || m.Relative != nil)
}

// LoadModels reads every model of the verified bundle b (from registry.Load or
// registry.LoadDir with SchemaHash) and its developer table, and checks that each model
// takes the columns of its feature schema, by name and order. The manifest's
// ExtraChampions says which NGBoost file holds the build-time champion (the LogNormal
// one when it names ModelNGBoostLogNormal, else the Normal one), and
// FileBuildTimeBounds, when present, the bounds of the NGBoost models. The challenger
// files are optional; the three champions and the developer table are required, so a partial
// bundle (the trainer's AllowPartial) is refused: a scorer needs them all. Errors wrap
// ErrBundle and name the file.
//
// A bundle whose developer table is pseudonymised (ExtraAuthorKeyID) needs its author
// key: LoadModels refuses it with an error wrapping features.ErrAuthorKey; use Load
// with LoadOptions.AuthorKey.
func LoadModels(b *registry.Bundle) (*Models, error) { return loadModels(b, LoadOptions{}) }

// LoadPartialModels is LoadModels that also accepts a partial bundle: the champions its
// manifest lists as left out (extra "left_out") are nil. Evaluate and Compare can score
// what such a bundle has; a scorer cannot serve it.
func LoadPartialModels(b *registry.Bundle) (*Models, error) {
	return loadModels(b, LoadOptions{Partial: true})
}

// LoadOptions choose how Load reads a bundle.
type LoadOptions struct {
	// Partial accepts a partial bundle, as LoadPartialModels does.
	Partial bool
	// AuthorKey is the operator's author key (features.ReadAuthorKeyFile). A bundle
	// whose developer table is pseudonymised needs the key it was made with, and its
	// table then hashes the authors it is asked about the same way; nil means none,
	// which only bundles with authors in clear accept. A bundle in clear ignores it.
	AuthorKey *features.AuthorKey
}

// Load is LoadModels with options: a partial bundle (opt.Partial) and the author key
// of a pseudonymised bundle (opt.AuthorKey). Without the key, or with another one, it
// returns an error wrapping features.ErrAuthorKey that names the key id the bundle
// needs.
func Load(b *registry.Bundle, opt LoadOptions) (*Models, error) { return loadModels(b, opt) }

func loadModels(b *registry.Bundle, opt LoadOptions) (*Models, error) {
	partial := opt.Partial
	if b.Manifest.FeatureSchemaHash != SchemaHash() {
		return nil, fmt.Errorf("%w: %s: feature schema hash %s, this build has %s: %w",
			ErrBundle, b.Dir, b.Manifest.FeatureSchemaHash, SchemaHash(), registry.ErrSchemaMismatch)
	}
	extra, err := ExtraAttributeNames(b.Manifest.Extra)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Dir, err)
	}
	files := b.Files()
	var leftOut []string
	if partial {
		leftOut = strings.Split(b.Manifest.Extra[ExtraLeftOut], ",")
	}
	read := func(name string, required bool, decode func([]byte) error) error {
		if !slices.Contains(files, name) {
			if required && !slices.Contains(leftOut, name) {
				if lo := b.Manifest.Extra[ExtraLeftOut]; lo != "" {
					return fmt.Errorf("%w: %s: partial bundle without %s (left out: %s)", ErrBundle, b.Dir, name, lo)
				}
				return fmt.Errorf("%w: %s: missing %s", ErrBundle, b.Dir, name)
			}
			return nil
		}
		data, err := b.ReadFile(name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBundle, err)
		}
		if err := decode(data); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBundle, name, err)
		}
		return nil
	}
	m := &Models{Baselines: map[string]*Baseline{}, Extra: extra}
	logisticOf := func(dst **logistic.Model, kind features.Kind) func([]byte) error {
		return func(data []byte) error {
			lm, err := logistic.ReadJSON(bytes.NewReader(data))
			if err != nil {
				return err
			}
			*dst = lm
			return checkNames(lm.FeatureNames(), kind, extra)
		}
	}
	gbmOf := func(dst **gbm.Model, kind features.Kind) func([]byte) error {
		return func(data []byte) error {
			gm, err := gbm.ReadLightGBM(bytes.NewReader(data))
			if err != nil {
				return err
			}
			*dst = gm
			return checkNames(gm.FeatureNames(), kind, extra)
		}
	}
	ngboostOf := func(dst **BuildTimeModel, fam ngboost.Family) func([]byte) error {
		return func(data []byte) error {
			nm, err := ngboost.ReadJSON(bytes.NewReader(data))
			if err != nil {
				return err
			}
			if nm.Family() != fam {
				return fmt.Errorf("distribution %s, want %s", nm.Family(), fam)
			}
			if *dst, err = NewBuildTimeModel(nm, nil); err != nil {
				return err
			}
			return checkNames(nm.FeatureNames(), features.KindBuildTime, extra)
		}
	}
	champs, err := Champions(b.Manifest.Extra)
	if err != nil {
		return nil, err
	}
	normal, logNormal := &m.BuildTime, &m.BuildTimeChallenger
	switch c := champs["buildtime"]; c {
	case "", ModelNGBoostNormal:
	case ModelNGBoostLogNormal:
	default:
		return nil, fmt.Errorf("%w: %s: the manifest's build-time champion %q is not %s or %s",
			ErrBundle, b.Dir, c, ModelNGBoostNormal, ModelNGBoostLogNormal)
	}
	// A partial bundle whose LogNormal champion was left out does not name it.
	lnChampion := champs["buildtime"] == ModelNGBoostLogNormal ||
		slices.Contains(strings.Split(b.Manifest.Extra[ExtraLeftOut], ","), FileBuildTimeLogNormal)
	if lnChampion {
		normal, logNormal = logNormal, normal
	}
	steps := []struct {
		name     string
		required bool
		decode   func([]byte) error
	}{
		{FileSuccess, true, logisticOf(&m.Success, features.KindSuccess)},
		{FileConflict, true, logisticOf(&m.Conflict, features.KindConflict)},
		{FileBuildTime, !lnChampion, ngboostOf(normal, ngboost.Normal)},
		{FileBuildTimeLogNormal, lnChampion, ngboostOf(logNormal, ngboost.LogNormal)},
		{FileBuildTimeBounds, false, func(data []byte) error { return readBounds(data, m.BuildTime, m.BuildTimeChallenger) }},
		{FileSuccessGBM, false, gbmOf(&m.SuccessGBM, features.KindSuccess)},
		{FileConflictGBM, false, gbmOf(&m.ConflictGBM, features.KindConflict)},
		{FileDevTable, true, func(data []byte) error {
			t, err := features.ReadDevTable(bytes.NewReader(data))
			m.DevTable = t
			return err
		}},
	}
	for _, name := range BaselineNames() {
		steps = append(steps, struct {
			name     string
			required bool
			decode   func([]byte) error
		}{BaselineFile(name), false, func(data []byte) error {
			bl, err := ReadBaseline(bytes.NewReader(data))
			if err != nil {
				return err
			}
			if bl.Name() != name {
				return fmt.Errorf("holds baseline %s", bl.Name())
			}
			m.Baselines[name] = bl
			return checkNames(bl.names, bl.Kind(), extra)
		}})
	}
	for _, s := range steps {
		if err := read(s.name, s.required, s.decode); err != nil {
			return nil, err
		}
	}
	if m.DevTable != nil {
		if id := b.Manifest.Extra[ExtraAuthorKeyID]; id != m.DevTable.AuthorKeyID() {
			return nil, fmt.Errorf("%w: %s: the manifest's %s is %q, %s says %q", ErrBundle, b.Dir, ExtraAuthorKeyID, id, FileDevTable, m.DevTable.AuthorKeyID())
		}
		t, err := m.DevTable.WithAuthorKey(opt.AuthorKey)
		if err != nil {
			return nil, fmt.Errorf("modelset: %s: %s: %w", b.Dir, FileDevTable, err)
		}
		m.DevTable = t
	}
	return m, nil
}

// checkNames reports whether a model's input columns are those of kind's schema with
// the bundle's extra attributes.
func checkNames(names []string, kind features.Kind, extra []string) error {
	want := kind.SchemaWithExtra(extra).Names
	if !slices.Equal(names, want) {
		if got, err := features.ExtraOf(kind, names); err == nil && kind.TakesExtra() {
			return fmt.Errorf("model columns do not match the %s feature schema: the model takes the extra attributes [%s], the manifest's %s lists [%s]",
				kind, strings.Join(got, " "), ExtraAttributes, strings.Join(extra, " "))
		}
		return fmt.Errorf("model columns do not match the %s feature schema (%d columns, schema has %d)", kind, len(names), len(want))
	}
	return nil
}

// Predictions are the outputs of a bundle's models on the rows of the three tables.
// Challenger slices are nil when the model is absent.
type Predictions struct {
	Success, SuccessGBM []float64 // P(success) per success row
	Conflict            []float64 // P(conflict) per conflict row
	ConflictGBM         []float64 // the gbm-conflict challenger's P(conflict) per conflict row
	// BuildTime and BuildTimeChallenger are the predictive distributions of the
	// build-time champion and challenger per build-time row; BuildTimeChallengerName
	// names the challenger (ModelNGBoostNormal or ModelNGBoostLogNormal).
	BuildTime, BuildTimeChallenger eval.Predictive
	BuildTimeChallengerName        string
	// Baselines holds the classification baselines' probabilities (P(success) per
	// success row, P(conflict) per conflict row) and BaselineBuildTime the build-time
	// baselines' distributions, by baseline name.
	Baselines         map[string][]float64
	BaselineBuildTime map[string]eval.Predictive
}

// Predict runs every model of m on its table; a table without rows, or a model m lacks,
// gives empty outputs. Tables whose extra attributes are not m.Extra are given m's
// (features.Table.WithExtra: missing attributes NaN).
func (m *Models) Predict(success, conflict, buildtime *features.Table) *Predictions {
	// The tables of another history may have other extra attributes than the models.
	success, buildtime = success.WithExtra(m.Extra), buildtime.WithExtra(m.Extra)
	p := &Predictions{Baselines: map[string][]float64{}, BaselineBuildTime: map[string]eval.Predictive{}}
	for name, b := range m.Baselines {
		switch b.Kind() {
		case features.KindSuccess:
			if success.NRows() > 0 {
				p.Baselines[name] = b.Probabilities(success)
			}
		case features.KindConflict:
			if conflict.NRows() > 0 {
				p.Baselines[name] = b.Probabilities(conflict)
			}
		case features.KindBuildTime:
			if buildtime.NRows() > 0 {
				p.BaselineBuildTime[name] = b.Predictive(buildtime)
			}
		}
	}
	if x := success.Dense(); x != nil {
		if m.Success != nil {
			p.Success = m.Success.Predict(nil, x)
		}
		if m.SuccessGBM != nil {
			p.SuccessGBM = m.SuccessGBM.Predict(nil, x)
		}
	}
	if x := conflict.Dense(); x != nil {
		if m.Conflict != nil {
			p.Conflict = m.Conflict.Predict(nil, x)
		}
		if m.ConflictGBM != nil {
			p.ConflictGBM = m.ConflictGBM.Predict(nil, x)
		}
	}
	if x := buildtime.Dense(); x != nil {
		if m.BuildTime != nil {
			p.BuildTime = predictive(m.BuildTime, x)
		}
		if m.BuildTimeChallenger != nil {
			p.BuildTimeChallenger = predictive(m.BuildTimeChallenger, x)
			p.BuildTimeChallengerName = m.BuildTimeChallenger.Name()
		}
	}
	return p
}

// predictive returns the NGBoost distributions of the rows of x in eval's form.
func predictive(m *BuildTimeModel, x mat.Matrix) eval.Predictive {
	r, _ := x.Dims()
	params := m.PredictParams(nil, x)
	p := eval.Predictive{Family: eval.FamilyNormal, Mu: make([]float64, r), Sigma: make([]float64, r)}
	if m.Family() == ngboost.LogNormal {
		p.Family = eval.FamilyLogNormal
	}
	for i := range r {
		p.Mu[i] = params[2*i]
		p.Sigma[i] = math.Exp(params[2*i+1])
	}
	return p
}
