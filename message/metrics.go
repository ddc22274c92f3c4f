package message

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus metrics of handling loops (see WithMetrics) and
// of observed maps (see ObserveMap). Handler metrics carry the labels
// "runner" and "message" from Metadata:
//
//	switchyard_message_updates_total                 counter: updates handled (passed to a handler)
//	switchyard_message_handler_errors_total          counter: errors returned by handlers
//	switchyard_message_handler_panics_total          counter: panics recovered from handlers
//	switchyard_message_handler_duration_seconds      histogram: time per handler call
//	switchyard_message_snapshot_updates              histogram: updates per delivered snapshot
//
// Map metrics carry the label "map", the name given to ObserveMap:
//
//	switchyard_map_entries      gauge: entries in the map
//	switchyard_map_revision     gauge: the map's revision, its number of effective writes
//	switchyard_map_subscribers  gauge: open subscriptions
//	switchyard_map_notifiers    gauge: Notify registrations
//	switchyard_map_initialized  gauge: 1 when the map is initialized, else 0
//
// A Metrics is safe for concurrent use by any number of loops. A nil
// *Metrics records nothing.
type Metrics struct {
	updates  *prometheus.CounterVec
	errors   *prometheus.CounterVec
	panics   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	batch    *prometheus.HistogramVec
	maps     *mapCollector
}

// NewMetrics creates the metrics and registers them on reg. It fails, and
// leaves reg as it was, if reg already has metrics of the same names (such
// as from an earlier NewMetrics on the same registry).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	handlerLabels := []string{"runner", "message"}
	m := &Metrics{
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_message_updates_total",
			Help: "Updates handled by message handlers (for a snapshot handler, the updates of the snapshots it was given).",
		}, handlerLabels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_message_handler_errors_total",
			Help: "Errors returned by message handlers.",
		}, handlerLabels),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_message_handler_panics_total",
			Help: "Panics recovered from message handlers.",
		}, handlerLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchyard_message_handler_duration_seconds",
			Help:    "Time spent in one call of a message handler.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10), // 10µs to 2.6s
		}, handlerLabels),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchyard_message_snapshot_updates",
			Help:    "Updates per snapshot delivered to a message handling loop; large values mean coalesced changes.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8), // 1 to 16384
		}, handlerLabels),
		maps: newMapCollector(),
	}
	cs := []prometheus.Collector{m.updates, m.errors, m.panics, m.duration, m.batch, m.maps}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("registering switchyard message metrics: %w", err)
		}
	}
	return m, nil
}
