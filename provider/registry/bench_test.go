package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	benchServices  = 10
	benchInstances = 1000 // spread over benchServices
	benchWatchers  = 100  // all on service svc-0
)

// benchSetup registers benchInstances instances and opens benchWatchers SSE
// watches of svc-0, each read by a goroutine that reports every event's
// node count on seen.
type benchSetup struct {
	f      *fixture
	ids    []string
	client *http.Client
	seen   chan watcherEvent
}

type watcherEvent struct {
	watcher, nodes int
	at             time.Time
}

func newBenchSetup(b *testing.B) *benchSetup {
	b.Helper()
	f := start(b, WithLease(time.Minute), WithLogger(slog.New(slog.DiscardHandler)))
	s := &benchSetup{f: f, seen: make(chan watcherEvent, 4*benchWatchers),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	b.Cleanup(s.client.CloseIdleConnections)
	for i := range benchInstances {
		id, err := f.r.Register(Registration{ServiceID: fmt.Sprintf("svc-%d", i%benchServices), Protocol: "http",
			Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250), Port: 8080})
		if err != nil {
			b.Fatal(err)
		}
		s.ids = append(s.ids, id)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	for w := range benchWatchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/v1/discovery/watch?serviceId=svc-0", nil)
		resp, err := s.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			lines := bufio.NewReader(resp.Body)
			for {
				line, err := lines.ReadBytes('\n')
				if err != nil {
					return
				}
				data, ok := bytes.CutPrefix(line, []byte("data: "))
				if !ok {
					continue
				}
				// Counting is enough here, and leaves the CPU to the registry.
				nodes := bytes.Count(data, []byte(`"runtimeInstanceId"`))
				select {
				case s.seen <- watcherEvent{w, nodes, time.Now()}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	s.waitAll(b, benchInstances/benchServices)
	return s
}

// waitAll waits until every watcher has reported an event with nodes nodes,
// and returns when the last one did.
func (s *benchSetup) waitAll(b *testing.B, nodes int) time.Time {
	b.Helper()
	done := make([]bool, benchWatchers)
	left := benchWatchers
	timeout := time.After(waitFor)
	for {
		select {
		case e := <-s.seen:
			if e.nodes == nodes && !done[e.watcher] {
				done[e.watcher] = true
				if left--; left == 0 {
					return e.at
				}
			}
		case <-timeout:
			b.Fatalf("%d watchers did not see %d nodes", left, nodes)
		}
	}
}

func (s *benchSetup) heartbeat(b *testing.B, id string) {
	req, _ := http.NewRequest("PUT", s.f.srv.URL+"/v1/services/"+id+"/heartbeat", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := s.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b.Errorf("heartbeat: %d", resp.StatusCode)
	}
}

// BenchmarkHeartbeat measures HTTP heartbeats (PUT over keep-alive
// connections, in parallel) while 1,000 instances are registered and 100
// SSE watchers are connected.
func BenchmarkHeartbeat(b *testing.B) {
	s := newBenchSetup(b)
	var next atomic.Uint64
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.heartbeat(b, s.ids[next.Add(1)%uint64(len(s.ids))])
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "heartbeats/s")
}

// BenchmarkChangeToWatchers measures, while all 1,000 instances heartbeat
// continuously, the time from the start of a registration (or
// deregistration) request to the moment the last of 100 SSE watchers of the
// service has received the new snapshot (100 or 101 nodes).
func BenchmarkChangeToWatchers(b *testing.B) {
	s := newBenchSetup(b)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var beats atomic.Int64
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ctx.Err() == nil; i += 2 {
				s.heartbeat(b, s.ids[i%len(s.ids)])
				beats.Add(1)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()

	latencies := make([]time.Duration, 0, b.N)
	base := benchInstances / benchServices
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		t0 := time.Now()
		status, body := s.f.do("POST", "/v1/services", testToken, "application/json",
			`{"serviceId":"svc-0","protocol":"http","address":"192.168.0.1","port":9000}`)
		if status != http.StatusCreated {
			b.Fatalf("register: %d %s", status, body)
		}
		latencies = append(latencies, s.waitAll(b, base+1).Sub(t0))
		var resp RegisterResponse
		_ = json.Unmarshal([]byte(body), &resp)
		t0 = time.Now()
		if status, _ := s.f.do("DELETE", "/v1/services/"+resp.RuntimeInstanceID, testToken, "", ""); status != http.StatusNoContent {
			b.Fatalf("deregister %d: %d", i, status)
		}
		latencies = append(latencies, s.waitAll(b, base).Sub(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(beats.Load())/elapsed.Seconds(), "heartbeats/s")
}

// BenchmarkHeartbeatInProcess is BenchmarkHeartbeat without HTTP: the cost
// of Registry.Heartbeat itself.
func BenchmarkHeartbeatInProcess(b *testing.B) {
	s := newBenchSetup(b)
	var next atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.f.r.Heartbeat(s.ids[next.Add(1)%uint64(len(s.ids))]); err != nil {
				b.Error(err)
			}
		}
	})
}
