package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	nettrace "net/http/httptrace"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// eventually waits, up to a deadline generous for a loaded machine, for
// cond to hold.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after 20s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hostPort(t *testing.T, s *httptest.Server) (string, int) {
	t.Helper()
	host, port, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

func TestPoolFollowsInstances(t *testing.T) {
	var closed sync.Map // remote addr -> true once the server saw the connection close
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	backend.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Store(c.RemoteAddr().String(), true)
		}
	}
	backend.Start()
	defer backend.Close()
	host, port := hostPort(t, backend)
	hp := net.JoinHostPort(host, strconv.Itoa(port))

	var instances watchable.Map[string, *registry.Instance]
	instances.Store("existing", &registry.Instance{ServiceID: "other", Address: "10.0.0.1", Port: 80, Connected: true})
	p := &Pool{Instances: instances.View()}
	conns := p.Connections()
	startRunner(t, p)

	if p.Transport("other", "10.0.0.1:80") == nil {
		t.Fatal("no transport for the instance registered before the pool started")
	}
	if p.Transport("pets", hp) != nil {
		t.Fatal("transport for an instance that is not registered")
	}

	// Appears: a transport is opened, and it works.
	instances.Store("i1", &registry.Instance{ServiceID: "pets", Address: host, Port: port, Connected: true})
	eventually(t, "transport opened for i1", func() bool { return p.Transport("pets", hp) != nil })
	rt := p.Transport("pets", hp)
	var local string
	req, _ := http.NewRequest("GET", "http://"+hp+"/", nil)
	req = req.WithContext(httptrace(req.Context(), &local))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("round trip through the pooled transport: %v", err)
	}
	resp.Body.Close()

	// A second instance at the same address shares it.
	instances.Store("i2", &registry.Instance{ServiceID: "pets", Address: host, Port: port, Connected: true})
	eventually(t, "i2 counted", func() bool { c, _ := conns.Load("pets|" + hp); return c.Instances == 2 })
	if p.Transport("pets", hp) != rt {
		t.Error("second instance at the same address got a new transport")
	}
	instances.Delete("i2")
	eventually(t, "i2 released", func() bool { c, _ := conns.Load("pets|" + hp); return c.Instances == 1 })
	if p.Transport("pets", hp) != rt {
		t.Error("transport replaced while an instance still uses it")
	}

	// Address changes: replaced, and the old connection is closed.
	instances.Store("i1", &registry.Instance{ServiceID: "pets", Address: host, Port: port + 1, Connected: true})
	eventually(t, "transport moved", func() bool { return p.Transport("pets", hp) == nil })
	eventually(t, "old keep-alive connection closed", func() bool { _, ok := closed.Load(local); return ok })
	moved := net.JoinHostPort(host, strconv.Itoa(port+1))
	if p.Transport("pets", moved) == nil {
		t.Error("no transport at the instance's new address")
	}

	// Disappears: closed.
	instances.Delete("i1")
	eventually(t, "transport closed", func() bool { return p.Transport("pets", moved) == nil })

	want := map[string]Connection{"other|10.0.0.1:80": {ServiceID: "other", Address: "10.0.0.1", Port: 80, Instances: 1}}
	if diff := cmp.Diff(want, conns.LoadAll()); diff != "" {
		t.Errorf("connections (-want +got):\n%s", diff)
	}
}

// httptrace records the local address of the connection a request uses.
func httptrace(ctx context.Context, local *string) context.Context {
	return nettrace.WithClientTrace(ctx, &nettrace.ClientTrace{
		GotConn: func(info nettrace.GotConnInfo) { *local = info.Conn.LocalAddr().String() },
	})
}

// The pool is ready, and its connections map initialized, once it holds a
// transport for every instance of the initialized instance map.
func TestPoolReadyOnData(t *testing.T) {
	var instances watchable.Map[string, *registry.Instance]
	loaded := instances.RegisterInitializer("registry")
	instances.Store("i1", &registry.Instance{ServiceID: "pets", Address: "10.0.0.1", Port: 80, Connected: true})
	p := &Pool{Instances: instances.View()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	eventually(t, "transport for i1", func() bool { return p.Transport("pets", "10.0.0.1:80") != nil })
	select {
	case <-p.Ready():
		t.Fatal("ready before the instances are initialized")
	default:
	}
	instances.Store("i2", &registry.Instance{ServiceID: "pets", Address: "10.0.0.2", Port: 80, Connected: true})
	loaded()
	select {
	case <-p.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("not ready 30s after the instances were initialized")
	}
	if p.Transport("pets", "10.0.0.2:80") == nil {
		t.Error("ready without a transport for i2, registered before the instances were initialized")
	}
	if n := p.Connections().Len(); n != 2 {
		t.Errorf("connections: %d, want 2", n)
	}
}
