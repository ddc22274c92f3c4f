package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// MapInfo is what /debug/maps shows about one map.
type MapInfo struct {
	Name        string `json:"name"`
	Revision    uint64 `json:"revision"`
	Entries     int    `json:"entries"`
	Subscribers int    `json:"subscribers"`
	// Contents are the entries, keyed by the key's text form, with every
	// field that could hold a secret masked.
	Contents map[string]any `json:"contents"`
}

// observedMap is a map the admin server can describe, whatever its types.
type observedMap interface {
	info() (MapInfo, error)
	name() string
	stats() message.MapStats
}

// observe makes m visible on /debug/maps under name; key gives the text
// form of a key.
func observe[K comparable, V any](name string, m *watchable.Map[K, V], key func(K) string) observedMap {
	return &observed[K, V]{label: name, m: m, key: key}
}

type observed[K comparable, V any] struct {
	label string
	m     *watchable.Map[K, V]
	key   func(K) string
}

func (o *observed[K, V]) name() string            { return o.label }
func (o *observed[K, V]) stats() message.MapStats { return o.m }

func (o *observed[K, V]) info() (MapInfo, error) {
	st := o.m.State() // an immutable version: revision and contents agree
	rev := o.m.Revision()
	entries := make(map[string]V, st.Len())
	for k, v := range st.All() {
		entries[o.key(k)] = v
	}
	raw, err := json.Marshal(entries)
	if err != nil {
		return MapInfo{}, fmt.Errorf("encode map %s: %w", o.label, err)
	}
	var contents map[string]any
	if err := json.Unmarshal(raw, &contents); err != nil {
		return MapInfo{}, fmt.Errorf("decode map %s: %w", o.label, err)
	}
	for k, v := range contents {
		contents[k] = mask(v)
	}
	return MapInfo{Name: o.label, Revision: rev, Entries: st.Len(), Subscribers: o.m.Subscribers(), Contents: contents}, nil
}

// secretField reports whether a JSON field name may hold a secret.
func secretField(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "secret", "password", "authorization", "apikey", "api_key"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// mask replaces the values of secret-looking fields, at any depth, with
// "***".
func mask(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if secretField(k) {
				v[k] = "***"
			} else {
				v[k] = mask(e)
			}
		}
	case []any:
		for i := range v {
			v[i] = mask(v[i])
		}
	}
	return v
}

// Admin is the control-plane HTTP server: health, readiness, metrics,
// debug pages and pprof, plus whatever Mount adds (the registry API).
type Admin struct {
	// Addr is the address to listen on (host:port; port 0 picks one).
	Addr string
	// Status is the runner group's status map.
	Status *watchable.Map[string, runner.Status]
	// Gatherer provides /metrics.
	Gatherer prometheus.Gatherer
	// Maps are shown on /debug/maps, in this order.
	Maps []observedMap
	// Mount adds more handlers to the server's mux before it starts.
	Mount func(mux *http.ServeMux)
	// Logger receives the server's errors (default: discard).
	Logger *slog.Logger

	once  sync.Once
	ready chan struct{}
	boundAddr
}

func (a *Admin) init() {
	a.once.Do(func() { a.ready = make(chan struct{}) })
}

// Name implements runner.Runner.
func (a *Admin) Name() string { return "admin" }

// Ready implements runner.Readier: closed once the server listens.
func (a *Admin) Ready() <-chan struct{} {
	a.init()
	return a.ready
}

// Handler returns the server's handler.
func (a *Admin) Handler() http.Handler {
	mux := http.NewServeMux()
	// A newcomer's first request is often the bare address: answer with a
	// map of the server rather than a 404.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"endpoints": adminEndpoints})
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /debug/runners", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.Status.State().Map())
	})
	mux.HandleFunc("GET /debug/maps", a.debugMaps)
	if a.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(a.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if a.Mount != nil {
		a.Mount(mux)
	}
	return mux
}

// adminEndpoints is what the control address serves, for its index page.
var adminEndpoints = []string{
	"POST   /v1/services                       register an instance (Authorization: Bearer $SWITCHYARD_TOKEN)",
	"PUT    /v1/services/{id}/heartbeat        renew its lease",
	"DELETE /v1/services/{id}                  deregister it",
	"GET    /v1/discovery?serviceId=           look up a service's instances",
	"GET    /v1/discovery/watch?serviceId=     watch them (Server-Sent Events)",
	"GET    /ws/microservice, /ws/discovery    the same over WebSocket JSON-RPC 2.0",
	"GET    /healthz                           alive",
	"GET    /readyz                            ready when every runner is",
	"GET    /metrics                           Prometheus metrics",
	"GET    /debug/maps                        every watchable map: revision, entries, subscribers, contents",
	"GET    /debug/runners                     every runner's state and last problem",
	"GET    /debug/pprof/                      Go profiles",
}

// readyz answers 200 when every runner of the group is ready, and 503
// listing those that are not.
func (a *Admin) readyz(w http.ResponseWriter, r *http.Request) {
	notReady := map[string]runner.Status{}
	st := a.Status.State()
	for name, s := range st.All() {
		if s.State != runner.StateReady {
			notReady[name] = s
		}
	}
	if st.Len() == 0 || len(notReady) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "notReady": notReady})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ready": true})
}

func (a *Admin) debugMaps(w http.ResponseWriter, r *http.Request) {
	infos := make([]MapInfo, 0, len(a.Maps))
	for _, m := range a.Maps {
		info, err := m.info()
		if err != nil {
			writeJSONError(w, http.StatusInternalServerError, map[string]any{"error": err.Error()})
			return
		}
		infos = append(infos, info)
	}
	writeJSON(w, http.StatusOK, infos)
}

// Run implements runner.Runner: it serves until ctx is done.
func (a *Admin) Run(ctx context.Context) error {
	a.init()
	ln, err := a.listen(a.Addr)
	if err != nil {
		return err
	}
	logger := a.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		// Long-lived streams (SSE watches, WebSockets, pprof profiles) must
		// not keep the program from stopping.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	close(a.ready)
	return serve(ctx, srv, ln, func(context.Context) error { return nil })
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
