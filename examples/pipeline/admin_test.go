package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

type secretThing struct {
	User  string            `json:"user"`
	Token string            `json:"token"`
	Tags  map[string]string `json:"tags"`
}

func (s *secretThing) DeepCopy() *secretThing {
	c := *s
	c.Tags = map[string]string{}
	for k, v := range s.Tags {
		c.Tags[k] = v
	}
	return &c
}

func TestAdmin(t *testing.T) {
	var status watchable.Map[string, runner.Status]
	var things watchable.Map[string, *secretThing]
	things.Store("a", &secretThing{User: "ann", Token: "s3cr3t", Tags: map[string]string{"apiKey": "k", "zone": "z"}})
	sub := things.Subscribe(t.Context())
	<-sub

	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)

	a := &Admin{
		Status:   &status,
		Gatherer: reg,
		Maps:     []observedMap{observe("things", &things, func(k string) string { return k })},
		Mount: func(mux *http.ServeMux) {
			mux.HandleFunc("GET /v1/extra", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mounted") })
		},
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()

	if code, _, body := fetch(t, srv.URL+"/healthz"); code != 200 || !strings.Contains(string(body), "ok") {
		t.Errorf("/healthz = %d %s", code, body)
	}
	if code, _, _ := fetch(t, srv.URL+"/readyz"); code != 503 {
		t.Errorf("/readyz with no runners = %d, want 503", code)
	}
	since := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	status.Store("gateway", runner.Status{State: runner.StateReady, Since: since})
	status.Store("pool", runner.Status{State: runner.StateRunning, Since: since})
	code, _, body := fetch(t, srv.URL+"/readyz")
	if code != 503 || !strings.Contains(string(body), `"pool"`) || strings.Contains(string(body), `"gateway"`) {
		t.Errorf("/readyz with pool running = %d %s, want 503 naming pool only", code, body)
	}
	status.Store("pool", runner.Status{State: runner.StateReady, Since: since})
	if code, _, body := fetch(t, srv.URL+"/readyz"); code != 200 {
		t.Errorf("/readyz with all ready = %d %s, want 200", code, body)
	}

	code, _, body = fetch(t, srv.URL+"/debug/runners")
	var runners map[string]runner.Status
	if err := json.Unmarshal(body, &runners); code != 200 || err != nil {
		t.Fatalf("/debug/runners = %d %s (%v)", code, body, err)
	}
	if diff := cmp.Diff(map[string]runner.Status{
		"gateway": {State: runner.StateReady, Since: since},
		"pool":    {State: runner.StateReady, Since: since},
	}, runners); diff != "" {
		t.Errorf("/debug/runners (-want +got):\n%s", diff)
	}

	code, _, body = fetch(t, srv.URL+"/debug/maps")
	var maps []MapInfo
	if err := json.Unmarshal(body, &maps); code != 200 || err != nil {
		t.Fatalf("/debug/maps = %d %s (%v)", code, body, err)
	}
	want := []MapInfo{{Name: "things", Revision: 1, Entries: 1, Subscribers: 1, Contents: map[string]any{
		"a": map[string]any{"user": "ann", "token": "***", "tags": map[string]any{"apiKey": "***", "zone": "z"}},
	}}}
	if diff := cmp.Diff(want, maps); diff != "" {
		t.Errorf("/debug/maps (-want +got):\n%s", diff)
	}
	if strings.Contains(string(body), "s3cr3t") {
		t.Errorf("/debug/maps shows the token: %s", body)
	}

	if code, _, body := fetch(t, srv.URL+"/metrics"); code != 200 || !strings.Contains(string(body), "switchyard_test_total 3") {
		t.Errorf("/metrics = %d %s", code, body)
	}
	if code, _, _ := fetch(t, srv.URL+"/debug/pprof/"); code != 200 {
		t.Errorf("/debug/pprof/ = %d", code)
	}
	if code, _, body := fetch(t, srv.URL+"/"); code != 200 || !strings.Contains(string(body), `/debug/maps`) {
		t.Errorf("/ = %d %s, want the list of endpoints", code, body)
	}
	if code, _, _ := fetch(t, srv.URL+"/nope"); code != 404 {
		t.Errorf("/nope = %d, want 404", code)
	}
	if code, _, body := fetch(t, srv.URL+"/v1/extra"); code != 200 || string(body) != "mounted" {
		t.Errorf("mounted handler = %d %s", code, body)
	}
}
