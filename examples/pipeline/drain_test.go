package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinaryDrainsOnSIGTERM stops the real binary with SIGTERM while a
// request that takes 5 s is in flight through its gateway: the request
// completes with 200, and the process exits with code 0 once it has.
func TestBinaryDrainsOnSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	const slow = 5 * time.Second
	arrived := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		time.Sleep(slow) // the slow request under test
		io.WriteString(w, "slow done")
	}))
	t.Cleanup(backend.Close) // after the binary is gone: cleanups run last in, first out
	dir := t.TempDir()
	route := "kind: Route\nmetadata:\n  name: slow\nspec:\n  pathPrefix: /slow\n  serviceId: slow\n"
	if err := os.WriteFile(filepath.Join(dir, "routes.yaml"), []byte(route), 0o644); err != nil {
		t.Fatal(err)
	}

	gw, ctl, adm := freeAddr(t), freeAddr(t), freeAddr(t)
	p := startProcess(t, "binary", bin, []string{"SWITCHYARD_TOKEN=drain-test-token"},
		"-config", dir, "-gateway-addr", gw, "-control-addr", ctl, "-admin-addr", adm, "-log-level", "warn")
	p.waitLine("switchyard pipeline ready")

	port := strings.TrimPrefix(backend.URL, "http://127.0.0.1:")
	req, _ := http.NewRequest("POST", "http://"+ctl+"/v1/services",
		strings.NewReader(`{"serviceId":"slow","protocol":"http","address":"127.0.0.1","port":`+port+`}`))
	req.Header.Set("Authorization", "Bearer drain-test-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register the slow backend: %d", resp.StatusCode)
	}
	p.waitLine("route resolved        slow /slow -> slow via discovery")

	type result struct {
		code int
		body string
		err  error
		at   time.Time
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := testClient.Get("http://" + gw + "/slow/x")
		if err != nil {
			answered <- result{err: err, at: time.Now()}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- result{code: resp.StatusCode, body: string(b), err: err, at: time.Now()}
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the request did not reach the backend")
	}
	signaled := time.Now()
	p.signal(syscall.SIGTERM)
	var got result
	select {
	case got = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer 30s after SIGTERM\nstderr:\n%s", p.stderr.String())
	}
	if got.err != nil || got.code != 200 || got.body != "slow done" {
		t.Errorf("request in flight at SIGTERM: %d %q %v, want 200 \"slow done\"\nstderr:\n%s", got.code, got.body, got.err, p.stderr.String())
	}
	if err := p.waitExit(30 * time.Second); err != nil {
		t.Errorf("exit after SIGTERM: %v, want code 0\nstderr:\n%s", err, p.stderr.String())
	}
	t.Logf("answered %v after SIGTERM; exited %v after it", got.at.Sub(signaled).Round(time.Millisecond), time.Since(signaled).Round(time.Millisecond))
}
