package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-go/switchyard/discovery"
)

// backend is an upstream that counts its requests and answers with its
// name, or with the status set by fail.
type backend struct {
	name  string
	srv   *httptest.Server
	hits  atomic.Int64
	fails atomic.Int64 // the status to answer with; 0: 200
}

func newBackend(t *testing.T, name string) *backend {
	t.Helper()
	b := &backend{name: name}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		if code := b.fails.Load(); code != 0 {
			w.WriteHeader(int(code))
			return
		}
		w.Header().Set("X-Switchyard-Route", "set by the backend")
		io.WriteString(w, b.name+" "+r.URL.Path)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *backend) target() discovery.Target {
	return discovery.Target{URL: b.srv.URL, Instance: b.name}
}

// deadTarget is a target where nothing listens: connections are refused.
func deadTarget(t *testing.T) discovery.Target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return discovery.Target{URL: "http://" + addr, Instance: "dead"}
}

// fixedRoute resolves every request to the route "pets" of service
// "petstore" with the given targets.
func fixedRoute(targets ...discovery.Target) Resolver {
	return func(r *http.Request) (Upstream, *Refusal) {
		return Upstream{Route: "pets", ServiceID: "petstore", Targets: targets, StripPrefix: "/pets",
			Header: http.Header{"X-Switchyard-Route": {"pets"}}}, nil
	}
}

// logBuffer collects log records.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// serve runs p behind a test server.
func serve(t *testing.T, p *Proxy) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		p.CloseIdleConnections()
	})
	return srv
}

type answer struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, srv *httptest.Server, method, path string, body io.Reader, header http.Header) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func get(t *testing.T, srv *httptest.Server, path string) answer {
	t.Helper()
	return do(t, srv, "GET", path, nil, nil)
}

// One dead and one live target: every GET succeeds, retried when it went
// to the dead one first, and the retries are visible.
func TestRetryOnAnotherTarget(t *testing.T) {
	live := newBackend(t, "live")
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	p := New(fixedRoute(deadTarget(t), live.target()), WithMetrics(m), WithLogger(logs.logger()),
		WithPolicy(Policy{EjectAfter: -1})) // every other request meets the dead target
	srv := serve(t, p)
	retried := 0
	for i := range 20 {
		a := get(t, srv, "/pets/1")
		if a.code != 200 || a.body != "live /1" {
			t.Fatalf("GET %d: %d %q", i, a.code, a.body)
		}
		if a.header.Get(HeaderRetries) == "1" {
			retried++
		}
		if got := a.header.Values("X-Switchyard-Route"); len(got) != 1 || got[0] != "pets" {
			t.Errorf("X-Switchyard-Route = %q, want the gateway's only", got)
		}
	}
	if retried != 10 {
		t.Errorf("%d of 20 GETs were retried, want 10 (round-robin over a dead and a live target)", retried)
	}
	if got := testutil.ToFloat64(m.retries.WithLabelValues("pets")); got != 10 {
		t.Errorf("retries metric = %v, want 10", got)
	}
	if got := testutil.ToFloat64(m.failures.WithLabelValues("pets", "connection refused")); got != 10 {
		t.Errorf("failures metric = %v, want 10", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("pets", "2xx")); got != 20 {
		t.Errorf("requests metric = %v, want 20", got)
	}
}

// A request that may not be sent twice is not retried; the answer names
// the route and service, not the address, which goes to the log.
func TestNoRetryAndAnAddressFreeBody(t *testing.T) {
	live := newBackend(t, "live")
	dead := deadTarget(t)
	var logs logBuffer
	p := New(fixedRoute(dead, live.target()), WithLogger(logs.logger()))
	srv := serve(t, p)
	a := do(t, srv, "POST", "/pets", strings.NewReader(`{"name":"Rex"}`), http.Header{"Content-Type": {"application/json"}})
	if a.code != http.StatusBadGateway {
		t.Fatalf("POST to a dead target: %d %s, want 502", a.code, a.body)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(a.body), &body); err != nil {
		t.Fatal(err)
	}
	if body["route"] != "pets" || body["serviceId"] != "petstore" || body["attempts"] != 1.0 || !strings.Contains(body["error"].(string), "connection refused") {
		t.Errorf("body %s, want the route, the service, 1 attempt and the kind of failure", a.body)
	}
	host := strings.TrimPrefix(dead.URL, "http://")
	if strings.Contains(a.body, host) || strings.Contains(a.body, "127.0.0.1") {
		t.Errorf("body %s shows an internal address", a.body)
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, host) {
		t.Errorf("log lacks a warning with the address:\n%s", out)
	}
	if live.hits.Load() != 0 {
		t.Error("the POST was sent to a second target")
	}
}

// clock is a settable clock for ejections.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A target that starts failing is ejected after EjectAfter failures in a
// row, gets no request while ejected, and is readmitted once it answers
// again after the ejection time.
func TestEjectionAndReadmission(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	reg := prometheus.NewRegistry()
	m, _ := NewMetrics(reg)
	var logs logBuffer
	p := New(fixedRoute(a.target(), b.target()), WithMetrics(m), WithLogger(logs.logger()),
		WithPolicy(Policy{EjectAfter: 3, EjectFor: time.Minute}))
	c := &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	p.now = c.now
	srv := serve(t, p)

	b.fails.Store(http.StatusInternalServerError)
	for b.hits.Load() < 3 {
		get(t, srv, "/pets")
	}
	if got := testutil.ToFloat64(m.ejections.WithLabelValues("pets")); got != 1 {
		t.Fatalf("ejections = %v after 3 failures in a row, want 1", got)
	}
	before := b.hits.Load()
	for i := range 10 {
		if ans := get(t, srv, "/pets"); ans.code != 200 {
			t.Fatalf("GET %d while b is ejected: %d %s", i, ans.code, ans.body)
		}
	}
	if b.hits.Load() != before {
		t.Errorf("the ejected target got %d requests", b.hits.Load()-before)
	}

	// Back after the ejection time, still failing: ejected again at once,
	// for twice as long.
	c.advance(time.Minute)
	for b.hits.Load() == before {
		get(t, srv, "/pets")
	}
	if got := testutil.ToFloat64(m.ejections.WithLabelValues("pets")); got != 2 {
		t.Fatalf("ejections = %v after failing on return, want 2", got)
	}
	c.advance(time.Minute) // not enough: the second ejection lasts 2 minutes
	before = b.hits.Load()
	for range 4 {
		get(t, srv, "/pets")
	}
	if b.hits.Load() != before {
		t.Fatal("the target got requests before its second ejection was over")
	}

	// Recovered: readmitted, and it takes its turn again.
	b.fails.Store(0)
	c.advance(time.Minute)
	for b.hits.Load() == before {
		get(t, srv, "/pets")
	}
	for range 10 {
		get(t, srv, "/pets")
	}
	if got := b.hits.Load() - before; got < 5 {
		t.Errorf("the readmitted target got %d of the next ~11 requests, want about half", got)
	}
	out := logs.String()
	for _, want := range []string{"target ejected", "target readmitted", "for=1m0s", "for=2m0s", b.srv.URL} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// When every target is ejected, they are used anyway.
func TestEveryTargetEjectedFailsOpen(t *testing.T) {
	only := newBackend(t, "only")
	only.fails.Store(http.StatusServiceUnavailable)
	p := New(fixedRoute(only.target()), WithPolicy(Policy{EjectAfter: 1, EjectFor: time.Hour}), WithLogger(slog.New(slog.DiscardHandler)))
	srv := serve(t, p)
	for range 3 {
		if a := get(t, srv, "/pets"); a.code != http.StatusServiceUnavailable {
			t.Errorf("GET: %d, want the upstream's 503", a.code)
		}
	}
	if only.hits.Load() != 3 {
		t.Errorf("the only target got %d of 3 requests", only.hits.Load())
	}
}

// hangingTransport never makes a connection: it waits for the request's
// end.
type hangingTransport struct{}

func (hangingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestTimeouts(t *testing.T) {
	live := newBackend(t, "live")
	hanging := discovery.Target{URL: "http://192.0.2.1:80", Instance: "hanging"}
	transport := func(t discovery.Target) http.RoundTripper {
		if t.Instance == "hanging" {
			return hangingTransport{}
		}
		return nil
	}
	t.Run("connect, retried", func(t *testing.T) {
		p := New(fixedRoute(hanging, live.target()), WithTransport(transport),
			WithPolicy(Policy{ConnectTimeout: 50 * time.Millisecond}), WithLogger(slog.New(slog.DiscardHandler)))
		srv := serve(t, p)
		for range 2 { // one of the two starts with the hanging target
			if a := get(t, srv, "/pets"); a.code != 200 {
				t.Errorf("GET: %d %s, want 200 after a retry", a.code, a.body)
			}
		}
	})
	t.Run("connect, alone", func(t *testing.T) {
		p := New(fixedRoute(hanging), WithTransport(transport),
			WithPolicy(Policy{ConnectTimeout: 50 * time.Millisecond}), WithLogger(slog.New(slog.DiscardHandler)))
		srv := serve(t, p)
		a := get(t, srv, "/pets")
		if a.code != http.StatusGatewayTimeout || !strings.Contains(a.body, "connect timeout") || strings.Contains(a.body, "192.0.2.1") {
			t.Errorf("GET: %d %s, want 504 naming the connect timeout and no address", a.code, a.body)
		}
		if a.header.Get(HeaderRetries) != "" || !strings.Contains(a.body, `"attempts":1`) {
			t.Errorf("GET with a single target: %v %s, want one attempt and no retry", a.header, a.body)
		}
	})
	t.Run("response headers", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer slow.Close()
		defer close(release)
		p := New(fixedRoute(discovery.Target{URL: slow.URL}), WithPolicy(Policy{ResponseHeaderTimeout: 100 * time.Millisecond}),
			WithLogger(slog.New(slog.DiscardHandler)))
		srv := serve(t, p)
		start := time.Now()
		a := get(t, srv, "/pets")
		if a.code != http.StatusGatewayTimeout || !strings.Contains(a.body, "response header timeout") || !strings.Contains(a.body, `"attempts":1`) {
			t.Errorf("GET: %d %s, want 504 after one attempt", a.code, a.body)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the answer took %v", d)
		}
	})
}

// What a client says about who it is does not reach the upstream; the
// gateway says it instead.
func TestClientIPHeadersReplaced(t *testing.T) {
	seen := make(chan http.Header, 1)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen <- r.Header.Clone() }))
	defer echo.Close()
	p := New(fixedRoute(discovery.Target{URL: echo.URL}))
	srv := serve(t, p)
	do(t, srv, "GET", "/pets", nil, http.Header{
		"X-Real-Ip":         {"6.6.6.6"},
		"True-Client-Ip":    {"6.6.6.6"},
		"X-Client-Ip":       {"6.6.6.6"},
		"Forwarded":         {"for=6.6.6.6"},
		"X-Forwarded-For":   {"6.6.6.6"},
		"X-Forwarded-Host":  {"evil.example"},
		"X-Switchyard-User": {"admin"},
	})
	h := <-seen
	for name, want := range map[string]string{
		"X-Real-Ip": "127.0.0.1", "X-Forwarded-For": "127.0.0.1", "True-Client-Ip": "", "X-Client-Ip": "",
		"Forwarded": "", "X-Switchyard-User": "", "X-Forwarded-Host": strings.TrimPrefix(srv.URL, "http://"),
	} {
		if got := strings.Join(h.Values(name), ","); got != want {
			t.Errorf("upstream saw %s: %q, want %q", name, got, want)
		}
	}
}

// Refusals are answered with the route and counted; every answer is
// timed per route and status class.
func TestRefusalsAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, _ := NewMetrics(reg)
	live := newBackend(t, "live")
	p := New(func(r *http.Request) (Upstream, *Refusal) {
		switch r.URL.Path {
		case "/pets":
			return Upstream{Route: "pets", ServiceID: "petstore", Targets: []discovery.Target{live.target()}}, nil
		case "/empty":
			return Upstream{Route: "empty", ServiceID: "nobody"}, nil
		}
		return Upstream{}, &Refusal{Status: http.StatusNotFound, Message: "no route", Body: map[string]any{"path": r.URL.Path},
			Header: http.Header{"X-Switchyard-Route": {"none"}}}
	}, WithMetrics(m))
	srv := serve(t, p)
	get(t, srv, "/pets")
	a := get(t, srv, "/nowhere")
	if a.code != 404 || a.body != `{"error":"no route","path":"/nowhere"}`+"\n" || a.header.Get("X-Switchyard-Route") != "none" {
		t.Errorf("refusal: %d %q %v", a.code, a.body, a.header)
	}
	a = get(t, srv, "/empty")
	if a.code != 503 || !strings.Contains(a.body, `"serviceId":"nobody"`) {
		t.Errorf("a route without targets: %d %s", a.code, a.body)
	}
	for _, c := range []struct {
		route, code string
	}{{"pets", "2xx"}, {"", "4xx"}, {"empty", "5xx"}} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(c.route, c.code)); got != 1 {
			t.Errorf("requests{route=%q,code=%q} = %v, want 1", c.route, c.code, got)
		}
	}
	if n := testutil.CollectAndCount(m.duration); n != 3 {
		t.Errorf("%d duration series, want 3", n)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering the metrics twice succeeded")
	}
}

// A client that goes away is counted as canceled, not as a failure.
func TestCanceledClient(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, _ := NewMetrics(reg)
	arrived := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}))
	defer slow.Close()
	p := New(fixedRoute(discovery.Target{URL: slow.URL}), WithMetrics(m))
	srv := serve(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/pets", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-arrived
	cancel()
	<-done
	deadline := time.Now().Add(20 * time.Second)
	for testutil.ToFloat64(m.requests.WithLabelValues("pets", "canceled")) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the canceled request was not counted")
		}
		time.Sleep(5 * time.Millisecond) // the proxy notices the client left
	}
}
