package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// BenchmarkRemoteControllerFirstRoute is BenchmarkRegistrationToFirstRoute
// through a remote controller: two pipelines in this process, a controller
// and a gateway of it (-registry-url), talking over a loopback WebSocket.
// One op registers a backend with the controller (POST /v1/services) and
// sends requests through the gateway until one reaches it; deregistering
// it and waiting for the gateway's route to lose it are outside the
// timing. It reports p50 and p99 over the ops.
//
//	go test -run '^$' -bench 'RemoteControllerFirstRoute|RegistrationToFirstRoute' -benchtime 300x -count 3 ./examples/pipeline
func BenchmarkRemoteControllerFirstRoute(b *testing.B) {
	ctrl := startPipeline(b, map[string]string{"routes.yaml": remoteRoutes})
	gw := startGatewayOf(b, ctrl.control, nil)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer backend.Close()
	host, port := hostPort(b, backend)
	body, _ := json.Marshal(registry.Registration{ServiceID: "extra", Protocol: "http", Address: host, Port: port})

	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		r := ctrl.do("POST", ctrl.control+"/v1/services", "application/json", testToken, bytes.NewReader(body))
		if r.status != http.StatusCreated {
			b.Fatalf("register: %d %s", r.status, r.raw)
		}
		// The gateway's bounded wait holds the request until the route
		// resolves; retry only in case it answered 503 first.
		for gw.get("/extra/x").status != 200 {
		}
		lat = append(lat, time.Since(t0))

		b.StopTimer()
		id := r.body["runtimeInstanceId"].(string)
		if r := ctrl.do("DELETE", ctrl.control+"/v1/services/"+id, "", testToken, nil); r.status != 204 {
			b.Fatalf("deregister: %d %s", r.status, r.raw)
		}
		eventually(b, "route lost at the gateway", func() bool {
			entry, ok := gw.p.table.Load("extra")
			return ok && len(entry.Targets) == 0
		})
		b.StartTimer()
	}
	b.StopTimer()
	reportLatency(b, lat)
}
