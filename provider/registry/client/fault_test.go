package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/watchable"
)

// TestReconnectPublishesOnlyChanges cuts the client's connection while the
// controller keeps running: the client reconnects, and since nothing
// changed at the controller meanwhile, its mirror does not change at all.
// A change made while it was away arrives once it is back.
func TestReconnectPublishesOnlyChanges(t *testing.T) {
	ctrl := startController(t, "127.0.0.1:0")
	register(t, ctrl.registry(), registry.Registration{ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8081})
	proxy, err := faultproxy.New(ctrl.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	c, err := client.New("http://"+proxy.Addr(), client.WithToken(testToken), quiet(t), fast,
		client.WithRegistration(gateway), client.WithServices("pets"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	waitReady(t, "client", c.Ready())
	rev := revision(t, c)

	proxy.Cut()
	eventually(t, "client disconnected", func() bool { return !c.Status().Connected })
	proxy.Restore()
	// Synced: the first snapshot of pets on the new connection has been
	// applied.
	eventually(t, "client reconnected and synced", func() bool { return c.Status().Synced })
	if _, err := c.Lookup(context.Background(), petsKey); err != nil {
		t.Errorf("Lookup after reconnecting: %v", err)
	}
	if got := revision(t, c); got != rev {
		t.Errorf("mirror revision %d after a reconnection that changed nothing, want %d: %v", got, rev, c.Snapshots().LoadAll())
	}

	// Changed while away: published once back.
	proxy.Cut()
	eventually(t, "client disconnected again", func() bool { return !c.Status().Connected })
	if _, err := ctrl.registry().Register(registry.Registration{ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8082}); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	waitState(t, c.Snapshots(), "the change made while away", func(st watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool {
		s, ok := st.Get(petsKey)
		return ok && len(s.Nodes) == 2
	})
}

// TestPingNoticesASilentController pauses the connection (a partition:
// nothing is closed, nothing gets through): the client's keep-alive ping
// notices, the client reports itself disconnected, and it connects again
// once the network heals.
func TestPingNoticesASilentController(t *testing.T) {
	ctrl := startController(t, "127.0.0.1:0")
	proxy, err := faultproxy.New(ctrl.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	c, err := client.New("http://"+proxy.Addr(), client.WithToken(testToken), quiet(t), fast,
		client.WithRegistration(gateway), client.WithServices(),
		client.WithKeepAlive(50*time.Millisecond), client.WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	waitReady(t, "client", c.Ready())

	proxy.Pause()
	eventually(t, "partition noticed", func() bool { return !c.Status().Connected })
	if _, err := c.Lookup(context.Background(), petsKey); !isDisconnected(err) {
		t.Errorf("Lookup during the partition: %v, want ErrDisconnected", err)
	}
	proxy.Restore()
	eventually(t, "connected again", func() bool { return c.Status().Connected })
}

// revision returns the revision of the client's mirror, read from a new
// subscription (which a writer holding the map cannot overtake: the
// Initialized channel may close just before the revision of the
// initialization is published).
func revision(t *testing.T, c *client.Client) uint64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return (<-c.Snapshots().Subscribe(ctx)).Revision
}
