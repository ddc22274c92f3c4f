package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/watchable"
)

var (
	petsKey = registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}
	catsKey = registry.DiscoveryKey{ServiceID: "cats", Protocol: "http"}
	gateway = registry.Registration{ServiceID: "gateway", Protocol: "http", Address: "127.0.0.1", Port: 8080}
)

func TestClientRegistersLooksUpAndMirrors(t *testing.T) {
	ctrl := startController(t, "127.0.0.1:0")
	logs := &syncBuffer{}
	reg := ctrl.registry()
	petID := register(t, reg, registry.Registration{ServiceID: "pets", Environment: "staging", Protocol: "http", Address: "127.0.0.1", Port: 8081})

	c, err := client.New(ctrl.url(), client.WithToken(testToken), quiet(t), client.WithRegistration(gateway),
		client.WithServices("pets"), fast, client.WithLogger(logger(logs)))
	if err != nil {
		t.Fatal(err)
	}
	snapshots := c.Snapshots()
	stop := run(t, c)
	waitReady(t, "client", c.Ready())

	// Ready means the mirror holds the followed service.
	pets, ok := snapshots.Load(petsKey)
	if !ok || len(pets.Nodes) != 1 || pets.Nodes[0].RuntimeInstanceID != petID || pets.Nodes[0].Environment != "staging" || !pets.Nodes[0].Usable() {
		t.Fatalf("mirror at readiness: %v, want pets with instance %s (environment staging)", snapshots.LoadAll(), petID)
	}
	if !pets.Nodes[0].LastSeenAt.IsZero() {
		t.Error("a mirrored node has lastSeenAt: subscriptions do not carry it")
	}

	// The client's own instance is registered, held by its socket.
	id := c.RuntimeInstanceID()
	if inst, ok := reg.Instances().Load(id); !ok || inst.ServiceID != "gateway" || !inst.Connected {
		t.Fatalf("controller's instance %q: %+v, want the gateway, connected", id, inst)
	}
	if st := c.Status(); !st.Connected || !st.Synced || st.RuntimeInstanceID != id || st.Reconnects != 0 || st.Controller != ctrl.url() {
		t.Errorf("status %+v", st)
	}

	// Lookups go over the same socket, and carry lastSeenAt.
	snap, err := c.Lookup(context.Background(), registry.DiscoveryKey{ServiceID: "pets"})
	if err != nil || len(snap.Nodes) != 1 || snap.Nodes[0].LastSeenAt.IsZero() {
		t.Fatalf("Lookup(pets) = %+v, %v; want one node with lastSeenAt", snap, err)
	}
	if snap, err := c.Lookup(context.Background(), registry.DiscoveryKey{ServiceID: "nobody"}); err != nil || snap.Nodes == nil || len(snap.Nodes) != 0 {
		t.Errorf("Lookup(nobody) = %+v, %v; want no nodes", snap, err)
	}
	var ce *client.CallError
	if _, err := c.Lookup(context.Background(), registry.DiscoveryKey{}); !errors.As(err, &ce) || ce.Err.Code != registry.CodeInvalidParams {
		t.Errorf("Lookup without serviceId: %v, want a CallError with CodeInvalidParams", err)
	}

	// Changes reach the mirror; following another service subscribes to
	// it; dropping one deletes its snapshots.
	second, err := reg.Register(registry.Registration{ServiceID: "pets", EnvTag: "prod", Protocol: "http", Address: "127.0.0.1", Port: 8082})
	if err != nil {
		t.Fatal(err)
	}
	prodKey := registry.DiscoveryKey{ServiceID: "pets", EnvTag: "prod", Protocol: "http"}
	waitState(t, snapshots, "the prod instance mirrored under its own key", func(st watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool {
		s, ok := st.Get(prodKey)
		return ok && len(s.Nodes) == 1 && s.Nodes[0].RuntimeInstanceID == second
	})
	if _, err := reg.Register(registry.Registration{ServiceID: "cats", Protocol: "http", Address: "127.0.0.1", Port: 8083}); err != nil {
		t.Fatal(err)
	}
	c.SetServices("pets", "cats")
	waitState(t, snapshots, "cats followed", func(st watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool {
		_, ok := st.Get(catsKey)
		return ok
	})
	c.SetServices("cats")
	if got := serviceState(snapshots.State(), "pets"); len(got) != 0 {
		t.Errorf("pets still mirrored after SetServices(cats): %v", got)
	}
	if err := reg.Deregister(second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lookup(context.Background(), petsKey); err != nil {
		t.Fatal(err) // a round trip: any notification for pets has arrived
	}
	if got := serviceState(snapshots.State(), "pets"); len(got) != 0 {
		t.Errorf("pets mirrored again after it was dropped: %v", got)
	}

	// Stopping closes the socket: the controller disconnects the instance
	// at once, and the mirror keeps its contents.
	stop()
	waitState(t, reg.Instances(), "gateway disconnected", func(st watchable.State[string, *registry.Instance]) bool {
		inst, ok := st.Get(id)
		return ok && !inst.Connected
	})
	if _, ok := snapshots.Load(catsKey); !ok {
		t.Error("the mirror lost its contents when the client stopped")
	}
	if _, err := c.Lookup(context.Background(), petsKey); !isDisconnected(err) {
		t.Errorf("Lookup after Run returned: %v, want ErrDisconnected", err)
	}
}

func TestClientDiscoversWithoutRegistering(t *testing.T) {
	ctrl := startController(t, "127.0.0.1:0")
	register(t, ctrl.registry(), registry.Registration{ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8081})
	c, err := client.New(ctrl.url()+"/ws/discovery?ignored=1", client.WithToken(testToken), quiet(t), fast)
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	// The services are not known yet: connected, but not ready.
	eventually(t, "connected", func() bool { return c.Status().Connected })
	select {
	case <-c.Snapshots().Initialized():
		t.Fatal("snapshots initialized before the services to follow are known")
	default:
	}
	c.SetServices("pets")
	waitReady(t, "client", c.Ready())
	if s, ok := c.Snapshots().Load(petsKey); !ok || len(s.Nodes) != 1 {
		t.Errorf("mirror: %v", c.Snapshots().LoadAll())
	}
	if c.RuntimeInstanceID() != "" || ctrl.registry().Instances().Len() != 1 {
		t.Errorf("a discovery-only client registered something: id %q, %d instances", c.RuntimeInstanceID(), ctrl.registry().Instances().Len())
	}
}

// TestClientSurvivesControllerRestart stops the controller while a client
// is registered and subscribed, and starts a new one on the same port
// that already knows the service the client follows (its instances
// registered again first, as they do). The client reconnects, keeps its
// runtimeInstanceId, lookups work again, its mirror ends equal to the
// controller's, and nothing was ever deleted from the mirror.
func TestClientSurvivesControllerRestart(t *testing.T) {
	ctrl := startController(t, "127.0.0.1:0")
	pet := registry.Registration{ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8081}
	petID := register(t, ctrl.registry(), pet)
	c, err := client.New(ctrl.url(), client.WithToken(testToken), quiet(t), client.WithRegistration(gateway),
		client.WithServices("pets"), fast, client.WithKeepAlive(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// Every change of the mirror, from the start, in order.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := c.Snapshots().Subscribe(ctx)
	run(t, c)
	waitReady(t, "client", c.Ready())
	id := c.RuntimeInstanceID()

	ctrl.stop()
	eventually(t, "client disconnected", func() bool { return !c.Status().Connected })
	if _, err := c.Lookup(context.Background(), petsKey); !isDisconnected(err) {
		t.Errorf("Lookup while the controller is down: %v, want ErrDisconnected at once", err)
	}
	if s, ok := c.Snapshots().Load(petsKey); !ok || len(s.Nodes) != 1 {
		t.Errorf("mirror while the controller is down: %v, want pets kept", c.Snapshots().LoadAll())
	}

	// The pet registers again, proposing its id, before the restarted
	// controller serves (prepare runs on its goroutine: no t.Fatal).
	pet.RuntimeInstanceID = petID
	ctrl.prepare = func(r *registry.Registry) {
		if got, err := r.Register(pet); err != nil || got != petID {
			t.Errorf("pet registering again: %q, %v; want %q", got, err, petID)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		for snap := range r.Snapshots().Subscribe(ctx) {
			if _, ok := snap.State.Get(petsKey); ok {
				return
			}
		}
		t.Errorf("the restarted controller's snapshots lack pets after %v", waitFor)
	}
	ctrl.start()
	eventually(t, "client reconnected", func() bool { return c.Status().Connected })
	if got := c.RuntimeInstanceID(); got != id {
		t.Errorf("runtimeInstanceId after the restart %s, want %s kept", got, id)
	}
	if inst, ok := ctrl.registry().Instances().Load(id); !ok || !inst.Connected {
		t.Errorf("the restarted controller's view of the client: %+v", inst)
	}
	if st := c.Status(); st.Reconnects != 1 || st.LastError == "" {
		t.Errorf("status after one restart: %+v, want 1 reconnect and the last error", st)
	}
	if snap, err := c.Lookup(context.Background(), petsKey); err != nil || len(snap.Nodes) != 1 {
		t.Errorf("Lookup after reconnecting: %+v, %v", snap, err)
	}

	// The mirror equals the controller's snapshots of pets.
	want := serviceState(ctrl.registry().Snapshots().State(), "pets")
	waitState(t, c.Snapshots(), "mirror equal to the controller's", func(st watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool {
		return cmp.Equal(want, serviceState(st, "pets"))
	})
	cancel()
	for snap := range changes {
		for _, u := range snap.Updates {
			if u.Delete {
				t.Errorf("the mirror deleted %v at revision %d", u.Key, snap.Revision)
			}
		}
	}
}

func TestStartOnRegistryFailure(t *testing.T) {
	t.Run("true: ready after the initial wait, connects when the controller comes", func(t *testing.T) {
		addr := freeAddr(t)
		c, err := client.New("http://"+addr, client.WithToken(testToken), quiet(t), client.WithRegistration(gateway),
			client.WithServices("pets"), fast, client.WithInitialWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		run(t, c)
		waitReady(t, "client", c.Ready())
		select {
		case <-c.Snapshots().Initialized():
		default:
			t.Error("ready, but the snapshots are not initialized")
		}
		if st := c.Status(); st.Connected || st.LastError == "" {
			t.Errorf("status without a controller: %+v", st)
		}
		if _, err := c.Lookup(context.Background(), petsKey); !isDisconnected(err) {
			t.Errorf("Lookup: %v, want ErrDisconnected", err)
		}

		ctrl := startController(t, addr)
		eventually(t, "registered once the controller listens", func() bool { return c.Status().Connected })
		if _, ok := ctrl.registry().Instances().Load(c.RuntimeInstanceID()); !ok {
			t.Error("not registered with the controller that came")
		}
	})
	t.Run("false: Run fails naming the controller", func(t *testing.T) {
		addr := freeAddr(t)
		c, err := client.New("http://"+addr, client.WithToken(testToken), quiet(t), client.WithRegistration(gateway),
			fast, client.WithInitialWait(100*time.Millisecond), client.WithStartOnRegistryFailure(false))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		err = c.Run(ctx)
		if err == nil || ctx.Err() != nil || !contains(err.Error(), "http://"+addr) {
			t.Fatalf("Run = %v, want an error naming http://%s before the test's deadline", err, addr)
		}
		select {
		case <-c.Ready():
			t.Error("ready although Run failed")
		default:
		}
	})
	t.Run("registrar true", func(t *testing.T) {
		addr := freeAddr(t)
		r, err := client.NewRegistrar("http://"+addr, gateway, client.WithToken(testToken), quiet(t), fast, client.WithInitialWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		run(t, r)
		waitReady(t, "registrar", r.Ready())
		if r.RuntimeInstanceID() != "" {
			t.Error("an id without a controller")
		}
		ctrl := startController(t, addr)
		eventually(t, "registered once the controller listens", func() bool { return r.Status().Connected })
		if _, ok := ctrl.registry().Instances().Load(r.RuntimeInstanceID()); !ok {
			t.Error("not registered with the controller that came")
		}
	})
	t.Run("registrar false", func(t *testing.T) {
		addr := freeAddr(t)
		r, err := client.NewRegistrar("http://"+addr, gateway, client.WithToken(testToken), quiet(t), fast,
			client.WithInitialWait(100*time.Millisecond), client.WithStartOnRegistryFailure(false))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := r.Run(ctx); err == nil || ctx.Err() != nil || !contains(err.Error(), "http://"+addr) {
			t.Fatalf("Run = %v, want an error naming http://%s", err, addr)
		}
	})
}

func TestNewRefuses(t *testing.T) {
	for _, u := range []string{"ftp://h:1", "http://", "http://user:secret-in-url@h:1", "::"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) succeeded", u)
		} else if contains(err.Error(), "secret-in-url") {
			t.Errorf("New(%q) error quotes the URL: %v", u, err)
		}
	}
	if _, err := client.NewRegistrar("http://h:1", gateway, client.WithServices("x"), client.WithKeepAlive(time.Second)); err == nil ||
		!contains(err.Error(), "WithServices") || !contains(err.Error(), "WithKeepAlive") {
		t.Errorf("NewRegistrar with options of a Client: %v, want an error naming them", err)
	}
}
