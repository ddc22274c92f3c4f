package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// secretsIn returns the outputs that show a token: whole in any case, in
// hex, or its distinctive tail.
func secretsIn(outputs []string) []string {
	var leaks []string
	for _, out := range outputs {
		for _, secret := range []string{testToken, testDiscToken, testTeamToken} {
			hex := fmt.Sprintf("%x", secret)
			if strings.Contains(strings.ToLower(out), strings.ToLower(secret)) ||
				strings.Contains(strings.ToLower(out), hex) || strings.Contains(out, secret[len(secret)-10:]) {
				leaks = append(leaks, out)
			}
		}
	}
	return leaks
}

var verbs = []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s", "%T"}

// TestTokensNeverShow prints every value that holds or held a token — the
// Secrets, the options made from them, the Registry, the errors of New and
// TokenFromEnv, log records — and checks that none shows it.
func TestTokensNeverShow(t *testing.T) {
	token, disc := Secret(testToken), Secret(testDiscToken)
	opts := []Option{WithToken(token), WithDiscoveryToken(disc)}
	r, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		Token, Discovery Secret
		Opts             []Option
	}
	holder := config{token, disc, opts}
	_, errNew := New(WithDiscoveryToken(disc))
	t.Setenv("SWITCHYARD_TEST_TOKEN", "")
	_, errEnv := TokenFromEnv("SWITCHYARD_TEST_TOKEN")

	var outputs []string
	for _, verb := range verbs {
		for _, v := range []any{token, &token, opts[0], opts[1], opts, holder, &holder, r, errNew, errEnv} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
	}
	js, _ := json.Marshal(holder.Token)
	outputs = append(outputs, string(js), token.String(), token.GoString(), errNew.Error())
	js, _ = json.Marshal(struct{ T, D Secret }{token, disc})
	outputs = append(outputs, string(js))
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("config", "token", token, "ptr", &token, "holder", holder, "error", errNew)
	}
	outputs = append(outputs, logs.String())
	for _, leak := range secretsIn(outputs) {
		t.Errorf("output shows a token: %s", leak)
	}
	if !strings.Contains(logs.String(), "[redacted]") || token.String() != "[redacted]" {
		t.Errorf("masked outputs do not say [redacted]: %s / %s", token, logs.String())
	}
	if got := fmt.Sprint(Secret("")); got != "" {
		t.Errorf("empty Secret prints %q", got)
	}
	if !errors.Is(errNew, ErrNoToken) || !strings.Contains(errNew.Error(), "WithToken") {
		t.Errorf("New without a token: %v, want ErrNoToken naming WithToken", errNew)
	}
}

// syncBuffer is a bytes.Buffer for loggers used from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestTokensNeverLogged runs a registry through registrations, heartbeats,
// rejected tokens and deregistrations, over HTTP and WebSocket, with its
// records in text and JSON, and checks that no record nor answer shows a
// token.
func TestTokensNeverLogged(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := start(t, WithDiscoveryToken(testDiscToken), WithServiceToken(testTeamToken, "team"), WithLogger(logger),
		WithLimits(Limits{AuthTimeout: 50 * time.Millisecond}))
	id := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 80})
	var answers []string
	for _, req := range []struct{ method, path, token, body string }{
		{"PUT", "/v1/services/" + id + "/heartbeat", testToken, ""},
		{"POST", "/v1/services", testDiscToken, `{"serviceId":"api","protocol":"http","address":"h","port":1}`},
		{"POST", "/v1/services", testToken + "x", `{"serviceId":"api","protocol":"http","address":"h","port":1}`},
		{"POST", "/v1/services", testToken, `{"serviceId":"api","protocol":"http","address":"h","port":1,"token":"` + testToken + `"}`},
		{"GET", "/v1/discovery?serviceId=api&token=" + testDiscToken, testDiscToken, ""},
		{"GET", "/v1/discovery?serviceId=api", testDiscToken + "x", ""},
		{"PUT", "/v1/services/" + id + "/heartbeat", testTeamToken, ""},
		{"POST", "/v1/services", testTeamToken, `{"serviceId":"api","protocol":"http","address":"h","port":1}`},
		{"POST", "/v1/services", testTeamToken + "x", `{"serviceId":"team","protocol":"http","address":"h","port":1}`},
		{"POST", "/v1/services", testTeamToken, `{"serviceId":"team","protocol":"http","address":"169.254.169.254","port":1}`},
		{"DELETE", "/v1/services/" + id, testTeamToken, ""},
		{"DELETE", "/v1/services/" + id, testToken, ""},
		{"PUT", "/v1/services/" + id + "/heartbeat", testToken, ""},
	} {
		_, body := f.do(req.method, req.path, req.token, "application/json", req.body)
		answers = append(answers, body)
	}
	ms := f.dial("/ws/microservice", "")
	m := ms.call("service/register", map[string]any{"token": testDiscToken, "serviceId": "a", "protocol": "http", "address": "h", "port": 1})
	answers = append(answers, fmt.Sprintf("%+v %+v", m, m.Error))
	ds := f.dial("/ws/discovery", "")
	m = ds.call("discovery/lookup", map[string]any{"token": testDiscToken, "serviceId": "a", "protocol": "gopher"})
	answers = append(answers, fmt.Sprintf("%+v %+v", m, m.Error))
	ts := f.dial("/ws/microservice", testTeamToken)
	m = ts.call("service/register", map[string]any{"serviceId": "api", "protocol": "http", "address": "h", "port": 1})
	answers = append(answers, fmt.Sprintf("%+v %+v", m, m.Error))
	wrong := f.dial("/ws/microservice", "")
	m = wrong.call("service/register", map[string]any{"token": testTeamToken + "x", "serviceId": "team", "protocol": "http", "address": "h", "port": 1})
	answers = append(answers, fmt.Sprintf("%+v %+v", m, m.Error))
	if _, err := f.tryDial("/ws/microservice", testTeamToken+"x"); err != nil {
		answers = append(answers, err.Error())
	}
	idle := f.dial("/ws/microservice", "") // closed at the authentication deadline
	_, err := idle.read()
	answers = append(answers, fmt.Sprint(err))
	for _, want := range []string{`"msg":"refused a token"`, `"msg":"refused a request: forbidden"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no record %s: %s", want, logs.String())
		}
	}
	if !strings.Contains(logs.String(), `"msg":"registered"`) {
		t.Errorf("no registration was logged: %s", logs.String())
	}
	for _, leak := range secretsIn(append(answers, logs.String())) {
		t.Errorf("output shows a token: %s", leak)
	}
}

// TestDefaultLogger checks that without WithLogger, or with a nil logger,
// records go to slog.Default(): the registry is never silent.
func TestDefaultLogger(t *testing.T) {
	var logs syncBuffer
	prev := slog.Default()
	// Registrations are logged at debug level: one record per instance
	// event would flood any other.
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, opts := range [][]Option{{WithToken(testToken)}, {WithToken(testToken), WithLogger(nil)}} {
		r, err := New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := contextWithCancel()
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		<-r.Ready()
		if _, err := r.Register(Registration{ServiceID: "logged", Protocol: "http", Address: "h", Port: 1}); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(logs.String(), "msg=registered"); got != 2 {
		t.Errorf("slog.Default() got %d registration records, want 2:\n%s", got, logs.String())
	}
}

func TestTokenFromEnv(t *testing.T) {
	t.Setenv("SWITCHYARD_TEST_TOKEN", "s3cret")
	if tok, err := TokenFromEnv("SWITCHYARD_TEST_TOKEN"); err != nil || string(tok) != "s3cret" {
		t.Errorf("TokenFromEnv = %v, %v", tok, err)
	}
	t.Setenv("SWITCHYARD_TEST_TOKEN", "")
	if _, err := TokenFromEnv("SWITCHYARD_TEST_TOKEN"); !errors.Is(err, ErrNoToken) || !strings.Contains(err.Error(), "SWITCHYARD_TEST_TOKEN") {
		t.Errorf("empty variable: %v, want ErrNoToken naming it", err)
	}
}
