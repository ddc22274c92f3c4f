package registry

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Ids a test proposes, so that the answers it pins are deterministic.
const (
	goldenID1 = "0123456789abcdef0123456789abcdef"
	goldenID2 = "fedcba9876543210fedcba9876543210"
)

// TestWireShape pins the JSON that clients of the registry decode: the
// answers to register, lookup and subscribe, over HTTP, Server-Sent Events
// and JSON-RPC, byte for byte, in testdata/wire.golden. Run with -update
// after a deliberate change of the protocol, and say so in the commit.
//
// Among what it pins: nodes carry environment; lookups carry lastSeenAt,
// moved by a heartbeat; snapshots sent to watchers and subscribers do not,
// and a heartbeat sends them nothing.
func TestWireShape(t *testing.T) {
	clock := newFakeClock()
	f := start(t, WithLease(30*time.Second), withClock(clock))
	var out bytes.Buffer
	section := func(name string, data []byte) {
		// Subscription ids are random: the only part that is.
		data = regexp.MustCompile(`"subscriptionId":"[0-9a-f]{32}"`).ReplaceAll(bytes.TrimSpace(data), []byte(`"subscriptionId":"SUBSCRIPTION"`))
		fmt.Fprintf(&out, "== %s\n%s\n", name, data)
	}

	status, body := f.do("POST", "/v1/services", testToken, "application/json",
		`{"serviceId":"api","envTag":"prod","environment":"staging","protocol":"http","address":"10.0.0.1","port":8080,`+
			`"version":"1.2.3","tags":{"zone":"a"},"runtimeInstanceId":"`+goldenID1+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %s", status, body)
	}
	section("POST /v1/services → 201", []byte(body))
	// Watchers read the snapshots a translator derives after Register has
	// returned: wait for it, so that the first event pins the node.
	f.waitSnapshots("the http snapshot", func(m map[DiscoveryKey]*DiscoverySnapshot) bool {
		return m[DiscoveryKey{ServiceID: "api", EnvTag: "prod", Protocol: "http"}] != nil
	})
	sse := f.watchSSE("serviceId=api", "")
	first, err := sse.lines.ReadBytes('\n') // "event: snapshot"
	if err == nil {
		var data []byte
		data, err = sse.lines.ReadBytes('\n')
		section("GET /v1/discovery/watch?serviceId=api → first event", append(first, data...))
	}
	if err != nil {
		t.Fatal(err)
	}

	rc := f.dial("/ws/microservice", testToken)
	m := rc.call("service/register", map[string]any{"serviceId": "api", "envTag": "prod", "environment": "staging",
		"protocol": "grpc", "address": "10.0.0.2", "port": 9000, "runtimeInstanceId": goldenID2})
	section("service/register → response", rawMsg(t, m))
	f.waitSnapshots("the grpc snapshot", func(m map[DiscoveryKey]*DiscoverySnapshot) bool {
		return m[DiscoveryKey{ServiceID: "api", EnvTag: "prod", Protocol: "grpc"}] != nil
	})
	m = rc.call("discovery/subscribe", map[string]any{"serviceId": "api", "envTag": "prod", "protocol": "grpc"})
	section("discovery/subscribe → response", rawMsg(t, m))
	section("discovery/subscribe → first discovery/snapshot", rawMsg(t, rc.mustRead()))

	// A heartbeat 5 s later: lookups show it, watchers hear nothing (the
	// next message on the socket is the answer to the lookup).
	clock.advance(5 * time.Second)
	if status, body := f.do("PUT", "/v1/services/"+goldenID1+"/heartbeat", testToken, "", ""); status != http.StatusNoContent {
		t.Fatalf("heartbeat: %d %s", status, body)
	}
	status, body = f.do("GET", "/v1/discovery?serviceId=api&envTag=prod", "", "", "")
	if status != http.StatusOK {
		t.Fatalf("lookup: %d %s", status, body)
	}
	section("GET /v1/discovery?serviceId=api&envTag=prod → 200", []byte(body))
	m = rc.call("discovery/lookup", map[string]any{"serviceId": "api", "protocol": "http"})
	section("discovery/lookup → response", rawMsg(t, m))

	golden := filepath.Join("testdata", "wire.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("wire shape changed (-%s +got); run with -update if that is deliberate:\n%s", golden, diff)
	}
}

// rawMsg returns the JSON of m as the registry sent it, members in the
// order of rpcMsg (json.RawMessage keeps the values' bytes).
func rawMsg(t *testing.T, m *rpcMsg) []byte {
	t.Helper()
	type wire struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method,omitempty"`
		Params  json.RawMessage `json:"params,omitempty"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *RPCError       `json:"error,omitempty"`
	}
	data, err := json.Marshal(wire{"2.0", m.ID, m.Method, m.Params, m.Result, m.Error})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRegisterAgainAfterRestart is what a client does when the registry
// it registered with restarted: its heartbeat is answered 404, and it
// registers again, proposing the id it had, which it keeps.
func TestRegisterAgainAfterRestart(t *testing.T) {
	reg := Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 8080}
	before := start(t)
	id := before.register(reg)

	after := start(t) // a new registry: it knows nothing
	status, body := after.do("PUT", "/v1/services/"+id+"/heartbeat", testToken, "", "")
	var ferr FieldError
	if err := json.Unmarshal([]byte(body), &ferr); err != nil || status != http.StatusNotFound || ferr.Field != "runtimeInstanceId" {
		t.Fatalf("heartbeat after the restart: %d %s, want 404 on runtimeInstanceId", status, body)
	}
	reg.RuntimeInstanceID = id
	if got := after.register(reg); got != id {
		t.Errorf("registering again with runtimeInstanceId %s got %s, want it kept", id, got)
	}
	if status, body := after.do("PUT", "/v1/services/"+id+"/heartbeat", testToken, "", ""); status != http.StatusNoContent {
		t.Errorf("heartbeat after registering again: %d %s", status, body)
	}

	// Another endpoint proposing the same id gets an id of its own.
	other := reg
	other.Port = 8081
	if got := after.register(other); got == id {
		t.Errorf("a second endpoint proposing a held id got it: %s", got)
	}
	// The endpoint of an existing instance keeps that instance's id,
	// whatever it proposes.
	again := reg
	again.RuntimeInstanceID = goldenID2
	if got := after.register(again); got != id {
		t.Errorf("re-registering the endpoint proposing another id got %s, want %s", got, id)
	}

	// Not an id a registry gives: refused, naming the field.
	bad := `{"serviceId":"api","protocol":"http","address":"10.0.0.1","port":8082,"runtimeInstanceId":"../x"}`
	if status, body := after.do("POST", "/v1/services", testToken, "application/json", bad); status != http.StatusBadRequest || !bytes.Contains([]byte(body), []byte(`"field":"runtimeInstanceId"`)) {
		t.Errorf("register with a malformed id: %d %s, want 400 on runtimeInstanceId", status, body)
	}
}

// TestRegisterAgainOverSocket: the same over /ws/microservice, with the
// environment kept.
func TestRegisterAgainOverSocket(t *testing.T) {
	f := start(t)
	rc := f.dial("/ws/microservice", testToken)
	var res struct{ RuntimeInstanceID string }
	rc.result("service/register", map[string]any{"serviceId": "api", "environment": "staging", "protocol": "http",
		"address": "10.0.0.1", "port": 80, "runtimeInstanceId": goldenID1}, &res)
	if res.RuntimeInstanceID != goldenID1 {
		t.Errorf("register proposing %s got %s", goldenID1, res.RuntimeInstanceID)
	}
	if inst, ok := f.r.Instances().Load(goldenID1); !ok || inst.Environment != "staging" {
		t.Errorf("instance %+v, want environment staging", inst)
	}
}
