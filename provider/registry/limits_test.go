package registry

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-go/switchyard/httpserver"
)

func TestInstanceCaps(t *testing.T) {
	f := start(t, WithLimits(Limits{MaxInstances: 2, MaxInstancesPerService: 2}))
	f.register(Registration{ServiceID: "a", Protocol: "http", Address: "10.0.0.1", Port: 1})
	id := f.register(Registration{ServiceID: "b", Protocol: "http", Address: "10.0.0.1", Port: 2})
	body := `{"serviceId":"c","protocol":"http","address":"10.0.0.1","port":3}`
	status, resp := f.do("POST", "/v1/services", testToken, "application/json", body)
	if status != http.StatusConflict || !strings.Contains(resp, "the registry has the maximum of 2 instances") {
		t.Errorf("a third instance: %d %s, want 409 naming the registry's cap", status, resp)
	}
	// Taking over an endpoint adds nothing: it is allowed at the cap.
	f.register(Registration{ServiceID: "b", Protocol: "http", Address: "10.0.0.1", Port: 2, Version: "2"})
	f.do("DELETE", "/v1/services/"+id, testToken, "", "")
	if status, resp := f.do("POST", "/v1/services", testToken, "application/json", body); status != http.StatusCreated {
		t.Errorf("once below the cap again: %d %s", status, resp)
	}
	if got := f.r.Counters().LimitRefusals; got != 1 {
		t.Errorf("Counters().LimitRefusals = %d, want 1", got)
	}
}

func TestWatcherAndSocketCaps(t *testing.T) {
	f := start(t, WithLimits(Limits{MaxWatchers: 1, MaxSockets: 1}))
	w := f.watchSSE("serviceId=a", "")
	w.next()
	status, resp := f.do("GET", "/v1/discovery/watch?serviceId=b", "", "", "")
	if status != http.StatusServiceUnavailable || !strings.Contains(resp, "maximum of 1 watchers") {
		t.Errorf("a second watch: %d %s, want 503", status, resp)
	}
	rc := f.dial("/ws/discovery", "")
	if m := rc.call("discovery/subscribe", map[string]any{"serviceId": "b"}); m.Error == nil || m.Error.Code != CodeLimitExceeded {
		t.Errorf("a subscription over the watcher cap: %+v, want CodeLimitExceeded", m)
	}
	if _, err := f.tryDial("/ws/discovery", ""); err == nil || !strings.Contains(err.Error(), "status 503") {
		t.Errorf("a second socket: %v, want 503", err)
	}
	// Ending the watch makes room for a subscription.
	w.close()
	deadline := time.Now().Add(waitFor)
	for {
		m := rc.call("discovery/subscribe", map[string]any{"serviceId": "b"})
		if m.Error == nil {
			rc.snapshotNote()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room for a subscription once the watch ended: %+v", m.Error)
		}
		time.Sleep(10 * time.Millisecond) // the watch ends when its handler notices the client left
	}
	if got := f.r.Counters().LimitRefusals; got < 3 {
		t.Errorf("Counters().LimitRefusals = %d, want at least 3", got)
	}
}

// Sockets that present a token in time are not touched by the deadline.
func TestAuthDeadlineSparesAuthenticatedSockets(t *testing.T) {
	f := start(t, WithDiscoveryToken(testDiscToken), WithLimits(Limits{AuthTimeout: 100 * time.Millisecond}))
	viaHeader := f.dial("/ws/discovery", testDiscToken)
	viaParams := f.dial("/ws/microservice", "")
	var reg struct{ RuntimeInstanceID string }
	viaParams.result("service/register", map[string]any{"token": testToken, "serviceId": "a", "protocol": "http", "address": "h", "port": 1}, &reg)
	idle := f.dial("/ws/discovery", "") // dialled last: closed last
	if _, err := idle.read(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("socket without a token: %v, want closed with 1008", err)
	}
	var snap DiscoverySnapshot
	viaHeader.result("discovery/lookup", map[string]any{"serviceId": "a"}, &snap)
	viaParams.result("discovery/lookup", map[string]any{"serviceId": "a"}, &snap)
	if len(snap.Nodes) != 1 {
		t.Errorf("lookup after the deadline: %+v", snap)
	}
}

// Served by an httpserver.Server, sockets close with 1001 and watches end
// as soon as the server begins to shut down, while the registry runs on:
// the shutdown is not held for its grace.
func TestServerShutdownEndsStreams(t *testing.T) {
	f := start(t)
	srv := httpserver.New("registry-api", "127.0.0.1:0", f.r.Handler(), httpserver.WithShutdownGrace(waitFor), httpserver.WithLogger(testLogger(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	// The fixture's helpers, pointed at srv.
	url := f.srv.URL
	f.srv.URL = "http://" + srv.Addr()
	defer func() { f.srv.URL = url }()
	w := f.watchSSE("serviceId=a", "")
	w.next()
	rc := f.dial("/ws/discovery", "")
	var snap DiscoverySnapshot
	rc.result("discovery/lookup", map[string]any{"serviceId": "a"}, &snap)

	start := time.Now()
	cancel()
	_, err := rc.read()
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("socket at shutdown: %v, want closed with 1001", err)
	}
	if got := w.next(); got != nil {
		t.Errorf("watch at shutdown: %+v, want its end", got)
	}
	if err := <-done; err != nil {
		t.Errorf("server Run: %v", err)
	}
	if d := time.Since(start); d > waitFor/2 {
		t.Errorf("shutdown took %v: the streams held it", d)
	}
	f.srv.Client().CloseIdleConnections()
}

// Served by an httpserver.Server, a registration whose body does not
// arrive within the body timeout is answered 408, and changes nothing.
func TestSlowRegistrationBody(t *testing.T) {
	f := start(t)
	srv := httpserver.New("registry-api", "127.0.0.1:0", f.r.Handler(), httpserver.WithBodyTimeout(100*time.Millisecond), httpserver.WithLogger(testLogger(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-srv.Ready()
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/services HTTP/1.1\r\nHost: r\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"serviceId\":", testToken)
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	got, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 408") || !strings.Contains(string(got), "not received in time") {
		t.Errorf("slow registration body: %q (%v), want 408 and the connection closed", got, err)
	}
	if f.r.Instances().Len() != 0 {
		t.Error("a registration whose body never arrived stored an instance")
	}
}
