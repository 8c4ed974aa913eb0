package server

import (
	"context"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/scoring"
)

// Request conversion: every function here reads a request through its getters (and,
// for proto3 optional fields, whether the field is set), records each offending field
// in a violations list, and produces the datasets and features values that package
// scoring computes features from. Optional numbers that are unset become NaN, the
// feature pipeline's missing value; numbers that are set must be finite and
// non-negative. A change's extra attributes (the map extra) must have valid names that
// do not leak the label and finite values (datasets.NewExtra); the scorer gives the
// models the ones they take, NaN for those left out.

// path names a message inside a request, such as changes[3].change, and is formatted
// only when a violation is recorded: building field names eagerly cost more than the
// rest of the conversion.
type path struct {
	list string // the repeated field, or the field itself when i < 0
	i    int
	sub  string // the field of the element, may be empty
}

// at returns the path of element i of list, with an optional sub-field.
func at(list string, i int, sub string) path { return path{list: list, i: i, sub: sub} }

// field returns the full name of field name of the message at p ("" for p itself).
func (p path) field(name string) string {
	s := p.list
	if p.i >= 0 {
		s = fmt.Sprintf("%s[%d]", p.list, p.i)
	}
	if p.sub != "" {
		s += "." + p.sub
	}
	if name != "" {
		s += "." + name
	}
	return s
}

// count returns *x, or NaN when x is nil, recording a violation of field name of p when
// *x is NaN, infinite or negative.
func count(x *float64, p path, name string, v *violations) float64 {
	if x == nil {
		return math.NaN()
	}
	return checkCount(*x, p, name, v)
}

func checkCount(x float64, p path, name string, v *violations) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		v.add(p.field(name), "must be a finite number, got %v (leave the field unset when unknown)", x)
		return math.NaN()
	case x < 0:
		v.add(p.field(name), "must not be negative, got %v", x)
		return math.NaN()
	}
	return x
}

// probability returns *x, recording a violation of field name of p when it is outside
// [0, 1].
func probability(x *float64, p path, name string, v *violations) float64 {
	if !(*x >= 0 && *x <= 1) {
		v.add(p.field(name), "must be a probability in [0, 1], got %v", *x)
		return math.NaN()
	}
	return *x
}

func flagFromProto(f pb.Flag, p path, name string, v *violations) datasets.Flag {
	switch f {
	case pb.Flag_FLAG_UNKNOWN:
		return datasets.FlagUnknown
	case pb.Flag_FLAG_FALSE:
		return datasets.FlagFalse
	case pb.Flag_FLAG_TRUE:
		return datasets.FlagTrue
	}
	v.add(p.field(name), "unknown flag value %d", f)
	return datasets.FlagUnknown
}

// changeFromProto converts the attributes of c, a change of repo at the request path
// field, into a datasets.Change. A nil c is a violation.
func changeFromProto(c *pb.Change, repo string, p path, v *violations) datasets.Change {
	if c == nil {
		v.add(p.field(""), "missing")
		return datasets.Change{}
	}
	out := datasets.Change{
		ChangeID:   c.GetChangeId(),
		Repo:       repo,
		RevisionID: c.GetRevisionId(),
		Author:     c.GetAuthor(),
	}
	if out.ChangeID == "" {
		v.add(p.field("change_id"), "must not be empty")
	}
	if at := c.GetSubmittedAt(); at != nil {
		if err := at.CheckValid(); err != nil {
			v.add(p.field("submitted_at"), "%v", err)
		} else {
			out.SubmittedAt = at.AsTime()
		}
	}
	out.TargetsChanged = count(c.TargetsChanged, p, "targets_changed", v)
	out.TargetsAdded = count(c.TargetsAdded, p, "targets_added", v)
	out.TargetsRemoved = count(c.TargetsRemoved, p, "targets_removed", v)
	out.LinesAdded = count(c.LinesAdded, p, "lines_added", v)
	out.LinesRemoved = count(c.LinesRemoved, p, "lines_removed", v)
	out.Hunks = count(c.Hunks, p, "hunks", v)
	out.FilesChanged = count(c.FilesChanged, p, "files_changed", v)
	out.Commits = count(c.Commits, p, "commits", v)
	out.BinariesAdded = count(c.BinariesAdded, p, "binaries_added", v)
	out.BinariesRemoved = count(c.BinariesRemoved, p, "binaries_removed", v)
	out.InitialChecksPassed = count(c.InitialChecksPassed, p, "initial_checks_passed", v)
	out.InitialChecksFailed = count(c.InitialChecksFailed, p, "initial_checks_failed", v)
	if t := c.GetAffectedTargets(); t != nil {
		out.AffectedTargets = t.GetNames()
		if out.AffectedTargets == nil {
			out.AffectedTargets = []string{} // known and empty, not unknown
		}
	}
	out.RevisionSubmissions = count(c.RevisionSubmissions, p, "revision_submissions", v)
	out.RevisionHasRevertPlan = flagFromProto(c.GetRevisionHasRevertPlan(), p, "revision_has_revert_plan", v)
	out.RevisionHasTestPlan = flagFromProto(c.GetRevisionHasTestPlan(), p, "revision_has_test_plan", v)
	out.AuthorTenureDays = count(c.AuthorTenureDays, p, "author_tenure_days", v)
	out.AuthorLevel = count(c.AuthorLevel, p, "author_level", v)
	out.TrueProbSuccess = math.NaN()
	if m := c.GetExtra(); len(m) > 0 {
		e, err := datasets.NewExtra(m)
		if err != nil {
			v.add(p.field("extra"), "%v", err)
		}
		out.Extra = e
	}
	return out
}

// specFromProto converts speculation counts; nil means every count unknown.
func specFromProto(s *pb.SpeculationCounts, p path, v *violations) features.Speculation {
	if s == nil {
		nan := math.NaN()
		return features.Speculation{Succeeded: nan, Failed: nan, Height: nan, ConflictsCount: nan, QueueAhead: nan, PathChanges: nan, PathLinesChanged: nan}
	}
	return features.Speculation{
		Succeeded:        count(s.Succeeded, p, "succeeded", v),
		Failed:           count(s.Failed, p, "failed", v),
		Height:           count(s.Height, p, "height", v),
		ConflictsCount:   count(s.ConflictsCount, p, "conflicts_count", v),
		QueueAhead:       count(s.QueueAhead, p, "queue_ahead", v),
		PathChanges:      count(s.PathChanges, p, "path_changes", v),
		PathLinesChanged: count(s.PathLinesChanged, p, "path_lines_changed", v),
	}
}

// batchSize records a violation when a list of n items is empty or longer than max.
func batchSize(n, max int, field string, v *violations) {
	switch {
	case n == 0:
		v.add(field, "must not be empty")
	case n > max:
		v.add(field, "holds %d items, more than the limit of %d", n, max)
	}
}

// smallIndex is the most changes a changeIndex scans instead of hashing: a request of a
// few changes (the single-request path) then allocates no map.
const smallIndex = 8

// changeIndex finds the changes of a request by id, the first of each id.
type changeIndex struct {
	changes []datasets.Change
	// ids maps an id to its first change; nil when there are at most smallIndex
	// changes, which find scans.
	ids map[string]int
}

// find returns the index of the first change of id, and whether there is one; the
// changes before limit are searched (all of them for a map).
func (x changeIndex) find(id string, limit int) (int, bool) {
	if x.ids != nil {
		i, ok := x.ids[id]
		return i, ok
	}
	for i := range min(limit, len(x.changes)) {
		if x.changes[i].ChangeID == id {
			return i, true
		}
	}
	return 0, false
}

// changeSet converts a list of changes and indexes them by id, recording duplicate ids.
func changeSet(list []*pb.Change, repo, field string, v *violations) ([]datasets.Change, changeIndex) {
	x := changeIndex{changes: make([]datasets.Change, len(list))}
	if len(list) > smallIndex {
		x.ids = make(map[string]int, len(list))
	}
	for i, c := range list {
		x.changes[i] = changeFromProto(c, repo, at(field, i, ""), v)
		id := x.changes[i].ChangeID
		if id == "" {
			continue
		}
		if j, dup := x.find(id, i); dup {
			v.add(at(field, i, "").field("change_id"), "duplicate id %q, also %s[%d]", id, field, j)
			continue
		}
		if x.ids != nil {
			x.ids[id] = i
		}
	}
	return x.changes, x
}

// SuccessFromProto converts and validates a PredictSuccessRequest for repo with at most
// maxBatch changes. It returns the scorer's inputs and the change ids in request order,
// or an *InvalidRequestError.
func SuccessFromProto(req *pb.PredictSuccessRequest, repo string, maxBatch int) ([]scoring.SuccessInput, []string, error) {
	var v violations
	checkRepo(req.GetRepo(), repo, &v)
	list := req.GetChanges()
	batchSize(len(list), maxBatch, "changes", &v)
	if err := v.err(); err != nil {
		return nil, nil, err
	}
	changes := make([]datasets.Change, len(list))
	in := make([]scoring.SuccessInput, len(list))
	ids := make([]string, len(list))
	seen := make(map[string]int, len(list))
	for i, q := range list {
		changes[i] = changeFromProto(q.GetChange(), repo, at("changes", i, "change"), &v)
		id := changes[i].ChangeID
		if j, dup := seen[id]; dup && id != "" {
			v.add(at("changes", i, "change").field("change_id"), "duplicate id %q, also changes[%d]", id, j)
		}
		seen[id] = i
		ids[i] = id
		in[i] = scoring.SuccessInput{Change: &changes[i], Spec: specFromProto(q.GetSpeculation(), at("changes", i, "speculation"), &v)}
	}
	if err := v.err(); err != nil {
		return nil, nil, err
	}
	return in, ids, nil
}

// ConflictFromProto converts and validates a PredictConflictRequest: every pair must
// name two different changes of the request. It returns the scorer's inputs.
func ConflictFromProto(req *pb.PredictConflictRequest, repo string, maxBatch int) ([]scoring.PairInput, error) {
	var v violations
	checkRepo(req.GetRepo(), repo, &v)
	batchSize(len(req.GetPairs()), maxBatch, "pairs", &v)
	batchSize(len(req.GetChanges()), maxBatch, "changes", &v)
	if err := v.err(); err != nil {
		return nil, err
	}
	changes, index := changeSet(req.GetChanges(), repo, "changes", &v)
	in := make([]scoring.PairInput, len(req.GetPairs()))
	for i, p := range req.GetPairs() {
		a, okA := lookupIn(index, p.GetAheadChangeId(), at("pairs", i, ""), "ahead_change_id", &v)
		b, okB := lookupIn(index, p.GetBehindChangeId(), at("pairs", i, ""), "behind_change_id", &v)
		if !okA || !okB {
			continue
		}
		if a == b {
			v.add(at("pairs", i, "").field("behind_change_id"), "names the same change as ahead_change_id")
			continue
		}
		in[i] = scoring.PairInput{Ahead: &changes[a], Behind: &changes[b]}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return in, nil
}

// BuildTimeFromProto converts and validates a PredictBuildTimeRequest: every build must
// name a change of the request. It returns the scorer's inputs.
func BuildTimeFromProto(req *pb.PredictBuildTimeRequest, repo string, maxBatch int) ([]scoring.BuildInput, error) {
	var v violations
	checkRepo(req.GetRepo(), repo, &v)
	batchSize(len(req.GetBuilds()), maxBatch, "builds", &v)
	batchSize(len(req.GetChanges()), maxBatch, "changes", &v)
	if err := v.err(); err != nil {
		return nil, err
	}
	changes, index := changeSet(req.GetChanges(), repo, "changes", &v)
	in := make([]scoring.BuildInput, len(req.GetBuilds()))
	for i, b := range req.GetBuilds() {
		spec := specFromProto(b.GetSpeculation(), at("builds", i, "speculation"), &v)
		c, ok := lookupIn(index, b.GetChangeId(), at("builds", i, ""), "change_id", &v)
		if !ok {
			continue
		}
		in[i] = scoring.BuildInput{Change: &changes[c], Spec: spec}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return in, nil
}

// checkRepo records a violation when the request names a repository other than the
// server's; an empty name means the server's.
func checkRepo(got, repo string, v *violations) {
	if got != "" && got != repo {
		v.add("repo", "unknown repository %q: this server serves %q", got, repo)
	}
}

// lookup returns the index of change id, recording a violation of field when it is
// empty or not in the request.
func lookup(index map[string]int, id string, p path, name string, v *violations) (int, bool) {
	return lookupIn(changeIndex{ids: index}, id, p, name, v)
}

// lookupIn is lookup in x.
func lookupIn(x changeIndex, id string, p path, name string, v *violations) (int, bool) {
	if id == "" {
		v.add(p.field(name), "must not be empty")
		return 0, false
	}
	i, ok := x.find(id, len(x.changes))
	if !ok {
		v.add(p.field(name), "change %q is not in the request's changes", id)
	}
	return i, ok
}

// speculationInput is a validated ScoreSpeculationRequest: its changes and speculation
// counts, the conflict edges as indices into changes, and which values the models must
// predict.
type speculationInput struct {
	changes []datasets.Change
	// specs describe each change at its submission (success rows), buildSpecs the build
	// whose time is predicted (build-time rows).
	specs, buildSpecs []features.Speculation
	// ahead and behind are the change indices of each conflict edge.
	ahead, behind []int
	// needSucc, needTime and needConf list the changes whose P-succ or build time, and
	// the conflicts whose P-conf, the caller left out.
	needSucc, needTime, needConf []int
	// index maps change ids to changes.
	index map[string]int
}

// speculationFromProto validates a ScoreSpeculationRequest. The builds, policy and
// thresholds are checked later by SpeculationFromProto and scoring.Speculate.
func speculationFromProto(req *pb.ScoreSpeculationRequest, repo string, maxBatch, maxCapacity int) (*speculationInput, error) {
	var v violations
	checkRepo(req.GetRepo(), repo, &v)
	batchSize(len(req.GetChanges()), maxBatch, "changes", &v)
	if n := len(req.GetConflicts()); n > maxBatch {
		v.add("conflicts", "holds %d items, more than the limit of %d", n, maxBatch)
	}
	if n := len(req.GetBuilds()); n > maxBatch {
		v.add("builds", "holds %d items, more than the limit of %d", n, maxBatch)
	}
	if req.GetCapacity() < 1 {
		v.add("capacity", "must be at least 1, got %d", req.GetCapacity())
	}
	if c := int(req.GetCapacity()); c > maxCapacity {
		v.add("capacity", "%d is more than the limit of %d (--max-capacity)", c, maxCapacity)
	}
	if n := len(req.GetLandedConflicts()); n > maxBatch {
		v.add("landed_conflicts", "holds %d items, more than the limit of %d", n, maxBatch)
	}
	if n := len(req.GetLandedChangeIds()); n > maxBatch {
		v.add("landed_change_ids", "holds %d items, more than the limit of %d", n, maxBatch)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	n := len(req.GetChanges())
	in := &speculationInput{changes: make([]datasets.Change, n), specs: make([]features.Speculation, n), buildSpecs: make([]features.Speculation, n)}
	index := make(map[string]int, n)
	for i, q := range req.GetChanges() {
		f := at("changes", i, "")
		in.changes[i] = changeFromProto(q.GetChange(), repo, at("changes", i, "change"), &v)
		in.specs[i] = specFromProto(q.GetSpeculation(), at("changes", i, "speculation"), &v)
		in.buildSpecs[i] = in.specs[i]
		// Without build_speculation the build shares the change's queue counts, but not
		// succeeded and failed, which count the revision's attempts for a success row
		// and the change's own builds for a build-time row.
		in.buildSpecs[i].Succeeded, in.buildSpecs[i].Failed = math.NaN(), math.NaN()
		if bs := q.GetBuildSpeculation(); bs != nil {
			in.buildSpecs[i] = specFromProto(bs, at("changes", i, "build_speculation"), &v)
		}
		if id := in.changes[i].ChangeID; id != "" {
			if j, dup := index[id]; dup {
				v.add(at("changes", i, "change").field("change_id"), "duplicate id %q, also changes[%d]", id, j)
			}
			index[id] = i
		}
		if q.PSucc == nil {
			in.needSucc = append(in.needSucc, i)
		} else {
			probability(q.PSucc, f, "p_succ", &v)
		}
		if q.BuildTimeMeanSeconds == nil || q.BuildTimeStddevSeconds == nil {
			in.needTime = append(in.needTime, i)
		}
		if q.BuildTimeMeanSeconds != nil {
			count(q.BuildTimeMeanSeconds, f, "build_time_mean_seconds", &v)
		}
		if q.BuildTimeStddevSeconds != nil {
			count(q.BuildTimeStddevSeconds, f, "build_time_stddev_seconds", &v)
		}
		if _, err := FamilyFromProto(q.GetBuildTimeFamily(), scoring.BuildNormal); err != nil {
			v.add(f.field("build_time_family"), "%v", err)
		}
	}
	in.ahead = make([]int, len(req.GetConflicts()))
	in.behind = make([]int, len(req.GetConflicts()))
	for e, c := range req.GetConflicts() {
		f := at("conflicts", e, "")
		a, okA := lookup(index, c.GetAheadChangeId(), f, "ahead_change_id", &v)
		b, okB := lookup(index, c.GetBehindChangeId(), f, "behind_change_id", &v)
		if okA && okB && a == b {
			v.add(f.field("behind_change_id"), "names the same change as ahead_change_id")
		}
		in.ahead[e], in.behind[e] = a, b
		if c.PConf == nil {
			in.needConf = append(in.needConf, e)
		} else {
			probability(c.PConf, f, "p_conf", &v)
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	in.index = index
	return in, nil
}

// fillSpeculation computes the speculation counts the caller left out of the rows the
// models will score (queueSpeculation): a success row gets the change's state at
// submission from the changes ahead of it; a build-time row gets the same queue counts,
// with succeeded and failed counting the change's finished builds in builds. Counts the
// caller set win. It returns ctx's error when ctx is done first.
func (in *speculationInput) fillSpeculation(ctx context.Context, builds []*pb.StartedBuild) error {
	need := slices.Concat(in.needSucc, in.needTime)
	if len(need) == 0 {
		return nil
	}
	slices.Sort(need)
	need = slices.Compact(need)
	computed, err := queueSpeculation(ctx, in.changes, need)
	if err != nil {
		return err
	}
	var succeeded, failed map[int]float64
	if len(in.needTime) > 0 {
		succeeded, failed = map[int]float64{}, map[int]float64{}
		for _, b := range builds {
			j, ok := in.index[b.GetChangeId()]
			if !ok {
				continue // refused later by SpeculationFromProto, naming the build
			}
			switch b.GetStatus() {
			case pb.BuildStatus_BUILD_STATUS_SUCCEEDED:
				succeeded[j]++
			case pb.BuildStatus_BUILD_STATUS_FAILED:
				failed[j]++
			}
		}
	}
	for _, i := range in.needSucc {
		fillSpeculation(&in.specs[i], computed[i])
	}
	for _, i := range in.needTime {
		b := computed[i]
		b.Succeeded, b.Failed = succeeded[i], failed[i]
		fillSpeculation(&in.buildSpecs[i], b)
	}
	return nil
}

// ChangeToProto returns the request form of the attributes of c, the inverse of the
// conversion the handlers apply: NaN numbers are left unset, nil affected targets
// unset, extra attributes sent but the missing (NaN) ones, and the outcome, decision
// time and ground truth are not sent.
func ChangeToProto(c *datasets.Change) *pb.Change {
	opt := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	flag := func(f datasets.Flag) pb.Flag {
		switch f {
		case datasets.FlagTrue:
			return pb.Flag_FLAG_TRUE
		case datasets.FlagFalse:
			return pb.Flag_FLAG_FALSE
		}
		return pb.Flag_FLAG_UNKNOWN
	}
	out := &pb.Change{
		ChangeId:              c.ChangeID,
		RevisionId:            c.RevisionID,
		Author:                c.Author,
		TargetsChanged:        opt(c.TargetsChanged),
		TargetsAdded:          opt(c.TargetsAdded),
		TargetsRemoved:        opt(c.TargetsRemoved),
		LinesAdded:            opt(c.LinesAdded),
		LinesRemoved:          opt(c.LinesRemoved),
		Hunks:                 opt(c.Hunks),
		FilesChanged:          opt(c.FilesChanged),
		Commits:               opt(c.Commits),
		BinariesAdded:         opt(c.BinariesAdded),
		BinariesRemoved:       opt(c.BinariesRemoved),
		InitialChecksPassed:   opt(c.InitialChecksPassed),
		InitialChecksFailed:   opt(c.InitialChecksFailed),
		RevisionSubmissions:   opt(c.RevisionSubmissions),
		RevisionHasRevertPlan: flag(c.RevisionHasRevertPlan),
		RevisionHasTestPlan:   flag(c.RevisionHasTestPlan),
		AuthorTenureDays:      opt(c.AuthorTenureDays),
		AuthorLevel:           opt(c.AuthorLevel),
	}
	if !c.SubmittedAt.IsZero() {
		out.SubmittedAt = timestamppb.New(c.SubmittedAt)
	}
	if c.AffectedTargets != nil {
		out.AffectedTargets = &pb.TargetList{Names: c.AffectedTargets}
	}
	for k, n := range c.Extra.Names {
		if k < len(c.Extra.Values) && !math.IsNaN(c.Extra.Values[k]) {
			if out.Extra == nil {
				out.Extra = make(map[string]float64, len(c.Extra.Names))
			}
			out.Extra[n] = c.Extra.Values[k]
		}
	}
	return out
}

// SpecToProto returns the request form of s; NaN counts are left unset.
func SpecToProto(s features.Speculation) *pb.SpeculationCounts {
	opt := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return &pb.SpeculationCounts{
		Succeeded: opt(s.Succeeded), Failed: opt(s.Failed), Height: opt(s.Height),
		ConflictsCount: opt(s.ConflictsCount), QueueAhead: opt(s.QueueAhead),
		PathChanges: opt(s.PathChanges), PathLinesChanged: opt(s.PathLinesChanged),
	}
}
