package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/gateway"
	"github.com/switchyard-go/switchyard/watchable"
)

// startGateway runs g until the test ends and returns its base URL.
func startGateway(t testing.TB, g *Gateway) string {
	t.Helper()
	if g.ListenAddr == "" {
		g.ListenAddr = "127.0.0.1:0"
	}
	startRunner(t, g)
	return "http://" + g.Addr()
}

// echoBackend answers with its name and what it received.
func echoBackend(t *testing.T, name string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderRoute, "spoofed")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"backend": name,
			"path":    r.URL.Path,
			"query":   r.URL.RawQuery,
			"xff":     r.Header.Get("X-Forwarded-For"),
			"xfh":     r.Header.Get("X-Forwarded-Host"),
			"xfp":     r.Header.Get("X-Forwarded-Proto"),
		})
	}))
	t.Cleanup(s.Close)
	return s
}

type response struct {
	status int
	header http.Header
	body   map[string]string
}

// get GETs url and decodes its JSON object body.
func get(t *testing.T, url string) response {
	t.Helper()
	status, header, raw := fetch(t, url)
	r := response{status: status, header: header, body: map[string]string{}}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("GET %s: body %q is not a JSON object: %v", url, raw, err)
	}
	for k, v := range body {
		r.body[k] = fmt.Sprint(v)
	}
	return r
}

func TestGatewayRouting(t *testing.T) {
	a, b, c := echoBackend(t, "a"), echoBackend(t, "b"), echoBackend(t, "c")
	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", StripPrefix: true, Source: SourceDiscovery, Targets: targets(a.URL, b.URL)})
	table.Store("pets-admin", &RouteEntry{Name: "pets-admin", PathPrefix: "/pets/admin", ServiceID: "petadmin", Source: SourceDirectURL, Targets: targets(c.URL)})
	table.Store("root", &RouteEntry{Name: "root", PathPrefix: "/api/", ServiceID: "api", Source: SourceStaticTargets, Targets: targets(c.URL)})
	table.Store("broken", &RouteEntry{Name: "broken", PathPrefix: "/broken", ServiceID: "x", Source: SourceNone, Error: "invalid route: boom"})
	table.Store("empty", &RouteEntry{Name: "empty", PathPrefix: "", ServiceID: "y", Source: SourceNone, Error: "invalid route: pathPrefix must start with /"})
	gw := startGateway(t, &Gateway{Table: table.View(), Wait: 10 * time.Millisecond})
	host := strings.TrimPrefix(gw, "http://")

	tests := []struct {
		path       string
		wantStatus int
		wantRoute  string
		wantSource string
		wantBody   map[string]string
	}{
		{"/pets/1?x=y", 200, "pets", "discovery", map[string]string{"backend": "a", "path": "/1", "query": "x=y", "xff": "127.0.0.1", "xfh": host, "xfp": "http"}},
		{"/pets", 200, "pets", "discovery", map[string]string{"backend": "b", "path": "/", "query": "", "xff": "127.0.0.1", "xfh": host, "xfp": "http"}},
		{"/pets/2", 200, "pets", "discovery", map[string]string{"backend": "a", "path": "/2", "query": "", "xff": "127.0.0.1", "xfh": host, "xfp": "http"}},
		{"/pets/admin/x", 200, "pets-admin", "directUrl", map[string]string{"backend": "c", "path": "/pets/admin/x", "query": "", "xff": "127.0.0.1", "xfh": host, "xfp": "http"}},
		{"/api/v1", 200, "root", "staticTargets", map[string]string{"backend": "c", "path": "/api/v1", "query": "", "xff": "127.0.0.1", "xfh": host, "xfp": "http"}},
		{"/petsx", 404, "", "", map[string]string{"error": "no route", "path": "/petsx"}},
		{"/", 404, "", "", map[string]string{"error": "no route", "path": "/"}},
		{"/broken/1", 503, "broken", "none", map[string]string{"error": "invalid route: boom", "route": "broken", "serviceId": "x"}},
		{"/anything", 404, "", "", map[string]string{"error": "no route", "path": "/anything"}},
	}
	for _, tt := range tests {
		got := get(t, gw+tt.path)
		if got.status != tt.wantStatus {
			t.Errorf("GET %s: status %d, want %d", tt.path, got.status, tt.wantStatus)
		}
		if r, s := got.header.Values(HeaderRoute), got.header.Values(HeaderSource); strings.Join(r, ",") != tt.wantRoute || strings.Join(s, ",") != tt.wantSource {
			t.Errorf("GET %s: route %q source %q, want %q %q", tt.path, r, s, tt.wantRoute, tt.wantSource)
		}
		if diff := cmp.Diff(tt.wantBody, got.body); diff != "" {
			t.Errorf("GET %s: body (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestGatewayNoTarget(t *testing.T) {
	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceNone})
	gw := startGateway(t, &Gateway{Table: table.View(), Wait: 50 * time.Millisecond})

	got := get(t, gw+"/pets")
	want := map[string]string{"error": `no usable instance of service "pets"`, "route": "pets", "serviceId": "pets"}
	if got.status != 503 {
		t.Errorf("status %d, want 503", got.status)
	}
	if r, s := got.header.Get(HeaderRoute), got.header.Get(HeaderSource); r != "pets" || s != "none" {
		t.Errorf("route %q source %q, want pets none", r, s)
	}
	if diff := cmp.Diff(want, got.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestGatewayWaitsForTarget(t *testing.T) {
	a := echoBackend(t, "a")
	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceNone})
	table.Store("other", &RouteEntry{Name: "other", PathPrefix: "/other", ServiceID: "other", Source: SourceNone})
	// A wait far longer than the test: the request must be answered by the
	// table change, not by the timeout.
	g := &Gateway{Table: table.View(), Wait: time.Hour}
	gw := startGateway(t, g)

	result := make(chan response, 1)
	go func() {
		resp, err := http.Get(gw + "/pets/1")
		if err != nil {
			result <- response{status: -1}
			return
		}
		resp.Body.Close()
		result <- response{status: resp.StatusCode, header: resp.Header}
	}()
	// An unrelated change wakes the request, which goes back to waiting.
	table.Store("other", &RouteEntry{Name: "other", PathPrefix: "/other", ServiceID: "other", Source: SourceStaticTargets, Targets: targets(a.URL)})
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceDiscovery, Targets: targets(a.URL)})
	select {
	case got := <-result:
		if got.status != 200 || got.header.Get(HeaderSource) != "discovery" {
			t.Errorf("status %d source %q, want 200 discovery", got.status, got.header.Get(HeaderSource))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("request still waiting 30s after its route got a target")
	}
}

func TestGatewayUpstreamFails(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceStaticTargets, Targets: targets(deadURL)})
	gw := startGateway(t, &Gateway{Table: table.View()})

	got := get(t, gw+"/pets")
	if got.status != 502 {
		t.Errorf("status %d, want 502", got.status)
	}
	want := map[string]string{"error": "upstream unavailable: connection refused", "route": "pets", "serviceId": "pets", "attempts": "1"}
	if diff := cmp.Diff(want, got.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if got.header.Get(HeaderRoute) != "pets" {
		t.Errorf("%s = %q, want pets", HeaderRoute, got.header.Get(HeaderRoute))
	}
}

// One dead and one live instance: every GET succeeds, those that met the
// dead one first after a retry; once it failed often enough in a row, it
// is ejected and no GET needs a retry any more.
func TestGatewayDeadAndLiveInstances(t *testing.T) {
	live := echoBackend(t, "live")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceDiscovery,
		Targets: []discovery.Target{{URL: deadURL, Instance: "dead"}, {URL: live.URL, Instance: "live"}}})
	gw := startGateway(t, &Gateway{Table: table.View(), Policy: gateway.Policy{EjectAfter: 3}})
	retried := 0
	for i := range 20 {
		got := get(t, gw+"/pets")
		if got.status != 200 || got.body["backend"] != "live" {
			t.Fatalf("GET %d: %d %v", i, got.status, got.body)
		}
		if got.header.Get(gateway.HeaderRetries) != "" {
			retried++
		}
	}
	if retried != 3 {
		t.Errorf("%d of 20 GETs were retried, want 3: the dead instance is ejected after 3 failures", retried)
	}
}

// A route that points at a listener of the program itself is refused.
func TestGatewayRefusesItsOwnListeners(t *testing.T) {
	var table watchable.Map[string, *RouteEntry]
	g := &Gateway{Table: table.View()}
	g.Own = func() []string { return []string{"0.0.0.0:1", g.Addr()} }
	gw := startGateway(t, g)
	table.Store("loop", &RouteEntry{Name: "loop", PathPrefix: "/loop", ServiceID: "loop", Source: SourceStaticTargets, Targets: targets(gw)})
	table.Store("admin", &RouteEntry{Name: "admin", PathPrefix: "/admin", ServiceID: "admin", Source: SourceStaticTargets, Targets: targets("http://localhost:1")})
	for _, path := range []string{"/loop", "/admin"} {
		eventually(t, path+" refused", func() bool {
			got := get(t, gw+path)
			return got.status == 503 && strings.Contains(got.body["error"], "gateway's own program")
		})
	}
}

// countingPool is a transportSource that knows one instance and counts
// the requests sent through its transport.
type countingPool struct {
	instance string
	used     atomic.Int64
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (p *countingPool) Transport(id string) http.RoundTripper {
	if id != p.instance {
		return nil
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		p.used.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})
}

func TestGatewayUsesPoolTransports(t *testing.T) {
	pooled, other := echoBackend(t, "pooled"), echoBackend(t, "other")
	pool := &countingPool{instance: "i1"}
	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceDiscovery,
		Targets: []discovery.Target{{URL: pooled.URL, Instance: "i1"}}})
	table.Store("cats", &RouteEntry{Name: "cats", PathPrefix: "/cats", ServiceID: "cats", Source: SourceStaticTargets, Targets: targets(other.URL)})
	gw := startGateway(t, &Gateway{Table: table.View(), Pool: pool})

	for _, path := range []string{"/pets", "/cats", "/pets"} {
		if got := get(t, gw+path); got.status != 200 {
			t.Fatalf("GET %s: %d %v", path, got.status, got.body)
		}
	}
	if n := pool.used.Load(); n != 2 {
		t.Errorf("the pool's transport carried %d requests, want the 2 to its instance", n)
	}
}

// launchGateway runs g until the test ends, without waiting for it to be
// ready, and returns its base URL once it listens.
func launchGateway(t *testing.T, g *Gateway) string {
	t.Helper()
	g.ListenAddr = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	eventually(t, "gateway listening", func() bool { return g.Addr() != "" })
	return "http://" + g.Addr()
}

// Until the route table is initialized, the gateway is not ready, and
// requests answer 503 once they have waited for it for Wait.
func TestGatewayNotReadyBeforeTheTable(t *testing.T) {
	a := echoBackend(t, "a")
	var table watchable.Map[string, *RouteEntry]
	computed := table.RegisterInitializer("routing")
	g := &Gateway{Table: table.View(), Wait: 10 * time.Millisecond}
	gw := launchGateway(t, g)

	want := map[string]string{"error": "the route table is not ready yet", "path": "/pets"}
	got := get(t, gw+"/pets")
	if diff := cmp.Diff(want, got.body); got.status != 503 || diff != "" {
		t.Errorf("before the table is initialized: status %d, body (-want +got):\n%s", got.status, diff)
	}
	// A partial table is not routed by either.
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceStaticTargets, Targets: targets(a.URL)})
	if got := get(t, gw+"/pets"); got.status != 503 || got.body["error"] != want["error"] {
		t.Errorf("with a table not initialized yet: %d %v, want 503", got.status, got.body)
	}
	select {
	case <-g.Ready():
		t.Fatal("ready before the route table is initialized")
	default:
	}

	computed()
	select {
	case <-g.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("not ready 30s after the table was initialized")
	}
	if got := get(t, gw+"/pets"); got.status != 200 || got.body["backend"] != "a" {
		t.Errorf("once the table is initialized: %d %v, want 200 from a", got.status, got.body)
	}
}

// A request that arrives before the route table is initialized waits for
// it, and is routed by it.
func TestGatewayRequestWaitsForTheTable(t *testing.T) {
	a := echoBackend(t, "a")
	var table watchable.Map[string, *RouteEntry]
	computed := table.RegisterInitializer("routing")
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", Source: SourceStaticTargets, Targets: targets(a.URL)})
	// A wait far longer than the test: the request must be answered by the
	// table, not by the timeout.
	gw := launchGateway(t, &Gateway{Table: table.View(), Wait: time.Hour})

	result := make(chan response, 1)
	go func() {
		resp, err := testClient.Get(gw + "/pets")
		if err != nil {
			result <- response{status: -1}
			return
		}
		resp.Body.Close()
		result <- response{status: resp.StatusCode, header: resp.Header}
	}()
	computed()
	select {
	case got := <-result:
		if got.status != 200 || got.header.Get(HeaderRoute) != "pets" {
			t.Errorf("status %d route %q, want 200 by pets", got.status, got.header.Get(HeaderRoute))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("request still waiting 30s after the table was initialized")
	}
}
