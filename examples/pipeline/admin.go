package main

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// controlHandler is what the control address serves: the registry's API
// (mounted under /v1/ and /ws/), and health and readiness, which load
// balancers and orchestrators probe there. Nothing that shows the
// program's internals: that is the admin listener's (adminHandler).
func controlHandler(status watchable.View[string, runner.Status], registryAPI http.Handler) http.Handler {
	mux := http.NewServeMux()
	// A newcomer's first request is often the bare address: answer with a
	// map of the server rather than a 404.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"endpoints": controlEndpoints})
	})
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", admin.Readiness(status))
	mux.Handle("/v1/", registryAPI)
	mux.Handle("/ws/", registryAPI)
	return mux
}

// adminHandler is what the admin address serves, for operators only: the
// maps, the runners, metrics and Go profiles, with health and readiness.
func adminHandler(status watchable.View[string, runner.Status], maps *admin.Maps, metrics prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"endpoints": adminEndpoints})
	})
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", admin.Readiness(status))
	mux.Handle("GET /debug/runners", admin.Runners(status))
	mux.Handle("GET /debug/maps", maps)
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// controlEndpoints is what the control address serves, for its index page.
var controlEndpoints = []string{
	"POST   /v1/services                       register an instance (Authorization: Bearer $SWITCHYARD_TOKEN)",
	"PUT    /v1/services/{id}/heartbeat        renew its lease",
	"DELETE /v1/services/{id}                  deregister it",
	"GET    /v1/discovery?serviceId=           look up a service's instances",
	"GET    /v1/discovery/watch?serviceId=     watch them (Server-Sent Events)",
	"GET    /ws/microservice, /ws/discovery    the same over WebSocket JSON-RPC 2.0",
	"GET    /healthz                           alive",
	"GET    /readyz                            ready when every runner is; names those that are not",
}

// adminEndpoints is what the admin address serves, for its index page.
var adminEndpoints = []string{
	"GET    /healthz                           alive",
	"GET    /readyz                            ready when every runner is; names those that are not",
	"GET    /metrics                           Prometheus metrics",
	"GET    /debug/maps                        every watchable map: revision, entries, subscribers, contents (?map=NAME&limit=N)",
	"GET    /debug/runners                     every runner's phase and the problems it reported",
	"GET    /debug/pprof/                      Go profiles",
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
