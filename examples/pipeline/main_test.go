package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/runner"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if binaryDir != "" {
			os.RemoveAll(binaryDir)
		}
	}))
}

// startRunner runs r until the test ends, checking then that it stopped
// without error, and waits until r is ready.
func startRunner(t testing.TB, r interface {
	runner.Runner
	runner.Readier
}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: Run: %v", r.Name(), err)
		}
	})
	select {
	case <-r.Ready():
	case err := <-done:
		t.Fatalf("%s stopped before it was ready: %v", r.Name(), err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not ready after 30s", r.Name())
	}
}

// testClient is the tests' HTTP client: its timeout turns a hung server
// into a failure rather than a stuck test.
var testClient = &http.Client{Timeout: 30 * time.Second}

// fetch GETs url and returns the status, the headers and the body.
func fetch(t testing.TB, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := testClient.Get(url)
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

// syncBuffer collects what the pipeline writes while a test reads it.
type syncBuffer struct {
	lockedWriter
	b bytes.Buffer
}

func newSyncBuffer() *syncBuffer {
	s := &syncBuffer{}
	s.w = &s.b
	return s
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// targets returns the targets at urls, not discovered.
func targets(urls ...string) []discovery.Target {
	t := make([]discovery.Target, len(urls))
	for i, u := range urls {
		t[i] = discovery.Target{URL: u}
	}
	return t
}

// discoveredTargets returns the targets at urls, discovered as instances whose
// runtimeInstanceId is their host (as the tests' nodes are).
func discoveredTargets(urls ...string) []discovery.Target {
	t := targets(urls...)
	for i := range t {
		u, _ := url.Parse(t[i].URL)
		t[i].Instance = u.Hostname()
	}
	return t
}
