// Package server is the gRPC adapter of predictd: it serves sqpredict.v1.Predictor
// over the models of a loaded bundle, converting protobuf messages to scoring types and
// back, validating input at the boundary and reporting errors with gRPC status codes.
//
// # Requests and validation
//
// Requests carry raw attributes of changes and builds, never feature vectors.
// SuccessFromProto, ConflictFromProto and BuildTimeFromProto (and the speculation
// request's converter) read them through the getters, turn unset optional numbers into
// NaN (missing) and record every offending field, by its path in the request
// ("changes[3].change.lines_added"), in an *InvalidRequestError: an empty list or one
// longer than Config.MaxBatch, a NaN, infinite or negative number, an unknown flag,
// an empty or duplicate change id, a pair or build naming a change the request does not
// hold, a repository other than the server's, a probability outside [0, 1], a capacity
// below 1. The conversions of the speculation math live in speculation.go
// (SpeculationFromProto, SpeculationToProto, BatchFromProto, BatchToProto).
//
// toStatus in errors.go is the only place that picks a status code: invalid input is
// InvalidArgument with an errdetails.BadRequest listing the field violations, a server
// with no model yet is Unavailable, context errors keep their code, anything else is
// Internal with a generic message and the detail logged. UnaryInterceptor recovers
// panics as Internal, refuses requests whose deadline has passed and records request
// counts and latencies in Metrics.
//
// # Limits
//
// Limits bound one request's work (capacity, search, response size, run time) and the
// connections: ServerOptions turns them into gRPC server options (receive size, streams
// per connection, keepalive enforcement and pings, handshake timeout) and a tap handle
// that refuses a Predictor request with ResourceExhausted, from its headers and before
// its message is read, while Limits.MaxInflight requests of its method are in flight,
// and a codec that weighs the message of a Predictor registered with RegisterPredictor
// by its size, before decoding it, refusing it the same way when the requests admitted
// would hold more than Limits.MaxRequestMemory; each shed is counted in
// predictd_requests_shed_total. Metric labels are bounded: roles, methods,
// codes and kinds, with versions only in predictd_model_info (one series per role).
//
// # Models, reloads and routing
//
// Models holds the champion and the optional challenger in atomic pointers; a request
// reads them once, so a reload never changes the models of a request in flight.
// Reloader.Reload loads a version through a LoadFunc (which verifies checksums, the
// feature schema and every model), swaps it in on success and keeps the current model
// on failure; Reloader.Follow applies the events of registry.Watch, and sets the
// reload-success metric back to 1 when a pointer rolls back to the served version.
// Reloader.StartChampion loads the champion at start and, when the pointer's version
// fails, serves the newest older version that loads (Models.ChampionFallback).
// With Reloader.ChallengerFollowsChampion the challenger is the champion bundle's own
// challenger models. NewHealth reports NOT_SERVING until the first champion is loaded;
// HandleHTTPHealth serves /healthz and /readyz; Tracker counts requests for the
// shutdown summary.
//
// # Build-time families and speculation counts
//
// Model.BuildFamily is the family of a bundle's served build-time model. Build-time
// predictions carry it, and ScoreSpeculation gives each change the family of the model
// serving it (unless the request states one), so that bypass and BLRD use Phi(Z) only
// between Normal build times and scoring's log-normal finish order otherwise.
// ScoreSpeculation also computes the speculation counts a caller leaves out from the
// queue it holds (features.SubmissionSpeculation over the changes ahead); counts the
// caller sets win.
//
// # Model faults
//
// An output no caller may receive (NaN, infinite, a probability outside [0, 1], a
// negative mean or standard deviation, a non-positive LogNormal mean) fails the request
// with Internal: a *ModelFaultError, logged with the model's version and counted.
//
// With a challenger loaded, RouteChallenger sends a change to it when
// FNV-1a-64(change id), finalised with MurmurHash3's fmix64, divided by 2^64, is below
// Config.ChallengerShare: deterministic across processes and versions, and monotone in
// the share. Pairs are routed by their behind change, builds by their change. With
// Config.Shadow the champion answers every item and the challenger scores the same
// items for the prediction log only. Every prediction names the version and role of the
// model that produced it.
//
// # Prediction log
//
// RotatingLog writes one JSON object per prediction and model (PredictionRecord) to
// DIR/predictions.jsonl, rotating it by size to predictions-<UTC time>.jsonl and
// removing the oldest rotated files beyond a count and a total size (LogRetention).
// predictd serves it through an AsyncLog: a request only appends its records to a
// bounded queue that one goroutine drains to the file; when the queue is full the
// records are dropped and counted, and the queue is drained at shutdown. A record:
//
//	{"time":"2026-11-21T10:00:00.123Z","kind":"buildtime","repo":"ios",
//	 "change_id":"C0000042","build_id":"B17","model_version":"20261121T094000Z-000001",
//	 "role":"champion","served":true,"mean_seconds":2710.5,"stddev_seconds":480.2}
//
// kind is success (p_succ), conflict (p_conf, with ahead_change_id) or buildtime
// (mean_seconds, stddev_seconds, with build_id). A join with outcomes takes the
// change id (and ahead change or build id) as the key and the latest record before the
// outcome; served is false for shadow predictions.
package server
