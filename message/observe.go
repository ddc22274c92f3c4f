package message

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// MapStats is what ObserveMap reads from a map. Every *watchable.Map and
// watchable.View implements it. Its methods are called on the goroutine that
// gathers the metrics, so they must be safe for concurrent use.
type MapStats interface {
	Len() int
	Revision() uint64
	Subscribers() int
	Notifiers() int
	Initialized() <-chan struct{}
}

// ErrAlreadyObserved is returned by ObserveMap for a name that is already
// observed.
var ErrAlreadyObserved = errors.New("map name already observed")

// ObserveMap exposes the entries, revision, subscribers, notifiers and
// initialization of mp under the label map=name (see Metrics). They are read when Prometheus scrapes, so
// observing a map costs its writers nothing.
//
// The returned stop function removes the map from the metrics; it is
// idempotent, and afterwards the name may be observed again. A nil *Metrics
// observes nothing and returns a stop function that does nothing.
// ObserveMap returns an error wrapping ErrAlreadyObserved if name is
// observed already, and an error if name is empty.
func (m *Metrics) ObserveMap(name string, mp MapStats) (stop func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	return m.maps.add(name, mp)
}

// mapCollector reports the observed maps on scrape. Its descriptions are
// fixed, so the registry can check them once; the set of maps changes
// freely.
type mapCollector struct {
	entries, revision, subscribers, notifiers, initialized *prometheus.Desc

	mu   sync.Mutex
	maps map[string]*observed
}

type observed struct{ mp MapStats }

func newMapCollector() *mapCollector {
	labels := []string{"map"}
	return &mapCollector{
		entries:     prometheus.NewDesc("switchyard_map_entries", "Entries in a watchable map.", labels, nil),
		revision:    prometheus.NewDesc("switchyard_map_revision", "Revision of a watchable map: the number of effective writes so far.", labels, nil),
		subscribers: prometheus.NewDesc("switchyard_map_subscribers", "Open subscriptions to a watchable map.", labels, nil),
		notifiers:   prometheus.NewDesc("switchyard_map_notifiers", "Notify registrations on a watchable map.", labels, nil),
		initialized: prometheus.NewDesc("switchyard_map_initialized", "1 when a watchable map is initialized (no initializer pending), else 0.", labels, nil),
		maps:        make(map[string]*observed),
	}
}

func (c *mapCollector) add(name string, mp MapStats) (func(), error) {
	if name == "" {
		return nil, errors.New("observing a map: empty name")
	}
	if mp == nil {
		return nil, fmt.Errorf("observing map %q: nil map", name)
	}
	o := &observed{mp: mp}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.maps[name]; ok {
		return nil, fmt.Errorf("observing map %q: %w", name, ErrAlreadyObserved)
	}
	c.maps[name] = o
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.maps[name] == o {
			delete(c.maps, name)
		}
	}, nil
}

// Describe implements prometheus.Collector.
func (c *mapCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.entries
	ch <- c.revision
	ch <- c.subscribers
	ch <- c.notifiers
	ch <- c.initialized
}

// Collect implements prometheus.Collector.
func (c *mapCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	maps := make(map[string]MapStats, len(c.maps))
	for name, o := range c.maps {
		maps[name] = o.mp
	}
	c.mu.Unlock()
	for name, mp := range maps {
		ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(mp.Len()), name)
		ch <- prometheus.MustNewConstMetric(c.revision, prometheus.GaugeValue, float64(mp.Revision()), name)
		ch <- prometheus.MustNewConstMetric(c.subscribers, prometheus.GaugeValue, float64(mp.Subscribers()), name)
		ch <- prometheus.MustNewConstMetric(c.notifiers, prometheus.GaugeValue, float64(mp.Notifiers()), name)
		initialized := 0.0
		select {
		case <-mp.Initialized():
			initialized = 1
		default:
		}
		ch <- prometheus.MustNewConstMetric(c.initialized, prometheus.GaugeValue, initialized, name)
	}
}
