package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// binary builds the pipeline binary once for the tests of this file.
var binary = sync.OnceValues(func() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go is not on PATH: cannot build the binary")
	}
	dir, err := os.MkdirTemp("", "pipeline-binary")
	if err != nil {
		return "", err
	}
	binaryDir = dir
	bin := filepath.Join(dir, "pipeline")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// binaryDir is where binary built it; TestMain removes it.
var binaryDir string

// buildBinary returns the binary, or skips the test when it cannot be
// built here.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, err := binary()
	if err != nil {
		if strings.Contains(err.Error(), "not on PATH") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return bin
}

// TestBinary builds the real binary, runs it with its defaults but free
// ports, sends requests, and stops it with SIGTERM, and once more with
// SIGINT (Ctrl-C).
func TestBinary(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			// A port found free can be taken by another test before the
			// binary binds it; try again with new ports then.
			for attempt := 1; !runBinary(t, bin, sig); attempt++ {
				if attempt == 5 {
					t.Fatal("no free ports after 5 attempts")
				}
			}
		})
	}
}

// runBinary runs bin, checks that it routes to its demo backends, then
// stops it with sig and checks that it exits with code 0 within 5 s. It
// returns false, failing nothing, when the binary could not bind a port.
func runBinary(t *testing.T, bin string, sig syscall.Signal) bool {
	gw, ctl, adm := freeAddr(t), freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "-gateway-addr", gw, "-control-addr", ctl, "-admin-addr", adm, "-lease", "1s", "-log-level", "warn")
	cmd.Env = append(os.Environ(), "SWITCHYARD_TOKEN=binary-test-token")
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
			default: // nobody needs more lines than the channel holds
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// The banner says it is ready and names the addresses; an event line
	// then says that the demo route has both backends (readiness means
	// both registered, not that the route table has caught up).
	bothRouted := regexp.MustCompile(`route resolved +petstore /petstore -> petstore via discovery: http://\S+, http://\S+$`)
	deadline := time.After(60 * time.Second)
	var banner []string
	for routed := false; !routed; {
		select {
		case l, ok := <-lines:
			if !ok {
				stopped = true
				err := <-exited
				if strings.Contains(stderr.String(), "address already in use") {
					t.Logf("binary could not bind (%v); retrying with other ports", err)
					return false
				}
				t.Fatalf("binary exited before routing: %v\noutput: %q\nstderr:\n%s", err, banner, stderr.String())
			}
			banner = append(banner, l)
			routed = bothRouted.MatchString(l)
		case <-deadline:
			t.Fatalf("demo route not resolved to two backends after 60s; output so far: %q\nstderr:\n%s", banner, stderr.String())
		}
	}
	for _, want := range []string{"http://" + gw, "http://" + ctl, "http://" + adm} {
		if !strings.Contains(strings.Join(banner, "\n"), want) {
			t.Errorf("banner %q lacks %s", banner, want)
		}
	}

	get := func(url string) (int, http.Header, string) {
		t.Helper()
		code, h, body := fetch(t, url)
		return code, h, string(body)
	}
	idRE := regexp.MustCompile(`"runtimeInstanceId": "([0-9a-f]+)"`)
	seen := map[string]bool{}
	for i := range 4 {
		code, h, body := get("http://" + gw + "/petstore/pets")
		m := idRE.FindStringSubmatch(body)
		if code != 200 || m == nil || h.Get(HeaderRoute) != "petstore" {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
		seen[m[1]] = true
	}
	if len(seen) != 2 {
		t.Errorf("4 requests reached %d demo backends, want 2", len(seen))
	}
	if code, _, body := get("http://" + gw + "/nowhere"); code != 404 || !strings.Contains(body, `"no route"`) {
		t.Errorf("GET /nowhere: %d %s", code, body)
	}
	if code, _, body := get("http://" + ctl + "/readyz"); code != 200 {
		t.Errorf("/readyz: %d %s", code, body)
	}
	if code, _, body := get("http://" + adm + "/debug/maps?limit=0"); code != 200 {
		t.Errorf("admin /debug/maps: %d %s", code, body)
	}

	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("exit after %v: %v\nstderr:\n%s", sig, err, stderr.String())
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v to exit after %v, want at most 5s", d, sig)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10s after %v\nstderr:\n%s", sig, stderr.String())
	}
	return true
}
