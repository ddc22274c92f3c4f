package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testToken     = "registration-token-0123456789"
	testDiscToken = "discovery-token-9876543210"
	// waitFor is generous: CI runs everything with -race on 2 busy cores.
	waitFor = 20 * time.Second
)

// fixture is a running registry behind a real HTTP server.
type fixture struct {
	t   testing.TB
	r   *Registry
	srv *httptest.Server
}

// start runs a registry behind an httptest server, with testToken as its
// token and its log records in the test's log, then opts. Cleanup stops
// both and waits for them.
func start(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	r, err := New(append([]Option{WithToken(testToken), WithLogger(testLogger(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		srv.Close()
	})
	select {
	case <-r.Ready():
	case <-time.After(waitFor):
		t.Fatal("registry not ready")
	}
	return &fixture{t: t, r: r, srv: srv}
}

// fakeClock is a lease clock that moves only when told to. Lease expiry
// then happens exactly when a test advances the clock and calls expire.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// withClock makes c the registry's lease clock.
func withClock(c *fakeClock) Option {
	return func(cfg *config) { cfg.now = c.now }
}

// testLogger returns a logger that writes to t's log, shown when t fails or
// runs with -v.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// do sends a request and returns the status and body.
func (f *fixture) do(method, path, token, contentType, body string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// register registers reg over HTTP and returns the id.
func (f *fixture) register(reg Registration) string {
	f.t.Helper()
	body, _ := json.Marshal(reg)
	status, resp := f.do("POST", "/v1/services", testToken, "application/json", string(body))
	if status != http.StatusCreated {
		f.t.Fatalf("register: status %d: %s", status, resp)
	}
	var out RegisterResponse
	if err := json.Unmarshal([]byte(resp), &out); err != nil {
		f.t.Fatal(err)
	}
	if len(out.RuntimeInstanceID) != 32 {
		f.t.Fatalf("runtimeInstanceId %q: want 32 hex digits", out.RuntimeInstanceID)
	}
	return out.RuntimeInstanceID
}

// lookup does GET /v1/discovery with the query.
func (f *fixture) lookup(query string) *DiscoverySnapshot {
	f.t.Helper()
	status, body := f.do("GET", "/v1/discovery?"+query, "", "", "")
	if status != http.StatusOK {
		f.t.Fatalf("lookup %s: status %d: %s", query, status, body)
	}
	var s DiscoverySnapshot
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		f.t.Fatal(err)
	}
	return &s
}

// waitInstance waits until cond holds for the instance id (nil when absent).
func (f *fixture) waitInstance(id string, what string, cond func(*Instance) bool) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for snap := range f.r.Instances().Subscribe(ctx) {
		inst, _ := snap.State.Get(id)
		if cond(inst) {
			return
		}
	}
	f.t.Fatalf("instance %s: timed out waiting until %s", id, what)
}

// waitSnapshots waits until cond holds for the Snapshots map.
func (f *fixture) waitSnapshots(what string, cond func(map[DiscoveryKey]*DiscoverySnapshot) bool) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for snap := range f.r.Snapshots().Subscribe(ctx) {
		if cond(snap.State.Map()) {
			return
		}
	}
	f.t.Fatalf("timed out waiting until %s", what)
}

// sseStream reads Server-Sent Events from a watch.
type sseStream struct {
	t      testing.TB
	body   io.ReadCloser
	lines  *bufio.Reader
	cancel context.CancelFunc
}

func (f *fixture) watchSSE(query, token string) *sseStream {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/v1/discovery/watch?"+query, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		f.t.Fatalf("watch: status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{t: f.t, body: resp.Body, lines: bufio.NewReader(resp.Body), cancel: cancel}
	f.t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.body.Close()
}

// next returns the next snapshot event, skipping comments; nil at the end
// of the stream.
func (s *sseStream) next() *DiscoverySnapshot {
	s.t.Helper()
	var event string
	var data []byte
	for {
		line, err := s.lines.ReadBytes('\n')
		if err != nil {
			return nil
		}
		line = bytes.TrimRight(line, "\n")
		switch {
		case len(line) == 0:
			if event == "snapshot" {
				var snap DiscoverySnapshot
				if err := json.Unmarshal(data, &snap); err != nil {
					s.t.Fatalf("event data %q: %v", data, err)
				}
				return &snap
			}
			event, data = "", nil
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		}
	}
}

// nodeSummary is what tests compare about nodes.
type nodeSummary struct {
	ID, EnvTag, Protocol, Address string
	Port                          int
	Connected                     bool
}

func summarize(s *DiscoverySnapshot) []nodeSummary {
	out := []nodeSummary{}
	for _, n := range s.Nodes {
		out = append(out, nodeSummary{n.RuntimeInstanceID, n.EnvTag, n.Protocol, n.Address, n.Port, n.Connected})
	}
	return out
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, path, nil)
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

func newServer(r *Registry) *httptest.Server { return httptest.NewServer(r.Handler()) }
