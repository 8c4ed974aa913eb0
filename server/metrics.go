package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/sqpredict/sqpredict/registry"
)

// Metrics are the Prometheus metrics of the server, registered on the Registerer given
// to NewMetrics (never on the global registry). A nil *Metrics records nothing.
type Metrics struct {
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	predictions    *prometheus.CounterVec
	reloadOK       *prometheus.GaugeVec
	reloadTime     *prometheus.GaugeVec
	reloadDuration *prometheus.HistogramVec
	modelFaults    *prometheus.CounterVec
	fallbackGauge  prometheus.Gauge
	shedTotal      *prometheus.CounterVec
	modelInfo      *prometheus.GaugeVec
	logDrops       prometheus.Counter
}

// NewMetrics creates the server's metrics and registers them on reg:
//
//	predictd_requests_total{method,code}                          requests answered
//	predictd_request_duration_seconds{method,code}                handler latency
//	predictd_predictions_total{kind,role}                         predictions returned or shadowed
//	predictd_model_info{role,version}                             1 for the version each role serves; no series for a role with none
//	predictd_prediction_log_dropped_records_total                 prediction records dropped because the log queue was full
//	predictd_model_last_reload_successful{role}                   1 if the last load succeeded
//	predictd_model_last_reload_success_timestamp_seconds{role}    time of the last good load
//	predictd_model_reload_duration_seconds{role}                  time to load and verify a bundle
//	predictd_model_faults_total{kind,role}                        invalid model outputs (request failed INTERNAL)
//	predictd_model_champion_fallback                              1 while an older version serves in place of the champion pointer's
//	predictd_requests_shed_total{method,limit}                    requests refused with RESOURCE_EXHAUSTED before being decoded
//
// Label sets are bounded: kinds, roles, gRPC methods and codes are fixed lists, and
// the only version label, of predictd_model_info, has one series per role at a time
// (the old version's series is deleted when a role loads another).
//
// It panics if a metric is already registered on reg, as prometheus.MustRegister does.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "predictd_requests_total",
			Help: "gRPC requests answered, by method and status code.",
		}, []string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "predictd_request_duration_seconds",
			Help: "Time to answer a gRPC request, by method and status code.",
			// From 50µs: a single-build request takes well under a millisecond.
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}, []string{"method", "code"}),
		predictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "predictd_predictions_total",
			Help: "Predictions made, by kind (success, conflict, buildtime) and role; shadow predictions included. predictd_model_info names the role's version.",
		}, []string{"kind", "role"}),
		reloadOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "predictd_model_last_reload_successful",
			Help: "Whether the last attempt to load a bundle for the role succeeded (1) or not (0).",
		}, []string{"role"}),
		reloadTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "predictd_model_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful bundle load for the role.",
		}, []string{"role"}),
		reloadDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "predictd_model_reload_duration_seconds",
			Help:    "Time to load and verify a bundle, successful or not.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}, []string{"role"}),
		modelFaults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "predictd_model_faults_total",
			Help: "Model outputs that were NaN, infinite or out of range, by kind and role; each failed its request with INTERNAL.",
		}, []string{"kind", "role"}),
		fallbackGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "predictd_model_champion_fallback",
			Help: "1 while the champion served is an older version loaded at start because the champion pointer's version failed to load, 0 otherwise.",
		}),
		shedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "predictd_requests_shed_total",
			Help: "Requests refused with RESOURCE_EXHAUSTED before their message was decoded, by method and the limit that refused them (max_inflight, max_request_memory).",
		}, []string{"method", "limit"}),
		modelInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "predictd_model_info",
			Help: "1 for the bundle version each role serves (join on role to label other series with it); a role serving nothing has no series.",
		}, []string{"role", "version"}),
		logDrops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "predictd_prediction_log_dropped_records_total",
			Help: "Prediction records dropped because the prediction log's queue was full (the disk could not keep up); requests never wait for the log.",
		}),
	}
	reg.MustRegister(m.requests, m.latency, m.predictions, m.reloadOK, m.reloadTime, m.reloadDuration, m.modelFaults, m.fallbackGauge,
		m.shedTotal, m.modelInfo, m.logDrops)
	return m
}

// request records one answered request.
func (m *Metrics) request(method string, code codes.Code, d time.Duration) {
	if m == nil {
		return
	}
	c := code.String()
	m.requests.WithLabelValues(method, c).Inc()
	m.latency.WithLabelValues(method, c).Observe(d.Seconds())
}

// predicted records n predictions of kind by model.
func (m *Metrics) predicted(kind string, model *Model, n int) {
	if m == nil || n == 0 {
		return
	}
	m.predictions.WithLabelValues(kind, model.Role.String()).Add(float64(n))
}

// serving records that role serves version ("" for nothing): the role's previous
// predictd_model_info series is deleted first, so that only the current one exists.
func (m *Metrics) serving(role registry.Role, version string) {
	if m == nil {
		return
	}
	r := role.String()
	m.modelInfo.DeletePartialMatch(prometheus.Labels{"role": r})
	if version != "" {
		m.modelInfo.WithLabelValues(r, version).Set(1)
	}
}

// reloaded records the result of one load attempt for role.
func (m *Metrics) reloaded(role registry.Role, err error, start, end time.Time) {
	if m == nil {
		return
	}
	r := role.String()
	m.reloadDuration.WithLabelValues(r).Observe(end.Sub(start).Seconds())
	if err != nil {
		m.reloadOK.WithLabelValues(r).Set(0)
		return
	}
	m.reloadOK.WithLabelValues(r).Set(1)
	m.reloadTime.WithLabelValues(r).Set(float64(end.UnixNano()) / 1e9)
}

// restored records that role's pointer names the bundle being served again after a
// failed load: the last reload counts as successful (the success time is unchanged).
func (m *Metrics) restored(role registry.Role) {
	if m == nil {
		return
	}
	m.reloadOK.WithLabelValues(role.String()).Set(1)
}

// fallback records whether an older version serves in place of the champion pointer's.
func (m *Metrics) fallback(on bool) {
	if m == nil {
		return
	}
	v := 0.0
	if on {
		v = 1
	}
	m.fallbackGauge.Set(v)
}

// modelFault records one invalid model output.
func (m *Metrics) modelFault(kind, role string) {
	if m == nil {
		return
	}
	m.modelFaults.WithLabelValues(kind, role).Inc()
}

// shed records one request of method refused by limit.
func (m *Metrics) shed(method, limit string) {
	if m == nil {
		return
	}
	m.shedTotal.WithLabelValues(method, limit).Inc()
}

// logDropped records n prediction records dropped by a full log queue.
func (m *Metrics) logDropped(n int) {
	if m == nil {
		return
	}
	m.logDrops.Add(float64(n))
}
