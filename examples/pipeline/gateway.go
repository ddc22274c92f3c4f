package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/watchable"
)

// Response headers the gateway adds to every routed response.
const (
	HeaderRoute  = "X-Switchyard-Route"  // the name of the route that matched
	HeaderSource = "X-Switchyard-Source" // the resolution step (see Source)
)

// transportSource gives the connection pool's transport for the discovered
// instance with runtimeInstanceId id, or nil when it has none.
type transportSource interface {
	Transport(id string) http.RoundTripper
}

// Gateway is the HTTP reverse proxy: a runner that serves on ListenAddr
// and follows the route table. Requests go to the route with the longest
// matching path prefix, round-robin over its targets.
type Gateway struct {
	// ListenAddr is the address to listen on (host:port; port 0 picks one,
	// which Addr reports).
	ListenAddr string
	// Table is the route table to follow. Until it is initialized, requests
	// wait for it (up to Wait) and then answer 503.
	Table watchable.View[string, *RouteEntry]
	// Wait bounds how long a request for a route without a usable target
	// waits for one to appear before failing with 503 (default 2s).
	Wait time.Duration
	// Pool, when set, provides the transports of discovered targets; other
	// targets use Fallback.
	Pool transportSource
	// Fallback is the transport for targets the pool does not know
	// (default: a clone of http.DefaultTransport).
	Fallback http.RoundTripper
	// Logger receives operational logs (default: slog.Default()).
	Logger *slog.Logger
	// Metrics, when set, records the route table subscription's metrics.
	Metrics *message.Metrics
	// ShutdownGrace bounds how long requests in flight may take to finish
	// once the gateway is stopped (default httpserver.DefaultShutdownGrace).
	ShutdownGrace time.Duration

	once       sync.Once
	srv        *httpserver.Server
	ready      chan struct{}
	tableReady chan struct{}
	markReady  func() // closes tableReady, once
	routes     atomic.Pointer[routeSet]
	turns      sync.Map // route name -> *discovery.RoundRobin, survives table changes
	proxy      *httputil.ReverseProxy
}

// routeSet is one immutable version of the route table, ordered for
// longest-prefix matching. changed is closed when a newer version replaces
// it, which wakes requests waiting for a target or for the table to be
// initialized.
type routeSet struct {
	routes      []*RouteEntry // longest prefix first, then by name
	initialized bool          // the table was initialized: it holds every route
	changed     chan struct{}
}

// match returns the route with the longest prefix matching path. A prefix
// matches whole path segments: /pets matches /pets and /pets/1, not /petsx.
func (s *routeSet) match(path string) *RouteEntry {
	for _, r := range s.routes {
		p := r.PathPrefix
		if p == "" {
			continue // invalid (routing says so); it must not catch every path
		}
		if path == p || (strings.HasPrefix(path, p) && (strings.HasSuffix(p, "/") || path[len(p)] == '/')) {
			return r
		}
	}
	return nil
}

func newRouteSet(st watchable.State[string, *RouteEntry], initialized bool) *routeSet {
	s := &routeSet{initialized: initialized, changed: make(chan struct{})}
	for _, e := range st.All() {
		s.routes = append(s.routes, e)
	}
	slices.SortFunc(s.routes, func(a, b *RouteEntry) int {
		if d := len(b.PathPrefix) - len(a.PathPrefix); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return s
}

func (g *Gateway) init() {
	g.once.Do(func() {
		g.ready = make(chan struct{})
		g.tableReady = make(chan struct{})
		g.markReady = sync.OnceFunc(func() { close(g.tableReady) })
		g.routes.Store(&routeSet{changed: make(chan struct{})})
		if g.Wait == 0 {
			g.Wait = 2 * time.Second
		}
		if g.Logger == nil {
			g.Logger = slog.Default()
		}
		if g.Fallback == nil {
			g.Fallback = newUpstreamTransport()
		}
		g.proxy = &httputil.ReverseProxy{
			Rewrite:        g.rewrite,
			Transport:      roundTripFunc(g.roundTrip),
			ModifyResponse: g.modifyResponse,
			ErrorHandler:   g.proxyError,
			BufferPool:     bufferPool{},
			ErrorLog:       slog.NewLogLogger(g.Logger.With("runner", g.Name()).Handler(), slog.LevelDebug),
		}
		opts := []httpserver.Option{httpserver.WithLogger(g.Logger)}
		if g.ShutdownGrace != 0 {
			opts = append(opts, httpserver.WithShutdownGrace(g.ShutdownGrace))
		}
		g.srv = httpserver.New(g.Name(), g.ListenAddr, g, opts...)
	})
}

// Name implements runner.Runner.
func (g *Gateway) Name() string { return "gateway" }

// Ready implements runner.Readier: closed once the gateway listens and
// routes by the initialized route table.
func (g *Gateway) Ready() <-chan struct{} {
	g.init()
	return g.ready
}

// Addr returns the address the gateway listens on, or "" before it does.
func (g *Gateway) Addr() string {
	g.init()
	return g.srv.Addr()
}

// Run implements runner.Runner: it serves until ctx is done, then shuts
// down gracefully.
func (g *Gateway) Run(ctx context.Context) error {
	g.init()
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return g.srv.Run(ctx) })
	eg.Go(func() error {
		message.HandleSnapshots(ctx, message.Loop{Runner: g.Name(), Message: "routeTable"}, g.Table.Subscribe(ctx),
			func(ctx context.Context, snap watchable.Snapshot[string, *RouteEntry]) error {
				old := g.routes.Swap(newRouteSet(snap.State, snap.Initialized))
				close(old.changed)
				if snap.Initialized {
					g.markReady()
				}
				return nil
			}, message.WithLogger(g.Logger), message.WithMetrics(g.Metrics))
		return nil
	})
	eg.Go(func() error {
		for _, c := range []<-chan struct{}{g.srv.Ready(), g.tableReady} {
			select {
			case <-c:
			case <-ctx.Done():
				return nil
			}
		}
		close(g.ready)
		return nil
	})
	return eg.Wait()
}

// target is what the handler decided for one request, passed to the proxy
// through the request context.
type target struct {
	route    *RouteEntry
	url      *url.URL
	instance string // runtimeInstanceId of a discovered target, else ""
}

type targetKey struct{}

// ServeHTTP routes one request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.init()
	route, chosen, err := g.pick(r.Context(), r.URL.Path)
	if route != nil {
		// Also on a 503: knowing which route matched is half the diagnosis.
		w.Header().Set(HeaderRoute, route.Name)
		w.Header().Set(HeaderSource, string(route.Source))
	}
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			writeJSONError(w, he.status, he.body)
		}
		return
	}
	u, err := url.Parse(chosen.URL)
	if err != nil { // routing validated it; be explicit anyway
		writeJSONError(w, http.StatusBadGateway, map[string]any{"error": "bad target", "route": route.Name, "target": chosen.URL})
		return
	}
	ctx := context.WithValue(r.Context(), targetKey{}, &target{route: route, url: u, instance: chosen.Instance})
	g.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// httpError is an answer the gateway gives itself.
type httpError struct {
	status int
	body   map[string]any
}

func (e *httpError) Error() string { return fmt.Sprint(e.status, e.body) }

// pick finds the route for path and chooses its next target (round-robin
// per route), waiting up to g.Wait for the route table to be initialized,
// or for a route without usable targets to get one. It returns the route
// it matched, if any, also with an error.
func (g *Gateway) pick(ctx context.Context, path string) (*RouteEntry, discovery.Target, error) {
	var timeout <-chan time.Time
	for {
		set := g.routes.Load()
		var route *RouteEntry
		if set.initialized {
			route = set.match(path)
			switch {
			case route == nil:
				return nil, discovery.Target{}, &httpError{http.StatusNotFound, map[string]any{"error": "no route", "path": path}}
			case route.Error != "":
				return route, discovery.Target{}, &httpError{http.StatusServiceUnavailable, map[string]any{
					"error": route.Error, "route": route.Name, "serviceId": route.ServiceID}}
			case len(route.Targets) > 0:
				turn, _ := g.turns.LoadOrStore(route.Name, new(discovery.RoundRobin))
				t, _ := turn.(*discovery.RoundRobin).Pick(route.Targets)
				return route, t, nil
			}
		}
		if timeout == nil {
			t := time.NewTimer(g.Wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-set.changed:
			continue
		case <-timeout:
		case <-ctx.Done():
		}
		if route == nil { // the table is not initialized
			return nil, discovery.Target{}, &httpError{http.StatusServiceUnavailable, map[string]any{
				"error": "the route table is not ready yet", "path": path}}
		}
		return route, discovery.Target{}, &httpError{http.StatusServiceUnavailable, map[string]any{
			"error":     fmt.Sprintf("no usable instance of service %q", route.ServiceID),
			"route":     route.Name,
			"serviceId": route.ServiceID,
		}}
	}
}

func (g *Gateway) rewrite(pr *httputil.ProxyRequest) {
	t := pr.In.Context().Value(targetKey{}).(*target)
	if t.route.StripPrefix {
		pr.Out.URL.Path = stripPrefix(pr.Out.URL.Path, t.route.PathPrefix)
		if pr.Out.URL.RawPath != "" {
			pr.Out.URL.RawPath = stripPrefix(pr.Out.URL.RawPath, t.route.PathPrefix)
		}
	}
	pr.SetURL(t.url)
	pr.SetXForwarded()
}

func stripPrefix(path, prefix string) string {
	p := strings.TrimPrefix(path, strings.TrimSuffix(prefix, "/"))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

func (g *Gateway) roundTrip(req *http.Request) (*http.Response, error) {
	if g.Pool != nil {
		if t, ok := req.Context().Value(targetKey{}).(*target); ok && t.instance != "" {
			if rt := g.Pool.Transport(t.instance); rt != nil {
				return rt.RoundTrip(req)
			}
		}
	}
	return g.Fallback.RoundTrip(req)
}

// modifyResponse drops the upstream's own X-Switchyard-* headers, so that
// only the gateway's (set by ServeHTTP) reach the client.
func (g *Gateway) modifyResponse(resp *http.Response) error {
	resp.Header.Del(HeaderRoute)
	resp.Header.Del(HeaderSource)
	return nil
}

func (g *Gateway) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	t := r.Context().Value(targetKey{}).(*target)
	if r.Context().Err() != nil {
		return // the client went away; nobody is listening
	}
	// Debug, not Warn: a dead upstream fails every request sent to it, and
	// the client already gets the error in the 502 body.
	g.Logger.Debug("upstream failed", "route", t.route.Name, "target", t.url.String(), "err", err)
	writeJSONError(w, http.StatusBadGateway, map[string]any{
		"error":     "upstream failed: " + err.Error(),
		"route":     t.route.Name,
		"serviceId": t.route.ServiceID,
		"target":    t.url.String(),
	})
}

func writeJSONError(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// bufferPool recycles the proxy's copy buffers across requests.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
