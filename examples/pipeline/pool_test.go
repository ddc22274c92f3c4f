package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
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

// TestPoolFollowsTheRegistry: the pipeline's pool (a discovery.Pool of
// transports, tested in depth there) has a working transport for each
// instance registered in the registry it follows, and none once the
// instance is gone.
func TestPoolFollowsTheRegistry(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer backend.Close()
	host, port := hostPort(t, backend)

	reg, err := registry.New(registry.WithToken(testToken), registry.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	startRunner(t, reg)
	p := newPool(reg.Snapshots(), nil, nil)
	startRunner(t, p)

	id, err := reg.Register(registry.Registration{ServiceID: "pets", Protocol: "http", Address: host, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "transport for the registered instance", func() bool { return p.Transport(id) != nil })
	req, _ := http.NewRequest("GET", backend.URL, nil)
	resp, err := p.Transport(id).RoundTrip(req)
	if err != nil {
		t.Fatalf("round trip through the pooled transport: %v", err)
	}
	resp.Body.Close()
	if c, ok := p.Connections().Load(id); !ok || c.ServiceID != "pets" || c.Port != port {
		t.Errorf("connections[%s] = %+v, %v", id, c, ok)
	}

	if err := reg.Deregister(id); err != nil {
		t.Fatal(err)
	}
	eventually(t, "transport closed", func() bool { return p.Transport(id) == nil })
}
