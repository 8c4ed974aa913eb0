package training

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/eval/report"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/modelset"
	"github.com/sqpredict/sqpredict/registry"
)

// GateFailure is one metric that got worse than its gate allows.
type GateFailure struct {
	Metric   string  // manifest key, e.g. "success.log_loss"
	Champion float64 // the current champion's value
	New      float64 // the new bundle's value
	// Worse is how much worse the new value is (positive), in the metric's units; NaN
	// when the new value is NaN.
	Worse float64
	Gate  Gate
	// Undefined is set when the new value is NaN: the metric could not be computed on
	// the holdout (an AUC with one class, too few rows), so nothing shows the model is
	// not worse, and the gate fails whatever the champion's value.
	Undefined bool
}

// GateError is a bundle that Publish refused because metrics got worse than the current
// champion's by more than their gates allow. It wraps ErrGate.
type GateError struct {
	Repo     string
	Champion string // the champion's version
	Failures []GateFailure
}

// Error implements error.
func (e *GateError) Error() string {
	var b strings.Builder
	champ := e.Champion
	if champ == "" {
		champ = "(none)"
	}
	fmt.Fprintf(&b, "training: gate failed for %s against champion %s:", e.Repo, champ)
	for i, f := range e.Failures {
		if i > 0 {
			b.WriteByte(';')
		}
		if f.Undefined {
			fmt.Fprintf(&b, " %s cannot be computed on the holdout (NaN: one class or too few rows); widen the window or the holdout, or drop its gate", f.Metric)
			continue
		}
		fmt.Fprintf(&b, " %s is %.6g, champion %.6g: worse by %.6g", f.Metric, f.New, f.Champion, f.Worse)
		if f.Champion != 0 {
			fmt.Fprintf(&b, " (%.3g%%)", 100*f.Worse/math.Abs(f.Champion))
		}
		fmt.Fprintf(&b, ", allowed %s", f.Gate)
	}
	return b.String()
}

// Unwrap returns ErrGate.
func (e *GateError) Unwrap() error { return ErrGate }

// String describes the margins of g.
func (g Gate) String() string {
	var parts []string
	if g.MaxRel > 0 {
		parts = append(parts, strconv.FormatFloat(100*g.MaxRel, 'g', -1, 64)+"%")
	}
	if g.MaxAbs > 0 {
		parts = append(parts, strconv.FormatFloat(g.MaxAbs, 'g', -1, 64))
	}
	if len(parts) == 0 {
		return "no degradation"
	}
	return strings.Join(parts, " and ")
}

// BaselineFailure is a section whose champion does not beat the best baseline on the
// holdout.
type BaselineFailure struct {
	Metric   string  // manifest key of the champion's loss, e.g. "success.log_loss"
	Champion float64 // the champion's holdout loss
	Baseline string  // the best baseline's name
	Value    float64 // the best baseline's holdout loss
}

// BaselineError is a bundle that Publish refused because a champion does not beat the
// best baseline of its section on the holdout (Config.BaselineGate turns the check
// off or to serving the baseline). It wraps ErrGate.
type BaselineError struct {
	Repo     string
	Failures []BaselineFailure
}

// Error implements error.
func (e *BaselineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "training: baseline gate failed for %s:", e.Repo)
	for i, f := range e.Failures {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s is %.6g, baseline %s has %.6g", f.Metric, f.Champion, f.Baseline, f.Value)
	}
	b.WriteString(" (the champion must have a lower holdout loss than the best baseline; " +
		"--baseline-gate serve publishes the bundle with the baseline serving those sections, --baseline-gate off publishes it as is)")
	return b.String()
}

// Unwrap returns ErrGate.
func (e *BaselineError) Unwrap() error { return ErrGate }

// CheckBaselines returns the sections of e whose champion's holdout loss (log loss for
// success and conflict, NLL for build time) is not below the best baseline's, sorted by
// metric. A section without a champion or without a baseline is not checked.
func CheckBaselines(e *Evaluation) []BaselineFailure {
	var out []BaselineFailure
	check := func(metric string, champ float64, ok bool, section string) {
		name, loss := e.BestBaseline(section)
		if ok && name != "" && !(champ < loss) {
			out = append(out, BaselineFailure{Metric: metric, Champion: champ, Baseline: name, Value: loss})
		}
	}
	for model, c := range e.Success {
		if roleOf(model) == roleChampion {
			check("success.log_loss", c.LogLoss, true, "success")
		}
	}
	for model, c := range e.Conflict {
		if roleOf(model) == roleChampion {
			check("conflict.log_loss", c.LogLoss, true, "conflict")
		}
	}
	for model, d := range e.BuildTime {
		if roleOf(model) == roleChampion {
			check("buildtime.nll", d.NLL, true, "buildtime")
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metric < out[j].Metric })
	return out
}

// CheckGates compares the metrics of a new bundle with those of the champion's manifest
// (nil when there is no champion) and returns the gated metrics that got worse by more
// than their gate allows, sorted by key. A gated metric that the candidate has but could
// not compute (NaN) fails whatever the champion's value, with Undefined set (issue 15:
// a bundle with a NaN conflict AUC on 9 holdout rows became champion). A metric missing
// from the candidate (its model left out) or missing or NaN in the champion is not
// compared.
func CheckGates(champion, candidate map[string]float64, gates map[string]Gate) []GateFailure {
	var out []GateFailure
	for key, g := range gates {
		old, ok1 := champion[key]
		cur, ok2 := candidate[key]
		dir, ok3 := metricDirection(key)
		if ok2 && ok3 && math.IsNaN(cur) {
			if !ok1 {
				old = math.NaN()
			}
			out = append(out, GateFailure{Metric: key, Champion: old, New: cur, Worse: math.NaN(), Gate: g, Undefined: true})
			continue
		}
		if !ok1 || !ok2 || !ok3 || math.IsNaN(old) {
			continue
		}
		worse := cur - old
		if dir == eval.HigherIsBetter {
			worse = old - cur
		}
		fail := worse > 0 && g.MaxAbs == 0 && g.MaxRel == 0
		if g.MaxAbs > 0 && worse > g.MaxAbs {
			fail = true
		}
		if g.MaxRel > 0 && worse > g.MaxRel*math.Abs(old) {
			fail = true
		}
		if fail {
			out = append(out, GateFailure{Metric: key, Champion: old, New: cur, Worse: worse, Gate: g})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metric < out[j].Metric })
	return out
}

// ExtraHistoryRepo is the manifest extra key holding the repository name as the history
// spells it, which RegistryName may have changed.
const ExtraHistoryRepo = "history_repo"

// RegistryName returns the registry's name for the history repository repo: repo with
// every character other than [A-Za-z0-9._-] replaced by '_' and a leading '.' by '_'
// ("gradle/gradle" becomes "gradle_gradle"). The manifest keeps the original under
// ExtraHistoryRepo.
func RegistryName(repo string) string {
	b := []byte(repo)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok || (i == 0 && c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}

// ExtraInputFingerprint is the manifest extra key of Result.InputFingerprint: what the
// bundle was trained from, so that a scheduled run on unchanged inputs can skip
// publishing (LastFingerprint).
const ExtraInputFingerprint = "input_fingerprint"

// InputFingerprint combines the fingerprint of a history's data (datasets.Fingerprint)
// with cfg, as JSON (AsOf, Repo and every other field but Log), the feature schema hash,
// the VCS revision of the running binary and the id of cfg's AuthorKey into the
// fingerprint of a training run's inputs: two runs with the same one train the same
// bundle, and a new trainer build or another key retrains.
func InputFingerprint(data string, cfg Config) (string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("training: encoding the config: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "data %s\nschema %s\nrevision %s\nconfig %d\n", data, SchemaHash(), registry.VCSRevision(), len(b))
	h.Write(b)
	if cfg.AuthorKey != nil {
		// The key is not in the JSON; another key makes another bundle.
		fmt.Fprintf(h, "\nauthor_key_id %s\n", cfg.AuthorKey.ID())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// LastFingerprint returns the newest version of repo (as RegistryName spells it) in
// reg and its manifest's ExtraInputFingerprint; "" and "" when the repository has no
// version.
func LastFingerprint(reg *registry.Registry, repo string) (version, fingerprint string, err error) {
	name := RegistryName(repo)
	vs, err := reg.List(name)
	if errors.Is(err, registry.ErrNotFound) || err == nil && len(vs) == 0 {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("training: versions of %s: %w", repo, err)
	}
	v := vs[len(vs)-1]
	m, err := reg.Manifest(name, v)
	if err != nil {
		return "", "", fmt.Errorf("training: %w", err)
	}
	return v, m.Extra[ExtraInputFingerprint], nil
}

// ExtraConflictLeftOut and ExtraConflictPrior are the manifest extra keys of a bundle
// without a P-conf model: why it has none, and the P-conf (Config.ConflictPrior) a
// scorer of the bundle uses for overlapping pairs in its speculation math. They are
// modelset's, which the scorer reads.
const (
	ExtraConflictLeftOut = modelset.ExtraConflictLeftOut
	ExtraConflictPrior   = modelset.ExtraConflictPrior
)

// ExtraServedBaselines is the manifest extra key naming, as "section=baseline" pairs
// separated by spaces (e.g. "conflict=constant-rate"), the sections whose scorer model is
// a baseline because the champion did not beat it (Config.BaselineGate
// BaselineGateServe).
const ExtraServedBaselines = modelset.ExtraServedBaselines

// ServedBaselines returns the sections of a manifest's ExtraServedBaselines with the
// baseline each serves: "success", "conflict" or "buildtime" to a baseline name
// (modelset.ServedBaselines; errors also wrap ErrBundle).
func ServedBaselines(extra map[string]string) (map[string]string, error) {
	m, err := modelset.ServedBaselines(extra)
	return m, bundleErr(err)
}

// Publish refuses a bundle without a model, holdout rows or a finite holdout score
// (checkServable), checks that each champion of res beats the best baseline of its
// section on the holdout (see Config.BaselineGate; by default a *BaselineError names the
// baseline that won), then checks res against the gates of res.Config and the current
// champion of its repository (under RegistryName(res.Repo)); a gated metric that is NaN
// fails even without a champion. It then writes res into reg as a new version, whose
// report names it, makes that version the champion and keeps the newest Config.Retain
// versions. A refusal publishes nothing, keeps the report with the reason (RejectedDir)
// and returns a *RejectedError wrapping the *GateError, *BaselineError or ErrGate error.
// A champion that cannot be loaded (another feature schema, a bad checksum) is logged
// and not compared with.
func Publish(ctx context.Context, reg *registry.Registry, res *Result) (string, error) {
	cfg := res.Config
	log := cfg.log()
	metrics := res.Metrics()
	name := RegistryName(res.Repo)
	// The version is chosen first so that the report can name it.
	version, err := reg.NextVersion(name, cfg.TrainedAt)
	if err != nil {
		return "", fmt.Errorf("training: %w", err)
	}
	ev := *res.Holdout
	ev.Report.Title = fmt.Sprintf("sqpredict bundle %s %s", name, version)
	reject := func(err error) error { return rejected(reg, name, version, res, &ev, cfg.retain(), err) }
	if err := checkServable(res, metrics); err != nil {
		return "", reject(err)
	}
	var served []string
	if f := CheckBaselines(res.Holdout); len(f) > 0 {
		switch cfg.BaselineGate {
		case BaselineGateOff:
			log.Warn("champions do not beat the best baselines; publishing them anyway", "repo", res.Repo, "failures", fmt.Sprint(f))
		case BaselineGateServe:
			for _, x := range f {
				served = append(served, x.Metric[:strings.IndexByte(x.Metric, '.')]+"="+x.Baseline)
			}
			log.Warn("champions do not beat the best baselines; the bundle serves the baselines", "repo", res.Repo, "served", strings.Join(served, " "))
		default:
			return "", reject(&BaselineError{Repo: res.Repo, Failures: f})
		}
	}
	// Without a loadable champion only the undefined metrics can fail their gates.
	var champMetrics map[string]float64
	var champ string
	if c, err := reg.Champion(name); err == nil {
		b, err := reg.Load(name, c, SchemaHash())
		if err != nil {
			log.Warn("champion not loadable; publishing without comparing to it", "repo", res.Repo, "champion", c, "err", err)
		} else {
			champ, champMetrics = c, b.Manifest.Metrics
		}
	} else if !errors.Is(err, registry.ErrNoPointer) && !errors.Is(err, registry.ErrNotFound) {
		return "", fmt.Errorf("training: reading the champion of %s: %w", res.Repo, err)
	}
	if f := CheckGates(champMetrics, metrics, cfg.gates()); len(f) > 0 {
		return "", reject(&GateError{Repo: res.Repo, Champion: champ, Failures: f})
	}

	finite := map[string]float64{}
	for k, v := range metrics {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			finite[k] = v
		}
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("training: encoding the config: %w", err)
	}
	trainedAt := cfg.TrainedAt
	if trainedAt.IsZero() {
		trainedAt = time.Now()
	}
	m := registry.Manifest{
		TrainedAt:            trainedAt.UTC().Truncate(time.Second),
		Window:               res.Window,
		FeatureSchemaHash:    SchemaHash(),
		FeatureSchemaVersion: features.SchemaVersion,
		Metrics:              finite,
		Extra: map[string]string{
			"seed":           strconv.FormatUint(cfg.Seed, 10),
			"config":         string(cfgJSON),
			"holdout_cut":    res.Cut.Format(time.RFC3339Nano),
			"champions":      modelset.ChampionsText(res.Models),
			"challengers":    strings.Join(cfg.Challengers, ","),
			"best_baselines": bestBaselinesText(res.Holdout),
			"train_rows":     rowsText(res.TrainRows),
			"window_rows":    rowsText(res.Rows),
			"report":         report.HTMLFile,
			"metrics_file":   FileMetrics,
			ExtraHistoryRepo: res.Repo,
		},
	}
	var left []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{FileSuccess, res.Models.Success != nil}, {FileConflict, res.Models.Conflict != nil}, {FileBuildTimeLogNormal, res.Models.BuildTime != nil}} {
		if !f.ok {
			left = append(left, f.name)
		}
	}
	if len(left) > 0 {
		m.Extra[ExtraLeftOut] = strings.Join(left, ",")
	}
	if d := droppedText(res.Models); d != "" {
		m.Extra[ExtraDroppedChallengers] = d
	}
	if res.Models.Conflict == nil {
		m.Extra[ExtraConflictLeftOut] = res.Models.LeftOut[FileConflict]
		m.Extra[ExtraConflictPrior] = strconv.FormatFloat(cfg.conflictPrior(), 'g', -1, 64)
	}
	if len(served) > 0 {
		m.Extra[ExtraServedBaselines] = strings.Join(served, " ")
	}
	if res.InputFingerprint != "" {
		m.Extra[ExtraInputFingerprint] = res.InputFingerprint
	}
	if len(res.Models.Extra) > 0 {
		m.Extra[modelset.ExtraAttributes] = strings.Join(res.Models.Extra, ",")
	}
	if dt := res.Models.DevTable; dt != nil && dt.AuthorKeyID() != "" {
		m.Extra[modelset.ExtraAuthorKeyID] = dt.AuthorKeyID()
	}
	write := func(dir string) error { return res.writeFiles(dir, &ev) }
	version, err = reg.Publish(ctx, name, write, m, registry.PublishOptions{Champion: true, At: cfg.TrainedAt, Version: version})
	if err != nil {
		return version, err
	}
	log.Info("published", "repo", name, "version", version)
	if removed, err := reg.Retain(name, cfg.retain()); err != nil {
		log.Warn("retention failed", "repo", name, "err", err)
	} else if len(removed) > 0 {
		log.Info("retention removed versions", "repo", name, "removed", strings.Join(removed, ","))
	}
	return version, nil
}

// checkServable refuses, with an error wrapping ErrGate, a result that must never become
// the current bundle: one without any model, without a holdout row in any section, or
// without a single finite holdout score (counts such as success.n are not scores). Nothing would show such a bundle works (issue
// 15: a real-history repository published an empty bundle as current).
func checkServable(res *Result, metrics map[string]float64) error {
	if res.Models == nil || res.Models.Success == nil && res.Models.Conflict == nil && res.Models.BuildTime == nil {
		return fmt.Errorf("%w: %s: the bundle has no model (every table was left out)", ErrGate, res.Repo)
	}
	if res.Holdout == nil || len(res.Holdout.Success) == 0 && len(res.Holdout.Conflict) == 0 && len(res.Holdout.BuildTime) == 0 {
		return fmt.Errorf("%w: %s: no holdout rows were scored, so the bundle is unevaluated; widen the window or the holdout", ErrGate, res.Repo)
	}
	for k, v := range metrics {
		if _, scored := metricDirection(k); scored && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return nil // row counts do not count: only a score shows the models work
		}
	}
	return fmt.Errorf("%w: %s: every holdout metric is undefined (NaN)", ErrGate, res.Repo)
}

// ExtraDroppedChallengers is the manifest extra key saying which requested challengers
// the bundle lacks and why, as "file: reason" entries separated by "; ": a challenger
// whose fit failed, or whose outputs were out of range on the holdout, is dropped
// without failing the champions.
const ExtraDroppedChallengers = "dropped_challengers"

// challengerFiles are the bundle files of the challengers.
var challengerFiles = []string{FileSuccessGBM, FileConflictGBM, FileBuildTime}

// droppedText lists the challengers m.LeftOut names, in challengerFiles order.
func droppedText(m *Models) string {
	var parts []string
	for _, f := range challengerFiles {
		if why, ok := m.LeftOut[f]; ok {
			parts = append(parts, f+": "+why)
		}
	}
	return strings.Join(parts, "; ")
}

// bestBaselinesText names the best baseline of each section with one, e.g.
// "success=last-outcome buildtime=repo-lognormal".
func bestBaselinesText(e *Evaluation) string {
	var parts []string
	for _, sec := range []string{"success", "conflict", "buildtime"} {
		if n, _ := e.BestBaseline(sec); n != "" {
			parts = append(parts, sec+"="+n)
		}
	}
	return strings.Join(parts, " ")
}

func rowsText(m map[string]int) string {
	return fmt.Sprintf("success=%d conflict=%d buildtime=%d", m["success"], m["conflict"], m["buildtime"])
}

// WriteFiles writes the files of res's bundle into dir: the models, the developer
// table, features.json, metrics.json and the report (see the package documentation).
func (res *Result) WriteFiles(dir string) error { return res.writeFiles(dir, res.Holdout) }

// writeFiles is WriteFiles with the evaluation (metrics and report) e.
func (res *Result) writeFiles(dir string, e *Evaluation) error {
	files, err := res.Models.Files()
	if err != nil {
		return err
	}
	if files[FileFeatures], err = featuresJSON(res.Models.Extra); err != nil {
		return fmt.Errorf("training: encoding %s: %w", FileFeatures, err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("training: %w", err)
		}
	}
	return writeEvaluation(dir, e)
}

// RejectedDir is the folder, inside a repository's folder of the registry, that keeps
// the reports of the bundles Publish refused, one subfolder per refusal named as the
// version would have been.
const RejectedDir = "rejected"

// rejected writes the metrics and the report of a refused bundle, with the reason at
// its head, into the registry's RejectedDir of the repository, keeps the newest retain
// of them, and returns why (err, still matching errors.Is and errors.As) with where the
// report is. A failure to write is logged and does not hide err.
func rejected(reg *registry.Registry, name, version string, res *Result, ev *Evaluation, retain int, why error) error {
	log := res.Config.log()
	root := filepath.Join(reg.Dir(), name, RejectedDir)
	dir := filepath.Join(root, version)
	e := *ev
	e.Report.Title = fmt.Sprintf("sqpredict bundle %s %s: REJECTED", name, version)
	e.Report.Notice = "Rejected, not published: " + why.Error()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Warn("writing the rejected bundle's report failed", "err", err)
		return why
	}
	err := writeEvaluation(dir, &e)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "reason.txt"), []byte(why.Error()+"\n"), 0o644)
	}
	if err != nil {
		log.Warn("writing the rejected bundle's report failed", "dir", dir, "err", err)
		return why
	}
	if entries, err := os.ReadDir(root); err == nil && len(entries) > retain {
		for _, old := range entries[:len(entries)-retain] { // names sort by time
			if err := os.RemoveAll(filepath.Join(root, old.Name())); err != nil {
				log.Warn("removing an old rejected report failed", "dir", old.Name(), "err", err)
			}
		}
	}
	log.Warn("bundle rejected; its report says why", "repo", name, "report", filepath.Join(dir, report.HTMLFile))
	return &RejectedError{Err: why, Report: filepath.Join(dir, report.HTMLFile)}
}

// RejectedError is a bundle Publish refused: Err says why (a *GateError, a
// *BaselineError or an error wrapping ErrGate), and Report is the report kept for it.
type RejectedError struct {
	// Err is why the bundle was refused: a *GateError, a *BaselineError or an error
	// wrapping ErrGate.
	Err error
	// Report is the path of the report.html kept for the refused bundle, under the
	// repository's RejectedDir folder of the registry.
	Report string
}

// Error implements error.
func (e *RejectedError) Error() string { return e.Err.Error() + " (report: " + e.Report + ")" }

// Unwrap returns Err.
func (e *RejectedError) Unwrap() error { return e.Err }

// writeEvaluation writes metrics.json and the report of e into dir.
func writeEvaluation(dir string, e *Evaluation) error {
	if err := report.WriteMetricsJSON(filepath.Join(dir, FileMetrics), e.Metrics()); err != nil {
		return fmt.Errorf("training: %w", err)
	}
	if err := report.Write(dir, e.Report); err != nil {
		return fmt.Errorf("training: writing the report: %w", err)
	}
	return nil
}
