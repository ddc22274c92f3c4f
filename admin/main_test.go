package admin_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitTimeout is generous: CI runs everything with -race on two busy cores.
const waitTimeout = 20 * time.Second

var client = &http.Client{Timeout: waitTimeout}

// serve serves h on a loopback listener until the test ends, and returns
// its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		client.CloseIdleConnections()
		srv.Close()
	})
	return srv.URL
}

// get GETs url and returns the status, the headers and the body.
func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body
}

// getJSON GETs url, checks the status and decodes the JSON body into a T.
func getJSON[T any](t *testing.T, url string, wantCode int) T {
	t.Helper()
	code, h, body := get(t, url)
	if code != wantCode {
		t.Fatalf("GET %s = %d %s, want %d", url, code, body, wantCode)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q, want application/json", url, ct)
	}
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %s: %v", url, body, err)
	}
	return v
}

// discard is the logger of runner groups in tests, whose records would
// only be noise.
var discard = slog.New(slog.DiscardHandler)
