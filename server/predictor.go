package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
)

// DefaultMaxBatch is the largest number of items a list of a request may hold when
// Config.MaxBatch is zero.
const DefaultMaxBatch = 10000

// Config configures the Predictor service.
type Config struct {
	// Repo is the repository the server's bundles were trained for; requests naming
	// another repository are invalid. It must be set.
	Repo string
	// MaxBatch is the largest number of items in any list of a request; zero means
	// DefaultMaxBatch.
	MaxBatch int
	// ChallengerShare is the share of changes, in [0, 1], routed to the challenger when
	// one is loaded (see RouteChallenger). Ignored when Shadow is set.
	ChallengerShare float64
	// Shadow scores every item with the challenger too, logs both predictions and returns
	// the champion's.
	Shadow bool
	// Log receives errors; nil means slog.Default().
	Log *slog.Logger
	// Metrics records predictions; nil records nothing.
	Metrics *Metrics
	// PredictionLog, when not nil, receives every prediction made.
	PredictionLog PredictionLogger
	// Limits bound the work of one request; zero fields mean the defaults.
	Limits Limits
}

// Validate checks the fields of c.
func (c Config) Validate() error {
	switch {
	case c.Repo == "":
		return fmt.Errorf("%w: repository not set", ErrConfig)
	case c.MaxBatch < 0:
		return fmt.Errorf("%w: max batch %d is negative", ErrConfig, c.MaxBatch)
	case !(c.ChallengerShare >= 0 && c.ChallengerShare <= 1):
		return fmt.Errorf("%w: challenger share %v is not in [0, 1]", ErrConfig, c.ChallengerShare)
	}
	return c.Limits.Validate()
}

// predictor implements pb.PredictorServer over the models of a Models.
type predictor struct {
	pb.UnimplementedPredictorServer
	cfg    Config
	models *Models
}

// NewPredictor returns the Predictor service answering with the models currently in
// models. It returns an error wrapping ErrConfig for a bad cfg.
func NewPredictor(cfg Config, models *Models) (pb.PredictorServer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Limits = cfg.Limits.withDefaults()
	return &predictor{cfg: cfg, models: models}, nil
}

// bound returns ctx cut at Limits.MaxRequestTime from now. A ctx whose deadline comes
// first is returned as it is, sparing the timer and contexts of a new deadline on the
// path of every request whose client sets one.
func (p *predictor) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= p.cfg.Limits.MaxRequestTime {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, p.cfg.Limits.MaxRequestTime)
}

// routing is the models one request uses, read once at its start.
type routing struct {
	champ, chall *Model
	share        float64
	shadow       bool
}

func (p *predictor) routing() (routing, error) {
	r := routing{champ: p.models.Champion()}
	if r.champ == nil {
		return r, fmt.Errorf("server: %w", ErrNoModel)
	}
	if r.chall = p.models.Challenger(); r.chall != nil {
		r.share, r.shadow = p.cfg.ChallengerShare, p.cfg.Shadow
	}
	return r, nil
}

// serve returns the model that answers for the change id.
func (r routing) serve(id string) *Model {
	if r.chall != nil && !r.shadow && RouteChallenger(id, r.share) {
		return r.chall
	}
	return r.champ
}

// shadowModel returns the challenger when it runs in shadow, else nil.
func (r routing) shadowModel() *Model {
	if r.shadow {
		return r.chall
	}
	return nil
}

// scoreRouted predicts the items of in, width outputs each, with the model serving each
// item's routing id, and returns the outputs in input order and the model of each item.
func scoreRouted[T any](r routing, in []T, width int, id func(i int) string,
	predict func(s *scoring.Scorer, dst []float64, in []T) []float64) (out []float64, by []*Model) {
	n := len(in)
	by = make([]*Model, n)
	nChall := 0
	for i := range n {
		by[i] = r.serve(id(i))
		if by[i] != r.champ {
			nChall++
		}
	}
	switch nChall {
	case 0:
		return predict(r.champ.Scorer, make([]float64, width*n), in), by
	case n:
		return predict(r.chall.Scorer, make([]float64, width*n), in), by
	}
	champIn := make([]T, 0, n-nChall)
	challIn := make([]T, 0, nChall)
	for i, x := range in {
		if by[i] == r.champ {
			champIn = append(champIn, x)
		} else {
			challIn = append(challIn, x)
		}
	}
	co := predict(r.champ.Scorer, nil, champIn)
	ho := predict(r.chall.Scorer, nil, challIn)
	out = make([]float64, width*n)
	var c, h int
	for i := range n {
		if by[i] == r.champ {
			copy(out[i*width:(i+1)*width], co[c*width:(c+1)*width])
			c++
		} else {
			copy(out[i*width:(i+1)*width], ho[h*width:(h+1)*width])
			h++
		}
	}
	return out, by
}

// refOf returns the ModelRef of m's predictions: the one Models.Set made for it, shared
// by every response (messages are safe for concurrent reads and encoding), or a new one
// for a model never set; nil for nil.
func refOf(m *Model) *pb.ModelRef {
	switch {
	case m == nil:
		return nil
	case m.ref != nil:
		return m.ref
	}
	return modelRef(m)
}

// modelRef returns a new ModelRef naming m's version and role.
func modelRef(m *Model) *pb.ModelRef {
	role := pb.ModelRole_MODEL_ROLE_CHAMPION
	if m.Role == registry.RoleChallenger {
		role = pb.ModelRole_MODEL_ROLE_CHALLENGER
	}
	return &pb.ModelRef{Version: m.Version, Role: role}
}

// Kinds of prediction, as metrics and the prediction log name them.
const (
	kindSuccess   = "success"
	kindConflict  = "conflict"
	kindBuildTime = "buildtime"
)

// itemKey identifies one predicted item in the prediction log.
type itemKey struct{ change, ahead, build string }

// account counts the predictions of one kind in the metrics and writes them, with the
// shadow predictions if any, to the prediction log. width is 1, or 2 for build times.
func (p *predictor) account(kind string, by []*Model, out []float64, shadow *Model, shadowOut []float64, key func(i int) itemKey) {
	if len(by) == 0 {
		return
	}
	// At most two models serve a request: count the first one's items and the rest.
	first, nFirst := by[0], 0
	var other *Model
	for _, m := range by {
		if m == first {
			nFirst++
		} else {
			other = m
		}
	}
	p.cfg.Metrics.predicted(kind, first, nFirst)
	if other != nil {
		p.cfg.Metrics.predicted(kind, other, len(by)-nFirst)
	}
	if shadow != nil {
		p.cfg.Metrics.predicted(kind, shadow, len(by))
	}
	if p.cfg.PredictionLog == nil {
		return
	}
	now := time.Now().UTC()
	recs := make([]PredictionRecord, 0, len(by)*2)
	add := func(i int, m *Model, v []float64, served bool) {
		k := key(i)
		rec := PredictionRecord{
			Time: now, Kind: kind, Repo: p.cfg.Repo,
			ChangeID: k.change, AheadChangeID: k.ahead, BuildID: k.build,
			ModelVersion: m.Version, Role: m.Role.String(), Served: served,
		}
		switch kind {
		case kindSuccess:
			rec.PSucc = &v[0]
		case kindConflict:
			rec.PConf = &v[0]
		case kindBuildTime:
			rec.MeanSeconds, rec.StddevSeconds = &v[0], &v[1]
		}
		recs = append(recs, rec)
	}
	width := len(out) / max(len(by), 1)
	for i, m := range by {
		add(i, m, out[i*width:(i+1)*width], true)
		if shadow != nil {
			add(i, shadow, shadowOut[i*width:(i+1)*width], false)
		}
	}
	if err := p.cfg.PredictionLog.LogPredictions(recs); err != nil {
		p.cfg.Log.Error("writing the prediction log failed", "err", err)
	}
}

// PredictSuccess implements pb.PredictorServer.
func (p *predictor) PredictSuccess(ctx context.Context, req *pb.PredictSuccessRequest) (*pb.PredictSuccessResponse, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	resp, err := p.predictSuccess(ctx, req)
	return resp, toStatus(p.cfg.Log, "PredictSuccess", err)
}

func (p *predictor) predictSuccess(ctx context.Context, req *pb.PredictSuccessRequest) (*pb.PredictSuccessResponse, error) {
	in, ids, err := SuccessFromProto(req, p.cfg.Repo, p.cfg.MaxBatch)
	if err != nil {
		return nil, err
	}
	r, err := p.routing()
	if err != nil {
		return nil, err
	}
	id := func(i int) string { return ids[i] }
	out, by := scoreRouted(r, in, 1, id, (*scoring.Scorer).PredictSuccess)
	if err := checkOutputs(kindSuccess, by, out, 1); err != nil {
		p.faulted(err)
		return nil, err
	}
	var shadowOut []float64
	sm := r.shadowModel()
	if sm != nil {
		sm, shadowOut = p.checkShadow(kindSuccess, sm, len(in), sm.Scorer.PredictSuccess(nil, in), 1)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.account(kindSuccess, by, out, sm, shadowOut, func(i int) itemKey { return itemKey{change: ids[i]} })
	resp := &pb.PredictSuccessResponse{Predictions: make([]*pb.SuccessPrediction, len(in))}
	preds := make([]pb.SuccessPrediction, len(in)) // one allocation for the batch
	for i := range in {
		pr := &preds[i]
		pr.ChangeId, pr.PSucc, pr.Model = ids[i], out[i], refOf(by[i])
		resp.Predictions[i] = pr
	}
	return resp, nil
}

// PredictConflict implements pb.PredictorServer. A pair is routed by its behind change.
func (p *predictor) PredictConflict(ctx context.Context, req *pb.PredictConflictRequest) (*pb.PredictConflictResponse, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	resp, err := p.predictConflict(ctx, req)
	return resp, toStatus(p.cfg.Log, "PredictConflict", err)
}

func (p *predictor) predictConflict(ctx context.Context, req *pb.PredictConflictRequest) (*pb.PredictConflictResponse, error) {
	in, err := ConflictFromProto(req, p.cfg.Repo, p.cfg.MaxBatch)
	if err != nil {
		return nil, err
	}
	r, err := p.routing()
	if err != nil {
		return nil, err
	}
	if err := r.champ.Scorer.ConflictModel(); err != nil {
		return nil, err // a bundle without a P-conf model: FailedPrecondition
	}
	id := func(i int) string { return in[i].Behind.ChangeID }
	out, by := scoreRouted(r, in, 1, id, (*scoring.Scorer).PredictConflict)
	if err := checkOutputs(kindConflict, by, out, 1); err != nil {
		p.faulted(err)
		return nil, err
	}
	var shadowOut []float64
	sm := r.shadowModel()
	if sm != nil {
		sm, shadowOut = p.checkShadow(kindConflict, sm, len(in), sm.Scorer.PredictConflict(nil, in), 1)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.account(kindConflict, by, out, sm, shadowOut, func(i int) itemKey {
		return itemKey{change: in[i].Behind.ChangeID, ahead: in[i].Ahead.ChangeID}
	})
	resp := &pb.PredictConflictResponse{Predictions: make([]*pb.ConflictPrediction, len(in))}
	preds := make([]pb.ConflictPrediction, len(in)) // one allocation for the batch
	for i, pair := range in {
		pr := &preds[i]
		pr.AheadChangeId, pr.BehindChangeId = pair.Ahead.ChangeID, pair.Behind.ChangeID
		pr.PConf, pr.Model = out[i], refOf(by[i])
		resp.Predictions[i] = pr
	}
	return resp, nil
}

// PredictBuildTime implements pb.PredictorServer. A build is routed by its change.
func (p *predictor) PredictBuildTime(ctx context.Context, req *pb.PredictBuildTimeRequest) (*pb.PredictBuildTimeResponse, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	resp, err := p.predictBuildTime(ctx, req)
	return resp, toStatus(p.cfg.Log, "PredictBuildTime", err)
}

func (p *predictor) predictBuildTime(ctx context.Context, req *pb.PredictBuildTimeRequest) (*pb.PredictBuildTimeResponse, error) {
	in, err := BuildTimeFromProto(req, p.cfg.Repo, p.cfg.MaxBatch)
	if err != nil {
		return nil, err
	}
	r, err := p.routing()
	if err != nil {
		return nil, err
	}
	id := func(i int) string { return in[i].Change.ChangeID }
	out, by := scoreRouted(r, in, 2, id, (*scoring.Scorer).PredictBuildTime)
	if err := checkOutputs(kindBuildTime, by, out, 2); err != nil {
		p.faulted(err)
		return nil, err
	}
	var shadowOut []float64
	sm := r.shadowModel()
	if sm != nil {
		sm, shadowOut = p.checkShadow(kindBuildTime, sm, len(in), sm.Scorer.PredictBuildTime(nil, in), 2)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	builds := req.GetBuilds()
	p.account(kindBuildTime, by, out, sm, shadowOut, func(i int) itemKey {
		return itemKey{change: in[i].Change.ChangeID, build: builds[i].GetBuildId()}
	})
	resp := &pb.PredictBuildTimeResponse{Predictions: make([]*pb.BuildTimePrediction, len(in))}
	preds := make([]pb.BuildTimePrediction, len(in)) // one allocation for the batch
	for i, b := range in {
		pr := &preds[i]
		pr.BuildId, pr.ChangeId = builds[i].GetBuildId(), b.Change.ChangeID
		pr.MeanSeconds, pr.StddevSeconds = out[2*i], out[2*i+1]
		pr.Model, pr.BuildTimeFamily = refOf(by[i]), FamilyToProto(by[i].BuildFamily)
		resp.Predictions[i] = pr
	}
	return resp, nil
}

// ScoreSpeculation implements pb.PredictorServer: it predicts what the request leaves
// out (P-succ and build times routed by change, P-conf by the behind change), then plans
// with scoring.Speculate.
func (p *predictor) ScoreSpeculation(ctx context.Context, req *pb.ScoreSpeculationRequest) (*pb.ScoreSpeculationResponse, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	resp, err := p.scoreSpeculation(ctx, req)
	return resp, toStatus(p.cfg.Log, "ScoreSpeculation", err)
}

func (p *predictor) scoreSpeculation(ctx context.Context, req *pb.ScoreSpeculationRequest) (*pb.ScoreSpeculationResponse, error) {
	in, err := speculationFromProto(req, p.cfg.Repo, p.cfg.MaxBatch, p.cfg.Limits.MaxCapacity)
	if err != nil {
		return nil, err
	}
	if err := in.fillSpeculation(ctx, req.GetBuilds()); err != nil {
		return nil, err
	}
	qc, qe := req.GetChanges(), req.GetConflicts()
	sreq := &pb.SpeculationRequest{
		Changes:              make([]*pb.PendingChange, len(qc)),
		Conflicts:            make([]*pb.ConflictEdge, len(qe)),
		Builds:               req.GetBuilds(),
		Policy:               req.GetPolicy(),
		SpeculationThreshold: req.GetSpeculationThreshold(),
		Capacity:             req.GetCapacity(),
		BlrdThreshold:        req.GetBlrdThreshold(),
		FallbackFloor:        req.GetFallbackFloor(),
		LandedChangeIds:      req.GetLandedChangeIds(),
		LandedConflicts:      req.GetLandedConflicts(),
	}
	resp := &pb.ScoreSpeculationResponse{
		Changes:   make([]*pb.ScoredChange, len(qc)),
		Conflicts: make([]*pb.ScoredConflict, len(qe)),
	}
	for i, q := range qc {
		sreq.Changes[i] = &pb.PendingChange{
			ChangeId: in.changes[i].ChangeID, ArrivedAt: q.GetArrivedAt(), PSucc: q.GetPSucc(),
			BuildTimeMeanSeconds: q.GetBuildTimeMeanSeconds(), BuildTimeStddevSeconds: q.GetBuildTimeStddevSeconds(),
		}
	}
	for e, c := range qe {
		sreq.Conflicts[e] = &pb.ConflictEdge{AheadChangeId: c.GetAheadChangeId(), BehindChangeId: c.GetBehindChangeId(), PConf: c.GetPConf()}
		resp.Conflicts[e] = &pb.ScoredConflict{AheadChangeId: c.GetAheadChangeId(), BehindChangeId: c.GetBehindChangeId()}
	}
	changeModel := make([]*Model, len(qc))
	// r is read once: the models that predict for a change also set its build-time
	// family when the caller does not.
	r, rerr := p.routing()
	for i, q := range qc {
		fam, _ := FamilyFromProto(q.GetBuildTimeFamily(), scoring.BuildNormal) // checked by speculationFromProto
		if q.GetBuildTimeFamily() == pb.BuildTimeFamily_BUILD_TIME_FAMILY_UNSPECIFIED && rerr == nil {
			fam = r.serve(in.changes[i].ChangeID).BuildFamily
		}
		sreq.Changes[i].BuildTimeFamily = FamilyToProto(fam)
	}
	if len(in.needSucc)+len(in.needTime)+len(in.needConf) > 0 {
		if rerr != nil {
			return nil, rerr
		}
		shadow := r.shadowModel()
		if idx := in.needSucc; len(idx) > 0 {
			sin := make([]scoring.SuccessInput, len(idx))
			for k, i := range idx {
				sin[k] = scoring.SuccessInput{Change: &in.changes[i], Spec: in.specs[i]}
			}
			id := func(k int) string { return in.changes[idx[k]].ChangeID }
			out, by := scoreRouted(r, sin, 1, id, (*scoring.Scorer).PredictSuccess)
			if err := checkOutputs(kindSuccess, by, out, 1); err != nil {
				p.faulted(err)
				return nil, err
			}
			var so []float64
			sm := shadow
			if sm != nil {
				sm, so = p.checkShadow(kindSuccess, sm, len(sin), sm.Scorer.PredictSuccess(nil, sin), 1)
			}
			p.account(kindSuccess, by, out, sm, so, func(k int) itemKey { return itemKey{change: id(k)} })
			for k, i := range idx {
				sreq.Changes[i].PSucc = out[k]
				changeModel[i] = by[k]
			}
		}
		if idx := in.needTime; len(idx) > 0 {
			bin := make([]scoring.BuildInput, len(idx))
			for k, i := range idx {
				bin[k] = scoring.BuildInput{Change: &in.changes[i], Spec: in.buildSpecs[i]}
			}
			id := func(k int) string { return in.changes[idx[k]].ChangeID }
			out, by := scoreRouted(r, bin, 2, id, (*scoring.Scorer).PredictBuildTime)
			if err := checkOutputs(kindBuildTime, by, out, 2); err != nil {
				p.faulted(err)
				return nil, err
			}
			var so []float64
			sm := shadow
			if sm != nil {
				sm, so = p.checkShadow(kindBuildTime, sm, len(bin), sm.Scorer.PredictBuildTime(nil, bin), 2)
			}
			p.account(kindBuildTime, by, out, sm, so, func(k int) itemKey { return itemKey{change: id(k)} })
			for k, i := range idx {
				if qc[i].BuildTimeMeanSeconds == nil {
					sreq.Changes[i].BuildTimeMeanSeconds = out[2*k]
				}
				if qc[i].BuildTimeStddevSeconds == nil {
					sreq.Changes[i].BuildTimeStddevSeconds = out[2*k+1]
				}
				changeModel[i] = by[k]
			}
		}
		if idx := in.needConf; len(idx) > 0 {
			pin := make([]scoring.PairInput, len(idx))
			for k, e := range idx {
				pin[k] = scoring.PairInput{Ahead: &in.changes[in.ahead[e]], Behind: &in.changes[in.behind[e]]}
			}
			id := func(k int) string { return pin[k].Behind.ChangeID }
			out, by := scoreRouted(r, pin, 1, id, (*scoring.Scorer).PredictConflict)
			if err := checkOutputs(kindConflict, by, out, 1); err != nil {
				p.faulted(err)
				return nil, err
			}
			var so []float64
			sm := shadow
			if sm != nil {
				sm, so = p.checkShadow(kindConflict, sm, len(pin), sm.Scorer.PredictConflict(nil, pin), 1)
			}
			p.account(kindConflict, by, out, sm, so, func(k int) itemKey {
				return itemKey{change: pin[k].Behind.ChangeID, ahead: pin[k].Ahead.ChangeID}
			})
			for k, e := range idx {
				sreq.Conflicts[e].PConf = out[k]
				resp.Conflicts[e].Model = refOf(by[k])
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, c := range sreq.Changes {
		resp.Changes[i] = &pb.ScoredChange{
			ChangeId: c.GetChangeId(), PSucc: c.GetPSucc(),
			BuildTimeMeanSeconds: c.GetBuildTimeMeanSeconds(), BuildTimeStddevSeconds: c.GetBuildTimeStddevSeconds(),
			BuildTimeFamily: c.GetBuildTimeFamily(), Model: refOf(changeModel[i]),
		}
	}
	for e, c := range sreq.Conflicts {
		resp.Conflicts[e].PConf = c.GetPConf()
	}
	q, cfg, err := SpeculationFromProto(sreq)
	if err != nil {
		return nil, err
	}
	lim := p.cfg.Limits
	cfg.MaxExplored, cfg.MaxPrefixWords, cfg.MaxNodeIDs = lim.MaxExplored, lim.MaxPrefixWords, lim.MaxNodeIDs
	plan, err := scoring.SpeculateContext(ctx, q, cfg)
	if err != nil {
		return nil, fmt.Errorf("server: planning: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	resp.Plan = SpeculationToProto(sreq, plan)
	if err := fitResponse(resp, p.cfg.Limits.MaxResponseBytes); err != nil {
		return nil, err
	}
	return resp, nil
}

// GetModelInfo implements pb.PredictorServer.
func (p *predictor) GetModelInfo(ctx context.Context, req *pb.GetModelInfoRequest) (*pb.GetModelInfoResponse, error) {
	resp, err := p.getModelInfo(req)
	return resp, toStatus(p.cfg.Log, "GetModelInfo", err)
}

func (p *predictor) getModelInfo(req *pb.GetModelInfoRequest) (*pb.GetModelInfoResponse, error) {
	var v violations
	checkRepo(req.GetRepo(), p.cfg.Repo, &v)
	if err := v.err(); err != nil {
		return nil, err
	}
	r, err := p.routing()
	if err != nil {
		return nil, err
	}
	resp := &pb.GetModelInfoResponse{
		ChallengerShare: p.cfg.ChallengerShare, Shadow: p.cfg.Shadow,
		Limits: p.cfg.Limits.toProto(p.cfg.MaxBatch),
	}
	resp.ChampionPointerVersion, resp.ChampionFallback = p.models.ChampionFallback()
	for _, m := range []*Model{r.champ, r.chall} {
		if m == nil {
			continue
		}
		mf := m.Manifest
		resp.Models = append(resp.Models, &pb.ModelInfo{
			Model:                modelRef(m),
			Repo:                 mf.Repo,
			TrainedAt:            timestamppb.New(mf.TrainedAt),
			WindowFrom:           timestamppb.New(mf.Window.From),
			WindowTo:             timestamppb.New(mf.Window.To),
			FeatureSchemaHash:    mf.FeatureSchemaHash,
			FeatureSchemaVersion: int32(mf.FeatureSchemaVersion),
			Metrics:              mf.Metrics,
			LoadedAt:             timestamppb.New(m.LoadedAt),
			BuildTimeFamily:      FamilyToProto(m.BuildFamily),
			ServedModels:         m.Served,
		})
	}
	return resp, nil
}

// CompareBatching implements pb.PredictorServer with scoring.CompareBatching. The list
// of probabilities and max_batch_size are bounded by Config.MaxBatch.
func (p *predictor) CompareBatching(ctx context.Context, req *pb.BatchRequest) (*pb.BatchResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, toStatus(p.cfg.Log, "CompareBatching", err)
	}
	resp, err := p.compareBatching(req)
	return resp, toStatus(p.cfg.Log, "CompareBatching", err)
}

func (p *predictor) compareBatching(req *pb.BatchRequest) (*pb.BatchResponse, error) {
	var v violations
	if n := len(req.GetPSucc()); n > p.cfg.MaxBatch {
		v.add("p_succ", "holds %d items, more than the limit of %d", n, p.cfg.MaxBatch)
	}
	if n := int(req.GetMaxBatchSize()); n > p.cfg.MaxBatch {
		v.add("max_batch_size", "%d is more than the limit of %d", n, p.cfg.MaxBatch)
	}
	for i, x := range req.GetPSucc() {
		if !checkUnit(x) {
			v.add(fmt.Sprintf("p_succ[%d]", i), "%v is not a probability in [0, 1]", x)
		}
	}
	if x := req.GetCommonPSucc(); len(req.GetPSucc()) == 0 && !checkUnit(x) {
		v.add("common_p_succ", "%v is not a probability in [0, 1]", x)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	q, err := BatchFromProto(req)
	if err != nil {
		return nil, err
	}
	c, err := scoring.CompareBatching(q)
	if err != nil {
		return nil, fmt.Errorf("server: batching: %w", err)
	}
	return BatchToProto(c), nil
}
