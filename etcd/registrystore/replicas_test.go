package registrystore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/registrystore"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/registrytest"
	"github.com/switchyard-go/switchyard/watchable"
)

type instances = watchable.State[string, *registry.Instance]

func reg(service string, port int) registry.Registration {
	return registry.Registration{ServiceID: service, Protocol: "http", Address: "10.0.0.1", Port: port}
}

// replica runs a store on its own client of endpoints.
func replica(t *testing.T, endpoints []string, prefix string) *registrystore.Store {
	t.Helper()
	st := registrystore.New(etcdtest.NewClient(t, endpoints), prefix)
	registrytest.Start(t, st, lease)
	return st
}

func register(t *testing.T, st registry.Store, r registry.Registration, held registry.Holder) string {
	t.Helper()
	id, err := st.Register(ctxFor(t), r, held)
	if err != nil {
		t.Fatalf("register %+v: %v", r, err)
	}
	return id
}

func present(ids ...string) func(instances) string {
	return func(s instances) string {
		for _, id := range ids {
			if _, ok := s.Get(id); !ok {
				return "missing " + id
			}
		}
		return ""
	}
}

func absent(ids ...string) func(instances) string {
	return func(s instances) string {
		for _, id := range ids {
			if _, ok := s.Get(id); ok {
				return "still there: " + id
			}
		}
		return ""
	}
}

// TestReplicasShare checks that what one replica registers, another sees,
// renews and removes, even before its mirror caught up.
func TestReplicasShare(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	a, b := replica(t, srv.Endpoints, "/sy"), replica(t, srv.Endpoints, "/sy")

	id := register(t, a, reg("api", 80), registry.NoHolder)
	// At once, through the other replica: it catches up on a miss.
	if err := b.Renew(ctxFor(t), id); err != nil {
		t.Fatalf("heartbeat through the other replica: %v", err)
	}
	if _, ok := b.Instances().Load(id); !ok {
		t.Fatal("the other replica does not show the instance after a heartbeat")
	}
	held := register(t, b, reg("api", 81), 1)
	etcdtest.WaitFor(t, a.Instances(), present(id, held))
	if d := cmp.Diff(a.Instances().LoadAll(), b.Instances().LoadAll()); d != "" {
		t.Errorf("replicas differ (-a +b):\n%s", d)
	}
	if err := b.Deregister(ctxFor(t), id); err != nil {
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, a.Instances(), absent(id))
	if err := a.Deregister(ctxFor(t), id); !errors.Is(err, registry.ErrUnknownInstance) {
		t.Errorf("deregister again through the other replica: %v, want ErrUnknownInstance", err)
	}
}

// TestHeartbeatWritesNothing checks that a heartbeat renews a lease without
// writing a key: no replica's mirror sees an event, no subscriber wakes.
func TestHeartbeatWritesNothing(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	a, b := replica(t, srv.Endpoints, "/sy"), replica(t, srv.Endpoints, "/sy")
	id := register(t, a, reg("api", 80), registry.NoHolder)
	etcdtest.WaitFor(t, b.Instances(), present(id))
	events, rev := a.Stats().Mirror.Events, a.Instances().Revision()
	for range 10 {
		for _, st := range []*registrystore.Store{a, b} {
			if err := st.Renew(ctxFor(t), id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A write after the heartbeats: once the mirror has it, it would have
	// had anything the heartbeats wrote.
	other := register(t, b, reg("api", 81), registry.NoHolder)
	etcdtest.WaitFor(t, a.Instances(), present(other))
	if got := a.Stats().Mirror.Events - events; got != 1 {
		t.Errorf("%d events in the mirror, want 1 (the registration; heartbeats write nothing)", got)
	}
	if got := a.Instances().Revision() - rev; got != 1 {
		t.Errorf("the map moved %d revisions, want 1", got)
	}
}

// TestHeldVanishWithTheReplica checks that the instances a replica's
// sockets hold vanish at once when it stops cleanly, while those leased by
// heartbeats stay.
func TestHeldVanishWithTheReplica(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	b := replica(t, srv.Endpoints, "/sy")

	a := registrystore.New(etcdtest.NewClient(t, srv.Endpoints), "/sy")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, registry.StoreConfig{Lease: lease, Limits: registry.Limits{MaxInstancesPerService: 10, MaxInstances: 100},
			Logger: etcdtest.Logger(t), Now: time.Now})
	}()
	defer func() {
		cancel()
		<-done
	}()
	<-a.Instances().Initialized()
	held := register(t, a, reg("api", 80), 1)
	leased := register(t, a, reg("api", 81), registry.NoHolder)
	etcdtest.WaitFor(t, b.Instances(), present(held, leased))

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil
	// Revoked, not expired: gone in far less than a lease.
	start := time.Now()
	etcdtest.WaitFor(t, b.Instances(), absent(held))
	if d := time.Since(start); d > lease/2 {
		t.Errorf("the held instance went %v after its replica stopped, want at once", d)
	}
	if err := b.Renew(ctxFor(t), leased); err != nil {
		t.Errorf("the instance leased by heartbeats: %v, want it kept", err)
	}
}

// TestTakeOver checks that a socket on one replica can take over an
// instance another replica's socket held (its client reconnected
// elsewhere), and that the old replica's disconnection then leaves it
// alone.
func TestTakeOver(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	a, b := replica(t, srv.Endpoints, "/sy"), replica(t, srv.Endpoints, "/sy")
	id := register(t, a, reg("api", 80), 1)
	etcdtest.WaitFor(t, b.Instances(), present(id))
	if again := register(t, b, reg("api", 80), 5); again != id {
		t.Fatalf("took over as %s, want %s", again, id)
	}
	if err := a.Disconnect(ctxFor(t), id, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(ctxFor(t), reg("api", 90), registry.NoHolder); err != nil { // a write after, to wait for
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, b.Instances(), func(s instances) string {
		if inst, ok := s.Get(id); !ok || !inst.Connected {
			return fmt.Sprintf("the instance taken over is %+v (present %v), want connected", inst, ok)
		}
		return ""
	})
	// b wrote it, under its session.
	if st := b.Stats(); st.Sink.Puts == 0 {
		t.Errorf("b's sink wrote nothing: %+v", st.Sink)
	}
}

// fresh reads the instances from etcd now.
func fresh(t *testing.T, c *clientv3.Client, prefix string) map[string]*registry.Instance {
	t.Helper()
	resp, err := c.Get(ctxFor(t), prefix+"/instances/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*registry.Instance{}
	for _, kv := range resp.Kvs {
		var inst registry.Instance
		if err := jsonUnmarshal(kv.Value, &inst); err != nil {
			t.Fatalf("%s: %v", kv.Key, err)
		}
		out[inst.RuntimeInstanceID] = &inst
	}
	return out
}

// equalsFresh waits until st's instances equal a fresh read of etcd.
func equalsFresh(t *testing.T, st *registrystore.Store, c *clientv3.Client, prefix string) {
	t.Helper()
	etcdtest.WaitFor(t, st.Instances(), func(s instances) string {
		want := fresh(t, c, prefix)
		if d := cmp.Diff(want, s.Map()); d != "" {
			return "mirror differs from a fresh Get (-fresh +mirror):\n" + d
		}
		return ""
	})
}
