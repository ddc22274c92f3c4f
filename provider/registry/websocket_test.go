package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// rpcClient is a real WebSocket JSON-RPC client.
type rpcClient struct {
	t    testing.TB
	c    *websocket.Conn
	next int
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

func (f *fixture) dial(path, token string) *rpcClient {
	f.t.Helper()
	c, err := f.tryDial(path, token)
	if err != nil {
		f.t.Fatalf("dial %s: %v", path, err)
	}
	return c
}

func (f *fixture) tryDial(path, token string) (*rpcClient, error) {
	opts := &websocket.DialOptions{HTTPClient: f.srv.Client(), HTTPHeader: http.Header{}}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+path, opts)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("status %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	rc := &rpcClient{t: f.t, c: c}
	f.t.Cleanup(rc.close)
	return rc, nil
}

func (rc *rpcClient) close() { _ = rc.c.Close(websocket.StatusNormalClosure, "") }

func (rc *rpcClient) sendRaw(typ websocket.MessageType, msg string) {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := rc.c.Write(ctx, typ, []byte(msg)); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// read returns the next message, or the error that ended the socket.
func (rc *rpcClient) read() (*rpcMsg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	_, data, err := rc.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m rpcMsg
	if err := json.Unmarshal(data, &m); err != nil {
		rc.t.Fatalf("message %s: %v", data, err)
	}
	return &m, nil
}

func (rc *rpcClient) mustRead() *rpcMsg {
	rc.t.Helper()
	m, err := rc.read()
	if err != nil {
		rc.t.Fatalf("read: %v", err)
	}
	return m
}

// call sends a request and returns its response; notifications read
// meanwhile are a test failure.
func (rc *rpcClient) call(method string, params any) *rpcMsg {
	rc.t.Helper()
	rc.next++
	p, _ := json.Marshal(params)
	rc.sendRaw(websocket.MessageText, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, rc.next, method, p))
	m := rc.mustRead()
	if string(m.ID) != fmt.Sprint(rc.next) {
		rc.t.Fatalf("%s: got %+v, want the response with id %d", method, m, rc.next)
	}
	return m
}

func (rc *rpcClient) result(method string, params, into any) {
	rc.t.Helper()
	m := rc.call(method, params)
	if m.Error != nil {
		rc.t.Fatalf("%s: error %+v", method, m.Error)
	}
	if err := json.Unmarshal(m.Result, into); err != nil {
		rc.t.Fatalf("%s result %s: %v", method, m.Result, err)
	}
}

// snapshotNote reads the next message as a discovery/snapshot notification.
func (rc *rpcClient) snapshotNote() SubscriptionNotification {
	rc.t.Helper()
	m := rc.mustRead()
	if m.Method != "discovery/snapshot" || m.ID != nil {
		rc.t.Fatalf("got %+v, want a discovery/snapshot notification", m)
	}
	n := SubscriptionNotification{DiscoverySnapshot: &DiscoverySnapshot{}}
	if err := json.Unmarshal(m.Params, &n); err != nil {
		rc.t.Fatal(err)
	}
	return n
}

var apiReg = map[string]any{"serviceId": "api", "envTag": "prod", "protocol": "grpc", "address": "10.0.0.7", "port": 9000}

func TestMicroserviceSocket(t *testing.T) {
	const lease = time.Minute
	clock := newFakeClock()
	f := start(t, WithLease(lease), withClock(clock))
	rc := f.dial("/ws/microservice", testToken)

	if m := rc.call("discovery/lookup", map[string]any{"serviceId": "api"}); m.Error == nil || m.Error.Code != CodeNotRegistered {
		t.Fatalf("lookup before register: %+v, want CodeNotRegistered", m)
	}
	var reg struct{ RuntimeInstanceID string }
	rc.result("service/register", apiReg, &reg)
	if m := rc.call("service/register", apiReg); m.Error == nil || m.Error.Code != CodeAlreadyRegistered {
		t.Errorf("second register: %+v, want CodeAlreadyRegistered", m)
	}
	var snap DiscoverySnapshot
	rc.result("discovery/lookup", map[string]any{"serviceId": "api", "protocol": "grpc"}, &snap)
	want := []nodeSummary{{reg.RuntimeInstanceID, "prod", "grpc", "10.0.0.7", 9000, true}}
	if diff := cmp.Diff(want, summarize(&snap)); diff != "" {
		t.Errorf("lookup (-want +got):\n%s", diff)
	}
	if snap.Protocol != "grpc" || snap.EnvTag != "" {
		t.Errorf("merged lookup envTag=%q protocol=%q, want \"\" and grpc", snap.EnvTag, snap.Protocol)
	}

	// The socket holds the lease: no heartbeats needed for several leases.
	clock.advance(10 * lease)
	f.r.store.expire()
	if inst, ok := f.r.Instances().Load(reg.RuntimeInstanceID); !ok || !inst.Connected {
		t.Fatalf("while the socket is open: %+v, want connected", inst)
	}

	// Closing disconnects at once; reconnecting and registering again
	// within the lease keeps the id.
	rc.close()
	f.waitInstance(reg.RuntimeInstanceID, "disconnected", func(i *Instance) bool { return i != nil && !i.Connected })
	rc2 := f.dial("/ws/microservice", "")
	var reg2 struct{ RuntimeInstanceID string }
	params := map[string]any{"token": testToken}
	for k, v := range apiReg {
		params[k] = v
	}
	rc2.result("service/register", params, &reg2)
	if reg2.RuntimeInstanceID != reg.RuntimeInstanceID {
		t.Errorf("re-registration got id %s, want %s", reg2.RuntimeInstanceID, reg.RuntimeInstanceID)
	}
	if inst, _ := f.r.Instances().Load(reg.RuntimeInstanceID); !inst.Connected {
		t.Error("re-registered instance is not connected")
	}

	// Without reconnecting, it is removed one lease after the socket closed.
	rc2.close()
	f.waitInstance(reg.RuntimeInstanceID, "disconnected", func(i *Instance) bool { return i != nil && !i.Connected })
	clock.advance(lease - time.Nanosecond)
	f.r.store.expire()
	if _, ok := f.r.Instances().Load(reg.RuntimeInstanceID); !ok {
		t.Fatal("removed before its lease ran out")
	}
	clock.advance(time.Nanosecond)
	f.r.store.expire()
	if inst, ok := f.r.Instances().Load(reg.RuntimeInstanceID); ok {
		t.Fatalf("one lease after the socket closed: %+v, want removed", inst)
	}
}

func TestDiscoverySocketSubscribe(t *testing.T) {
	f := start(t)
	rc := f.dial("/ws/discovery", "")
	var sub struct{ SubscriptionID string }
	rc.result("discovery/subscribe", map[string]any{"serviceId": "api", "envTag": "prod"}, &sub)
	if first := rc.snapshotNote(); first.SubscriptionID != sub.SubscriptionID || len(first.Nodes) != 0 || first.EnvTag != "prod" {
		t.Fatalf("first notification %+v", first)
	}
	var other struct{ SubscriptionID string }
	rc.result("discovery/subscribe", map[string]any{"serviceId": "billing"}, &other)
	if n := rc.snapshotNote(); n.SubscriptionID != other.SubscriptionID {
		t.Fatalf("notification for %s, want %s", n.SubscriptionID, other.SubscriptionID)
	}

	id := f.register(Registration{ServiceID: "api", EnvTag: "prod", Protocol: "http", Address: "10.0.0.1", Port: 80})
	n := rc.snapshotNote()
	if n.SubscriptionID != sub.SubscriptionID || cmp.Diff([]nodeSummary{{id, "prod", "http", "10.0.0.1", 80, true}}, summarize(n.DiscoverySnapshot)) != "" {
		t.Fatalf("notification after register: %+v", n)
	}

	var ok bool
	rc.result("discovery/unsubscribe", map[string]any{"subscriptionId": sub.SubscriptionID}, &ok)
	if !ok {
		t.Error("unsubscribe result false")
	}
	if m := rc.call("discovery/unsubscribe", map[string]any{"subscriptionId": sub.SubscriptionID}); m.Error == nil || m.Error.Code != CodeInvalidParams || m.Error.Data.Field != "subscriptionId" {
		t.Errorf("second unsubscribe: %+v, want invalid params on subscriptionId", m)
	}
	// After unsubscribing, a change sends nothing: the next message is the
	// answer to the lookup.
	f.do("DELETE", "/v1/services/"+id, testToken, "", "")
	f.waitSnapshots("api gone", func(m map[DiscoveryKey]*DiscoverySnapshot) bool { return len(m) == 0 })
	var snap DiscoverySnapshot
	rc.result("discovery/lookup", map[string]any{"serviceId": "api"}, &snap)
	if len(snap.Nodes) != 0 {
		t.Errorf("lookup after delete: %d nodes", len(snap.Nodes))
	}
}

func TestSocketBadInput(t *testing.T) {
	f := start(t, WithDiscoveryToken(testDiscToken), WithLimits(Limits{MaxMessageBytes: 1024, MaxSubscriptionsPerConn: 1}))
	rev := f.r.Instances().Revision()

	t.Run("errors", func(t *testing.T) {
		rc := f.dial("/ws/microservice", testToken)
		rcd := f.dial("/ws/discovery", testDiscToken)
		tests := []struct {
			name      string
			rc        *rpcClient
			msg       string
			wantID    string
			wantCode  int
			wantField string
		}{
			{"parse error", rc, `{"jsonrpc":`, "null", CodeParseError, ""},
			{"empty batch", rc, `[]`, "null", CodeInvalidRequest, ""},
			{"not an object", rc, `"hello"`, "null", CodeInvalidRequest, ""},
			{"wrong version", rc, `{"jsonrpc":"1.0","id":1,"method":"discovery/lookup"}`, "1", CodeInvalidRequest, ""},
			{"no method", rc, `{"jsonrpc":"2.0","id":"a"}`, `"a"`, CodeInvalidRequest, ""},
			{"object id", rc, `{"jsonrpc":"2.0","id":{},"method":"x"}`, "null", CodeInvalidRequest, ""},
			{"unknown member", rc, `{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`, "1", CodeInvalidRequest, ""},
			{"method not a string", rc, `{"jsonrpc":"2.0","id":"m","method":3}`, `"m"`, CodeInvalidRequest, ""},
			{"invalid UTF-8", rcd, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"discovery/lookup\",\"params\":{\"serviceId\":\"a\xff\"}}", "13", CodeInvalidParams, ""},
			{"invisible serviceId", rcd, `{"jsonrpc":"2.0","id":14,"method":"discovery/lookup","params":{"serviceId":"a\u200b"}}`, "14", CodeInvalidParams, "serviceId"},
			{"register invisible envTag", rc, `{"jsonrpc":"2.0","id":15,"method":"service/register","params":{"serviceId":"a","envTag":"\u2060","protocol":"http","address":"h","port":1}}`, "15", CodeInvalidParams, "envTag"},
			{"unknown method", rc, `{"jsonrpc":"2.0","id":2,"method":"service/explode"}`, "2", CodeMethodNotFound, ""},
			{"subscribe on microservice before register", rc, `{"jsonrpc":"2.0","id":3,"method":"discovery/subscribe"}`, "3", CodeNotRegistered, ""},
			{"register on discovery", rcd, `{"jsonrpc":"2.0","id":4,"method":"service/register"}`, "4", CodeMethodNotFound, ""},
			{"register without port", rc, `{"jsonrpc":"2.0","id":5,"method":"service/register","params":{"serviceId":"a","protocol":"http","address":"h"}}`, "5", CodeInvalidParams, "port"},
			{"register bad protocol", rc, `{"jsonrpc":"2.0","id":6,"method":"service/register","params":{"serviceId":"a","protocol":"udp","address":"h","port":1}}`, "6", CodeInvalidParams, "protocol"},
			{"register unknown field", rc, `{"jsonrpc":"2.0","id":7,"method":"service/register","params":{"serviceId":"a","weight":1}}`, "7", CodeInvalidParams, "weight"},
			{"register params array", rc, `{"jsonrpc":"2.0","id":8,"method":"service/register","params":[1]}`, "8", CodeInvalidParams, ""},
			{"lookup without serviceId", rcd, `{"jsonrpc":"2.0","id":9,"method":"discovery/lookup","params":{}}`, "9", CodeInvalidParams, "serviceId"},
			{"lookup bad protocol", rcd, `{"jsonrpc":"2.0","id":10,"method":"discovery/lookup","params":{"serviceId":"a","protocol":"x"}}`, "10", CodeInvalidParams, "protocol"},
			{"unsubscribe unknown", rcd, `{"jsonrpc":"2.0","id":11,"method":"discovery/unsubscribe","params":{"subscriptionId":"x"}}`, "11", CodeInvalidParams, "subscriptionId"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.rc.sendRaw(websocket.MessageText, tt.msg)
				m := tt.rc.mustRead()
				if string(m.ID) != tt.wantID || m.Error == nil || m.Error.Code != tt.wantCode {
					t.Fatalf("got id %s error %+v, want id %s code %d", m.ID, m.Error, tt.wantID, tt.wantCode)
				}
				if field := ""; m.Error.Data != nil {
					field = m.Error.Data.Field
					if field != tt.wantField {
						t.Errorf("field %q, want %q", field, tt.wantField)
					}
				} else if tt.wantField != "" {
					t.Errorf("no data, want field %q", tt.wantField)
				}
			})
		}
		// A batch is answered with an error for each request, echoing its
		// id; notifications in it get none.
		rc.sendRaw(websocket.MessageText, `[{"jsonrpc":"2.0","id":1,"method":"discovery/lookup"},{"jsonrpc":"2.0","method":"n"},{"id":"b","method":5},7]`)
		_, data, err := rc.c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var batch []rpcMsg
		if err := json.Unmarshal(data, &batch); err != nil {
			t.Fatalf("answer to a batch %s: %v", data, err)
		}
		var ids []string
		for _, m := range batch {
			if m.Error == nil || m.Error.Code != CodeInvalidRequest {
				t.Errorf("answer %+v in a batch, want CodeInvalidRequest", m)
			}
			ids = append(ids, string(m.ID))
		}
		if diff := cmp.Diff([]string{"1", `"b"`, "null"}, ids); diff != "" {
			t.Errorf("ids of the answers to a batch (-want +got):\n%s", diff)
		}
		// A notification gets no answer, even when it fails: the next
		// message answers the following call.
		rcd.sendRaw(websocket.MessageText, `{"jsonrpc":"2.0","method":"nothing"}`)
		var snap DiscoverySnapshot
		rcd.result("discovery/lookup", map[string]any{"serviceId": "a"}, &snap)
		// The subscription limit.
		var sub struct{ SubscriptionID string }
		rcd.result("discovery/subscribe", map[string]any{"serviceId": "a"}, &sub)
		rcd.snapshotNote()
		if m := rcd.call("discovery/subscribe", map[string]any{"serviceId": "b"}); m.Error == nil || m.Error.Code != CodeLimitExceeded {
			t.Errorf("second subscription: %+v, want CodeLimitExceeded", m)
		}
	})

	closes := []struct {
		name, path, token string
		typ               websocket.MessageType
		msg               string
		wantCode          int // JSON-RPC error before the close, 0 for none
		wantClose         websocket.StatusCode
	}{
		{"register wrong token", "/ws/microservice", "", websocket.MessageText, `{"jsonrpc":"2.0","id":1,"method":"service/register","params":{"token":"nope","serviceId":"a","protocol":"http","address":"h","port":1}}`, CodeUnauthorized, websocket.StatusPolicyViolation},
		{"register no token", "/ws/microservice", "", websocket.MessageText, `{"jsonrpc":"2.0","id":1,"method":"service/register","params":{"serviceId":"a","protocol":"http","address":"h","port":1}}`, CodeUnauthorized, websocket.StatusPolicyViolation},
		{"lookup no discovery token", "/ws/discovery", "", websocket.MessageText, `{"jsonrpc":"2.0","id":1,"method":"discovery/lookup","params":{"serviceId":"a"}}`, CodeUnauthorized, websocket.StatusPolicyViolation},
		{"oversized", "/ws/discovery", testDiscToken, websocket.MessageText, `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 2048) + `"}`, 0, websocket.StatusMessageTooBig},
		{"binary", "/ws/discovery", testDiscToken, websocket.MessageBinary, `{}`, 0, websocket.StatusUnsupportedData},
	}
	for _, tt := range closes {
		t.Run(tt.name, func(t *testing.T) {
			rc := f.dial(tt.path, tt.token)
			rc.sendRaw(tt.typ, tt.msg)
			m, err := rc.read()
			if tt.wantCode != 0 {
				if err != nil || m.Error == nil || m.Error.Code != tt.wantCode {
					t.Fatalf("got %+v, %v; want error code %d", m, err, tt.wantCode)
				}
				m, err = rc.read()
			}
			if got := websocket.CloseStatus(err); got != tt.wantClose {
				t.Errorf("got %+v, %v; want close %d", m, err, tt.wantClose)
			}
		})
	}

	for _, tt := range []struct{ path, token string }{{"/ws/microservice", "nope"}, {"/ws/microservice", testDiscToken}, {"/ws/discovery", "nope"}} {
		if _, err := f.tryDial(tt.path, tt.token); err == nil || !strings.Contains(err.Error(), "status 401") {
			t.Errorf("dial %s with a wrong token: %v, want 401", tt.path, err)
		}
	}
	// Discovery tokens in params work.
	rc := f.dial("/ws/discovery", "")
	var snap DiscoverySnapshot
	rc.result("discovery/lookup", map[string]any{"serviceId": "a", "token": testDiscToken}, &snap)

	if got := f.r.Instances().Revision(); got != rev {
		t.Errorf("bad input changed the instances: revision %d, want %d", got, rev)
	}
}

func TestStopEndsWatchers(t *testing.T) {
	r, err := New(WithToken(testToken), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	<-r.Ready()
	f := &fixture{t: t, r: r, srv: newServer(r)}
	defer f.srv.Close()
	w := f.watchSSE("serviceId=a", "")
	w.next()
	rc := f.dial("/ws/discovery", "")
	var sub struct{ SubscriptionID string }
	rc.result("discovery/subscribe", map[string]any{"serviceId": "a"}, &sub)
	rc.snapshotNote()
	ms := f.dial("/ws/microservice", testToken)
	var reg struct{ RuntimeInstanceID string }
	ms.result("service/register", apiReg, &reg)

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if got := w.next(); got != nil {
		t.Errorf("SSE after stop: %+v, want the end of the stream", got)
	}
	for _, c := range []*rpcClient{rc, ms} {
		if _, err := c.read(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("socket after stop: %v, want close 1001", err)
		}
	}
	if err := r.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
	if _, err := r.Register(Registration{ServiceID: "a", Protocol: "http", Address: "h", Port: 1}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Register after Run: %v, want ErrNotRunning", err)
	}
}
