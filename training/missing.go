package training

import (
	"math"
	"strings"

	"github.com/sqpredict/sqpredict/datasets"
)

// sourceAttr reports whether one change of a history has a value of a source attribute.
type sourceAttr struct {
	name string // the history column, as datasets and IMPORT.md name it
	has  func(c *datasets.Change) bool
}

// num is a sourceAttr of a numeric change column, present when not NaN.
func num(name string, v func(c *datasets.Change) float64) sourceAttr {
	return sourceAttr{name, func(c *datasets.Change) bool { return !math.IsNaN(v(c)) }}
}

var (
	attrTargetsChanged = num("targets_changed", func(c *datasets.Change) float64 { return c.TargetsChanged })
	attrLinesAdded     = num("lines_added", func(c *datasets.Change) float64 { return c.LinesAdded })
	attrLinesRemoved   = num("lines_removed", func(c *datasets.Change) float64 { return c.LinesRemoved })
	attrHunks          = num("hunks", func(c *datasets.Change) float64 { return c.Hunks })
	attrFilesChanged   = num("files_changed", func(c *datasets.Change) float64 { return c.FilesChanged })
	attrChecksPassed   = num("initial_checks_passed", func(c *datasets.Change) float64 { return c.InitialChecksPassed })
	attrChecksFailed   = num("initial_checks_failed", func(c *datasets.Change) float64 { return c.InitialChecksFailed })
	attrTenure         = num("author_tenure_days", func(c *datasets.Change) float64 { return c.AuthorTenureDays })
	attrAffected       = sourceAttr{"affected_targets", func(c *datasets.Change) bool { return c.AffectedTargets != nil }}
	attrAuthor         = sourceAttr{"author", func(c *datasets.Change) bool { return c.Author != "" }}
	attrRevision       = sourceAttr{"revision_id", func(c *datasets.Change) bool { return c.RevisionID != "" }}
)

// featureSources maps a feature (without the conflict rows' "ahead_"/"behind_" prefix)
// to the history columns it is computed from, as features/row.go computes it: the
// feature is missing in every row when any of them is absent from every change. A
// feature not listed (the speculation state, the repository's recency, durations) comes
// from what every history has, and is never excused.
var featureSources = map[string][]sourceAttr{
	"targets_changed":             {attrTargetsChanged},
	"log1p_targets_changed":       {attrTargetsChanged},
	"targets_added":               {num("targets_added", func(c *datasets.Change) float64 { return c.TargetsAdded })},
	"targets_removed":             {num("targets_removed", func(c *datasets.Change) float64 { return c.TargetsRemoved })},
	"lines_added":                 {attrLinesAdded},
	"log1p_lines_added":           {attrLinesAdded},
	"lines_removed":               {attrLinesRemoved},
	"log1p_lines_removed":         {attrLinesRemoved},
	"log1p_lines_changed":         {attrLinesAdded, attrLinesRemoved},
	"hunks":                       {attrHunks},
	"log1p_hunks":                 {attrHunks},
	"files_changed":               {attrFilesChanged},
	"log1p_files_changed":         {attrFilesChanged},
	"commits":                     {num("commits", func(c *datasets.Change) float64 { return c.Commits })},
	"binaries_added":              {num("binaries_added", func(c *datasets.Change) float64 { return c.BinariesAdded })},
	"binaries_removed":            {num("binaries_removed", func(c *datasets.Change) float64 { return c.BinariesRemoved })},
	"initial_checks_passed":       {attrChecksPassed},
	"initial_checks_failed":       {attrChecksFailed},
	"initial_checks_failed_share": {attrChecksPassed, attrChecksFailed},
	"affected_targets":            {attrAffected},
	"log1p_affected_targets":      {attrAffected},
	"revision_submissions":        {num("revision_submissions", func(c *datasets.Change) float64 { return c.RevisionSubmissions })},
	"revision_has_revert_plan": {{"revision_has_revert_plan", func(c *datasets.Change) bool {
		return c.RevisionHasRevertPlan != datasets.FlagUnknown
	}}},
	"revision_has_test_plan": {{"revision_has_test_plan", func(c *datasets.Change) bool {
		return c.RevisionHasTestPlan != datasets.FlagUnknown
	}}},
	"author_tenure_days":       {attrTenure},
	"log1p_author_tenure_days": {attrTenure},
	"author_level":             {num("author_level", func(c *datasets.Change) float64 { return c.AuthorLevel })},
	"dev_prior_changes":        {attrAuthor},
	"log1p_dev_prior_changes":  {attrAuthor},
	"same_author":              {attrAuthor},
	"author_last_failed":       {attrAuthor},
	"author_fail_rate_10":      {attrAuthor},
	"revision_last_failed":     {attrRevision},
	"targets_fail_rate_20":     {attrAffected},
	"conflicts_count":          {attrAffected},
	"overlap_targets":          {attrAffected},
	"jaccard_targets":          {attrAffected},
	"log1p_overlap_targets":    {attrAffected},
	"containment_targets":      {attrAffected},
	"overlap_share_ahead":      {attrAffected},
	"overlap_share_behind":     {attrAffected},
	"same_area":                {attrAffected},
}

// absentEverywhere returns, for a feature name, the source column it is computed from
// that no change of h (of any repository) has, or "" when every source is present
// somewhere or the feature has no listed source.
func absentEverywhere(h *datasets.History, feature string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(feature, "ahead_"), "behind_")
	sources := featureSources[name]
	if attr, ok := strings.CutPrefix(name, datasets.ExtraPrefix); ok {
		// An extra attribute is its own source column.
		sources = []sourceAttr{num(name, func(c *datasets.Change) float64 { return c.Extra.Get(attr) })}
	}
	for _, a := range sources {
		present := false
		for i := range h.Changes {
			if a.has(&h.Changes[i]) {
				present = true
				break
			}
		}
		if !present {
			return a.name
		}
	}
	return ""
}
