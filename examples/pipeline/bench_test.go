package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// BenchmarkGateway measures requests through the gateway to a local
// backend, and the same backend called directly: the ratio of the two is
// the gateway's overhead. Both report req/s, p50 and p99 latency.
//
//	go test -run '^$' -bench 'Gateway|RegistrationToFirstRoute' -benchtime 3s ./examples/pipeline
func BenchmarkGateway(b *testing.B) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"pets":["Rex","Tom","Bubbles"]}`)
	}))
	defer backend.Close()

	var table watchable.Map[string, *RouteEntry]
	table.Store("pets", &RouteEntry{Name: "pets", PathPrefix: "/pets", ServiceID: "pets", StripPrefix: true, Source: SourceStaticTargets, Targets: targets(backend.URL)})
	gw := startGateway(b, &Gateway{Table: table.View()})

	b.Run("direct", func(b *testing.B) { benchmarkGET(b, backend.URL+"/list") })
	b.Run("gateway", func(b *testing.B) { benchmarkGET(b, gw+"/pets/list") })
}

// benchmarkGET sends GET url from parallel clients over keep-alive
// connections and reports throughput and latency percentiles.
func benchmarkGET(b *testing.B, url string) {
	tr := newUpstreamTransport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var all []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var lat []time.Duration
		for pb.Next() {
			t0 := time.Now()
			resp, err := client.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("GET %s: %d", url, resp.StatusCode)
				return
			}
			lat = append(lat, time.Since(t0))
		}
		mu.Lock()
		all = append(all, lat...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	reportLatency(b, all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRegistrationToFirstRoute measures, through the whole pipeline,
// the time from sending a registration (POST /v1/services) to the first
// request the gateway routes to the new instance.
func BenchmarkRegistrationToFirstRoute(b *testing.B) {
	e := startPipeline(b, map[string]string{"routes.yaml": fmt.Sprintf(e2eConfig, "http://127.0.0.1:1", "http://127.0.0.1:1")})
	benchFirstRoute(b, e, e)
}

// benchFirstRoute times b.N registrations of a backend with ctrl's
// registry, each until gw routes a request to it, and reports p50 and p99.
// Deregistering the backend and waiting for gw's route to lose it are
// outside the timing. ctrl and gw may be the same pipeline.
func benchFirstRoute(b *testing.B, ctrl, gw *e2e) {
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
