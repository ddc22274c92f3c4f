package gateway

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a Proxy's Prometheus metrics; pass them with WithMetrics.
// One Metrics may serve several Proxies. A nil *Metrics records nothing.
//
//	switchyard_gateway_requests_total{route, code}                counter
//	switchyard_gateway_request_duration_seconds{route, code}      histogram
//	switchyard_gateway_retries_total{route}                       counter
//	switchyard_gateway_ejections_total{route}                     counter
//	switchyard_gateway_upstream_failures_total{route, kind}       counter
//
// code is the status class ("2xx" ... "5xx"), or "canceled" when the client
// went away first; route is "" for requests no route matched. Routes come
// from the program's configuration, so their number is bounded; targets,
// which come and go, are never labels.
type Metrics struct {
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	retries   *prometheus.CounterVec
	ejections *prometheus.CounterVec
	failures  *prometheus.CounterVec
}

// durationBuckets span a cached answer to the longest wait a default
// policy allows.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30}

// NewMetrics registers the gateway's metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_gateway_requests_total",
			Help: "Requests answered by the gateway, by route and status class.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchyard_gateway_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by route and status class.",
			Buckets: durationBuckets,
		}, []string{"route", "code"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_gateway_retries_total",
			Help: "Requests sent again to another target after failing to reach one, by route.",
		}, []string{"route"}),
		ejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_gateway_ejections_total",
			Help: "Targets ejected after failing in a row, by route.",
		}, []string{"route"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_gateway_upstream_failures_total",
			Help: "Attempts that failed, by route and kind (connection refused, connect timeout, status 503, ...).",
		}, []string{"route", "kind"}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.retries, m.ejections, m.failures} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("register gateway metrics: %w", err)
	}
	return m, nil
}

func (m *Metrics) observe(route, code string, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, code).Inc()
	m.duration.WithLabelValues(route, code).Observe(d.Seconds())
}

func (m *Metrics) retry(route string) {
	if m != nil {
		m.retries.WithLabelValues(route).Inc()
	}
}

func (m *Metrics) ejection(route string) {
	if m != nil {
		m.ejections.WithLabelValues(route).Inc()
	}
}

func (m *Metrics) upstreamFailure(route, kind string) {
	if m != nil {
		m.failures.WithLabelValues(route, kind).Inc()
	}
}
