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

// TestControlAndAdminHandlers checks that every endpoint the index pages
// list is wired, and that the control listener, which registrations use,
// shows nothing of the program's internals; the admin package tests what
// its handlers answer.
func TestControlAndAdminHandlers(t *testing.T) {
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

	control := httptest.NewServer(controlHandler(g.Status(), api))
	defer control.Close()
	adm := httptest.NewServer(adminHandler(g.Status(), maps, reg))
	defer adm.Close()
	defer testClient.CloseIdleConnections()

	tests := []struct {
		srv      *httptest.Server
		path     string
		wantCode int
		want     string
	}{
		{control, "/", 200, "/v1/services"},
		{control, "/healthz", 200, `"ok"`},
		{control, "/readyz", 503, `"pendingInitializers"`}, // the group has not run
		{control, "/v1/services", 200, "registry /v1/services"},
		{control, "/ws/microservice", 200, "registry /ws/microservice"},
		{control, "/debug/maps", 404, ""},
		{control, "/debug/runners", 404, ""},
		{control, "/debug/pprof/", 404, ""},
		{control, "/metrics", 404, ""},
		{control, "/nope", 404, ""},
		{adm, "/", 200, "/debug/maps"},
		{adm, "/healthz", 200, `"ok"`},
		{adm, "/readyz", 503, `"pendingInitializers"`},
		{adm, "/debug/runners", 200, "{}"},
		{adm, "/debug/maps", 200, `"token": "***"`},
		{adm, "/metrics", 200, "switchyard_test_total 3"},
		{adm, "/debug/pprof/", 200, "goroutine"},
		{adm, "/v1/services", 404, ""},
	}
	for _, tt := range tests {
		code, _, body := fetch(t, tt.srv.URL+tt.path)
		if code != tt.wantCode || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s%s = %d %s, want %d with %q", tt.srv.URL, tt.path, code, body, tt.wantCode, tt.want)
		}
	}
	_, _, body := fetch(t, adm.URL+"/debug/maps")
	if strings.Contains(string(body), "s3cr3t") {
		t.Errorf("/debug/maps shows the token: %s", body)
	}
	for _, page := range []struct {
		url  string
		want []string
	}{{control.URL, controlEndpoints}, {adm.URL, adminEndpoints}} {
		var index struct{ Endpoints []string }
		_, _, body = fetch(t, page.url+"/")
		if err := json.Unmarshal(body, &index); err != nil || len(index.Endpoints) != len(page.want) {
			t.Errorf("index page %s (%v), want the endpoints", body, err)
		}
	}
}
