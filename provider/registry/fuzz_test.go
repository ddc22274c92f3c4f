package registry

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

var registrationSeeds = []string{
	`{"serviceId":"api","envTag":"prod","protocol":"http","address":"10.0.0.1","port":8080,"version":"1","tags":{"a":"b"}}`,
	`{"serviceId":"api","protocol":"grpc","address":"::1","port":1}`,
	`{"serviceId":"api","protocol":"http","address":"h","port":0}`,
	`{"serviceId":"api","protocol":"http","address":"h","port":1e99}`,
	`{"serviceId":"api","protocol":"http","address":"h","port":"1"}`,
	`{"serviceId":"a b","protocol":"ftp","address":"http://x","port":-1}`,
	`{"serviceId":"api","unknown":true}`,
	`{"tags":{"":""},"serviceId":"\u0000"}`,
	`{"serviceId":"api"} {}`,
	`[]`, `null`, `"x"`, `{`, ``, "\xff",
}

// FuzzDecodeRegistration checks that no body makes decoding panic, and that
// whatever it accepts satisfies the documented rules.
func FuzzDecodeRegistration(f *testing.F) {
	for _, s := range registrationSeeds {
		f.Add([]byte(s))
	}
	limits := Limits{}.withDefaults()
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, ferr := limits.decodeRegistration(data)
		if ferr != nil {
			if ferr.Message == "" {
				t.Fatalf("empty error message for %q", data)
			}
			return
		}
		if reg.ServiceID == "" || !protocols[reg.Protocol] || reg.Address == "" || reg.Port < 1 || reg.Port > 65535 || len(reg.Tags) > limits.MaxTags {
			t.Fatalf("accepted an invalid registration %+v from %q", reg, data)
		}
	})
}

// fuzzRegistry starts a registry for a fuzz target, stopped at cleanup.
func fuzzRegistry(f *testing.F) *Registry {
	r, err := New(WithToken(testToken), WithLimits(Limits{MaxInstancesPerService: 8}), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	<-r.Ready()
	f.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

// FuzzHTTPRegister sends arbitrary bodies and content types to
// POST /v1/services: every answer is a documented status with a JSON body.
func FuzzHTTPRegister(f *testing.F) {
	for _, s := range registrationSeeds {
		f.Add(s, "application/json")
	}
	f.Add(registrationSeeds[0], "application/json; charset=utf-8")
	f.Add(registrationSeeds[0], "text/plain")
	f.Add(registrationSeeds[0], ";;;")
	r := fuzzRegistry(f)
	h := r.Handler()
	f.Fuzz(func(t *testing.T, body, contentType string) {
		req := httptest.NewRequest("POST", "/v1/services", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusCreated:
			var resp RegisterResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatalf("201 body %q: %v", rec.Body, err)
			}
			if _, ok := r.Instances().Load(resp.RuntimeInstanceID); !ok {
				t.Fatalf("201 for %q but no instance %s", body, resp.RuntimeInstanceID)
			}
			_ = r.Deregister(resp.RuntimeInstanceID)
		case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			var fe FieldError
			if err := json.Unmarshal(rec.Body.Bytes(), &fe); err != nil || fe.Message == "" {
				t.Fatalf("%d body %q: %v", rec.Code, rec.Body, err)
			}
		default:
			t.Fatalf("status %d for %q (%s)", rec.Code, body, contentType)
		}
	})
}

// FuzzJSONRPC feeds arbitrary messages to both kinds of sessions: every
// request gets one well-formed response, and nothing panics or leaks (the
// session is ended after each input).
func FuzzJSONRPC(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"service/register","params":{"serviceId":"a","protocol":"http","address":"h","port":1,"token":"` + testToken + `"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"discovery/lookup","params":{"serviceId":"a","envTag":"e","protocol":"grpc"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"discovery/subscribe","params":{"serviceId":"a"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"discovery/unsubscribe","params":{"subscriptionId":"x"}}`,
		`{"jsonrpc":"2.0","method":"discovery/lookup"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"service/register","params":[]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","method":"y"},{"id":"z"},3]`, `[]`,
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"discovery/lookup\",\"params\":{\"serviceId\":\"a\xff\"}}",
		`{"jsonrpc":1}`, `{`, `null`, `1`, "",
	} {
		f.Add(s)
	}
	r := fuzzRegistry(f)
	f.Fuzz(func(t *testing.T, msg string) {
		for _, microservice := range []bool{true, false} {
			ctx, cancel := context.WithCancel(context.Background())
			var mu sync.Mutex
			var sent [][]byte
			s := &session{r: r, ctx: ctx, microservice: microservice, cred: r.creds[0],
				subs: make(map[string]*subscription),
				send: func(b []byte) error { mu.Lock(); defer mu.Unlock(); sent = append(sent, b); return nil }}
			s.authorized.Store(!microservice)
			if _, err := s.handle([]byte(msg)); err != nil {
				t.Fatal(err)
			}
			cancel()
			s.end()
			type response struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *RPCError       `json:"error"`
				Method  string          `json:"method"`
			}
			for _, b := range sent {
				var resps []response
				if len(b) > 0 && b[0] == '[' { // the answer to a batch
					if err := json.Unmarshal(b, &resps); err != nil || len(resps) == 0 {
						t.Fatalf("sent %q: %v", b, err)
					}
				} else {
					resps = make([]response, 1)
					if err := json.Unmarshal(b, &resps[0]); err != nil {
						t.Fatalf("sent %q: %v", b, err)
					}
				}
				for _, resp := range resps {
					if resp.JSONRPC != "2.0" {
						t.Fatalf("sent %q: not JSON-RPC 2.0", b)
					}
					if resp.Method == "" && (resp.Result == nil) == (resp.Error == nil) {
						t.Fatalf("response %q has both or neither result and error", b)
					}
				}
			}
		}
	})
}
