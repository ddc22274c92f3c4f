package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/gateway"
	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/runner"
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

var _ runner.Drainer = (*Gateway)(nil)

// Gateway is the HTTP reverse proxy: a runner that serves on ListenAddr
// and follows the route table. Requests go to the route with the longest
// matching path prefix, round-robin over its targets, through a
// gateway.Proxy: within timeouts, retried on another target when they
// cannot reach theirs, away from targets that keep failing.
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
	// targets use the proxy's own.
	Pool transportSource
	// Policy is the default of every route; a route's resilience settings
	// override it (see Resilience).
	Policy gateway.Policy
	// Logger receives operational logs (default: slog.Default()).
	Logger *slog.Logger
	// Metrics, when set, records the route table subscription's metrics.
	Metrics *message.Metrics
	// RequestMetrics, when set, records every answer per route and status
	// class, and retries, ejections and upstream failures.
	RequestMetrics *gateway.Metrics
	// ServerOptions configure the gateway's httpserver.Server (limits,
	// shutdown grace).
	ServerOptions []httpserver.Option
	// Own lists addresses (host:port) of the program's own listeners: a
	// route whose target is one of them answers 503 instead of sending
	// requests to the program itself (the admin listener, say).
	Own func() []string

	once       sync.Once
	srv        *httpserver.Server
	ready      chan struct{}
	tableReady chan struct{}
	markReady  func() // closes tableReady, once
	routes     atomic.Pointer[routeSet]
	proxy      *gateway.Proxy
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
		opts := []gateway.Option{
			gateway.WithPolicy(g.Policy),
			gateway.WithLogger(g.Logger.With("runner", g.Name())),
			gateway.WithMetrics(g.RequestMetrics),
		}
		if g.Pool != nil {
			opts = append(opts, gateway.WithTransport(func(t discovery.Target) http.RoundTripper {
				if t.Instance == "" {
					return nil // a direct or static target: the proxy's own transport
				}
				return g.Pool.Transport(t.Instance)
			}))
		}
		g.proxy = gateway.New(g.resolve, opts...)
		g.srv = httpserver.New(g.Name(), g.ListenAddr, g.proxy, append([]httpserver.Option{httpserver.WithLogger(g.Logger)}, g.ServerOptions...)...)
	})
}

// Name implements runner.Runner.
func (g *Gateway) Name() string { return "gateway" }

// ShutdownGrace implements runner.Drainer: the grace of its server, so
// that the runner group waits for the requests in flight.
func (g *Gateway) ShutdownGrace() time.Duration {
	g.init()
	return g.srv.ShutdownGrace()
}

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

// ServeHTTP routes one request (what the gateway's server serves).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.init()
	g.proxy.ServeHTTP(w, r)
}

// Run implements runner.Runner: it serves until ctx is done, then shuts
// down gracefully.
func (g *Gateway) Run(ctx context.Context) error {
	g.init()
	defer g.proxy.CloseIdleConnections()
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

// resolve is the proxy's Resolver: the matching route's targets, or the
// reason there are none, waiting up to g.Wait for the route table to be
// initialized, or for a route without usable targets to get one.
func (g *Gateway) resolve(r *http.Request) (gateway.Upstream, *gateway.Refusal) {
	path := r.URL.Path
	var timeout <-chan time.Time
	for {
		set := g.routes.Load()
		var route *RouteEntry
		if set.initialized {
			route = set.match(path)
			switch {
			case route == nil:
				return gateway.Upstream{}, &gateway.Refusal{Status: http.StatusNotFound, Message: "no route", Body: map[string]any{"path": path}}
			case route.Error != "":
				return gateway.Upstream{}, g.refusal(route, http.StatusServiceUnavailable, route.Error)
			case len(route.Targets) > 0:
				if own := g.ownTarget(route.Targets); own {
					return gateway.Upstream{}, g.refusal(route, http.StatusServiceUnavailable,
						"the route's targets include a listener of the gateway's own program: refusing to send requests there")
				}
				up := gateway.Upstream{
					Route:     route.Name,
					ServiceID: route.ServiceID,
					Targets:   route.Targets,
					Policy:    route.Policy,
					Header:    routeHeader(route),
				}
				if route.StripPrefix {
					up.StripPrefix = route.PathPrefix
				}
				return up, nil
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
		case <-r.Context().Done():
		}
		if route == nil { // the table is not initialized
			return gateway.Upstream{}, &gateway.Refusal{Status: http.StatusServiceUnavailable,
				Message: "the route table is not ready yet", Body: map[string]any{"path": path}}
		}
		return gateway.Upstream{}, g.refusal(route, http.StatusServiceUnavailable, fmt.Sprintf("no usable instance of service %q", route.ServiceID))
	}
}

// refusal is a 503 (or other) for a route that matched: knowing which
// route matched is half the diagnosis.
func (g *Gateway) refusal(route *RouteEntry, status int, msg string) *gateway.Refusal {
	return &gateway.Refusal{Status: status, Message: msg, Route: route.Name, ServiceID: route.ServiceID, Header: routeHeader(route)}
}

func routeHeader(route *RouteEntry) http.Header {
	return http.Header{HeaderRoute: {route.Name}, HeaderSource: {string(route.Source)}}
}

// ownTarget reports whether a target is a listener of this program.
func (g *Gateway) ownTarget(targets []discovery.Target) bool {
	if g.Own == nil {
		return false
	}
	own := g.Own()
	for _, t := range targets {
		u, err := url.Parse(t.URL)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(own, func(a string) bool { return sameEndpoint(a, u.Host) }) {
			return true
		}
	}
	return false
}

// sameEndpoint reports whether a request for host:port target reaches the
// listener at host:port listener: the same port, at the same address or,
// for a listener on every address, at a loopback one.
func sameEndpoint(listener, target string) bool {
	lh, lp, err1 := net.SplitHostPort(listener)
	th, tp, err2 := net.SplitHostPort(target)
	if err1 != nil || err2 != nil || lp != tp {
		return false
	}
	lip, tip := hostIP(lh), hostIP(th)
	if lip == nil || tip == nil {
		return strings.EqualFold(lh, th)
	}
	return lip.Equal(tip) || lip.IsUnspecified() && (tip.IsLoopback() || tip.IsUnspecified())
}

// hostIP is the IP address a host stands for, when it is one or a name
// that always means one: "" (every address) and localhost.
func hostIP(host string) net.IP {
	switch strings.ToLower(host) {
	case "":
		return net.IPv4zero
	case "localhost":
		return net.IPv4(127, 0, 0, 1)
	}
	return net.ParseIP(host)
}
