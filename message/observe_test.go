package message_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/watchable"
)

func newMetrics(t *testing.T) (*prometheus.Registry, *message.Metrics) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := message.NewMetrics(reg)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	return reg, m
}

var mapMetricNames = []string{"switchyard_map_entries", "switchyard_map_revision", "switchyard_map_subscribers"}

func TestObserveMapReadsOnScrape(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg, metrics := newMetrics(t)
	var routes watchable.Map[string, int]
	var hosts watchable.Map[int, string]
	stopRoutes, err := metrics.ObserveMap("routes", &routes)
	if err != nil {
		t.Fatal(err)
	}
	defer stopRoutes()
	stopHosts, err := metrics.ObserveMap("hosts", &hosts)
	if err != nil {
		t.Fatal(err)
	}
	defer stopHosts()

	// Written after ObserveMap: the values are read when gathered.
	routes.Store("a", 1)
	routes.Store("b", 2)
	routes.Store("a", 3)
	routes.Delete("b")
	subs := []<-chan watchable.Snapshot[string, int]{routes.Subscribe(ctx), routes.Subscribe(ctx)}
	hosts.Store(1, "h1")
	routes.Notify(ctx, make(chan struct{}, 1))
	hostsLoaded := hosts.RegisterInitializer("test")

	want := `
# HELP switchyard_map_entries Entries in a watchable map.
# TYPE switchyard_map_entries gauge
switchyard_map_entries{map="hosts"} 1
switchyard_map_entries{map="routes"} 1
# HELP switchyard_map_revision Revision of a watchable map: the number of effective writes so far.
# TYPE switchyard_map_revision gauge
switchyard_map_revision{map="hosts"} 1
switchyard_map_revision{map="routes"} 4
# HELP switchyard_map_subscribers Open subscriptions to a watchable map.
# TYPE switchyard_map_subscribers gauge
switchyard_map_subscribers{map="hosts"} 0
switchyard_map_subscribers{map="routes"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), mapMetricNames...); err != nil {
		t.Error(err)
	}
	want = `
# HELP switchyard_map_notifiers Notify registrations on a watchable map.
# TYPE switchyard_map_notifiers gauge
switchyard_map_notifiers{map="hosts"} 0
switchyard_map_notifiers{map="routes"} 1
# HELP switchyard_map_initialized 1 when a watchable map is initialized (no initializer pending), else 0.
# TYPE switchyard_map_initialized gauge
switchyard_map_initialized{map="hosts"} 0
switchyard_map_initialized{map="routes"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "switchyard_map_notifiers", "switchyard_map_initialized"); err != nil {
		t.Error(err)
	}
	hostsLoaded()

	cancel() // ends both subscriptions, once their channels are closed
	for _, sub := range subs {
		for range sub {
		}
	}
	stopHosts()
	stopHosts() // idempotent
	want = `
# HELP switchyard_map_entries Entries in a watchable map.
# TYPE switchyard_map_entries gauge
switchyard_map_entries{map="routes"} 1
# HELP switchyard_map_revision Revision of a watchable map: the number of effective writes so far.
# TYPE switchyard_map_revision gauge
switchyard_map_revision{map="routes"} 4
# HELP switchyard_map_subscribers Open subscriptions to a watchable map.
# TYPE switchyard_map_subscribers gauge
switchyard_map_subscribers{map="routes"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), mapMetricNames...); err != nil {
		t.Errorf("after stopping hosts: %v", err)
	}
}

func TestObserveMapErrors(t *testing.T) {
	reg, metrics := newMetrics(t)
	var m watchable.Map[string, int]
	stop, err := metrics.ObserveMap("m", &m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.ObserveMap("m", &m); !errors.Is(err, message.ErrAlreadyObserved) {
		t.Errorf("observing a name twice: got %v, want ErrAlreadyObserved", err)
	}
	if _, err := metrics.ObserveMap("", &m); err == nil {
		t.Error("observing with an empty name: got nil error")
	}
	if _, err := metrics.ObserveMap("nil", nil); err == nil {
		t.Error("observing a nil map: got nil error")
	}
	stop()
	stop2, err := metrics.ObserveMap("m", &m)
	if err != nil {
		t.Errorf("observing a name again after stop: %v", err)
	}
	stop() // a stale stop must not remove the new observation
	if n, err := testutil.GatherAndCount(reg, "switchyard_map_entries"); err != nil || n != 1 {
		t.Errorf("after a stale stop, GatherAndCount = %d, %v; want 1 map observed", n, err)
	}
	stop2()
}

func TestNilMetricsObserveNothing(t *testing.T) {
	var metrics *message.Metrics
	var m watchable.Map[string, int]
	stop, err := metrics.ObserveMap("m", &m)
	if err != nil {
		t.Fatalf("ObserveMap on nil Metrics: %v", err)
	}
	stop()
}

func TestNewMetricsTwiceOnOneRegistry(t *testing.T) {
	reg, first := newMetrics(t)
	if _, err := message.NewMetrics(reg); err == nil {
		t.Fatal("second NewMetrics on the same registry: got nil error")
	}
	// The failed attempt left the first metrics in place.
	var m watchable.Map[string, int]
	m.Store("a", 1)
	stop, err := first.ObserveMap("m", &m)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if n, err := testutil.GatherAndCount(reg, "switchyard_map_entries"); err != nil || n != 1 {
		t.Errorf("GatherAndCount = %d, %v; want 1 map observed", n, err)
	}
}

func TestNewMetricsRegistersNothingElse(t *testing.T) {
	reg, _ := newMetrics(t)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// Vectors without children and maps not observed expose nothing, and
	// nothing went to the default registry.
	if len(mfs) != 0 {
		t.Errorf("a fresh Metrics exposes %d metric families, want 0", len(mfs))
	}
	if n, err := testutil.GatherAndCount(prometheus.DefaultGatherer, "switchyard_message_updates_total", "switchyard_map_entries"); err != nil || n != 0 {
		t.Errorf("default registry holds %d switchyard metrics (%v), want 0", n, err)
	}
}
