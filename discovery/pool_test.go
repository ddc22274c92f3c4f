package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// waitFor is generous: the tests run with -race on busy machines.
const waitFor = 30 * time.Second

// conn is a connection the tests can inspect.
type conn struct {
	url    string
	closed atomic.Bool
}

// runPool runs p until the test ends and returns a function that stops it.
func runPool[C any](t *testing.T, p *discovery.Pool[C]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitConnections waits until cond holds for the pool's connections.
func waitConnections(t *testing.T, v watchable.View[string, discovery.Connection], what string, cond func(map[string]discovery.Connection) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for snap := range v.Subscribe(ctx) {
		if cond(snap.State.Map()) {
			return
		}
	}
	t.Fatalf("connections: timed out waiting until %s", what)
}

func TestPoolFollowsInstances(t *testing.T) {
	var snapshots watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	loaded := snapshots.RegisterInitializer("test")
	prod := registry.DiscoveryKey{ServiceID: "pets", EnvTag: "prod", Protocol: "http"}
	dev := registry.DiscoveryKey{ServiceID: "pets", EnvTag: "dev", Protocol: "http"}
	snapshots.Store(prod, snapshot("pets", "prod", "http", node("i1", "prod", "http", "10.0.0.1", 80, true)))

	var mu sync.Mutex
	var dialed []*conn
	fail := map[string]bool{"10.0.0.66": true}
	p := discovery.NewPool("pool", snapshots.View(), func(_ context.Context, n *registry.Instance) (*conn, error) {
		if fail[n.Address] {
			return nil, errors.New("refused")
		}
		c := &conn{url: discovery.URL(n)}
		mu.Lock()
		dialed = append(dialed, c)
		mu.Unlock()
		return c, nil
	}, func(c *conn) { c.closed.Store(true) })
	conns := p.Connections()
	runPool(t, p)

	select {
	case <-p.Ready():
		t.Fatal("ready before the snapshots are initialized")
	default:
	}
	snapshots.Store(prod, snapshot("pets", "prod", "http",
		node("i1", "prod", "http", "10.0.0.1", 80, true), node("i2", "prod", "http", "10.0.0.2", 80, true)))
	loaded()
	select {
	case <-p.Ready():
	case <-time.After(waitFor):
		t.Fatal("not ready once the snapshots are initialized")
	}
	c1, err := p.Get("i1")
	if err != nil || c1.url != "http://10.0.0.1:80" {
		t.Fatalf("Get(i1) = %v, %v", c1, err)
	}
	if c2, err := p.Get("i2"); err != nil || c2.url != "http://10.0.0.2:80" {
		t.Fatalf("Get(i2) = %v, %v: ready means every instance has its connection", c2, err)
	}
	if _, err := p.Get("nobody"); !errors.Is(err, discovery.ErrUnknownTarget) {
		t.Errorf("Get(nobody) error = %v, want ErrUnknownTarget", err)
	}

	// Disconnected: kept, refused; connected again: the same connection.
	snapshots.Store(prod, snapshot("pets", "prod", "http",
		node("i1", "prod", "http", "10.0.0.1", 80, false), node("i2", "prod", "http", "10.0.0.2", 80, true)))
	waitConnections(t, conns, "i1 disconnected", func(m map[string]discovery.Connection) bool { return !m["i1"].Connected })
	if _, err := p.Get("i1"); !errors.Is(err, discovery.ErrDisconnected) {
		t.Errorf("Get(i1) while disconnected: %v, want ErrDisconnected", err)
	}
	snapshots.Store(prod, snapshot("pets", "prod", "http",
		node("i1", "prod", "http", "10.0.0.1", 80, true), node("i2", "prod", "http", "10.0.0.2", 80, true)))
	waitConnections(t, conns, "i1 connected", func(m map[string]discovery.Connection) bool { return m["i1"].Connected })
	if c, err := p.Get("i1"); err != nil || c != c1 || c1.closed.Load() {
		t.Errorf("Get(i1) after reconnecting = %p, %v; want the same open connection %p", c, err, c1)
	}

	// The address changes: the old connection is closed, a new one opened.
	snapshots.Store(prod, snapshot("pets", "prod", "http",
		node("i1", "prod", "http", "10.0.0.9", 80, true), node("i2", "prod", "http", "10.0.0.2", 80, true)))
	waitConnections(t, conns, "i1 moved", func(m map[string]discovery.Connection) bool { return m["i1"].Address == "10.0.0.9" })
	if c, err := p.Get("i1"); err != nil || c.url != "http://10.0.0.9:80" || !c1.closed.Load() {
		t.Errorf("after the move: Get(i1) = %v, %v, old connection closed %v", c, err, c1.closed.Load())
	}

	// i2 moves to another snapshot (its envTag changed) in one change: the
	// same connection.
	c2, _ := p.Get("i2")
	snapshots.Batch(func(b *watchable.Batch[registry.DiscoveryKey, *registry.DiscoverySnapshot]) {
		b.Store(prod, snapshot("pets", "prod", "http", node("i1", "prod", "http", "10.0.0.9", 80, true)))
		b.Store(dev, snapshot("pets", "dev", "http", node("i2", "dev", "http", "10.0.0.2", 80, true)))
	})
	waitConnections(t, conns, "dev snapshot followed", func(m map[string]discovery.Connection) bool { return m["i2"].EnvTag == "dev" })
	if c, err := p.Get("i2"); err != nil || c != c2 || c2.closed.Load() {
		t.Errorf("Get(i2) after its snapshot changed = %p, %v; want the same open connection %p", c, err, c2)
	}

	// A dial that fails: known, refused as disconnected, with the reason.
	snapshots.Store(registry.DiscoveryKey{ServiceID: "bad", Protocol: "http"}, snapshot("bad", "", "http", node("i6", "", "http", "10.0.0.66", 80, true)))
	waitConnections(t, conns, "i6 failed", func(m map[string]discovery.Connection) bool { return m["i6"].Error != "" })
	if _, err := p.Get("i6"); !errors.Is(err, discovery.ErrDisconnected) {
		t.Errorf("Get(i6) after a failed dial: %v, want ErrDisconnected", err)
	}

	// Gone: closed and unknown.
	snapshots.Delete(dev)
	waitConnections(t, conns, "i2 gone", func(m map[string]discovery.Connection) bool { _, ok := m["i2"]; return !ok })
	if _, err := p.Get("i2"); !errors.Is(err, discovery.ErrUnknownTarget) || !c2.closed.Load() {
		t.Errorf("Get(i2) after it disappeared: %v, closed %v; want ErrUnknownTarget and closed", err, c2.closed.Load())
	}
}

func TestPoolClosesEverythingWhenStopped(t *testing.T) {
	var snapshots watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	snapshots.Store(registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}, snapshot("pets", "", "http",
		node("i1", "", "http", "10.0.0.1", 80, true), node("i2", "", "http", "10.0.0.2", 80, true)))
	var opened []*conn
	p := discovery.NewPool("pool", snapshots.View(), func(_ context.Context, n *registry.Instance) (*conn, error) {
		c := &conn{url: discovery.URL(n)}
		opened = append(opened, c) // dial runs on the pool's loop only
		return c, nil
	}, func(c *conn) { c.closed.Store(true) })
	stop := runPool(t, p)
	<-p.Ready()
	stop()
	if _, err := p.Get("i1"); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("Get after Run returned: %v, want ErrClosed", err)
	}
	for _, c := range opened {
		if !c.closed.Load() {
			t.Errorf("%s not closed when the pool stopped", c.url)
		}
	}
}

// TestPoolOfTransports pools *http.Transport against a real server: the
// keep-alive connection of an instance that disappears is closed.
func TestPoolOfTransports(t *testing.T) {
	var closed sync.Map // remote addresses of the connections the server saw closed
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	backend.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Store(c.RemoteAddr().String(), true)
		}
	}
	backend.Start()
	defer backend.Close()
	host, portText, _ := net.SplitHostPort(backend.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)

	var snapshots watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	key := registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}
	snapshots.Store(key, snapshot("pets", "", "http", node("i1", "", "http", host, port, true)))
	p := discovery.NewPool("pool", snapshots.View(),
		func(context.Context, *registry.Instance) (*http.Transport, error) {
			return http.DefaultTransport.(*http.Transport).Clone(), nil
		},
		(*http.Transport).CloseIdleConnections)
	runPool(t, p)
	<-p.Ready()

	tr, err := p.Get("i1")
	if err != nil {
		t.Fatal(err)
	}
	var local string
	req, _ := http.NewRequest("GET", backend.URL, nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { local = info.Conn.LocalAddr().String() },
	}))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("round trip through the pooled transport: %v", err)
	}
	resp.Body.Close()

	snapshots.Delete(key)
	waitConnections(t, p.Connections(), "i1 gone", func(m map[string]discovery.Connection) bool { return len(m) == 0 })
	deadline := time.Now().Add(waitFor)
	for _, ok := closed.Load(local); !ok; _, ok = closed.Load(local) {
		if time.Now().After(deadline) {
			t.Fatalf("keep-alive connection %s still open %v after its instance disappeared", local, waitFor)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ExamplePool() {
	var snapshots watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot] // a Registry's or a client's Snapshots
	snapshots.Store(registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}, &registry.DiscoverySnapshot{
		ServiceID: "pets", Protocol: "http",
		Nodes: []registry.Instance{{RuntimeInstanceID: "i1", ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8080, Connected: true}},
	})
	pool := discovery.NewPool("pool", snapshots.View(),
		func(_ context.Context, n *registry.Instance) (*http.Transport, error) {
			return &http.Transport{}, nil // connects lazily: dialing cannot fail
		},
		(*http.Transport).CloseIdleConnections)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- pool.Run(ctx) }()
	<-pool.Ready()

	_, err := pool.Get("i1")
	fmt.Println("i1:", err)
	_, err = pool.Get("i2")
	fmt.Println("i2:", err)
	cancel()
	<-done
	_, err = pool.Get("i1")
	fmt.Println("stopped:", err)
	// Output:
	// i1: <nil>
	// i2: get connection of instance i2: discovery: unknown target
	// stopped: get connection of instance i1: discovery: pool closed
}
