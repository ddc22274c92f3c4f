package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/gateway"
	"github.com/switchyard-go/switchyard/provider/registry"
)

const testToken = "e2e-token"

// e2e is a pipeline running in-process for one test, with an HTTP client of
// its own.
type e2e struct {
	t       testing.TB
	p       *pipeline
	dir     string
	gateway string // base URL
	control string // base URL
	admin   string // base URL
	client  *http.Client
	out     *syncBuffer
	done    <-chan error // what the pipeline's run returned
	stop    func()       // stops the pipeline and checks it stopped cleanly
}

// startPipeline runs the whole pipeline on free loopback ports with the
// configuration files given, waits until it is ready, and stops it
// (checking that it stops cleanly) when the test ends.
func startPipeline(t testing.TB, files map[string]string) *e2e {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := launchPipeline(t, func(cfg *config) { cfg.ConfigDir = dir }, nil)
	e.dir = dir
	e.waitReady()
	return e
}

// launchPipeline starts the pipeline on free loopback ports, with its
// configuration changed by configure and, before it runs, setup called,
// and stops it (checking that it stops cleanly) when the test ends. It
// does not wait for the pipeline to be ready.
func launchPipeline(t testing.TB, configure func(*config), setup func(*pipeline)) *e2e {
	t.Helper()
	out := newSyncBuffer()
	cfg := config{
		GatewayAddr:   "127.0.0.1:0",
		ControlAddr:   "127.0.0.1:0",
		AdminAddr:     "127.0.0.1:0",
		ShutdownGrace: 5 * time.Second,
		Demo:          true,
		Lease:         300 * time.Millisecond,
		Wait:          100 * time.Millisecond,
		LogLevel:      slog.LevelError,
		Token:         testToken,
	}
	configure(&cfg)
	p, err := newPipeline(cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.run(ctx) }()
	e := &e2e{t: t, p: p, out: out, client: &http.Client{Timeout: 30 * time.Second}, done: done}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("pipeline run: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("pipeline did not stop within 5s")
			}
			e.client.CloseIdleConnections()
		})
	}
	t.Cleanup(e.stop)
	return e
}

// waitReady waits until the pipeline is ready, and sets the base URLs.
func (e *e2e) waitReady() {
	e.t.Helper()
	select {
	case <-e.p.group.Ready():
	case err := <-e.done:
		e.t.Fatalf("pipeline stopped before ready: %v", err)
	case <-time.After(30 * time.Second):
		e.t.Fatalf("pipeline not ready after 30s; runners: %v", e.p.group.Status().LoadAll())
	}
	e.urls()
}

// urls sets the base URLs, once the servers listen.
func (e *e2e) urls() {
	e.gateway, e.control, e.admin = "http://"+e.p.gateway.Addr(), "http://"+e.p.control.Addr(), "http://"+e.p.admin.Addr()
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (e *e2e) do(method, url, contentType, token string, body io.Reader) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func (e *e2e) get(path string) reply {
	e.t.Helper()
	return e.do("GET", e.gateway+path, "", "", nil)
}

// waitFor retries GET path on the gateway until ok accepts the reply.
func (e *e2e) waitFor(what, path string, ok func(reply) bool) reply {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.get(path)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: GET %s still answers %d %s after 20s", what, path, r.status, r.raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// instance is a backend registered through the HTTP API by the test, like
// an external client.
type instance struct {
	e    *e2e
	srv  *httptest.Server
	id   string
	stop chan struct{}
	done chan struct{}
}

// register starts a backend that answers with name, registers it as
// serviceID and heartbeats until stopHeartbeat.
func (e *e2e) register(serviceID, name string) *instance {
	e.t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"backend": name, "path": r.URL.Path})
	}))
	e.t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	body, _ := json.Marshal(registry.Registration{ServiceID: serviceID, Protocol: "http", Address: "127.0.0.1", Port: n})
	r := e.do("POST", e.control+"/v1/services", "application/json", testToken, bytes.NewReader(body))
	if r.status != http.StatusCreated {
		e.t.Fatalf("register %s: %d %s", serviceID, r.status, r.raw)
	}
	in := &instance{e: e, srv: srv, id: r.body["runtimeInstanceId"].(string), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(in.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-in.stop:
				return
			case <-t.C:
				req, _ := http.NewRequest("PUT", e.control+"/v1/services/"+in.id+"/heartbeat", nil)
				req.Header.Set("Authorization", "Bearer "+testToken)
				if resp, err := e.client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}
	}()
	e.t.Cleanup(in.stopHeartbeat)
	return in
}

// dialWebSocket opens /ws/microservice on the control address, with token,
// if any, in the upgrade request.
func (e *e2e) dialWebSocket(ctx context.Context, token string) *websocket.Conn {
	e.t.Helper()
	header := http.Header{}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.control, "http")+"/ws/microservice", &websocket.DialOptions{
		HTTPClient: e.client,
		HTTPHeader: header,
	})
	if err != nil {
		e.t.Fatalf("dial /ws/microservice: %v", err)
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	return conn
}

func (in *instance) stopHeartbeat() {
	select {
	case <-in.stop:
	default:
		close(in.stop)
	}
	<-in.done
}

const e2eConfig = `
kind: Route
metadata: {name: petstore}
spec: {pathPrefix: /petstore, serviceId: petstore, stripPrefix: true}
---
kind: Route
metadata: {name: extra}
spec: {pathPrefix: /extra, serviceId: extra}
---
kind: Route
metadata: {name: dying}
spec: {pathPrefix: /dying, serviceId: dying}
---
kind: Route
metadata: {name: fixed}
spec: {pathPrefix: /fixed, serviceId: fixed, directUrl: "%s"}
---
kind: Route
metadata: {name: listed}
spec: {pathPrefix: /listed, serviceId: listed, envTag: prod}
---
kind: Route
metadata: {name: socket}
spec: {pathPrefix: /socket, serviceId: socket}
---
kind: DirectRegistry
metadata: {name: direct}
spec:
  directUrls: {"listed|prod": "%s"}
`

func TestEndToEnd(t *testing.T) {
	fixed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"backend": "fixed-direct"})
	}))
	defer fixed.Close()
	listed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"backend": "listed-direct"})
	}))
	defer listed.Close()

	e := startPipeline(t, map[string]string{"routes.yaml": fmt.Sprintf(e2eConfig, fixed.URL, listed.URL)})

	t.Run("ready means the configured routes are in the route table", func(t *testing.T) {
		// Checked right after the group became ready: the routing
		// translator must not have been ready with an empty table.
		if got := slices.Sorted(e.p.table.State().Keys()); !slices.Equal(got, []string{"dying", "extra", "fixed", "listed", "petstore", "socket"}) {
			t.Errorf("route table at readiness: %q", got)
		}
	})

	t.Run("requests alternate between the demo backends", func(t *testing.T) {
		ids := map[string]bool{e.p.demos[0].ID(): true, e.p.demos[1].ID(): true}
		if len(ids) != 2 {
			t.Fatalf("demo backends have ids %v, want two distinct ids", ids)
		}
		// Both demo instances are registered once the pipeline is ready,
		// but the route table may still be catching up with the second.
		e.waitFor("both demo backends routed", "/petstore/pets", func(r reply) bool {
			var table []discovery.Target
			if entry, ok := e.p.table.Load("petstore"); ok {
				table = entry.Targets
			}
			return len(table) == 2
		})
		var prev string
		for i := range 6 {
			r := e.get("/petstore/pets")
			id, _ := r.body["runtimeInstanceId"].(string)
			if r.status != 200 || !ids[id] || r.body["path"] != "/pets" {
				t.Fatalf("request %d: %d %s, want 200 from a demo backend at /pets", i, r.status, r.raw)
			}
			want := map[string]any{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Host": e.p.gateway.Addr(), "X-Forwarded-Proto": "http"}
			if diff := cmp.Diff(want, r.body["forwarded"]); diff != "" {
				t.Errorf("request %d: X-Forwarded-* headers the backend received (-want +got):\n%s", i, diff)
			}
			if id == prev {
				t.Errorf("request %d went to %s again; want round-robin", i, id)
			}
			prev = id
			if got := r.header.Get(HeaderRoute) + " " + r.header.Get(HeaderSource); got != "petstore discovery" {
				t.Errorf("request %d: route and source %q, want %q", i, got, "petstore discovery")
			}
		}
	})

	t.Run("a registered backend receives traffic, deregistration takes effect at once", func(t *testing.T) {
		if r := e.get("/extra/x"); r.status != 503 || r.body["serviceId"] != "extra" {
			t.Fatalf("before registration: %d %s, want 503 naming extra", r.status, r.raw)
		}
		in := e.register("extra", "extra-1")
		e.waitFor("extra routed", "/extra/x", func(r reply) bool { return r.status == 200 })
		if r := e.get("/extra/x"); r.body["backend"] != "extra-1" || r.body["path"] != "/extra/x" {
			t.Errorf("extra: %s, want extra-1 at /extra/x", r.raw)
		}

		r := e.do("DELETE", e.control+"/v1/services/"+in.id, "", testToken, nil)
		if r.status != 204 {
			t.Fatalf("deregister: %d %s", r.status, r.raw)
		}
		// At once: the registry no longer lists it, and the gateway stops
		// routing to it although the backend still runs and its lease is
		// far from over (it heartbeats).
		look := e.do("GET", e.control+"/v1/discovery?serviceId=extra", "", testToken, nil)
		if nodes, _ := look.body["nodes"].([]any); look.status != 200 || len(nodes) != 0 {
			t.Errorf("discovery right after deregistration: %d %s, want no nodes", look.status, look.raw)
		}
		r = e.waitFor("extra unrouted", "/extra/x", func(r reply) bool { return r.status != 200 })
		if r.status != 503 || r.body["serviceId"] != "extra" {
			t.Errorf("after deregistration: %d %s, want 503 naming extra", r.status, r.raw)
		}
	})

	t.Run("an instance registered over a WebSocket is routed while its socket is open", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]string{"backend": "socket-1"})
		}))
		defer backend.Close()
		host, port := hostPort(t, backend)
		register := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "service/register",
			"params": map[string]any{"serviceId": "socket", "protocol": "http", "address": host, "port": port}}
		var answer struct {
			Result struct{ RuntimeInstanceID string }
			Error  *struct{ Code int }
		}

		// A wrong token in params is refused with the registry's
		// application code (a wrong one in the upgrade request gets a 401).
		conn := e.dialWebSocket(ctx, "")
		params := maps.Clone(register["params"].(map[string]any))
		params["token"] = "nope"
		if err := wsjson.Write(ctx, conn, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "service/register", "params": params}); err != nil {
			t.Fatal(err)
		}
		if err := wsjson.Read(ctx, conn, &answer); err != nil || answer.Error == nil || answer.Error.Code != registry.CodeUnauthorized {
			t.Errorf("register with a wrong token: %+v (%v), want error code %d", answer, err, registry.CodeUnauthorized)
		}
		conn.CloseNow()

		conn = e.dialWebSocket(ctx, testToken)
		defer conn.CloseNow()
		answer.Error = nil
		if err := wsjson.Write(ctx, conn, register); err != nil {
			t.Fatal(err)
		}
		if err := wsjson.Read(ctx, conn, &answer); err != nil || answer.Error != nil || answer.Result.RuntimeInstanceID == "" {
			t.Fatalf("register: %+v (%v), want a runtimeInstanceId", answer, err)
		}
		r := e.waitFor("socket routed", "/socket", func(r reply) bool { return r.status == 200 })
		if r.body["backend"] != "socket-1" {
			t.Errorf("GET /socket: %s, want socket-1", r.raw)
		}
		// Closing the socket disconnects the instance at once, with no
		// lease to wait for.
		if err := conn.Close(websocket.StatusNormalClosure, "bye"); err != nil {
			t.Fatal(err)
		}
		r = e.waitFor("socket unrouted", "/socket", func(r reply) bool { return r.status != 200 })
		if r.status != 503 || r.body["serviceId"] != "socket" {
			t.Errorf("after the socket closed: %d %s, want 503 naming socket", r.status, r.raw)
		}
	})

	t.Run("an instance that stops heartbeating answers 503 after the lease", func(t *testing.T) {
		in := e.register("dying", "dying-1")
		e.waitFor("dying routed", "/dying", func(r reply) bool { return r.status == 200 })
		in.stopHeartbeat()
		r := e.waitFor("dying lost", "/dying", func(r reply) bool { return r.status != 200 })
		if r.status != 503 || r.body["serviceId"] != "dying" || r.body["route"] != "dying" {
			t.Errorf("after the lease: %d %s, want 503 naming dying", r.status, r.raw)
		}
		inst, ok := e.p.registry.Instances().Load(in.id)
		if ok && inst.Connected {
			t.Errorf("instance %s still connected after its lease", in.id)
		}
	})

	t.Run("directUrl and DirectRegistry override discovery", func(t *testing.T) {
		e.register("fixed", "fixed-discovered")
		e.register("listed", "listed-discovered")
		eventually(t, "fixed and listed discovered", func() bool {
			snaps := e.p.registry.Snapshots().State()
			_, fixed := snaps.Get(registry.DiscoveryKey{ServiceID: "fixed", Protocol: "http"})
			_, listed := snaps.Get(registry.DiscoveryKey{ServiceID: "listed", Protocol: "http"})
			return fixed && listed
		})
		for path, want := range map[string]string{"/fixed": "fixed-direct directUrl", "/listed": "listed-direct directRegistry"} {
			for range 3 {
				r := e.get(path)
				if got := fmt.Sprint(r.body["backend"], " ", r.header.Get(HeaderSource)); r.status != 200 || got != want {
					t.Errorf("GET %s: %d %s (source %s), want %s", path, r.status, r.raw, r.header.Get(HeaderSource), want)
				}
			}
		}
	})

	t.Run("editing the configuration re-routes", func(t *testing.T) {
		e.register("moved", "moved-1")
		edited := strings.Replace(fmt.Sprintf(e2eConfig, fixed.URL, listed.URL),
			"{pathPrefix: /extra, serviceId: extra}", "{pathPrefix: /moved, serviceId: moved, stripPrefix: true}", 1)
		if err := os.WriteFile(filepath.Join(e.dir, "routes.yaml"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.waitFor("re-routed", "/moved/a", func(r reply) bool { return r.status == 200 })
		if r.body["backend"] != "moved-1" || r.body["path"] != "/a" || r.header.Get(HeaderRoute) != "extra" {
			t.Errorf("GET /moved/a: %s route %s, want moved-1 at /a by route extra", r.raw, r.header.Get(HeaderRoute))
		}
		if r := e.get("/extra/x"); r.status != 404 || r.body["error"] != "no route" || r.body["path"] != "/extra/x" {
			t.Errorf("GET /extra/x after the edit: %d %s, want 404 no route", r.status, r.raw)
		}
	})

	t.Run("bad registrations are refused and change nothing", func(t *testing.T) {
		valid := `{"serviceId":"bad","protocol":"http","address":"127.0.0.1","port":8080}`
		tests := []struct {
			name, method, path, contentType, token, body string
			wantStatus                                   int
			wantField                                    string
		}{
			{"invalid JSON", "POST", "/v1/services", "application/json", testToken, `{"serviceId":`, 400, ""},
			{"not an object", "POST", "/v1/services", "application/json", testToken, `[1]`, 400, ""},
			{"unknown field", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"127.0.0.1","port":8080,"color":"red"}`, 400, "color"},
			{"missing serviceId", "POST", "/v1/services", "application/json", testToken, `{"protocol":"http","address":"127.0.0.1","port":8080}`, 400, "serviceId"},
			{"missing port", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"127.0.0.1"}`, 400, "port"},
			{"port zero", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"127.0.0.1","port":0}`, 400, "port"},
			{"port too big", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"127.0.0.1","port":65536}`, 400, "port"},
			{"port not a number", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"127.0.0.1","port":"80"}`, 400, "port"},
			{"missing protocol", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","address":"127.0.0.1","port":8080}`, 400, "protocol"},
			{"unknown protocol", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"ftp","address":"127.0.0.1","port":8080}`, 400, "protocol"},
			{"missing address", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","port":8080}`, 400, "address"},
			{"address with scheme", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"http://x","port":8080}`, 400, "address"},
			{"serviceId too long", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"` + strings.Repeat("x", registry.DefaultMaxStringLength+1) + `","protocol":"http","address":"127.0.0.1","port":8080}`, 400, "serviceId"},
			{"too many tags", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"bad","protocol":"http","address":"127.0.0.1","port":8080,"tags":{` + manyTags(registry.DefaultMaxTags+1) + `}}`, 400, "tags"},
			{"missing token", "POST", "/v1/services", "application/json", "", valid, 401, ""},
			{"wrong token", "POST", "/v1/services", "application/json", "nope", valid, 401, ""},
			{"wrong content type", "POST", "/v1/services", "text/plain", testToken, valid, 415, ""},
			{"body too large", "POST", "/v1/services", "application/json", testToken, `{"serviceId":"` + strings.Repeat("x", 70<<10) + `"}`, 413, ""},
			{"heartbeat of an unknown instance", "PUT", "/v1/services/unknown/heartbeat", "", testToken, "", 404, "runtimeInstanceId"},
			{"deregistration of an unknown instance", "DELETE", "/v1/services/unknown", "", testToken, "", 404, "runtimeInstanceId"},
			{"heartbeat without token", "PUT", "/v1/services/unknown/heartbeat", "", "", "", 401, ""},
			{"discovery without serviceId", "GET", "/v1/discovery", "", testToken, "", 400, "serviceId"},
		}
		for _, tt := range tests {
			r := e.do(tt.method, e.control+tt.path, tt.contentType, tt.token, strings.NewReader(tt.body))
			msg, _ := r.body["error"].(string)
			field, _ := r.body["field"].(string)
			if r.status != tt.wantStatus || msg == "" || field != tt.wantField {
				t.Errorf("%s: %d %s, want %d with an error and field %q", tt.name, r.status, r.raw, tt.wantStatus, tt.wantField)
			}
		}
		for id, in := range e.p.registry.Instances().LoadAll() {
			if in.ServiceID == "bad" {
				t.Errorf("a bad registration stored instance %s", id)
			}
		}
	})

	t.Run("admin pages", func(t *testing.T) {
		if r := e.do("GET", e.control+"/readyz", "", "", nil); r.status != 200 || r.body["ready"] != true {
			t.Errorf("/readyz: %d %s", r.status, r.raw)
		}
		for _, path := range []string{"/debug/maps", "/debug/runners", "/debug/pprof/", "/metrics"} {
			if r := e.do("GET", e.control+path, "", "", nil); r.status != 404 {
				t.Errorf("the control listener serves %s: %d", path, r.status)
			}
			if r := e.do("GET", e.gateway+path, "", "", nil); r.status != 404 {
				t.Errorf("the gateway serves %s: %d %s", path, r.status, r.raw)
			}
		}
		r := e.do("GET", e.admin+"/debug/maps", "", "", nil)
		for _, name := range []string{`"routes"`, `"instances"`, `"discovery"`, `"routeTable"`, `"connections"`, `"runners"`} {
			if r.status != 200 || !strings.Contains(r.raw, name) {
				t.Errorf("/debug/maps lacks %s: %d", name, r.status)
			}
		}
		if strings.Contains(r.raw, testToken) {
			t.Error("/debug/maps shows the token")
		}
		metrics := e.do("GET", e.admin+"/metrics", "", "", nil)
		for _, want := range []string{`switchyard_map_entries{map="routeTable"} 6`, `switchyard_message_updates_total{message="routeTable",runner="gateway"}`,
			`switchyard_gateway_requests_total{code="2xx",route="petstore"}`, `switchyard_gateway_request_duration_seconds_bucket{code="2xx",route="petstore",le="0.1"}`,
			`switchyard_registry_refusals_total{reason="auth_failure"}`} {
			if metrics.status != 200 || !strings.Contains(metrics.raw, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		r = e.do("GET", e.admin+"/debug/runners", "", "", nil)
		for _, name := range []string{"config", "registry", "routing", "pool", "gateway", "control", "admin"} {
			if s, _ := r.body[name].(map[string]any); r.status != 200 || s["phase"] != "ready" {
				t.Errorf("/debug/runners: %s is not listed as ready: %d %s", name, r.status, r.raw)
			}
		}
		var tables []admin.MapInfo
		r = e.do("GET", e.admin+"/debug/maps?map=routeTable", "", "", nil)
		if err := json.Unmarshal([]byte(r.raw), &tables); err != nil || len(tables) != 1 || !tables[0].Initialized || tables[0].Entries != 6 || len(tables[0].Contents) != 6 {
			t.Errorf("/debug/maps?map=routeTable: %d %s, want the initialized table of 6 routes", r.status, r.raw)
		}
	})

	t.Run("event lines", func(t *testing.T) {
		for _, want := range []string{"switchyard pipeline ready", "token          from SWITCHYARD_TOKEN",
			"curl -i " + e.p.gateway.Addr() + "/petstore/pets", `"serviceId":"dying"`, "curl -i " + e.p.gateway.Addr() + "/dying/",
			"instance registered   extra", "route resolved        extra /extra -> extra via discovery", "route target lost     dying"} {
			if !strings.Contains(e.out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, e.out.String())
			}
		}
	})
}

// manyTags returns n distinct "key":"value" JSON members.
func manyTags(n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return strings.Join(tags, ",")
}

// TestShutdownLeavesNoGoroutine runs the pipeline with traffic and a watch
// stream in flight, stops it, and checks that every goroutine it started is
// gone.
func TestShutdownLeavesNoGoroutine(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	e := startPipeline(t, map[string]string{"routes.yaml": fmt.Sprintf(e2eConfig, "http://127.0.0.1:1", "http://127.0.0.1:1")})
	in := e.register("extra", "x")
	e.waitFor("routed", "/extra/y", func(r reply) bool { return r.status == 200 })
	// A watch stream open at shutdown must not hold it up.
	req, _ := http.NewRequest("GET", e.control+"/v1/discovery/watch?serviceId=petstore", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	e.get("/petstore/pets")

	in.stopHeartbeat()
	e.stop()
	if !strings.HasSuffix(e.out.String(), " shutting down\n") {
		t.Errorf("output does not end with the shutdown line:\n%s", e.out.String())
	}
	_, _ = io.Copy(io.Discard, resp.Body) // ends when the server closed the stream
	in.srv.Close()
	e.client.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}

// One dead and one live instance registered with the registry, both
// heartbeating: 20 of 20 GETs succeed; those that meet the dead one first
// are retried on the live one, until the dead one is ejected.
func TestDeadAndLiveInstances(t *testing.T) {
	e := startPipeline(t, map[string]string{"routes.yaml": "kind: Route\nmetadata:\n  name: resilient\nspec:\n  pathPrefix: /resilient\n  serviceId: resilient\n"})
	e.register("resilient", "live")
	dead := e.register("resilient", "dead")
	dead.srv.Close() // it goes on heartbeating: the registry sees it connected
	e.waitFor("both instances routed", "/resilient", func(reply) bool {
		r, ok := e.p.table.Load("resilient")
		return ok && len(r.Targets) == 2
	})
	retried := 0
	for i := range 20 {
		r := e.get("/resilient/x")
		if r.status != 200 || r.body["backend"] != "live" {
			t.Fatalf("GET %d: %d %s", i, r.status, r.raw)
		}
		if r.header.Get(gateway.HeaderRetries) == "1" {
			retried++
		}
	}
	t.Logf("20 of 20 GETs succeeded; %d retried on the live instance", retried)
	if retried == 0 || retried > gateway.DefaultEjectAfter {
		t.Errorf("%d GETs retried, want between 1 and %d (the dead instance is ejected after %d failures)", retried, gateway.DefaultEjectAfter, gateway.DefaultEjectAfter)
	}
}
