package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// TestControlHandler checks that every endpoint the index page lists is
// wired; the admin package tests what its handlers answer.
func TestControlHandler(t *testing.T) {
	g := runner.NewGroup()
	type thing struct {
		User  string `json:"user"`
		Token string `json:"token"`
	}
	var things watchable.Map[string, thing]
	things.Store("a", thing{User: "ann", Token: "s3cr3t"})
	maps := admin.NewMaps()
	admin.AddMap(maps, "things", things.View(), identity)

	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "registry "+r.URL.Path) })

	srv := httptest.NewServer(controlHandler(g.Status(), maps, reg, api))
	defer srv.Close()
	defer testClient.CloseIdleConnections()

	tests := []struct {
		path     string
		wantCode int
		want     string
	}{
		{"/", 200, "/debug/maps"},
		{"/healthz", 200, `"ok"`},
		{"/readyz", 503, `"pendingInitializers"`}, // the group has not run
		{"/debug/runners", 200, "{}"},
		{"/debug/maps", 200, `"token": "***"`},
		{"/metrics", 200, "switchyard_test_total 3"},
		{"/debug/pprof/", 200, "goroutine"},
		{"/v1/services", 200, "registry /v1/services"},
		{"/ws/microservice", 200, "registry /ws/microservice"},
		{"/nope", 404, ""},
	}
	for _, tt := range tests {
		code, _, body := fetch(t, srv.URL+tt.path)
		if code != tt.wantCode || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s = %d %s, want %d with %q", tt.path, code, body, tt.wantCode, tt.want)
		}
	}
	_, _, body := fetch(t, srv.URL+"/debug/maps")
	if strings.Contains(string(body), "s3cr3t") {
		t.Errorf("/debug/maps shows the token: %s", body)
	}
	var index struct{ Endpoints []string }
	_, _, body = fetch(t, srv.URL+"/")
	if err := json.Unmarshal(body, &index); err != nil || len(index.Endpoints) != len(controlEndpoints) {
		t.Errorf("index page %s (%v), want the endpoints", body, err)
	}
}
