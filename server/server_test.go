package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sqpredict/sqpredict/datasets"
	"github.com/sqpredict/sqpredict/features"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
	"github.com/sqpredict/sqpredict/training"
)

// sameTol is the relative tolerance between the server's predictions and direct model
// calls: the same features code and models on the same rows, so they agree to rounding.
const sameTol = 1e-12

// TestPredictionsMatchModels checks every prediction against the bundle's models called
// directly on the feature rows of package features.
func TestPredictionsMatchModels(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx := testCtx(t)
	b, err := e.reg.Load(e.repo, e.v1, training.SchemaHash())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := training.LoadModels(b)
	if err != nil {
		t.Fatal(err)
	}
	// The conflict section is served by a baseline where the bundle's champion lost to it
	// (baseline gate "serve", as in the built-in bundle).
	served, err := training.ServedBaselines(b.Manifest.Extra)
	if err != nil {
		t.Fatal(err)
	}
	var conflictModel interface {
		Predict(dst []float64, x mat.Matrix) []float64
	} = ms.Conflict
	if name := served["conflict"]; name != "" {
		conflictModel = ms.Baselines[name]
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	const n = 50
	changes := make([]datasets.Change, n)
	specs := make([]features.Speculation, n)
	for i := range changes {
		changes[i], specs[i] = randomChange(rnd, i), randomSpec(rnd)
	}
	pbChanges := make([]*pb.Change, n)
	for i := range changes {
		pbChanges[i] = server.ChangeToProto(&changes[i])
	}
	checkRef := func(t *testing.T, r *pb.ModelRef) {
		t.Helper()
		if r.GetVersion() != e.v1 || r.GetRole() != pb.ModelRole_MODEL_ROLE_CHAMPION {
			t.Errorf("model = %v, want champion %s", r, e.v1)
		}
	}

	t.Run("success", func(t *testing.T) {
		req := &pb.PredictSuccessRequest{}
		x := mat.NewDense(n, features.NSuccess, nil)
		for i := range changes {
			req.Changes = append(req.Changes, &pb.SuccessQuery{Change: pbChanges[i], Speculation: server.SpecToProto(specs[i])})
			features.Success(x.RawRowView(i), &changes[i], specs[i], ms.DevTable.Lookup(changes[i].Author), ms.DevTable.Recent(ms.DevTable.Repos()[0], &changes[i]))
		}
		want := ms.Success.Predict(nil, x)
		resp, err := e.client.PredictSuccess(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range resp.GetPredictions() {
			if p.GetChangeId() != changes[i].ChangeID || !scalar.EqualWithinAbsOrRel(p.GetPSucc(), want[i], sameTol, sameTol) {
				t.Errorf("prediction %d = %s %v, want %s %v", i, p.GetChangeId(), p.GetPSucc(), changes[i].ChangeID, want[i])
			}
			checkRef(t, p.GetModel())
		}
	})
	t.Run("conflict", func(t *testing.T) {
		req := &pb.PredictConflictRequest{Changes: pbChanges}
		x := mat.NewDense(n-1, features.NConflict, nil)
		for i := 1; i < n; i++ {
			a, b := &changes[i-1], &changes[i]
			req.Pairs = append(req.Pairs, &pb.ConflictQuery{AheadChangeId: a.ChangeID, BehindChangeId: b.ChangeID})
			features.Conflict(x.RawRowView(i-1), a, b, ms.DevTable.Lookup(a.Author), ms.DevTable.Lookup(b.Author))
		}
		want := conflictModel.Predict(nil, x)
		resp, err := e.client.PredictConflict(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range resp.GetPredictions() {
			if !scalar.EqualWithinAbsOrRel(p.GetPConf(), want[i], sameTol, sameTol) {
				t.Errorf("pair %d: p_conf = %v, want %v", i, p.GetPConf(), want[i])
			}
			checkRef(t, p.GetModel())
		}
	})
	t.Run("buildtime", func(t *testing.T) {
		req := &pb.PredictBuildTimeRequest{Changes: pbChanges}
		x := mat.NewDense(n, features.NBuildTime, nil)
		for i := range changes {
			req.Builds = append(req.Builds, &pb.BuildQuery{BuildId: "B" + changes[i].ChangeID, ChangeId: changes[i].ChangeID, Speculation: server.SpecToProto(specs[i])})
			features.BuildTime(x.RawRowView(i), &changes[i], specs[i], ms.DevTable.Lookup(changes[i].Author), ms.DevTable.Recent(ms.DevTable.Repos()[0], &changes[i]))
		}
		want := ms.BuildTime.Predict(nil, x)
		resp, err := e.client.PredictBuildTime(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range resp.GetPredictions() {
			if p.GetBuildId() != "B"+changes[i].ChangeID ||
				!scalar.EqualWithinAbsOrRel(p.GetMeanSeconds(), want[2*i], sameTol, sameTol) ||
				!scalar.EqualWithinAbsOrRel(p.GetStddevSeconds(), want[2*i+1], sameTol, sameTol) {
				t.Errorf("build %d = %s (%v, %v), want (%v, %v)", i, p.GetBuildId(), p.GetMeanSeconds(), p.GetStddevSeconds(), want[2*i], want[2*i+1])
			}
			checkRef(t, p.GetModel())
		}
	})
	t.Run("speculation", func(t *testing.T) {
		// Changes 0-4: even ones give p_succ and build times, odd ones leave them out;
		// one conflict edge gives p_conf, the other leaves it out.
		const k = 5
		req := &pb.ScoreSpeculationRequest{Capacity: 4, Policy: pb.SpeculationPolicy_SPECULATION_POLICY_SQ2024}
		for i := range k {
			// Change 3 describes its next build apart from its submission.
			q := &pb.QueueChange{Change: pbChanges[i], ArrivedAt: pbChanges[i].GetSubmittedAt(), Speculation: server.SpecToProto(specs[i])}
			if i == 3 {
				q.BuildSpeculation = server.SpecToProto(specs[i+10])
			}
			if i%2 == 0 {
				q.PSucc, q.BuildTimeMeanSeconds, q.BuildTimeStddevSeconds = proto.Float64(0.9), proto.Float64(600), proto.Float64(60)
			}
			req.Changes = append(req.Changes, q)
		}
		req.Conflicts = []*pb.QueueConflict{
			{AheadChangeId: changes[0].ChangeID, BehindChangeId: changes[1].ChangeID, PConf: proto.Float64(0.2)},
			{AheadChangeId: changes[2].ChangeID, BehindChangeId: changes[3].ChangeID},
		}
		resp, err := e.client.ScoreSpeculation(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		x := mat.NewDense(1, features.NSuccess, nil)
		xb := mat.NewDense(1, features.NBuildTime, nil)
		for i, sc := range resp.GetChanges() {
			wantP, wantMu, wantSigma := 0.9, 600.0, 60.0
			if i%2 == 1 {
				// Counts the caller left out are those of the queue (issue 15 item 6).
				sspec, bspec := specs[i], specs[i]
				bspec.Succeeded, bspec.Failed = math.NaN(), math.NaN()
				if i == 3 {
					bspec = specs[i+10]
				}
				sspec, bspec = queueFilled(changes, i, sspec, bspec)
				features.Success(x.RawRowView(0), &changes[i], sspec, ms.DevTable.Lookup(changes[i].Author), ms.DevTable.Recent(ms.DevTable.Repos()[0], &changes[i]))
				wantP = ms.Success.Predict(nil, x)[0]
				features.BuildTime(xb.RawRowView(0), &changes[i], bspec, ms.DevTable.Lookup(changes[i].Author), ms.DevTable.Recent(ms.DevTable.Repos()[0], &changes[i]))
				bt := ms.BuildTime.Predict(nil, xb)
				wantMu, wantSigma = bt[0], bt[1]
				checkRef(t, sc.GetModel())
			} else if sc.GetModel() != nil {
				t.Errorf("change %d: model %v for values the caller gave", i, sc.GetModel())
			}
			if !scalar.EqualWithinAbsOrRel(sc.GetPSucc(), wantP, sameTol, sameTol) ||
				!scalar.EqualWithinAbsOrRel(sc.GetBuildTimeMeanSeconds(), wantMu, sameTol, sameTol) ||
				!scalar.EqualWithinAbsOrRel(sc.GetBuildTimeStddevSeconds(), wantSigma, sameTol, sameTol) {
				t.Errorf("change %d = (%v, %v, %v), want (%v, %v, %v)", i, sc.GetPSucc(), sc.GetBuildTimeMeanSeconds(), sc.GetBuildTimeStddevSeconds(), wantP, wantMu, wantSigma)
			}
		}
		xc := mat.NewDense(1, features.NConflict, nil)
		features.Conflict(xc.RawRowView(0), &changes[2], &changes[3], ms.DevTable.Lookup(changes[2].Author), ms.DevTable.Lookup(changes[3].Author))
		wantConf := conflictModel.Predict(nil, xc)[0]
		if got := resp.GetConflicts()[0].GetPConf(); got != 0.2 {
			t.Errorf("given p_conf = %v, want 0.2", got)
		}
		if got := resp.GetConflicts()[1].GetPConf(); !scalar.EqualWithinAbsOrRel(got, wantConf, sameTol, sameTol) {
			t.Errorf("predicted p_conf = %v, want %v", got, wantConf)
		}
		if len(resp.GetPlan().GetNodes()) == 0 || len(resp.GetPlan().GetDecisions()) != k {
			t.Errorf("plan = %d nodes, %d decisions, want some nodes and %d decisions", len(resp.GetPlan().GetNodes()), len(resp.GetPlan().GetDecisions()), k)
		}
	})
	t.Run("info", func(t *testing.T) {
		resp, err := e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetModels()) != 1 || resp.GetModels()[0].GetFeatureSchemaHash() != training.SchemaHash() || resp.GetModels()[0].GetRepo() != e.repo {
			t.Fatalf("GetModelInfo = %v, want the champion with schema %s", resp, training.SchemaHash())
		}
		checkRef(t, resp.GetModels()[0].GetModel())
	})
}

// violationFields returns the fields of the BadRequest detail of err.
func violationFields(err error) []string {
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	return fields
}

func TestInvalidRequests(t *testing.T) {
	e := newTestEnv(t, server.Config{MaxBatch: 3}, true)
	ctx := testCtx(t)
	good := func() *pb.Change {
		return &pb.Change{ChangeId: "C1", LinesAdded: proto.Float64(10)}
	}
	with := func(f func(c *pb.Change)) *pb.Change { c := good(); f(c); return c }
	success := func(cs ...*pb.Change) func() error {
		return func() error {
			req := &pb.PredictSuccessRequest{}
			for _, c := range cs {
				req.Changes = append(req.Changes, &pb.SuccessQuery{Change: c})
			}
			_, err := e.client.PredictSuccess(ctx, req)
			return err
		}
	}
	for _, tc := range []struct {
		name      string
		call      func() error
		wantField string
	}{
		{"empty batch", success(), "changes"},
		{"batch over the limit", success(good(), good(), good(), good()), "changes"},
		{"missing change", success(nil), "changes[0].change"},
		{"empty id", success(with(func(c *pb.Change) { c.ChangeId = "" })), "changes[0].change.change_id"},
		{"NaN count", success(with(func(c *pb.Change) { c.Hunks = proto.Float64(math.NaN()) })), "changes[0].change.hunks"},
		{"infinite count", success(with(func(c *pb.Change) { c.Commits = proto.Float64(math.Inf(1)) })), "changes[0].change.commits"},
		{"negative count", success(with(func(c *pb.Change) { c.LinesAdded = proto.Float64(-1) })), "changes[0].change.lines_added"},
		{"bad flag", success(with(func(c *pb.Change) { c.RevisionHasTestPlan = 7 })), "changes[0].change.revision_has_test_plan"},
		{"duplicate id", success(good(), good()), "changes[1].change.change_id"},
		// Issue 12 item 3: extra attributes that leak the label are refused by name.
		{"leaking extra attribute", success(with(func(c *pb.Change) { c.Extra = map[string]float64{"churn": 3, "now_label": 1} })), "changes[0].change.extra"},
		{"NaN extra attribute", success(with(func(c *pb.Change) { c.Extra = map[string]float64{"churn": math.NaN()} })), "changes[0].change.extra"},
		{"bad extra attribute name", success(with(func(c *pb.Change) { c.Extra = map[string]float64{"Churn": 1} })), "changes[0].change.extra"},
		{"negative speculation count", func() error {
			_, err := e.client.PredictSuccess(ctx, &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: good(), Speculation: &pb.SpeculationCounts{Height: proto.Float64(-2)}}}})
			return err
		}, "changes[0].speculation.height"},
		{"unknown repo", func() error {
			_, err := e.client.PredictSuccess(ctx, &pb.PredictSuccessRequest{Repo: "nope", Changes: []*pb.SuccessQuery{{Change: good()}}})
			return err
		}, "repo"},
		{"pair naming a missing change", func() error {
			_, err := e.client.PredictConflict(ctx, &pb.PredictConflictRequest{Changes: []*pb.Change{good()}, Pairs: []*pb.ConflictQuery{{AheadChangeId: "C1", BehindChangeId: "C9"}}})
			return err
		}, "pairs[0].behind_change_id"},
		{"pair of one change", func() error {
			_, err := e.client.PredictConflict(ctx, &pb.PredictConflictRequest{Changes: []*pb.Change{good()}, Pairs: []*pb.ConflictQuery{{AheadChangeId: "C1", BehindChangeId: "C1"}}})
			return err
		}, "pairs[0].behind_change_id"},
		{"no pairs", func() error {
			_, err := e.client.PredictConflict(ctx, &pb.PredictConflictRequest{Changes: []*pb.Change{good()}})
			return err
		}, "pairs"},
		{"build naming a missing change", func() error {
			_, err := e.client.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{Changes: []*pb.Change{good()}, Builds: []*pb.BuildQuery{{ChangeId: "C2"}}})
			return err
		}, "builds[0].change_id"},
		{"no builds", func() error {
			_, err := e.client.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{Changes: []*pb.Change{good()}})
			return err
		}, "builds"},
		{"speculation without capacity", func() error {
			_, err := e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Changes: []*pb.QueueChange{{Change: good()}}})
			return err
		}, "capacity"},
		{"speculation p_succ out of range", func() error {
			_, err := e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Capacity: 1, Changes: []*pb.QueueChange{{Change: good(), PSucc: proto.Float64(1.5)}}})
			return err
		}, "changes[0].p_succ"},
		{"speculation conflict naming a missing change", func() error {
			_, err := e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Capacity: 1, Changes: []*pb.QueueChange{{Change: good()}},
				Conflicts: []*pb.QueueConflict{{AheadChangeId: "C0", BehindChangeId: "C1"}}})
			return err
		}, "conflicts[0].ahead_change_id"},
		{"speculation negative build time", func() error {
			_, err := e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Capacity: 1, Changes: []*pb.QueueChange{{Change: good(), BuildTimeStddevSeconds: proto.Float64(-3)}}})
			return err
		}, "changes[0].build_time_stddev_seconds"},
		{"info for an unknown repo", func() error {
			_, err := e.client.GetModelInfo(ctx, &pb.GetModelInfoRequest{Repo: "nope"})
			return err
		}, "repo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("error = %v, want InvalidArgument", err)
			}
			fields := violationFields(err)
			found := false
			for _, f := range fields {
				found = found || f == tc.wantField
			}
			if !found {
				t.Errorf("field violations = %q, want %q among them", fields, tc.wantField)
			}
		})
	}
	// A request the speculation math refuses after conversion (a build path naming a
	// change behind the build's change) is InvalidArgument too.
	_, err := e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Capacity: 1,
		Changes: []*pb.QueueChange{{Change: good(), PSucc: proto.Float64(0.5), BuildTimeMeanSeconds: proto.Float64(1), BuildTimeStddevSeconds: proto.Float64(1)},
			{Change: &pb.Change{ChangeId: "C2"}, PSucc: proto.Float64(0.5), BuildTimeMeanSeconds: proto.Float64(1), BuildTimeStddevSeconds: proto.Float64(1)}},
		Builds: []*pb.StartedBuild{{BuildId: "B1", ChangeId: "C1", PathChangeIds: []string{"C2"}, Status: pb.BuildStatus_BUILD_STATUS_RUNNING}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("ScoreSpeculation(path behind) = %v, want InvalidArgument", err)
	}
	// A build path naming a change that already landed is accepted when the request lists
	// it in landed_change_ids, and refused, naming the path entry, when it does not.
	landed := func(ids ...string) error {
		_, err := e.client.ScoreSpeculation(ctx, &pb.ScoreSpeculationRequest{Capacity: 1, LandedChangeIds: ids,
			Changes: []*pb.QueueChange{{Change: good(), PSucc: proto.Float64(0.5), BuildTimeMeanSeconds: proto.Float64(1), BuildTimeStddevSeconds: proto.Float64(1)}},
			Builds:  []*pb.StartedBuild{{BuildId: "B1", ChangeId: "C1", PathChangeIds: []string{"C0"}, Status: pb.BuildStatus_BUILD_STATUS_RUNNING}}})
		return err
	}
	if err := landed("C0"); err != nil {
		t.Errorf("ScoreSpeculation(path through a landed change) = %v, want nil", err)
	}
	err = landed()
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `"C0"`) {
		t.Errorf("ScoreSpeculation(path through an unknown change) = %v, want InvalidArgument naming \"C0\"", err)
	}
}

func TestHealthAndUnavailable(t *testing.T) {
	e := newTestEnv(t, server.Config{}, false)
	ctx := testCtx(t)
	check := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for _, svc := range []string{"", pb.Predictor_ServiceDesc.ServiceName} {
			resp, err := e.health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
			if err != nil || resp.GetStatus() != want {
				t.Errorf("Check(%q) = %v, %v, want %v", svc, resp.GetStatus(), err, want)
			}
		}
	}
	check(healthpb.HealthCheckResponse_NOT_SERVING)
	req := &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: &pb.Change{ChangeId: "C1"}}}}
	if _, err := e.client.PredictSuccess(ctx, req); status.Code(err) != codes.Unavailable {
		t.Errorf("PredictSuccess before a load = %v, want Unavailable", err)
	}
	// A failed first load keeps the server NOT_SERVING.
	if err := e.reloader.Reload(registry.RoleChampion, "20000101T000000Z-000009"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Reload(missing version) = %v, want ErrNotFound", err)
	}
	check(healthpb.HealthCheckResponse_NOT_SERVING)
	if err := e.reloader.Reload(registry.RoleChampion, e.v1); err != nil {
		t.Fatal(err)
	}
	check(healthpb.HealthCheckResponse_SERVING)
	if _, err := e.client.PredictSuccess(ctx, req); err != nil {
		t.Errorf("PredictSuccess after the load = %v", err)
	}
	// Shutdown, the first step of a graceful stop, drains clients: NOT_SERVING, while
	// requests are still answered.
	e.healthShutdown()
	check(healthpb.HealthCheckResponse_NOT_SERVING)
	if _, err := e.client.PredictSuccess(ctx, req); err != nil {
		t.Errorf("PredictSuccess while draining = %v", err)
	}
}

// TestReloadUnderLoad reloads the champion 20 times, alternating two versions, while
// 8 goroutines send requests without pause. Each reload waits until 16 requests have
// been answered since the previous one (workers signal every answer over a channel),
// so the reloads interleave with requests without timing: since at most 8 requests are
// in flight at a reload, at least 8 of the 16 answered after it were sent after it and
// answered by its version, so both versions answer. No request may fail, and each
// answer names one of the two versions.
func TestReloadUnderLoad(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	// A longer deadline than testCtx's: under the race detector on a loaded 2-core
	// machine a request cut off by the test's own deadline is not a reload failure.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rnd := rand.New(rand.NewPCG(1, 1))
	c := randomChange(rnd, 1)
	req := &pb.PredictBuildTimeRequest{Changes: []*pb.Change{server.ChangeToProto(&c)}, Builds: []*pb.BuildQuery{{ChangeId: c.ChangeID}}}
	const workers, perReload, reloads = 8, 2 * 8, 20
	var (
		sent, failed atomic.Int64
		seen1, seen2 atomic.Int64
		wg           sync.WaitGroup
		firstErr     atomic.Value
	)
	answered, done := make(chan struct{}), make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				sent.Add(1)
				resp, err := e.client.PredictBuildTime(ctx, req)
				switch {
				case err != nil:
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				case resp.GetPredictions()[0].GetModel().GetVersion() == e.v1:
					seen1.Add(1)
				case resp.GetPredictions()[0].GetModel().GetVersion() == e.v2:
					seen2.Add(1)
				default:
					failed.Add(1)
					firstErr.CompareAndSwap(nil, errors.New("unknown version "+resp.GetPredictions()[0].GetModel().GetVersion()))
				}
				select {
				case answered <- struct{}{}:
				case <-done:
					return
				}
			}
		}()
	}
	for i := range reloads {
		v := e.v2
		if i%2 == 1 {
			v = e.v1
		}
		if err := e.reloader.Reload(registry.RoleChampion, v); err != nil {
			t.Errorf("reload %d: %v", i, err)
		}
		for range perReload {
			<-answered
		}
	}
	close(done)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed during %d reloads; first: %v", n, sent.Load(), reloads, firstErr.Load())
	}
	if seen1.Load() == 0 || seen2.Load() == 0 {
		t.Errorf("%d requests, answered by v1 %d times and by v2 %d times: want both", sent.Load(), seen1.Load(), seen2.Load())
	}
}

// TestCorruptBundleRefused corrupts a published bundle; its load fails, the old
// champion keeps serving and the reload metrics say so.
func TestCorruptBundleRefused(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx := testCtx(t)
	p := filepath.Join(e.reg.Dir(), e.repo, "versions", e.v2, training.FileSuccess)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(" ")
	f.Close()
	if err := e.reloader.Reload(registry.RoleChampion, e.v2); !errors.Is(err, registry.ErrChecksum) {
		t.Fatalf("Reload(corrupt) = %v, want ErrChecksum", err)
	}
	if got := e.models.Champion().Version; got != e.v1 {
		t.Errorf("champion after a failed reload = %s, want %s", got, e.v1)
	}
	resp, err := e.client.PredictSuccess(ctx, &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: &pb.Change{ChangeId: "C1"}}}})
	if err != nil || resp.GetPredictions()[0].GetModel().GetVersion() != e.v1 {
		t.Errorf("PredictSuccess after a failed reload = %v, %v, want an answer of %s", resp, err, e.v1)
	}
	if got := gauge(t, e, "predictd_model_last_reload_successful", "champion"); got != 0 {
		t.Errorf("predictd_model_last_reload_successful = %v, want 0", got)
	}
	if got := gauge(t, e, "predictd_model_last_reload_success_timestamp_seconds", "champion"); got <= 0 {
		t.Errorf("predictd_model_last_reload_success_timestamp_seconds = %v, want the first load's time", got)
	}
}

// gauge returns the value of the gauge name with role label role.
func gauge(t *testing.T, e *testEnv, name, role string) float64 {
	t.Helper()
	mfs, err := e.promReg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "role" && l.GetValue() == role {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{role=%q} not found", name, role)
	return 0
}

// TestWatchReload follows the registry's pointers: moving the champion pointer loads
// the new version, setting and clearing the challenger loads and unloads it.
func TestWatchReload(t *testing.T) {
	e := newTestEnv(t, server.Config{}, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.reloader.Follow(e.reg.Watch(ctx, e.repo, 5*time.Millisecond)) }()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := e.reg.SetChampion(e.repo, e.v2); err != nil {
		t.Fatal(err)
	}
	waitFor("champion v2", func() bool { return e.models.Champion().Version == e.v2 })
	if err := e.reg.SetChallenger(e.repo, e.v1); err != nil {
		t.Fatal(err)
	}
	waitFor("challenger v1", func() bool { m := e.models.Challenger(); return m != nil && m.Version == e.v1 })
	if err := e.reg.ClearChallenger(e.repo); err != nil {
		t.Fatal(err)
	}
	waitFor("no challenger", func() bool { return e.models.Challenger() == nil })
}

func TestRouteChallenger(t *testing.T) {
	const n = 20000
	for _, share := range []float64{0, 0.05, 0.2, 0.5, 1} {
		k := 0
		for i := range n {
			id := "C" + string(rune('a'+i%26)) + itoa(i)
			got := server.RouteChallenger(id, share)
			if got != server.RouteChallenger(id, share) {
				t.Fatalf("RouteChallenger(%q) is not deterministic", id)
			}
			if got {
				k++
			}
		}
		// Five binomial standard deviations.
		tol := 5 * math.Sqrt(share*(1-share)/n)
		if frac := float64(k) / n; math.Abs(frac-share) > tol {
			t.Errorf("share %v: %v of changes routed to the challenger, want within %v", share, frac, tol)
		}
	}
	// Routing is monotone in the share: a change on the challenger stays there when the
	// share grows.
	for i := range 1000 {
		id := itoa(i)
		if server.RouteChallenger(id, 0.1) && !server.RouteChallenger(id, 0.3) {
			t.Fatalf("RouteChallenger(%q) true at 0.1, false at 0.3", id)
		}
	}
}

func itoa(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

// TestChallengerRouting serves champion v1 and challenger v2 with a 30% share: each
// change is answered by the model RouteChallenger names.
func TestChallengerRouting(t *testing.T) {
	const share = 0.3
	e := newTestEnv(t, server.Config{ChallengerShare: share}, true)
	if err := e.reloader.Reload(registry.RoleChallenger, e.v2); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	rnd := rand.New(rand.NewPCG(1, 1))
	req := &pb.PredictSuccessRequest{}
	for i := range 500 {
		c := randomChange(rnd, i)
		req.Changes = append(req.Changes, &pb.SuccessQuery{Change: server.ChangeToProto(&c)})
	}
	srv, err := server.NewPredictor(server.Config{Repo: e.repo, MaxBatch: 1000, ChallengerShare: share}, e.models)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		var resp *pb.PredictSuccessResponse
		if round == 0 {
			resp, err = e.client.PredictSuccess(ctx, req)
		} else {
			resp, err = srv.PredictSuccess(ctx, req) // the same routing in another server
		}
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, p := range resp.GetPredictions() {
			wantChall := server.RouteChallenger(p.GetChangeId(), share)
			want := e.v1
			if wantChall {
				want, k = e.v2, k+1
			}
			if p.GetModel().GetVersion() != want {
				t.Errorf("%s answered by %s, want %s", p.GetChangeId(), p.GetModel().GetVersion(), want)
			}
			if wantChall != (p.GetModel().GetRole() == pb.ModelRole_MODEL_ROLE_CHALLENGER) {
				t.Errorf("%s: role %v", p.GetChangeId(), p.GetModel().GetRole())
			}
		}
		if frac := float64(k) / 500; math.Abs(frac-share) > 0.1 {
			t.Errorf("challenger share = %v, want about %v", frac, share)
		}
	}
}

// TestShadow serves with the challenger in shadow: every answer is the champion's and
// the prediction log holds both models' predictions.
func TestShadow(t *testing.T) {
	dir := t.TempDir()
	plog, err := server.OpenRotatingLog(dir, server.LogRetention{})
	if err != nil {
		t.Fatal(err)
	}
	// Through the queue predictd uses: the records are written off the request path,
	// all of them by Close.
	queue := server.NewAsyncLog(plog, 0, nil, discard)
	go queue.Run()
	e := newTestEnv(t, server.Config{Shadow: true, ChallengerShare: 1, PredictionLog: queue}, true)
	if err := e.reloader.Reload(registry.RoleChallenger, e.v2); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	rnd := rand.New(rand.NewPCG(1, 1))
	req := &pb.PredictBuildTimeRequest{}
	const n = 10
	for i := range n {
		c := randomChange(rnd, i)
		req.Changes = append(req.Changes, server.ChangeToProto(&c))
		req.Builds = append(req.Builds, &pb.BuildQuery{BuildId: "B" + c.ChangeID, ChangeId: c.ChangeID})
	}
	resp, err := e.client.PredictBuildTime(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.GetPredictions() {
		if p.GetModel().GetVersion() != e.v1 || p.GetModel().GetRole() != pb.ModelRole_MODEL_ROLE_CHAMPION {
			t.Errorf("%s answered by %v, want the champion %s", p.GetBuildId(), p.GetModel(), e.v1)
		}
	}
	queue.Close()
	if err := plog.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	served, shadow := map[string]server.PredictionRecord{}, map[string]server.PredictionRecord{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r server.PredictionRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Served {
			served[r.BuildID] = r
		} else {
			shadow[r.BuildID] = r
		}
	}
	if len(served) != n || len(shadow) != n {
		t.Fatalf("log holds %d served and %d shadow records, want %d each", len(served), len(shadow), n)
	}
	for _, p := range resp.GetPredictions() {
		s, h := served[p.GetBuildId()], shadow[p.GetBuildId()]
		if s.ModelVersion != e.v1 || s.Role != "champion" || *s.MeanSeconds != p.GetMeanSeconds() || s.Kind != "buildtime" || s.ChangeID != p.GetChangeId() {
			t.Errorf("served record %+v does not match %v", s, p)
		}
		// v2 holds the same models as v1, so the shadow prediction is the same number.
		if h.ModelVersion != e.v2 || h.Role != "challenger" || !scalar.EqualWithinAbsOrRel(*h.MeanSeconds, p.GetMeanSeconds(), sameTol, sameTol) {
			t.Errorf("shadow record %+v, want challenger %s", h, e.v2)
		}
	}
}

func TestInterceptor(t *testing.T) {
	ic := server.UnaryInterceptor(discard, nil)
	info := &grpc.UnaryServerInfo{FullMethod: "/sqpredict.v1.Predictor/PredictSuccess"}
	_, err := ic(context.Background(), nil, info, func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Errorf("panicking handler: %v, want Internal", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	called := false
	_, err = ic(ctx, nil, info, func(context.Context, any) (any, error) { called = true; return nil, nil })
	if status.Code(err) != codes.DeadlineExceeded || called {
		t.Errorf("expired deadline: %v (handler called %v), want DeadlineExceeded before the handler", err, called)
	}
}

func TestCompareBatching(t *testing.T) {
	e := newTestEnv(t, server.Config{MaxBatch: 64}, false) // needs no model
	ctx := testCtx(t)
	req := &pb.BatchRequest{PSucc: []float64{0.9, 0.95, 0.8, 0.99}}
	resp, err := e.client.CompareBatching(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := scoring.CompareBatching(scoring.BatchQuery{PSucc: req.GetPSucc()})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetOnePhase(); int(got.GetBestB()) != want.OnePhase.Best || len(got.GetByB()) != len(want.OnePhase.ByB) {
		t.Fatalf("one phase = %v, want %+v", got, want.OnePhase)
	}
	for b, c := range resp.GetTwoPhase().GetByB() {
		if int(c.GetBatchSize()) != b+1 || !scalar.EqualWithinAbsOrRel(c.GetBuildsPerChange(), want.TwoPhase.ByB[b], sameTol, sameTol) {
			t.Errorf("two phase b=%d: %v, want %v", b+1, c, want.TwoPhase.ByB[b])
		}
	}
	for _, tc := range []struct {
		name string
		req  *pb.BatchRequest
	}{
		{"size over the limit", &pb.BatchRequest{CommonPSucc: 0.9, MaxBatchSize: 65}},
		{"negative size", &pb.BatchRequest{CommonPSucc: 0.9, MaxBatchSize: -1}},
		{"probability above 1", &pb.BatchRequest{PSucc: []float64{0.5, 1.5}}},
		{"NaN common probability", &pb.BatchRequest{CommonPSucc: math.NaN()}},
	} {
		if _, err := e.client.CompareBatching(ctx, tc.req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: CompareBatching = %v, want InvalidArgument", tc.name, err)
		}
	}
	// Issue 14: the violation names the field at fault, not p_succ[0].
	for _, tc := range []struct {
		req   *pb.BatchRequest
		field string
	}{
		{&pb.BatchRequest{CommonPSucc: 1.5}, "common_p_succ"},
		{&pb.BatchRequest{CommonPSucc: math.NaN()}, "common_p_succ"},
		{&pb.BatchRequest{PSucc: []float64{0.5, 0.9, -0.1}}, "p_succ[2]"},
	} {
		_, err := e.client.CompareBatching(ctx, tc.req)
		if f := violationFields(err); len(f) != 1 || f[0] != tc.field {
			t.Errorf("CompareBatching(%v) violations %v, want [%s]", tc.req, f, tc.field)
		}
	}
}

// queueFilled returns the success and build-time speculation of changes[i] in a
// ScoreSpeculation request of changes without builds, with the fields left unknown (NaN)
// filled as the server must: from features.SubmissionSpeculation over the changes ahead,
// the revision counts 0 for a first submission and unknown otherwise, the build counts 0.
func queueFilled(changes []datasets.Change, i int, succ, build features.Speculation) (features.Speculation, features.Speculation) {
	ahead := make([]*datasets.Change, i)
	for k := range ahead {
		ahead[k] = &changes[k]
	}
	want := features.SubmissionSpeculation(&changes[i], ahead, 0, 0)
	fill := func(s features.Speculation, from features.Speculation) features.Speculation {
		for _, f := range []struct{ dst, src *float64 }{
			{&s.Succeeded, &from.Succeeded}, {&s.Failed, &from.Failed}, {&s.Height, &from.Height},
			{&s.ConflictsCount, &from.ConflictsCount}, {&s.QueueAhead, &from.QueueAhead},
			{&s.PathChanges, &from.PathChanges}, {&s.PathLinesChanged, &from.PathLinesChanged},
		} {
			if math.IsNaN(*f.dst) {
				*f.dst = *f.src
			}
		}
		return s
	}
	bw := want
	if changes[i].RevisionSubmissions != 1 {
		want.Succeeded, want.Failed = math.NaN(), math.NaN()
	}
	return fill(succ, want), fill(build, bw)
}
