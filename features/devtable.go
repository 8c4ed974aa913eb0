package features

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
)

// PriorStrength is the weight, in observations, of the population prior that developer
// rates and mean durations are smoothed towards: an author with five labelled changes is
// described half by their own record and half by the population.
const PriorStrength = 5

// DevTableVersion is the format version of the developer table's JSON form.
// Version 2 added the recency state (see [Recent]).
const DevTableVersion = 2

// devCounts are the running counts behind one author's (or the population's) statistics.
type devCounts struct {
	Changes        int64   `json:"changes"`          // decided changes
	Labelled       int64   `json:"labelled"`         // decided changes with a success label
	Succeeded      int64   `json:"succeeded"`        // of those, labelled 1
	Pairs          int64   `json:"pairs"`            // labelled candidate pairs taken part in
	Conflicts      int64   `json:"conflicts"`        // of those, conflicted
	Builds         int64   `json:"builds"`           // decisive builds with a known duration
	LogDurationSum float64 `json:"log_duration_sum"` // sum of their log1p(duration_s)
}

func (c devCounts) valid() bool {
	return c.Changes >= 0 && c.Labelled >= 0 && c.Succeeded >= 0 && c.Pairs >= 0 &&
		c.Conflicts >= 0 && c.Builds >= 0 && c.Succeeded <= c.Labelled && c.Labelled <= c.Changes &&
		c.Conflicts <= c.Pairs && !math.IsNaN(c.LogDurationSum) && !math.IsInf(c.LogDurationSum, 0)
}

// DevTable holds per-author developer statistics frozen at a time: everything known
// strictly before AsOf (see the package comment). The trainer freezes one into each model bundle so that the scorer
// looks authors up in exactly what training saw. A DevTable is read-only once built and is
// safe for concurrent use.
type DevTable struct {
	asOf    time.Time
	pop     devCounts
	authors map[string]*devCounts
	rec     *recency
	// keyID is the id of the AuthorKey the authors are pseudonymised under, "" in
	// clear; key, when set, hashes the authors a lookup is asked about (see
	// Pseudonymise and WithAuthorKey).
	keyID string
	key   *AuthorKey
}

func newDevTable() *DevTable {
	return &DevTable{authors: make(map[string]*devCounts), rec: newRecency()}
}

// Recent returns the recency features of change c at its submission time, read from the
// state of repository repo (c.Repo in training; a scorer serving one repository's bundle
// passes that repository, see [DevTable.Repos]). Everything is NaN when c's submission
// time is unknown.
func (t *DevTable) Recent(repo string, c *datasets.Change) Recent {
	return t.rec.lookup(repo, t.keyedChange(c), c.SubmittedAt)
}

// Repos returns the repositories the table holds recency state for, in no particular
// order.
func (t *DevTable) Repos() []string {
	out := make([]string, 0, len(t.rec.Repos))
	for r := range t.rec.Repos {
		out = append(out, r)
	}
	return out
}

// AsOf returns the time the table was frozen at.
func (t *DevTable) AsOf() time.Time { return t.asOf }

// NAuthors returns the number of authors with statistics in the table.
func (t *DevTable) NAuthors() int { return len(t.authors) }

func (t *DevTable) author(a string) *devCounts {
	if a == "" {
		return nil
	}
	c := t.authors[a]
	if c == nil {
		c = new(devCounts)
		t.authors[a] = c
	}
	return c
}

func (t *DevTable) addChange(author string, label int8) {
	for _, c := range [2]*devCounts{&t.pop, t.author(author)} {
		if c == nil {
			continue
		}
		c.Changes++
		if label >= 0 {
			c.Labelled++
			c.Succeeded += int64(label)
		}
	}
}

func (t *DevTable) addPair(authorA, authorB string, label int8) {
	cs := [3]*devCounts{&t.pop, t.author(authorA), nil}
	if authorB != authorA {
		cs[2] = t.author(authorB)
	}
	for _, c := range cs {
		if c == nil {
			continue
		}
		c.Pairs++
		c.Conflicts += int64(label)
	}
}

func (t *DevTable) addBuild(author string, logDuration float64) {
	for _, c := range [2]*devCounts{&t.pop, t.author(author)} {
		if c == nil {
			continue
		}
		c.Builds++
		c.LogDurationSum += logDuration
	}
}

// Lookup returns the statistics of author. An author the table has never seen gets the
// population's smoothed rates and 0 prior changes; the empty name (author unknown) gets
// the population's rates and NaN prior changes. A pseudonymised table with its key
// (Pseudonymise, WithAuthorKey) looks up the author's pseudonym; one read without its
// key knows no author, which is why bundle loaders refuse it.
func (t *DevTable) Lookup(author string) DevStats {
	mS := (float64(t.pop.Succeeded) + 1) / (float64(t.pop.Labelled) + 2)
	mC := (float64(t.pop.Conflicts) + 1) / (float64(t.pop.Pairs) + 2)
	mD := nan
	if t.pop.Builds > 0 {
		mD = t.pop.LogDurationSum / float64(t.pop.Builds)
	}
	s := DevStats{PriorChanges: nan, SuccessRate: mS, ConflictRate: mC, MeanLogDuration: mD}
	if author == "" {
		return s
	}
	c := t.authors[t.keyed(author)]
	if c == nil {
		s.PriorChanges = 0
		return s
	}
	const k = PriorStrength
	s.PriorChanges = float64(c.Changes)
	s.SuccessRate = (float64(c.Succeeded) + k*mS) / (float64(c.Labelled) + k)
	s.ConflictRate = (float64(c.Conflicts) + k*mC) / (float64(c.Pairs) + k)
	if c.Builds > 0 || t.pop.Builds > 0 {
		s.MeanLogDuration = (c.LogDurationSum + k*mD) / (float64(c.Builds) + k)
	}
	return s
}

// devTableJSON is the on-disk form of a DevTable.
type devTableJSON struct {
	FormatVersion int                   `json:"format_version"`
	SchemaVersion int                   `json:"feature_schema_version"`
	PriorStrength float64               `json:"prior_strength"`
	AsOf          time.Time             `json:"as_of"`
	Population    devCounts             `json:"population"`
	Authors       map[string]*devCounts `json:"authors"`
	Recency       *recency              `json:"recency"`
	// AuthorKeyID is the id of the AuthorKey the authors are pseudonymised under;
	// absent in clear.
	AuthorKeyID string `json:"author_key_id,omitempty"`
}

// MarshalJSON encodes the table as a JSON object: format_version, feature_schema_version,
// prior_strength, as_of (RFC 3339), population, authors and recency, each author and the
// population holding the counts changes, labelled, succeeded, pairs, conflicts, builds
// and log_duration_sum (the package comment describes recency), and author_key_id when
// the authors are pseudonymised. Authors are sorted by name, so the encoding is
// deterministic. The key itself is never written.
func (t *DevTable) MarshalJSON() ([]byte, error) {
	return json.Marshal(devTableJSON{
		FormatVersion: DevTableVersion,
		SchemaVersion: SchemaVersion,
		PriorStrength: PriorStrength,
		AsOf:          t.asOf,
		Population:    t.pop,
		Authors:       t.authors,
		Recency:       t.rec,
		AuthorKeyID:   t.keyID,
	})
}

// UnmarshalJSON decodes a table written by MarshalJSON. It rejects other format versions
// with ErrUnsupportedVersion, and tables made with a different prior strength or feature
// schema version, or holding impossible counts, with ErrInvalidDevTable.
func (t *DevTable) UnmarshalJSON(b []byte) error {
	var j devTableJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("features: developer table: %w: %w", ErrInvalidDevTable, err)
	}
	if j.FormatVersion != DevTableVersion {
		return fmt.Errorf("features: developer table: %w %d (want %d)", ErrUnsupportedVersion, j.FormatVersion, DevTableVersion)
	}
	if j.SchemaVersion != SchemaVersion || j.PriorStrength != PriorStrength {
		return fmt.Errorf("features: developer table: %w: made for feature schema version %d, prior strength %g (want %d, %d)",
			ErrInvalidDevTable, j.SchemaVersion, j.PriorStrength, SchemaVersion, PriorStrength)
	}
	if !j.Population.valid() {
		return fmt.Errorf("features: developer table: %w: impossible population counts", ErrInvalidDevTable)
	}
	authors := make(map[string]*devCounts, len(j.Authors))
	for a, c := range j.Authors {
		if a == "" || c == nil || !c.valid() {
			return fmt.Errorf("features: developer table: %w: author %q: impossible counts", ErrInvalidDevTable, a)
		}
		authors[a] = c
	}
	if j.Recency == nil {
		return fmt.Errorf("features: developer table: %w: no recency state", ErrInvalidDevTable)
	}
	if j.Recency.Repos == nil {
		j.Recency.Repos = map[string]*repoRecent{}
	}
	if j.Recency.Authors == nil {
		j.Recency.Authors = map[string]*labelWindow{}
	}
	if err := j.Recency.validate(); err != nil {
		return fmt.Errorf("features: developer table: %w: recency: %w", ErrInvalidDevTable, err)
	}
	*t = DevTable{asOf: j.AsOf, pop: j.Population, authors: authors, rec: j.Recency, keyID: j.AuthorKeyID}
	return nil
}

// WriteDevTable writes t to w as JSON.
func WriteDevTable(w io.Writer, t *DevTable) error {
	b, err := t.MarshalJSON()
	if err != nil {
		return fmt.Errorf("features: encoding developer table: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("features: writing developer table: %w", err)
	}
	return nil
}

// ReadDevTable reads a developer table written by WriteDevTable.
func ReadDevTable(r io.Reader) (*DevTable, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("features: reading developer table: %w", err)
	}
	t := new(DevTable)
	if err := t.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return t, nil
}

// NewDevTable returns the developer table of h frozen at asOf: the statistics of
// everything known strictly before asOf. It is NewIndex followed by Index.DevTable; use
// those when the index is needed for the feature tables too.
func NewDevTable(ctx context.Context, h *datasets.History, asOf time.Time) (*DevTable, error) {
	ix, err := NewIndex(ctx, h)
	if err != nil {
		return nil, err
	}
	return ix.DevTable(asOf), nil
}
