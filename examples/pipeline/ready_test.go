package main

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// gatedFS is an fs.FS whose files cannot be opened before gate is closed:
// a configuration source whose first reading is as slow as a test wants.
type gatedFS struct {
	fs.FS
	gate <-chan struct{}
}

func (g gatedFS) Open(name string) (fs.File, error) {
	<-g.gate
	return g.FS.Open(name)
}

// TestRoutingWaitsForItsInputs runs the whole pipeline with a configuration
// that cannot be read yet, and shows that nothing orders the runners by
// hand, yet the route table is not computed before every input of the
// routing translator is initialized: the registry runs, the demo backends
// register, and the table stays unpublished and the pipeline not ready;
// once the configuration is read, the very first table holds every route,
// resolved against what the registry already knew.
func TestRoutingWaitsForItsInputs(t *testing.T) {
	gate := make(chan struct{})
	conf := gatedFS{FS: fstest.MapFS{"routes.yaml": {Data: []byte(fmt.Sprintf(e2eConfig, "http://127.0.0.1:1", "http://127.0.0.1:1"))}}, gate: gate}
	var tables <-chan watchable.Snapshot[string, *RouteEntry]
	e := launchPipeline(t, func(cfg *config) { cfg.configFS = conf }, func(p *pipeline) {
		tables = p.table.Subscribe(t.Context())
	})
	open := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(open) // before the pipeline stops, so that the provider is not stuck reading
	first := <-tables
	if first.State.Len() != 0 || first.Initialized {
		t.Fatalf("route table before the pipeline ran: %v, initialized %v; want empty, uninitialized", first.State.Map(), first.Initialized)
	}

	// The rest of the pipeline goes on: both demo backends register, and
	// the registry's snapshots (an input of the routing) are initialized
	// and change with them.
	waitSnapshots(t, e.p.registry.Snapshots(), func(s watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool {
		snap, ok := s.Get(registry.DiscoveryKey{ServiceID: "petstore", Protocol: "http"})
		return ok && len(snap.Nodes) == 2
	})
	eventually(t, "gateway listening", func() bool { return e.p.gateway.Addr() != "" })
	e.urls()

	// Yet the routing has computed nothing, since the routes are not read.
	select {
	case snap := <-tables:
		t.Fatalf("route table published before the configuration was read: revision %d, %v", snap.Revision, snap.State.Map())
	default:
	}
	if rev := e.p.table.Revision(); rev != 0 {
		t.Errorf("route table at revision %d before the configuration was read, want 0", rev)
	}
	select {
	case <-e.p.group.Ready():
		t.Error("pipeline ready before its configuration was read")
	default:
	}
	if r := e.do("GET", e.control+"/readyz", "", "", nil); r.status != 503 || !hasKeys(r.body["notReady"], "config", "routing", "gateway") {
		t.Errorf("/readyz before the configuration was read: %d %s, want 503 naming config, routing and gateway", r.status, r.raw)
	}
	if r := e.get("/petstore/pets"); r.status != 503 || r.body["error"] != "the route table is not ready yet" {
		t.Errorf("GET /petstore/pets before the route table: %d %s, want 503 saying it is not ready", r.status, r.raw)
	}

	open()
	// The first table published is complete, and already resolves the
	// demo route to both backends: every table seen holds it all, and when
	// the table becomes initialized, one table only has been published
	// before (revision 1, then 2 for the initialization).
	snap := firstInitialized(t, tables, func(snap watchable.Snapshot[string, *RouteEntry]) {
		if got := slices.Sorted(snap.State.Keys()); !slices.Equal(got, []string{"dying", "extra", "fixed", "listed", "petstore", "socket"}) {
			t.Errorf("route table at revision %d: %q, want every route", snap.Revision, got)
		}
		if pets, _ := snap.State.Get("petstore"); pets == nil || pets.Source != SourceDiscovery || len(pets.Targets) != 2 {
			t.Errorf("petstore in the route table at revision %d: %+v, want both demo backends by discovery", snap.Revision, pets)
		}
	})
	if snap.Revision > 2 {
		t.Errorf("route table initialized at revision %d: tables were computed before the complete one", snap.Revision)
	}
	e.waitReady()
}

// TestRoutingComputesOnlyFromInitializedInputs gives the routing
// translator inputs whose initializers are pending, fills the discovery
// snapshots only after the others are initialized, and checks that the
// only table it publishes before it is initialized is the complete one.
func TestRoutingComputesOnlyFromInitializedInputs(t *testing.T) {
	var routes watchable.Map[types.NamespacedName, file.Object[Route]]
	var directs watchable.Map[types.NamespacedName, file.Object[DirectRegistry]]
	var discovery watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	routesRead := routes.RegisterInitializer("routes")
	directsRead := directs.RegisterInitializer("directs")
	discovered := discovery.RegisterInitializer("discovery")
	routes.Store(types.NamespacedName{Name: "pets"}, file.Object[Route]{Spec: Route{PathPrefix: "/pets", ServiceID: "pets"}})
	routes.Store(types.NamespacedName{Name: "cats"}, file.Object[Route]{Spec: Route{PathPrefix: "/cats", ServiceID: "cats"}})
	directs.Store(types.NamespacedName{Name: "d"}, file.Object[DirectRegistry]{Spec: DirectRegistry{DirectURLs: map[string]string{"cats": "http://cats:1"}}})

	routing := newRouting(routes.View(), directs.View(), discovery.View(), nil)
	tables := routing.Output().Subscribe(t.Context())
	<-tables // the empty table before anything
	g := runner.NewGroup()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, routing) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("group: %v", err)
		}
	})

	routesRead()
	directsRead()
	discovery.Store(registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}, snapshot("pets", "", "http", node("127.0.0.1", 8081, "http", true)))
	discovered()

	want := map[string]*RouteEntry{
		"pets": {Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceDiscovery, Targets: discoveredTargets("http://127.0.0.1:8081")},
		"cats": {Name: "cats", PathPrefix: "/cats", ServiceID: "cats", Source: SourceDirectRegistry, SourceKey: "cats", Targets: targets("http://cats:1")},
	}
	snap := firstInitialized(t, tables, func(snap watchable.Snapshot[string, *RouteEntry]) {
		if diff := cmp.Diff(want, snap.State.Map()); diff != "" {
			t.Errorf("route table at revision %d (-want +got):\n%s", snap.Revision, diff)
		}
	})
	if snap.Revision > 2 {
		t.Errorf("route table initialized at revision %d: tables were computed before the complete one", snap.Revision)
	}
	// Compute waits for its inputs only: the routing must have every map it
	// reads among them, which the translator watches once they are all
	// initialized.
	for name, n := range map[string]int{"routes": routes.Notifiers(), "directs": directs.Notifiers(), "discovery": discovery.Notifiers()} {
		if n != 1 {
			t.Errorf("%s has %d Notify registrations, want 1: the routing does not watch it as an input", name, n)
		}
	}
}

// firstInitialized reads tables until a snapshot says the table is
// initialized, and returns it; check is called with every snapshot that
// holds routes, that one included.
func firstInitialized(t *testing.T, tables <-chan watchable.Snapshot[string, *RouteEntry], check func(watchable.Snapshot[string, *RouteEntry])) watchable.Snapshot[string, *RouteEntry] {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case snap := <-tables:
			if snap.State.Len() > 0 {
				check(snap)
			}
			if snap.Initialized {
				return snap
			}
		case <-timeout:
			t.Fatal("route table not initialized after 30s")
		}
	}
}

// waitSnapshots waits, through a subscription, until the registry's
// snapshots satisfy cond.
func waitSnapshots(t *testing.T, m watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot], cond func(watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for snap := range m.Subscribe(ctx) {
		if snap.Initialized && cond(snap.State) {
			return
		}
	}
	t.Fatalf("discovery snapshots not as awaited after 30s: %v", m.State().Map())
}

// hasKeys reports whether v, a decoded JSON object, has every one of keys.
func hasKeys(v any, keys ...string) bool {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
