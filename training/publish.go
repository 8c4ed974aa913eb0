package training

import (
	"context"
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
	"github.com/sqpredict/sqpredict/registry"
)

// GateFailure is one metric that got worse than its gate allows.
type GateFailure struct {
	Metric   string  // manifest key, e.g. "success.log_loss"
	Champion float64 // the current champion's value
	New      float64 // the new bundle's value
	// Worse is how much worse the new value is (positive), in the metric's units.
	Worse float64
	Gate  Gate
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
	fmt.Fprintf(&b, "training: gate failed for %s against champion %s:", e.Repo, e.Champion)
	for i, f := range e.Failures {
		if i > 0 {
			b.WriteByte(';')
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

// CheckGates compares the metrics of a new bundle with those of the champion's manifest
// and returns the gated metrics that got worse by more than their gate allows, sorted by
// key. A metric missing or NaN on either side is not checked.
func CheckGates(champion, candidate map[string]float64, gates map[string]Gate) []GateFailure {
	var out []GateFailure
	for key, g := range gates {
		old, ok1 := champion[key]
		cur, ok2 := candidate[key]
		dir, ok3 := metricDirection(key)
		if !ok1 || !ok2 || !ok3 || math.IsNaN(old) || math.IsNaN(cur) {
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

// Publish checks res against the gates of res.Config and the current champion of its
// repository (under RegistryName(res.Repo)), writes it into reg as a new version, makes that version the champion and
// keeps the newest Config.Retain versions. A failed gate returns a *GateError and
// publishes nothing. A champion that cannot be loaded (another feature schema, a bad
// checksum) is logged and not gated against.
func Publish(ctx context.Context, reg *registry.Registry, res *Result) (string, error) {
	cfg := res.Config
	log := cfg.log()
	metrics := res.Metrics()
	name := RegistryName(res.Repo)
	if champ, err := reg.Champion(name); err == nil {
		b, err := reg.Load(name, champ, SchemaHash())
		if err != nil {
			log.Warn("champion not loadable; publishing without gates", "repo", res.Repo, "champion", champ, "err", err)
		} else if f := CheckGates(b.Manifest.Metrics, metrics, cfg.gates()); len(f) > 0 {
			return "", &GateError{Repo: res.Repo, Champion: champ, Failures: f}
		}
	} else if !errors.Is(err, registry.ErrNoPointer) && !errors.Is(err, registry.ErrNotFound) {
		return "", fmt.Errorf("training: reading the champion of %s: %w", res.Repo, err)
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
	m := registry.Manifest{
		TrainedAt:            time.Now().UTC().Truncate(time.Second),
		Window:               res.Window,
		FeatureSchemaHash:    SchemaHash(),
		FeatureSchemaVersion: features.SchemaVersion,
		Metrics:              finite,
		Extra: map[string]string{
			"seed":           strconv.FormatUint(cfg.Seed, 10),
			"config":         string(cfgJSON),
			"holdout_cut":    res.Cut.Format(time.RFC3339Nano),
			"champions":      "success=logistic conflict=logistic buildtime=ngboost-normal",
			"challengers":    strings.Join(cfg.Challengers, ","),
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
	}{{FileSuccess, res.Models.Success != nil}, {FileConflict, res.Models.Conflict != nil}, {FileBuildTime, res.Models.BuildTime != nil}} {
		if !f.ok {
			left = append(left, f.name)
		}
	}
	if len(left) > 0 {
		m.Extra[ExtraLeftOut] = strings.Join(left, ",")
	}
	version, err := reg.Publish(ctx, name, func(dir string) error { return res.WriteFiles(dir) }, m,
		registry.PublishOptions{Champion: true})
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

func rowsText(m map[string]int) string {
	return fmt.Sprintf("success=%d conflict=%d buildtime=%d", m["success"], m["conflict"], m["buildtime"])
}

// WriteFiles writes the files of res's bundle into dir: the models, the developer
// table, features.json, metrics.json and the report (see the package documentation).
func (res *Result) WriteFiles(dir string) error {
	files, err := res.Models.files()
	if err != nil {
		return err
	}
	if files[FileFeatures], err = featuresJSON(); err != nil {
		return fmt.Errorf("training: encoding %s: %w", FileFeatures, err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("training: %w", err)
		}
	}
	return writeEvaluation(dir, res.Holdout)
}

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
