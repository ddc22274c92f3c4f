package registry

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

const testTeamToken = "team-token-billing-5555"

// A token given with WithServiceToken registers, renews and removes
// instances of its services only.
func TestServiceTokens(t *testing.T) {
	f := start(t, WithServiceToken(testTeamToken, "billing", "pay-*"), WithDiscoveryToken(testDiscToken))
	body := func(service string, port int) string {
		b, _ := json.Marshal(Registration{ServiceID: service, Protocol: "http", Address: "10.0.0.1", Port: port})
		return string(b)
	}
	register := func(token, service string, port int) (int, string) {
		return f.do("POST", "/v1/services", token, "application/json", body(service, port))
	}
	for _, service := range []string{"billing", "pay-api", "pay-"} {
		if status, resp := register(testTeamToken, service, 1); status != http.StatusCreated {
			t.Errorf("team token registering %s: %d %s, want 201", service, status, resp)
		}
	}
	for _, service := range []string{"api", "billing-v2", "pay"} {
		status, resp := register(testTeamToken, service, 2)
		if status != http.StatusForbidden || !strings.Contains(resp, `"field":"serviceId"`) || !strings.Contains(resp, service) {
			t.Errorf("team token registering %s: %d %s, want 403 naming the service", service, status, resp)
		}
	}
	others := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.2", Port: 80}) // the all-services token
	for _, req := range []struct{ method, path string }{{"PUT", "/v1/services/" + others + "/heartbeat"}, {"DELETE", "/v1/services/" + others}} {
		if status, resp := f.do(req.method, req.path, testTeamToken, "", ""); status != http.StatusForbidden {
			t.Errorf("team token: %s of another service's instance: %d %s, want 403", req.method, status, resp)
		}
	}
	if _, ok := f.r.Instances().Load(others); !ok {
		t.Fatal("the team token removed another service's instance")
	}
	_, resp := register(testTeamToken, "billing", 3)
	var own RegisterResponse
	_ = json.Unmarshal([]byte(resp), &own)
	for _, req := range []struct{ method, path string }{{"PUT", "/v1/services/" + own.RuntimeInstanceID + "/heartbeat"}, {"DELETE", "/v1/services/" + own.RuntimeInstanceID}} {
		if status, resp := f.do(req.method, req.path, testTeamToken, "", ""); status != http.StatusNoContent {
			t.Errorf("team token: %s of its own instance: %d %s, want 204", req.method, status, resp)
		}
	}
	// Every registration token also looks up.
	if status, _ := f.do("GET", "/v1/discovery?serviceId=api", testTeamToken, "", ""); status != http.StatusOK {
		t.Errorf("team token looking up: %d, want 200", status)
	}

	// Over WebSocket: the header token's scope applies, and a refusal
	// leaves the socket open.
	ms := f.dial("/ws/microservice", testTeamToken)
	m := ms.call("service/register", map[string]any{"serviceId": "api", "protocol": "http", "address": "10.0.0.9", "port": 1})
	if m.Error == nil || m.Error.Code != CodeForbidden || m.Error.Data == nil || m.Error.Data.Field != "serviceId" {
		t.Errorf("team token registering api over WebSocket: %+v, want CodeForbidden on serviceId", m)
	}
	var reg struct{ RuntimeInstanceID string }
	ms.result("service/register", map[string]any{"serviceId": "billing", "protocol": "http", "address": "10.0.0.9", "port": 1}, &reg)
	// And the token in params, likewise.
	mp := f.dial("/ws/microservice", "")
	m = mp.call("service/register", map[string]any{"token": testTeamToken, "serviceId": "api", "protocol": "http", "address": "10.0.0.9", "port": 2})
	if m.Error == nil || m.Error.Code != CodeForbidden {
		t.Errorf("team token in params registering api: %+v, want CodeForbidden", m)
	}
	if got := f.r.Counters().Forbidden; got != 7 {
		t.Errorf("Counters().Forbidden = %d, want 7", got)
	}
	// A team token alone is enough for New.
	if _, err := New(WithServiceToken(testTeamToken, "billing")); err != nil {
		t.Errorf("New with only a service token: %v", err)
	}
}

// Refused tokens are counted and logged, without the token, at most one
// record a second.
func TestAuthFailuresCountedAndLogged(t *testing.T) {
	var logs syncBuffer
	f := start(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithLimits(Limits{AuthTimeout: 50e6}))
	body := `{"serviceId":"a","protocol":"http","address":"h","port":1}`
	for _, token := range []string{"", testToken + "-but-wrong", "x"} {
		if status, _ := f.do("POST", "/v1/services", token, "application/json", body); status != http.StatusUnauthorized {
			t.Fatalf("wrong token: %d, want 401", status)
		}
	}
	if _, err := f.tryDial("/ws/microservice", testToken+"-but-wrong"); err == nil {
		t.Fatal("dial with a wrong token succeeded")
	}
	rc := f.dial("/ws/microservice", "")
	m := rc.call("service/register", map[string]any{"token": testToken + "-but-wrong", "serviceId": "a", "protocol": "http", "address": "h", "port": 1})
	if m.Error == nil || m.Error.Code != CodeUnauthorized {
		t.Fatalf("register with a wrong token: %+v", m)
	}
	if got := f.r.Counters().AuthFailures; got != 5 {
		t.Errorf("Counters().AuthFailures = %d, want 5", got)
	}
	// A socket that never presents a token is closed at the deadline, and
	// counted as both.
	idle := f.dial("/ws/microservice", "")
	if _, err := idle.read(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("socket without a token: %v, want closed with 1008", err)
	}
	if c := f.r.Counters(); c.AuthTimeouts != 1 || c.AuthFailures != 6 {
		t.Errorf("Counters() = %+v, want 1 auth timeout among 6 failures", c)
	}
	out := logs.String()
	if n := strings.Count(out, `msg="refused a token"`); n < 1 || n > 2 {
		t.Errorf("%d records of refused tokens, want 1 or 2 (at most one a second):\n%s", n, out)
	}
	for _, want := range []string{"remote=127.0.0.1:", "path=/v1/services", `reason="no Authorization header"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "but-wrong") || strings.Contains(out, testToken) {
		t.Errorf("log shows a token:\n%s", out)
	}
}
