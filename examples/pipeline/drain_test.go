package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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
	defer backend.Close()
	dir := t.TempDir()
	route := "kind: Route\nmetadata:\n  name: slow\nspec:\n  pathPrefix: /slow\n  serviceId: slow\n"
	if err := os.WriteFile(filepath.Join(dir, "routes.yaml"), []byte(route), 0o644); err != nil {
		t.Fatal(err)
	}

	gw, ctl, adm := freeAddr(t), freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "-config", dir, "-gateway-addr", gw, "-control-addr", ctl, "-admin-addr", adm, "-log-level", "warn")
	cmd.Env = append(os.Environ(), "SWITCHYARD_TOKEN=drain-test-token")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := newSyncBuffer()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		exited <- cmd.Wait()
	}()
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	waitLine := func(what string) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case l := <-lines:
				if strings.Contains(l, what) {
					return
				}
			case err := <-exited:
				killed = true
				t.Fatalf("binary exited (%v) before printing %q\nstderr:\n%s", err, what, stderr.String())
			case <-deadline:
				t.Fatalf("no line %q after 60s\nstderr:\n%s", what, stderr.String())
			}
		}
	}
	waitLine("switchyard pipeline ready")

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
	waitLine("route resolved        slow /slow -> slow via discovery")

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
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var got result
	select {
	case got = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer 30s after SIGTERM\nstderr:\n%s", stderr.String())
	}
	if got.err != nil || got.code != 200 || got.body != "slow done" {
		t.Errorf("request in flight at SIGTERM: %d %q %v, want 200 \"slow done\"\nstderr:\n%s", got.code, got.body, got.err, stderr.String())
	}
	select {
	case err := <-exited:
		killed = true
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want code 0\nstderr:\n%s", err, stderr.String())
		}
		t.Logf("answered %v after SIGTERM; exited %v after it", got.at.Sub(signaled).Round(time.Millisecond), time.Since(signaled).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after SIGTERM\nstderr:\n%s", stderr.String())
	}
}
