package features

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets"
	"gonum.org/v1/gonum/floats/scalar"
)

// The golden schema hashes. A failure here means the feature columns changed: every
// model bundle trained before stops loading. If that is intended, bump SchemaVersion when
// a feature's meaning changed without its name, and update these constants. They were
// checked independently of Schema.Hash and of the Go name lists, in a shell, by reading
// the quoted names of each group out of schema.go with awk and hashing, for example,
// { echo success; echo 3; printf '%s\n' CHANGE... REVISION... DEVELOPER...
// SPECULATION... RECENT...; } | sha256sum (conflict: "conflict", the ahead_ and behind_ sides, then
// the pair group; buildtime: "buildtime", with dev_prior_log1p_duration before the
// speculation group). The same script, without the kind line, gave the hashes of the
// previous format (before the kind was hashed).
const (
	goldenSuccessHash   = "0eeff4cb0601581b7a4ab459b19902dd62365a7f480f5f6543983ba0e02a8e13"
	goldenConflictHash  = "d1a5ddee2cf9c8cf87c314784d0f9bc0c64608c693b80131cef65ccce0ffe727"
	goldenBuildTimeHash = "f7c24ba32b2846fccd4a5829b2767e65d618711c45afe27fb05de75c5c015399"
)

func TestSchemaGolden(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		hash string
		n    int
	}{
		{KindSuccess, goldenSuccessHash, NSuccess},
		{KindConflict, goldenConflictHash, NConflict},
		{KindBuildTime, goldenBuildTimeHash, NBuildTime},
	} {
		s := tc.kind.Schema()
		if got := s.Hash(); got != tc.hash {
			t.Errorf("%v schema hash = %s, want %s", tc.kind, got, tc.hash)
		}
		if s.NFeatures() != tc.n || s.Version != SchemaVersion || s.Kind != tc.kind {
			t.Errorf("%v schema = %d features, version %d, kind %v", tc.kind, s.NFeatures(), s.Version, s.Kind)
		}
		seen := make(map[string]bool)
		for _, n := range s.Names {
			if seen[n] || n == "" || n == "label" || n == "target" || strings.HasPrefix(n, "true_") {
				t.Errorf("%v schema: bad or duplicate name %q", tc.kind, n)
			}
			seen[n] = true
		}
		// The names are a copy.
		s.Names[0] = "changed"
		if tc.kind.Schema().Names[0] == "changed" {
			t.Errorf("%v.Schema() shares its names", tc.kind)
		}
	}
	// JSON round trip.
	for _, k := range []Kind{KindSuccess, KindConflict, KindBuildTime} {
		b, err := json.Marshal(k.Schema())
		if err != nil {
			t.Fatal(err)
		}
		var got Schema
		if err := json.Unmarshal(b, &got); err != nil || got.Hash() != k.Schema().Hash() || got.Kind != k {
			t.Errorf("Schema %v JSON round trip = %+v, %v", k, got, err)
		}
		if !strings.HasPrefix(string(b), `{"kind":"`+k.String()+`","version":`+strconv.Itoa(SchemaVersion)+`,"names":["`) {
			t.Errorf("Schema %v JSON = %.60s", k, b)
		}
	}
	if _, err := json.Marshal(Schema{Kind: 9}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("json.Marshal(Kind 9) = %v, want ErrUnknownKind", err)
	}
	// Hash covers the version.
	s := KindSuccess.Schema()
	s.Version++
	if s.Hash() == goldenSuccessHash {
		t.Error("Hash does not depend on the version")
	}
	// Hash covers the kind: two kinds with the same names and version differ.
	s = KindSuccess.Schema()
	s.Kind = KindBuildTime
	if s.Hash() == goldenSuccessHash {
		t.Error("Hash does not depend on the kind")
	}
}

func TestKindString(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		s    string
		want string
	}{
		{KindSuccess, "success", "label"},
		{KindConflict, "conflict", "label"},
		{KindBuildTime, "buildtime", "target"},
	} {
		if tc.k.String() != tc.s || tc.k.LabelName() != tc.want {
			t.Errorf("%d: String() = %q, LabelName() = %q, want %q, %q", tc.k, tc.k.String(), tc.k.LabelName(), tc.s, tc.want)
		}
		if k, err := ParseKind(tc.s); err != nil || k != tc.k {
			t.Errorf("ParseKind(%q) = %v, %v, want %v", tc.s, k, err, tc.k)
		}
	}
	if s := Kind(7).String(); s != "Kind(7)" {
		t.Errorf("Kind(7).String() = %q", s)
	}
	if _, err := ParseKind("time"); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("ParseKind(time) = %v, want ErrUnknownKind", err)
	}
}

// TestRowsFillEveryColumn checks that each per-row function writes every position of dst,
// in the order of its schema: it fills dst with a sentinel, gives every input a distinct
// value, and checks a few columns by name.
func TestRowsFillEveryColumn(t *testing.T) {
	const sentinel = -12345.5
	c := change("c", "alice", 0, 10, landed, "x", "y", "z")
	d := change("d", "bob", 3, 10, landed, "y")
	spec := Speculation{Succeeded: 2, Failed: 3, Height: 4, ConflictsCount: 5, QueueAhead: 6, PathChanges: 7, PathLinesChanged: 80}
	dev := DevStats{PriorChanges: 11, SuccessRate: 0.7, ConflictRate: 0.2, MeanLogDuration: 5.5}
	rec := Recent{RepoFailRate5: 0.2, RepoFailRate20: 0.25, RepoFailRate100: 0.3, RepoLastFailed: 1, HoursSinceRepoFailure: 2,
		AuthorLastFailed: 0, AuthorFailRate: 0.1, RevisionLastFailed: 1, TargetsFailRate: 0.4, LastDuration: 100, MeanSuccessDuration: 200}
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = sentinel
		}
		return x
	}
	rows := map[Kind][]float64{
		KindSuccess:   Success(fill(NSuccess), &c, spec, dev, rec),
		KindBuildTime: BuildTime(fill(NBuildTime), &c, spec, dev, rec),
		KindConflict:  Conflict(fill(NConflict), &c, &d, dev, DevStats{PriorChanges: 1}),
	}
	want := map[Kind]map[string]float64{
		KindSuccess: {"spec_succeeded": 2, "spec_failed": 3, "speculation_height": 4, "conflicts_count": 5,
			"queue_ahead": 6, "path_changes": 7, "log1p_path_lines_changed": math.Log1p(80),
			"dev_prior_changes": 11, "dev_prior_success_rate": 0.7, "dev_prior_conflict_rate": 0.2,
			"affected_targets": 3, "commits": 1, "author_level": 3,
			"repo_fail_rate_5": 0.2, "repo_fail_rate_20": 0.25, "repo_fail_rate_100": 0.3, "repo_last_failed": 1,
			"log1p_hours_since_repo_failure": math.Log1p(2), "author_last_failed": 0, "author_fail_rate_10": 0.1,
			"revision_last_failed": 1, "targets_fail_rate_20": 0.4},
		KindBuildTime: {"dev_prior_log1p_duration": 5.5, "queue_ahead": 6, "targets_added": 1,
			"log1p_repo_last_duration": math.Log1p(100), "log1p_repo_mean10_success_duration": math.Log1p(200)},
		KindConflict: {"ahead_affected_targets": 3, "behind_affected_targets": 1, "behind_dev_prior_changes": 1,
			"ahead_dev_prior_changes": 11, "overlap_targets": 1, "jaccard_targets": 1.0 / 3,
			"same_author": 0, "seconds_between_submissions": 180, "log1p_overlap_targets": math.Log1p(1),
			"containment_targets": 1, "overlap_share_ahead": 1.0 / 3, "overlap_share_behind": 1, "same_area": 0},
	}
	for k, row := range rows {
		s := k.Schema()
		for i, v := range row {
			if v == sentinel {
				t.Errorf("%v: column %d (%s) not written", k, i, s.Names[i])
			}
		}
		for name, w := range want[k] {
			if got := row[colOf(s, name)]; got != w {
				t.Errorf("%v: %s = %v, want %v", k, name, got, w)
			}
		}
	}
}

func TestRowPanicsOnLength(t *testing.T) {
	c := change("c", "a", 0, 1, landed)
	for name, f := range map[string]func(){
		"Success":   func() { Success(make([]float64, NSuccess+1), &c, Speculation{}, DevStats{}, Recent{}) },
		"BuildTime": func() { BuildTime(make([]float64, NBuildTime-1), &c, Speculation{}, DevStats{}, Recent{}) },
		"Conflict":  func() { Conflict(nil, &c, &c, DevStats{}, DevStats{}) },
	} {
		func() {
			defer func() {
				if r := recover(); r != "features: dst length mismatch" {
					t.Errorf("%s with a wrong dst: recovered %v, want the length panic", name, r)
				}
			}()
			f()
		}()
	}
}

func TestRowAllocs(t *testing.T) {
	c := change("c", "alice", 0, 10, landed, "y", "x", "y") // unsorted, with a duplicate
	d := change("d", "bob", 3, 10, landed, "y")
	dst, cdst := make([]float64, NBuildTime), make([]float64, NConflict)
	if n := testing.AllocsPerRun(100, func() { BuildTime(dst, &c, Speculation{}, DevStats{}, Recent{}) }); n != 0 {
		t.Errorf("BuildTime allocates %v times, want 0", n)
	}
	c.AffectedTargets = []string{"x", "y"}
	if n := testing.AllocsPerRun(100, func() { Conflict(cdst, &c, &d, DevStats{}, DevStats{}) }); n != 0 {
		t.Errorf("Conflict on sorted targets allocates %v times, want 0", n)
	}
}

// TestOverlapBruteForce compares the set operations with maps on random lists, sorted or
// not, with duplicates, long and short.
func TestOverlapBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	list := func() []string {
		n := rng.IntN(80)
		s := make([]string, n)
		for i := range s {
			s[i] = randomTargets[rng.IntN(len(randomTargets))] + string(rune('a'+rng.IntN(5)))
		}
		if rng.IntN(2) == 0 {
			slices.Sort(s)
			s = slices.Compact(s)
		}
		return s
	}
	set := func(s []string) map[string]bool {
		m := make(map[string]bool)
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	for range 500 {
		a, b := list(), list()
		ma, mb := set(a), set(b)
		want := 0
		for x := range ma {
			if mb[x] {
				want++
			}
		}
		inter, na, nb := overlap(a, b)
		if inter != want || na != len(ma) || nb != len(mb) || distinct(a) != len(ma) {
			t.Fatalf("overlap(%v, %v) = %d, %d, %d (distinct %d), want %d, %d, %d", a, b, inter, na, nb, distinct(a), want, len(ma), len(mb))
		}
		// The index's integer sets: ids of the sorted distinct names.
		ia, ib := intSet(a), intSet(b)
		if got := intersectSorted(ia, ib); got != want {
			t.Fatalf("intersectSorted(%v, %v) = %d, want %d", ia, ib, got, want)
		}
		sa, sb := sortedSet(a), sortedSet(b)
		if got := intersectSorted(sa, sb); got != want || !strictlySorted(sa) || !strictlySorted(ia) {
			t.Fatalf("intersectSorted(%v, %v) = %d, want %d", sa, sb, got, want)
		}
		// A small set against a large one takes the binary-search branch.
		big := make([]int32, 0, 40*len(ia)+40)
		for x := range int32(cap(big)) {
			big = append(big, 2*x)
		}
		wantBig := 0
		for _, x := range ia {
			if x%2 == 0 && x < 2*int32(len(big)) {
				wantBig++
			}
		}
		if got := intersectSorted(ia, big); got != wantBig {
			t.Fatalf("intersectSorted(%v, evens below %d) = %d, want %d", ia, 2*len(big), got, wantBig)
		}
		if strictlySorted([]int32{1, 1}) || strictlySorted([]string{"b", "a"}) {
			t.Fatal("strictlySorted accepts a list that is not a sorted set")
		}
	}
}

func TestFlagsAndMissing(t *testing.T) {
	c := change("c", "", 0, 10, landed)
	c.AffectedTargets = nil
	c.RevisionHasRevertPlan = datasets.FlagUnknown
	c.InitialChecksPassed, c.InitialChecksFailed = 0, 0
	d := change("d", "bob", -1, 10, landed)
	row := Conflict(make([]float64, NConflict), &c, &d, DevStats{}, DevStats{})
	s := KindConflict.Schema()
	for _, name := range []string{"ahead_affected_targets", "ahead_revision_has_revert_plan",
		"ahead_initial_checks_failed_share", "overlap_targets", "jaccard_targets", "same_author",
		"seconds_between_submissions", "log1p_seconds_between_submissions", "log1p_overlap_targets",
		"containment_targets", "overlap_share_ahead", "overlap_share_behind", "same_area"} {
		if v := row[colOf(s, name)]; !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN", name, v)
		}
	}
}

// TestMainArea checks the area of target names and the main area of a change's list,
// sorted or not, with duplicates and ties.
func TestMainArea(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		targets []string
		want    string
	}{
		{"unknown", nil, ""},
		{"empty", []string{}, ""},
		{"one", []string{"//team03/t0123"}, "team03"},
		{"label with colon", []string{"//core:lib", "//core/x:y"}, "core"},
		{"no slashes", []string{"app/x", "app/y", "lib/z"}, "app"},
		{"majority, unsorted with duplicates", []string{"//b/1", "//a/1", "//b/2", "//b/1", "//a/1"}, "b"},
		{"duplicates do not count twice", []string{"//a/1", "//a/1", "//a/1", "//b/1", "//b/2"}, "b"},
		{"tie goes to the first in sort order", []string{"//z/1", "//y/1"}, "y"},
		{"names without an area are ignored", []string{"//", "//", "//q/1"}, "q"},
	}
	for _, tc := range tests {
		if got := mainArea(tc.targets); got != tc.want {
			t.Errorf("%s: mainArea(%q) = %q, want %q", tc.name, tc.targets, got, tc.want)
		}
	}
	// The pair feature: the same main area, another one, or unknown targets.
	a := change("a", "ann", 0, 10, landed, "//t1/x", "//t1/y", "//core/c")
	b := change("b", "bob", 1, 10, landed, "//t1/y", "//t2/z")
	c := change("c", "cid", 2, 10, landed, "//t2/z", "//t2/w", "//t1/y")
	s := KindConflict.Schema()
	col := colOf(s, "same_area")
	if v := Conflict(make([]float64, NConflict), &a, &b, DevStats{}, DevStats{})[col]; v != 1 {
		t.Errorf("same_area(t1, t1 by tie) = %v, want 1", v)
	}
	if v := Conflict(make([]float64, NConflict), &a, &c, DevStats{}, DevStats{})[col]; v != 0 {
		t.Errorf("same_area(t1, t2) = %v, want 0", v)
	}
}

// intSet maps target names to sorted distinct numbers the way internTargets does (the
// number is the name's position in randomTargets times 5 plus its suffix letter).
func intSet(s []string) []int32 {
	var out []int32
	for _, x := range s {
		out = append(out, int32(slices.Index(randomTargets, x[:3])*5+int(x[3]-'a')))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestReadDevTableErrors(t *testing.T) {
	const ok = `{"format_version":2,"feature_schema_version":3,"prior_strength":5,"as_of":"2026-01-01T00:00:00Z",` +
		`"population":{"changes":3,"labelled":2,"succeeded":1,"pairs":1,"conflicts":0,"builds":2,"log_duration_sum":12.5},` +
		`"authors":{"ann":{"changes":1,"labelled":1,"succeeded":1,"pairs":0,"conflicts":0,"builds":1,"log_duration_sum":6}},` +
		`"recency":{"repos":{"r":{"labels":[0,1],"last_failure":"2025-12-31T22:00:00Z","last_duration":300,"success_durations":[200,400],` +
		`"revisions":{"v1":1},"targets":{"x":{"b":1,"n":2}}}},"authors":{"ann":{"b":2,"n":2}}}}`
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"valid", ok, nil},
		{"not json", `{"format_version":`, ErrInvalidDevTable},
		{"future version", strings.Replace(ok, `"format_version":2`, `"format_version":3`, 1), ErrUnsupportedVersion},
		{"other schema version", strings.Replace(ok, `"feature_schema_version":3`, `"feature_schema_version":7`, 1), ErrInvalidDevTable},
		{"no recency", ok[:strings.Index(ok, `,"recency"`)] + "}", ErrInvalidDevTable},
		{"label not 0 or 1", strings.Replace(ok, `"labels":[0,1]`, `"labels":[0,2]`, 1), ErrInvalidDevTable},
		{"author window too long", strings.Replace(ok, `{"b":2,"n":2}`, `{"b":2,"n":11}`, 1), ErrInvalidDevTable},
		{"target window bits past n", strings.Replace(ok, `{"b":1,"n":2}`, `{"b":4194304,"n":2}`, 1), ErrInvalidDevTable},
		{"negative duration", strings.Replace(ok, `"last_duration":300`, `"last_duration":-1`, 1), ErrInvalidDevTable},
		{"other prior", strings.Replace(ok, `"prior_strength":5`, `"prior_strength":2`, 1), ErrInvalidDevTable},
		{"more successes than labels", strings.Replace(ok, `"labelled":1,"succeeded":1`, `"labelled":1,"succeeded":2`, 1), ErrInvalidDevTable},
		{"negative population", strings.Replace(ok, `"changes":3`, `"changes":-3`, 1), ErrInvalidDevTable},
		{"empty author", strings.Replace(ok, `"ann"`, `""`, 1), ErrInvalidDevTable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadDevTable(strings.NewReader(tc.in))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (d != nil) {
				t.Fatalf("ReadDevTable = %v, %v, want %v", d, err, tc.want)
			}
			if d == nil {
				return
			}
			// ann: 1 of 1 against m = 2/4; the population mean duration is 6.25.
			got := d.Lookup("ann")
			if got.PriorChanges != 1 || !scalar.EqualWithinAbsOrRel(got.SuccessRate, (1+5*0.5)/6, exactTol, exactTol) ||
				!scalar.EqualWithinAbsOrRel(got.MeanLogDuration, (6+5*6.25)/6, exactTol, exactTol) {
				t.Errorf("Lookup(ann) = %+v", got)
			}
			// Recency in r at 2026-01-01: labels 0 then 1 (the newest failed), the last
			// failure two hours before; ann's window holds 0b10 (newest succeeded).
			c := datasets.Change{Repo: "r", Author: "ann", RevisionID: "v1", AffectedTargets: []string{"x", "y"},
				SubmittedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			want := Recent{RepoFailRate5: 0.5, RepoFailRate20: 0.5, RepoFailRate100: 0.5, RepoLastFailed: 1,
				HoursSinceRepoFailure: 2, AuthorLastFailed: 0, AuthorFailRate: 0.5, RevisionLastFailed: 1,
				TargetsFailRate: 0.5, LastDuration: 300, MeanSuccessDuration: 300}
			if r := d.Recent("r", &c); r != want {
				t.Errorf("Recent = %+v, want %+v", r, want)
			}
		})
	}
}
