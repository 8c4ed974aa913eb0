package training

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/eval"
	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
)

// minRows is the fewest success rows a window must give: with fewer, a 20% holdout has
// too few rows for any metric to mean something.
const minRows = 20

// Stage is one timed step of Train.
type Stage struct {
	Name     string
	Duration time.Duration
}

// Result is a trained bundle not yet published: the models refitted on the whole
// window, the holdout evaluation of the models fitted before the cut, and what the
// manifest needs.
type Result struct {
	// Repo is the repository trained, Window the span of history [From, To).
	Repo   string
	Window registry.Window
	// Cut is the holdout cut: rows submitted at or after it were evaluated on.
	Cut time.Time
	// Models are the models fitted on every row of the window, with the developer table
	// frozen at Window.To: what Publish writes.
	Models *Models
	// HoldoutModels are the same models fitted on the rows before Cut only: the ones
	// Holdout evaluates.
	HoldoutModels *Models
	// Holdout holds the metrics of HoldoutModels on the rows from Cut on.
	Holdout *Evaluation
	// Rows counts the rows of each table in the window, and TrainRows those the holdout
	// models were fitted on, by section name (success, conflict, buildtime).
	Rows, TrainRows map[string]int
	// Stages are the steps of Train with their durations, in order.
	Stages []Stage
	// Config is the configuration Train ran with.
	Config Config
	// InputFingerprint, when set by the caller (InputFingerprint), is written into the
	// manifest as ExtraInputFingerprint.
	InputFingerprint string
	// Notes say what the run excused in the inputs: history columns absent from every
	// change, whose features are missing in every row (checkFeatures).
	Notes []string
	// Warnings are the problems of the inputs that did not stop the run, such as a
	// history whose newest change is more than StaleAfter older than Window.To; they are
	// also logged at warning level.
	Warnings []string
}

// Metrics returns the flat holdout metrics (see the package documentation).
func (r *Result) Metrics() map[string]float64 { return r.Holdout.Metrics() }

// Repos returns the repositories of h's changes, sorted.
func Repos(h *datasets.History) []string {
	seen := map[string]bool{}
	for i := range h.Changes {
		seen[h.Changes[i].Repo] = true
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// resolveRepo returns repo if h has it, or h's only repository when repo is "".
func resolveRepo(h *datasets.History, repo string) (string, error) {
	repos := Repos(h)
	if repo == "" {
		if len(repos) != 1 {
			return "", fmt.Errorf("%w: the history has %d repositories (%s); choose one", ErrRepo, len(repos), strings.Join(repos, ", "))
		}
		return repos[0], nil
	}
	if !slices.Contains(repos, repo) {
		return "", fmt.Errorf("%w: %q is not in the history (it has %s)", ErrRepo, repo, strings.Join(repos, ", "))
	}
	return repo, nil
}

// afterFit, when set by a test, is called with every set of fitted models before they
// are checked: it plants a deliberately broken model.
var afterFit func(m *Models)

// StaleAfter is how much older than the window's end the newest change of a history may
// be before Train warns that the window holds little or no recent data.
const StaleAfter = 7 * 24 * time.Hour

// Span returns the earliest and latest submission times of repo's changes in h and how
// many there are; zero times and 0 when repo has none. repo "" means every repository.
func Span(h *datasets.History, repo string) (first, last time.Time, n int) {
	for i := range h.Changes {
		c := &h.Changes[i]
		if repo != "" && c.Repo != repo || c.SubmittedAt.IsZero() {
			continue
		}
		if n == 0 || c.SubmittedAt.Before(first) {
			first = c.SubmittedAt
		}
		if n == 0 || c.SubmittedAt.After(last) {
			last = c.SubmittedAt
		}
		n++
	}
	return first.UTC(), last.UTC(), n
}

// LatestSubmission returns the submission time of the last change of repo in h ("" means
// the only repository of h): the window end that `--as-of latest` stands for. The window
// is [From, To), so that change itself is not trained on; every change before it whose
// outcome was known by then is.
func LatestSubmission(h *datasets.History, repo string) (time.Time, error) {
	repo, err := resolveRepo(h, repo)
	if err != nil {
		return time.Time{}, err
	}
	_, last, n := Span(h, repo)
	if n == 0 {
		return time.Time{}, fmt.Errorf("%w: %s has no change with a submission time", ErrNoData, repo)
	}
	return last, nil
}

// known is the part of a history that the features are computed from, with the time
// each row's label became known.
type known struct {
	h       *datasets.History
	decided map[string]time.Time // change id -> when its outcome was known (see knownBefore)
	done    map[string]time.Time // build id -> finish time
}

// knownBefore returns the changes of repo submitted before to, with their builds that
// finished before to (or whose finish is unknown) and their pairs, the finish time of every build, and for every change the time its outcome was
// known: the later of its decided_at and the finish of its last build.
func knownBefore(h *datasets.History, repo string, to time.Time) *known {
	k := &known{h: &datasets.History{Extra: h.Extra}, decided: map[string]time.Time{}, done: map[string]time.Time{}}
	keep := map[string]bool{}
	for i := range h.Changes {
		c := &h.Changes[i]
		if c.Repo == repo && c.SubmittedAt.Before(to) {
			k.h.Changes = append(k.h.Changes, *c)
			keep[c.ChangeID] = true
			k.decided[c.ChangeID] = c.DecidedAt
		}
	}
	for i := range h.Builds {
		b := &h.Builds[i]
		if !keep[b.ChangeID] {
			continue
		}
		end := b.FinishedAt
		if end.IsZero() && !b.StartedAt.IsZero() && b.DurationS >= 0 {
			end = b.StartedAt.Add(time.Duration(b.DurationS * float64(time.Second)))
		}
		if !end.Before(to) && !end.IsZero() {
			continue // not finished at to: unknown then
		}
		k.h.Builds = append(k.h.Builds, *b)
		k.done[b.BuildID] = end
	}
	// Everything about a change is known once it is decided and its last build has
	// finished: a conflict label reads every decisive build of the behind change, and a
	// speculative build may finish after the decision.
	for i := range k.h.Builds {
		b := &k.h.Builds[i]
		if t := k.done[b.BuildID]; t.After(k.decided[b.ChangeID]) {
			k.decided[b.ChangeID] = t
		}
	}
	if h.Pairs != nil {
		k.h.Pairs = []datasets.Pair{}
		for _, p := range h.Pairs {
			if keep[p.AheadChangeID] && keep[p.BehindChangeID] {
				k.h.Pairs = append(k.h.Pairs, p)
			}
		}
	}
	return k
}

// labelTimes returns, for every row of t, when its label became known.
func (k *known) labelTimes(t *features.Table) []time.Time {
	out := make([]time.Time, t.NRows())
	for r := range out {
		switch t.Schema.Kind {
		case features.KindSuccess:
			out[r] = k.decided[t.ChangeID[r]]
		case features.KindConflict:
			a, b := k.decided[t.AheadID[r]], k.decided[t.ChangeID[r]]
			out[r] = a
			if b.After(a) {
				out[r] = b
			}
		case features.KindBuildTime:
			out[r] = k.done[t.BuildID[r]]
		}
	}
	return out
}

// rowsWhere returns the indices of t's rows for which keep is true.
func rowsWhere(n int, keep func(r int) bool) []int {
	var out []int
	for r := range n {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// subset returns the rows of t listed in rows, in that order, as a new table.
func subset(t *features.Table, rows []int) *features.Table {
	nf := t.Schema.NFeatures()
	s := &features.Table{Schema: t.Schema, X: make([]float64, 0, len(rows)*nf), Y: make([]float64, len(rows)),
		SubmittedAt: make([]time.Time, len(rows)), ChangeID: make([]string, len(rows)), Considered: len(rows)}
	if t.AheadID != nil {
		s.AheadID = make([]string, len(rows))
	}
	if t.BuildID != nil {
		s.BuildID = make([]string, len(rows))
	}
	for _, c := range t.Truth {
		s.Truth = append(s.Truth, features.Truth{Name: c.Name, Values: make([]float64, len(rows))})
	}
	for i, r := range rows {
		s.X = append(s.X, t.Row(r)...)
		s.Y[i] = t.Y[r]
		s.SubmittedAt[i] = t.SubmittedAt[r]
		s.ChangeID[i] = t.ChangeID[r]
		if t.AheadID != nil {
			s.AheadID[i] = t.AheadID[r]
		}
		if t.BuildID != nil {
			s.BuildID[i] = t.BuildID[r]
		}
		for j, c := range t.Truth {
			s.Truth[j].Values[i] = c.Values[r]
		}
	}
	return s
}

// windowTables returns the rows of ix's three tables whose change was submitted at or
// after from and whose label was known before to (see the package documentation).
func windowTables(ctx context.Context, ix *features.Index, k *known, from, to time.Time) (tables, error) {
	var all tables
	for _, kind := range []features.Kind{features.KindSuccess, features.KindConflict, features.KindBuildTime} {
		t, err := ix.Table(ctx, kind)
		if err != nil {
			return all, err
		}
		lt := k.labelTimes(t)
		t = subset(t, rowsWhere(t.NRows(), func(r int) bool {
			return !t.SubmittedAt[r].Before(from) && lt[r].Before(to)
		}))
		switch kind {
		case features.KindSuccess:
			all.success = t
		case features.KindConflict:
			all.conflict = t
		case features.KindBuildTime:
			clipDurations(t)
			all.buildtime = t
		}
	}
	a, err := abortedTable(ctx, ix, k.h)
	if err != nil {
		return all, err
	}
	lt := k.labelTimes(a)
	all.aborted = subset(a, rowsWhere(a.NRows(), func(r int) bool {
		return !a.SubmittedAt[r].Before(from) && lt[r].Before(to)
	}))
	clipDurations(all.aborted)
	return all, nil
}

// MinDuration is the shortest build time, in seconds, that the build-time tables hold:
// shorter durations (a history that rounds a build of a few hundred milliseconds to 0)
// are raised to it, because a LogNormal, the champion family, has no density at 0 and
// its log-likelihood would be -Inf.
const MinDuration = 1.0

// clipDurations raises the build-time labels of t below MinDuration to it.
func clipDurations(t *features.Table) {
	for i, y := range t.Y {
		if y < MinDuration {
			t.Y[i] = MinDuration
		}
	}
}

// allMissing returns the features of t that are missing (NaN) in every row; none when t
// has no rows.
func allMissing(t *features.Table) []string {
	if t.NRows() == 0 {
		return nil
	}
	nf := t.Schema.NFeatures()
	var out []string
	for j, name := range t.Schema.Names {
		missing := true
		for r := 0; r < t.NRows() && missing; r++ {
			missing = math.IsNaN(t.X[r*nf+j])
		}
		if missing {
			out = append(out, name)
		}
	}
	return out
}

// checkFeatures returns an ErrNoData error naming the features missing in every
// training row of some table, unless cfg.AllowMissingFeatures, when it logs them: a
// misspelled or absent history column would otherwise train a model with that feature
// imputed everywhere, without a word (issue 15). A feature whose source column is absent
// from every change of every repository of h (an import without affected targets) is
// excused with a logged note and listed in the returned notes: the history cannot have
// it, and refusing it made every real history need --allow-missing-features. A column
// the history has elsewhere but not in the window is still an error.
func checkFeatures(cfg *Config, h *datasets.History, t tables) (notes []string, err error) {
	var parts []string
	absent := map[string][]string{} // source column -> features it excuses
	var columns []string
	for _, tb := range []*features.Table{t.success, t.conflict, t.buildtime} {
		var bad []string
		for _, f := range allMissing(tb) {
			if col := absentEverywhere(h, f); col != "" {
				if absent[col] == nil {
					columns = append(columns, col)
				}
				absent[col] = append(absent[col], tb.Schema.Kind.String()+"."+f)
				continue
			}
			bad = append(bad, f)
		}
		if len(bad) > 0 {
			parts = append(parts, tb.Schema.Kind.String()+": "+strings.Join(bad, ", "))
		}
	}
	for _, col := range columns {
		n := fmt.Sprintf("the history has no %s in any change: %d features computed from it are missing in every row and carry no information (%s)",
			col, len(absent[col]), strings.Join(absent[col], ", "))
		notes = append(notes, n)
		cfg.log().Info("feature source absent from the history", "column", col, "features", len(absent[col]))
	}
	if len(parts) == 0 {
		return notes, nil
	}
	msg := strings.Join(parts, "; ")
	if cfg.AllowMissingFeatures {
		cfg.log().Warn("features missing in every training row; they carry no information", "features", msg)
		return notes, nil
	}
	return nil, fmt.Errorf("%w: features missing in every training row although the history has their columns elsewhere (%s): "+
		"check the history's column names with trainer validate, widen the window, or train anyway with --allow-missing-features "+
		"(allow_missing_features)", ErrNoData, msg)
}

// spanHint describes the submission times of a repository's changes and how to choose a
// window that holds them, for the error of a window without enough rows ending at to.
// A window that already ends at the last submission (--as-of latest) can only grow
// backwards or with more history, so the hint does not suggest --as-of latest then.
func spanHint(first, last, to time.Time, n int) string {
	if n == 0 {
		return "the repository has no change with a submission time"
	}
	if !to.Before(last) && to.Sub(last) <= time.Second {
		return fmt.Sprintf("the window already ends at the last of the history's %d changes of it (submitted from %s to %s): "+
			"train with a longer --window or on a longer history", n, first.Format(time.RFC3339), last.Format(time.RFC3339))
	}
	return fmt.Sprintf("the history's %d changes of it were submitted from %s to %s: "+
		"train with --as-of latest (the default; the last submission), an --as-of inside that span, or a longer --window",
		n, first.Format(time.RFC3339), last.Format(time.RFC3339))
}

// modelName is a bundle file name without its extension, e.g. "success.logistic".
func modelName(file string) string {
	return strings.TrimSuffix(strings.TrimSuffix(file, ".json"), ".txt")
}

// stageTimer records the stages of a run and logs each one at debug level: Result.Stages
// is the summary a caller prints.
type stageTimer struct {
	cfg    *Config
	stages []Stage
	t0     time.Time
}

func (s *stageTimer) done(name string, args ...any) {
	d := time.Since(s.t0)
	s.stages = append(s.stages, Stage{Name: name, Duration: d})
	s.cfg.log().Debug("training stage", append([]any{"stage", name, "took", d.Round(time.Millisecond)}, args...)...)
	s.t0 = time.Now()
}

// Train runs the training job on h with cfg (see the package documentation): it selects
// the repository and window, builds the three feature tables, fits the models on the
// rows before the holdout cut and evaluates them on the rows after it, refits them on the
// whole window and freezes the developer table. It logs every stage with its duration
// to cfg.Log and returns ctx's error when ctx is done.
func Train(ctx context.Context, h *datasets.History, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	repo, err := resolveRepo(h, cfg.Repo)
	if err != nil {
		return nil, err
	}
	cfg.Repo = repo
	to := cfg.AsOf
	if to.IsZero() {
		to = time.Now()
	}
	to = to.UTC()
	from := to.Add(-cfg.window())
	res := &Result{Repo: repo, Window: registry.Window{From: from, To: to}, Config: cfg, TrainRows: map[string]int{}}
	st := &stageTimer{cfg: &cfg, t0: time.Now()}
	log := cfg.log()
	log.Info("training", "repo", repo, "from", from, "to", to, "challengers", strings.Join(cfg.Challengers, ","))
	if cfg.has(ChallengerNGBoostLogNormal) {
		w := "challenger " + ChallengerNGBoostLogNormal + " is the build-time champion now; ignored (the Normal challenger is " + ChallengerNGBoostNormal + ")"
		res.Warnings = append(res.Warnings, w)
		log.Warn(w)
	}

	k := knownBefore(h, repo, to)
	st.done("select", "changes", len(k.h.Changes), "builds", len(k.h.Builds))
	ix, err := features.NewIndex(ctx, k.h)
	if err != nil {
		return nil, err
	}
	st.done("index")
	all, err := windowTables(ctx, ix, k, from, to)
	if err != nil {
		return nil, err
	}
	res.Rows = map[string]int{"success": all.success.NRows(), "conflict": all.conflict.NRows(), "buildtime": all.buildtime.NRows()}
	st.done("tables", "success", all.success.NRows(), "conflict", all.conflict.NRows(), "buildtime", all.buildtime.NRows())
	first, last, nChanges := Span(h, repo)
	if n := all.success.NRows(); n < minRows {
		return nil, fmt.Errorf("%w: %d success rows in the window %s to %s of %s, need %d; %s", ErrNoData, n,
			from.Format(time.RFC3339), to.Format(time.RFC3339), repo, minRows, spanHint(first, last, to, nChanges))
	}
	if nChanges > 0 && to.Sub(last) > StaleAfter {
		w := fmt.Sprintf("the history's newest change of %s was submitted %s, %s before the window's end %s: "+
			"the models learn nothing of the last %s; use --as-of latest (as_of unset) or append newer history",
			repo, last.Format(time.RFC3339), to.Sub(last).Round(time.Hour), to.Format(time.RFC3339), to.Sub(last).Round(time.Hour))
		res.Warnings = append(res.Warnings, w)
		log.Warn("STALE HISTORY: "+w, "repo", repo, "newest_change", last, "as_of", to)
	}

	// The cut comes from the submission times of every change in the window, not from the
	// success rows: which changes get a success row depends on their builds' outcomes, and
	// a cut that moved with outcomes would let later outcomes choose what is held out.
	var submitted []time.Time
	for i := range k.h.Changes {
		if t := k.h.Changes[i].SubmittedAt; !t.Before(from) {
			submitted = append(submitted, t)
		}
	}
	_, test := eval.HoldoutByTime(submitted, cfg.holdout())
	res.Cut = submitted[test[0]]
	var train, hold tables
	// before returns the rows of t submitted before the cut whose label was known by then.
	before := func(t *features.Table) *features.Table {
		lt := k.labelTimes(t)
		return subset(t, rowsWhere(t.NRows(), func(r int) bool {
			return t.SubmittedAt[r].Before(res.Cut) && lt[r].Before(res.Cut)
		}))
	}
	split := func(t *features.Table) (tr, te *features.Table) {
		tr = before(t)
		te = subset(t, rowsWhere(t.NRows(), func(r int) bool { return !t.SubmittedAt[r].Before(res.Cut) }))
		res.TrainRows[t.Schema.Kind.String()] = tr.NRows()
		return tr, te
	}
	train.success, hold.success = split(all.success)
	train.conflict, hold.conflict = split(all.conflict)
	train.buildtime, hold.buildtime = split(all.buildtime)
	train.aborted = before(all.aborted) // fitting only: the holdout scores finished builds
	notes, err := checkFeatures(&cfg, h, train)
	if err != nil {
		return nil, err
	}
	res.Notes = notes
	st.done("split", "cut", res.Cut, "train_success", train.success.NRows(), "holdout_success", hold.success.NRows())

	if res.HoldoutModels, err = fitAll(ctx, train, &cfg, func(name string) { st.done("fit-holdout " + modelName(name)) }); err != nil {
		return nil, fmt.Errorf("training: holdout fit: %w", err)
	}
	if afterFit != nil {
		afterFit(res.HoldoutModels)
	}
	// Models that answer out of range on the holdout are never published: a champion
	// stops the run, a challenger is dropped (issue 14 item 9).
	if _, err := screenOutputs(res.HoldoutModels, hold, &cfg); err != nil {
		return nil, fmt.Errorf("training: holdout models: %w", err)
	}
	title := "sqpredict bundle: " + repo
	sub := fmt.Sprintf("window %s to %s; holdout from %s (%d success, %d conflict, %d build-time rows)",
		from.Format(time.RFC3339), to.Format(time.RFC3339), res.Cut.Format(time.RFC3339),
		hold.success.NRows(), hold.conflict.NRows(), hold.buildtime.NRows())
	if res.Holdout, err = evaluateModels(hold, res.HoldoutModels, title, sub); err != nil {
		return nil, err
	}
	st.done("evaluate")

	if res.Models, err = fitAll(ctx, all, &cfg, func(name string) { st.done("refit " + modelName(name)) }); err != nil {
		return nil, fmt.Errorf("training: refit: %w", err)
	}
	if afterFit != nil {
		afterFit(res.Models)
	}
	// The published models are checked on the same holdout rows (which they were fitted
	// on too). A challenger dropped here leaves the holdout evaluation as well.
	for _, f := range challengerFiles {
		if _, ok := res.HoldoutModels.LeftOut[f]; ok {
			dropFiles(res.Models, []string{f}, res.HoldoutModels.LeftOut)
		}
	}
	dropped, err := screenOutputs(res.Models, hold, &cfg)
	if err != nil {
		return nil, fmt.Errorf("training: published models: %w", err)
	}
	if len(dropped) > 0 {
		dropFiles(res.HoldoutModels, dropped, res.Models.LeftOut)
		if res.Holdout, err = evaluateModels(hold, res.HoldoutModels, title, sub); err != nil {
			return nil, err
		}
	}
	res.Models.DevTable = ix.DevTable(to)
	if cfg.AuthorKey != nil {
		if res.Models.DevTable, err = res.Models.DevTable.Pseudonymise(cfg.AuthorKey); err != nil {
			return nil, fmt.Errorf("training: %w", err)
		}
	}
	st.done("devtable", "authors", res.Models.DevTable.NAuthors(), "author_key_id", res.Models.DevTable.AuthorKeyID())
	res.Stages = st.stages
	return res, nil
}
