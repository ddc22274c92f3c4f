package registry

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRegisterLookupDeregister(t *testing.T) {
	f := start(t)
	prodHTTP := f.register(Registration{ServiceID: "api", EnvTag: "prod", Protocol: "http", Address: "10.0.0.1", Port: 8080, Version: "1.2.3", Tags: map[string]string{"zone": "a"}})
	devHTTP := f.register(Registration{ServiceID: "api", EnvTag: "dev", Protocol: "http", Address: "10.0.0.2", Port: 8080})
	prodGRPC := f.register(Registration{ServiceID: "api", EnvTag: "prod", Protocol: "grpc", Address: "10.0.0.1", Port: 9090})
	other := f.register(Registration{ServiceID: "billing", EnvTag: "prod", Protocol: "http", Address: "billing.internal", Port: 80})

	n := func(id, env, proto, addr string, port int) nodeSummary {
		return nodeSummary{id, env, proto, addr, port, true}
	}
	tests := []struct {
		query string
		want  []nodeSummary
	}{
		{"serviceId=api&envTag=prod&protocol=http", []nodeSummary{n(prodHTTP, "prod", "http", "10.0.0.1", 8080)}},
		{"serviceId=api&envTag=prod", []nodeSummary{n(prodGRPC, "prod", "grpc", "10.0.0.1", 9090), n(prodHTTP, "prod", "http", "10.0.0.1", 8080)}},
		{"serviceId=api&protocol=http", []nodeSummary{n(devHTTP, "dev", "http", "10.0.0.2", 8080), n(prodHTTP, "prod", "http", "10.0.0.1", 8080)}},
		{"serviceId=api", []nodeSummary{n(devHTTP, "dev", "http", "10.0.0.2", 8080), n(prodGRPC, "prod", "grpc", "10.0.0.1", 9090), n(prodHTTP, "prod", "http", "10.0.0.1", 8080)}},
		{"serviceId=billing&envTag=", []nodeSummary{n(other, "prod", "http", "billing.internal", 80)}},
		{"serviceId=api&envTag=staging", []nodeSummary{}},
		{"serviceId=nothing", []nodeSummary{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			s := f.lookup(tt.query)
			if diff := cmp.Diff(tt.want, summarize(s)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}

	// Omitted fields are empty in the merged answer; empty nodes are [].
	status, body := f.do("GET", "/v1/discovery?serviceId=nothing", "", "", "")
	if want := `{"serviceId":"nothing","envTag":"","protocol":"","nodes":[]}` + "\n"; status != 200 || body != want {
		t.Errorf("empty lookup: %d %s, want 200 %s", status, body, want)
	}
	s := f.lookup("serviceId=api&envTag=prod&protocol=http")
	if got := s.Nodes[0]; got.Version != "1.2.3" || got.Tags["zone"] != "a" || got.ConnectedAt.IsZero() || got.LastSeenAt.IsZero() {
		t.Errorf("node = %+v: want version, tags, connectedAt and lastSeenAt", got)
	}
	if inst, _ := f.r.Instances().Load(prodHTTP); inst.LastSeenAt.IsZero() {
		t.Error("Instances: lastSeenAt is zero")
	}

	// Deregistering removes at once.
	if status, body := f.do("DELETE", "/v1/services/"+prodHTTP, testToken, "", ""); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	if got := summarize(f.lookup("serviceId=api&envTag=prod&protocol=http")); len(got) != 0 {
		t.Errorf("after DELETE: nodes %v", got)
	}
	if status, _ := f.do("DELETE", "/v1/services/"+prodHTTP, testToken, "", ""); status != http.StatusNotFound {
		t.Errorf("second DELETE: %d, want 404", status)
	}
	f.waitSnapshots("the deregistered instance leaves Snapshots", func(m map[DiscoveryKey]*DiscoverySnapshot) bool {
		_, ok := m[DiscoveryKey{"api", "prod", "http"}]
		return !ok && len(m) == 3
	})
}

func TestReRegisterTakesOver(t *testing.T) {
	f := start(t)
	reg := Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 8080, Version: "1"}
	id := f.register(reg)
	reg.Version = "2"
	if again := f.register(reg); again != id {
		t.Errorf("re-registering the same endpoint gave id %s, want %s", again, id)
	}
	if got := f.lookup("serviceId=api").Nodes; len(got) != 1 || got[0].Version != "2" {
		t.Errorf("nodes = %+v, want one at version 2", got)
	}
}

func TestHeartbeatAndLeaseExpiry(t *testing.T) {
	const lease = time.Minute
	clock := newFakeClock()
	f := start(t, WithLease(lease), withClock(clock))
	t0 := clock.now()
	id := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 8080})

	status, body := f.do("POST", "/v1/services", testToken, "application/json", `{"serviceId":"x","protocol":"http","address":"h","port":1}`)
	var resp RegisterResponse
	if err := json.Unmarshal([]byte(body), &resp); status != 201 || err != nil || resp.LeaseSeconds != lease.Seconds() {
		t.Errorf("register answer: %d %s, want leaseSeconds %v", status, body, lease.Seconds())
	}
	if status, _ := f.do("PUT", "/v1/services/0123456789abcdef0123456789abcdef/heartbeat", testToken, "", ""); status != http.StatusNotFound {
		t.Errorf("heartbeat of unknown id: %d, want 404", status)
	}
	heartbeat := func() {
		t.Helper()
		if status, body := f.do("PUT", "/v1/services/"+id+"/heartbeat", testToken, "", ""); status != http.StatusNoContent {
			t.Fatalf("heartbeat: %d %s", status, body)
		}
	}

	// Each step moves the clock, lets the registry expire leases, and says
	// what the instance is then (nil: removed).
	type state struct {
		Connected               bool
		ConnectedAt, LastSeenAt time.Duration // since t0
	}
	steps := []struct {
		what    string
		advance time.Duration
		action  func()
		want    *state
	}{
		{"registered", 0, nil, &state{true, 0, 0}},
		{"heartbeat", 10 * time.Second, heartbeat, &state{true, 0, 10 * time.Second}},
		{"just within the lease", lease - time.Nanosecond, nil, &state{true, 0, 10 * time.Second}},
		{"one lease without heartbeat: disconnected", time.Nanosecond, nil, &state{false, 0, 10 * time.Second}},
		{"a heartbeat reconnects", time.Second, heartbeat, &state{true, lease + 11*time.Second, lease + 11*time.Second}},
		{"just within three leases: disconnected", 3*lease - time.Nanosecond, nil, &state{false, lease + 11*time.Second, lease + 11*time.Second}},
		{"three leases without heartbeat: removed", time.Nanosecond, nil, nil},
	}
	for _, step := range steps {
		clock.advance(step.advance)
		if step.action != nil {
			step.action()
		}
		f.r.store.expire()
		var got *state
		if inst, ok := f.r.Instances().Load(id); ok {
			got = &state{inst.Connected, inst.ConnectedAt.Sub(t0), inst.LastSeenAt.Sub(t0)}
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", step.what, diff)
		}
		if nodes := f.lookup("serviceId=api").Nodes; step.want != nil && (len(nodes) != 1 || nodes[0].Connected != step.want.Connected || nodes[0].Usable() != step.want.Connected) {
			t.Fatalf("%s: lookup nodes %+v, want one with connected %v", step.what, nodes, step.want.Connected)
		}
	}
	if status, _ := f.do("PUT", "/v1/services/"+id+"/heartbeat", testToken, "", ""); status != http.StatusNotFound {
		t.Errorf("heartbeat after removal: %d, want 404", status)
	}
}

func TestBadHTTPInput(t *testing.T) {
	f := start(t, WithDiscoveryToken(testDiscToken), WithLimits(Limits{MaxTags: 2, MaxStringLength: 20, MaxInstancesPerService: 1}))
	id := f.register(Registration{ServiceID: "full", Protocol: "http", Address: "10.0.0.1", Port: 1})
	const json = "application/json"
	valid := func(mut string) string {
		return strings.Replace(`{"serviceId":"api","protocol":"http","address":"10.0.0.1","port":8080,MUT}`, ",MUT", mut, 1)
	}
	tests := []struct {
		name                      string
		method, path, token, ct   string
		body                      string
		wantStatus                int
		wantField, wantErrContain string
	}{
		{"no token", "POST", "/v1/services", "", json, valid(""), 401, "", "token"},
		{"wrong token", "POST", "/v1/services", "nope", json, valid(""), 401, "", "token"},
		{"discovery token cannot register", "POST", "/v1/services", testDiscToken, json, valid(""), 401, "", "token"},
		{"no content type", "POST", "/v1/services", testToken, "", valid(""), 415, "", "application/json"},
		{"wrong content type", "POST", "/v1/services", testToken, "text/plain", valid(""), 415, "", "application/json"},
		{"too big", "POST", "/v1/services", testToken, json, valid(`,"version":"` + strings.Repeat("x", 70<<10) + `"`), 413, "", "larger than"},
		{"empty body", "POST", "/v1/services", testToken, json, "", 400, "", "invalid JSON"},
		{"not JSON", "POST", "/v1/services", testToken, json, "{serviceId", 400, "", "invalid JSON"},
		{"truncated", "POST", "/v1/services", testToken, json, `{"serviceId":"a"`, 400, "", "invalid JSON"},
		{"trailing data", "POST", "/v1/services", testToken, json, valid("") + "{}", 400, "", "after the object"},
		{"array", "POST", "/v1/services", testToken, json, "[]", 400, "", "JSON object"},
		{"unknown field", "POST", "/v1/services", testToken, json, valid(`,"weight":3`), 400, "weight", "unknown field"},
		{"token in body", "POST", "/v1/services", testToken, json, valid(`,"token":"x"`), 400, "token", "unknown field"},
		{"missing serviceId", "POST", "/v1/services", testToken, json, `{"protocol":"http","address":"h","port":1}`, 400, "serviceId", "required"},
		{"missing protocol", "POST", "/v1/services", testToken, json, `{"serviceId":"a","address":"h","port":1}`, 400, "protocol", "required"},
		{"missing address", "POST", "/v1/services", testToken, json, `{"serviceId":"a","protocol":"http","port":1}`, 400, "address", "required"},
		{"missing port", "POST", "/v1/services", testToken, json, `{"serviceId":"a","protocol":"http","address":"h"}`, 400, "port", "required"},
		{"port zero", "POST", "/v1/services", testToken, json, valid(`,"port":0`), 400, "port", "between"},
		{"port too big", "POST", "/v1/services", testToken, json, valid(`,"port":65536`), 400, "port", "between"},
		{"port string", "POST", "/v1/services", testToken, json, valid(`,"port":"80"`), 400, "port", "integer"},
		{"port fraction", "POST", "/v1/services", testToken, json, valid(`,"port":80.5`), 400, "port", "integer"},
		{"bad protocol", "POST", "/v1/services", testToken, json, valid(`,"protocol":"ftp"`), 400, "protocol", "one of"},
		{"address with scheme", "POST", "/v1/services", testToken, json, valid(`,"address":"http://x"`), 400, "address", "host name"},
		{"address with port", "POST", "/v1/services", testToken, json, valid(`,"address":"h:80"`), 400, "address", "host name"},
		{"serviceId with space", "POST", "/v1/services", testToken, json, valid(`,"serviceId":"a b"`), 400, "serviceId", "' ' at byte 1"},
		{"serviceId with a zero-width space", "POST", "/v1/services", testToken, json, valid(`,"serviceId":"svc-a\u200b"`), 400, "serviceId", "U+200B at byte 5"},
		{"serviceId with a Cyrillic a", "POST", "/v1/services", testToken, json, valid(`,"serviceId":"svc-\u0430"`), 400, "serviceId", "U+0430"},
		{"serviceId with a slash", "POST", "/v1/services", testToken, json, valid(`,"serviceId":"a/b"`), 400, "serviceId", "'/'"},
		{"serviceId starting with a dot", "POST", "/v1/services", testToken, json, valid(`,"serviceId":".a"`), 400, "serviceId", "start with a letter or digit"},
		{"envTag with a right-to-left override", "POST", "/v1/services", testToken, json, valid(`,"envTag":"prod\u202e"`), 400, "envTag", "U+202E"},
		{"tag key with a space", "POST", "/v1/services", testToken, json, valid(`,"tags":{"a b":"1"}`), 400, "tags", "tag key may contain only"},
		{"tag key with a zero-width joiner", "POST", "/v1/services", testToken, json, valid(`,"tags":{"zone\u200d":"1"}`), 400, "tags", "U+200D"},
		{"tag value with a zero-width space", "POST", "/v1/services", testToken, json, valid(`,"tags":{"zone":"a\u200b"}`), 400, "tags", "invisible"},
		{"version with a byte order mark", "POST", "/v1/services", testToken, json, valid(`,"version":"\ufeff1.0"`), 400, "version", "U+FEFF"},
		{"invalid UTF-8", "POST", "/v1/services", testToken, json, valid(`,"version":"1.0` + "\xff" + `"`), 400, "", "not valid UTF-8"},
		{"invalid UTF-8 in a key", "POST", "/v1/services", testToken, json, valid(`,"tags":{"a` + "\xc3" + `":"1"}`), 400, "", "not valid UTF-8"},
		{"link-local address", "POST", "/v1/services", testToken, json, valid(`,"address":"169.254.169.254"`), 403, "address", "link-local"},
		{"link-local IPv6 address", "POST", "/v1/services", testToken, json, valid(`,"address":"fe80::1"`), 403, "address", "link-local"},
		{"unspecified address", "POST", "/v1/services", testToken, json, valid(`,"address":"0.0.0.0"`), 403, "address", "unspecified"},
		{"multicast address", "POST", "/v1/services", testToken, json, valid(`,"address":"224.0.0.1"`), 403, "address", "multicast"},
		{"serviceId too long", "POST", "/v1/services", testToken, json, valid(`,"serviceId":"` + strings.Repeat("a", 21) + `"`), 400, "serviceId", "longer"},
		{"control character", "POST", "/v1/services", testToken, json, valid(`,"version":"a\u0000"`), 400, "version", "control"},
		{"too many tags", "POST", "/v1/services", testToken, json, valid(`,"tags":{"a":"1","b":"2","c":"3"}`), 400, "tags", "at most 2"},
		{"tag not a string", "POST", "/v1/services", testToken, json, valid(`,"tags":{"a":1}`), 400, "tags", "string"},
		{"empty tag key", "POST", "/v1/services", testToken, json, valid(`,"tags":{"":"1"}`), 400, "tags", "empty"},
		{"too many instances", "POST", "/v1/services", testToken, json, valid(`,"serviceId":"full","port":2`), 409, "serviceId", "the service has the maximum of 1"},
		{"heartbeat no token", "PUT", "/v1/services/" + id + "/heartbeat", "", "", "", 401, "", "token"},
		{"heartbeat unknown", "PUT", "/v1/services/nope/heartbeat", testToken, "", "", 404, "runtimeInstanceId", "register again"},
		{"delete no token", "DELETE", "/v1/services/" + id, "", "", "", 401, "", "token"},
		{"delete unknown", "DELETE", "/v1/services/nope", testToken, "", "", 404, "runtimeInstanceId", "unknown"},
		{"lookup invisible serviceId", "GET", "/v1/discovery?serviceId=a%E2%80%8B", testDiscToken, "", "", 400, "serviceId", "U+200B"},
		{"lookup invalid UTF-8", "GET", "/v1/discovery?serviceId=a%FF", testDiscToken, "", "", 400, "serviceId", "not valid UTF-8"},
		{"lookup bad envTag", "GET", "/v1/discovery?serviceId=a&envTag=a%00", testDiscToken, "", "", 400, "envTag", "may contain only"},
		{"lookup no token", "GET", "/v1/discovery?serviceId=a", "", "", "", 401, "", "token"},
		{"lookup wrong token", "GET", "/v1/discovery?serviceId=a", "nope", "", "", 401, "", "token"},
		{"lookup no serviceId", "GET", "/v1/discovery?envTag=a", testDiscToken, "", "", 400, "serviceId", "required"},
		{"lookup bad protocol", "GET", "/v1/discovery?serviceId=a&protocol=ftp", testDiscToken, "", "", 400, "protocol", "one of"},
		{"lookup unknown parameter", "GET", "/v1/discovery?serviceId=a&zone=b", testDiscToken, "", "", 400, "zone", "unknown"},
		{"lookup repeated parameter", "GET", "/v1/discovery?serviceId=a&serviceId=b", testDiscToken, "", "", 400, "serviceId", "once"},
		{"watch no token", "GET", "/v1/discovery/watch?serviceId=a", "", "", "", 401, "", "token"},
		{"watch no serviceId", "GET", "/v1/discovery/watch", testDiscToken, "", "", 400, "serviceId", "required"},
	}
	rev := f.r.Instances().Revision()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(tt.method, tt.path, tt.token, tt.ct, tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", status, tt.wantStatus, body)
			}
			var got FieldError
			if err := jsonUnmarshal(body, &got); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if got.Field != tt.wantField || !strings.Contains(got.Message, tt.wantErrContain) {
				t.Errorf("error %+v, want field %q and a message containing %q", got, tt.wantField, tt.wantErrContain)
			}
			if wantCode := ""; tt.wantStatus == http.StatusNotFound {
				wantCode = ReasonNotRegistered
				if got.Code != wantCode {
					t.Errorf("code %q, want %q", got.Code, wantCode)
				}
			}
		})
	}
	if got := f.r.Instances().Revision(); got != rev {
		t.Errorf("bad input changed the instances: revision %d, want %d", got, rev)
	}
	// Both tokens may look up.
	for _, tok := range []string{testDiscToken, testToken} {
		if status, _ := f.do("GET", "/v1/discovery?serviceId=a", tok, "", ""); status != 200 {
			t.Errorf("lookup with a valid token: %d", status)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func TestNotRunning(t *testing.T) {
	r, err := New(WithToken(testToken), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(Registration{ServiceID: "a", Protocol: "http", Address: "h", Port: 1}); err != ErrNotRunning {
		t.Errorf("Register before Run: %v, want ErrNotRunning", err)
	}
	select {
	case <-r.Ready():
		t.Error("ready before Run")
	default:
	}
	// Who the data waits for is named.
	if diff := cmp.Diff([]string{"registry"}, r.Instances().PendingInitializers()); diff != "" {
		t.Errorf("Instances waits for (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"registry/snapshots"}, r.Snapshots().PendingInitializers()); diff != "" {
		t.Errorf("Snapshots waits for (-want +got):\n%s", diff)
	}
	h := r.Handler()
	for _, path := range []string{"/v1/discovery?serviceId=a", "/ws/discovery"} {
		rec := newRecorder()
		h.ServeHTTP(rec, mustRequest(t, "GET", path))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %s before Run: %d, want 503", path, rec.Code)
		}
	}
	for _, opts := range [][]Option{nil, {WithToken("")}, {WithDiscoveryToken(testDiscToken)}, {WithToken(testToken), WithToken("")}} {
		if r, err := New(opts...); !errors.Is(err, ErrNoToken) || r != nil {
			t.Errorf("New without a token: %v, %v; want nil, ErrNoToken", r, err)
		}
	}
}

func TestSSEWatch(t *testing.T) {
	f := start(t, WithDiscoveryToken(testDiscToken), WithLimits(Limits{KeepAlive: 20 * time.Millisecond}))
	w := f.watchSSE("serviceId=api&protocol=http", testDiscToken)
	if got := w.next(); got == nil || len(got.Nodes) != 0 || got.ServiceID != "api" || got.Protocol != "http" {
		t.Fatalf("first event %+v, want the empty snapshot", got)
	}
	id := f.register(Registration{ServiceID: "api", EnvTag: "prod", Protocol: "http", Address: "10.0.0.1", Port: 8080})
	f.register(Registration{ServiceID: "api", Protocol: "grpc", Address: "10.0.0.1", Port: 9090}) // not watched
	f.register(Registration{ServiceID: "other", Protocol: "http", Address: "10.0.0.1", Port: 80}) // not watched
	if got := w.next(); got == nil || cmp.Diff([]nodeSummary{{id, "prod", "http", "10.0.0.1", 8080, true}}, summarize(got)) != "" {
		t.Fatalf("event after register: %+v", got)
	}
	// Heartbeats change nothing watchers see; a deregistration does, and is
	// the next event (keepalive comments in between are skipped).
	if status, _ := f.do("PUT", "/v1/services/"+id+"/heartbeat", testToken, "", ""); status != 204 {
		t.Fatal("heartbeat failed")
	}
	f.do("DELETE", "/v1/services/"+id, testToken, "", "")
	if got := w.next(); got == nil || len(got.Nodes) != 0 {
		t.Fatalf("event after deregister: %+v, want no nodes", got)
	}
}

// TestWatchCoalesces blocks a watcher's send and makes many changes: when
// it resumes, it gets the newest snapshot, not a backlog.
func TestWatchCoalesces(t *testing.T) {
	f := start(t)
	sent := make(chan *DiscoverySnapshot)
	release := make(chan struct{})
	done := make(chan error, 1)
	ctx, cancel := contextWithCancel()
	go func() {
		done <- f.r.watch(ctx, DiscoveryKey{ServiceID: "api"}, false, 0, func(data []byte, _ bool) error {
			var s DiscoverySnapshot
			if err := json.Unmarshal(data, &s); err != nil {
				return err
			}
			sent <- &s
			<-release
			return nil
		}, nil)
	}()
	if got := <-sent; len(got.Nodes) != 0 {
		t.Fatalf("first snapshot: %d nodes", len(got.Nodes))
	}
	// The watcher is stuck in send; make 50 changes.
	for i := range 50 {
		f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 1000 + i})
	}
	f.waitSnapshots("50 nodes", func(m map[DiscoveryKey]*DiscoverySnapshot) bool {
		s := m[DiscoveryKey{"api", "", "http"}]
		return s != nil && len(s.Nodes) == 50
	})
	release <- struct{}{}
	if got := <-sent; len(got.Nodes) != 50 {
		t.Errorf("after the stall: %d nodes, want the newest snapshot with 50", len(got.Nodes))
	}
	cancel()
	close(release)
	if err := <-done; err == nil {
		t.Error("watch returned nil after cancel, want the context error")
	}
}

func TestHTTPMethodsAndRoutes(t *testing.T) {
	f := start(t)
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/services", http.StatusMethodNotAllowed},
		{"POST", "/v1/discovery", http.StatusMethodNotAllowed},
		{"GET", "/v1/nothing", http.StatusNotFound},
	} {
		if status, _ := f.do(tt.method, tt.path, testToken, "", ""); status != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, status, tt.want)
		}
	}
}
