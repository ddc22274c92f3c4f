package main

import (
	"net"
	"net/http"
	"regexp"
	"strings"
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
	p := startProcess(t, "binary", bin, []string{"SWITCHYARD_TOKEN=binary-test-token"},
		"-gateway-addr", gw, "-control-addr", ctl, "-admin-addr", adm, "-lease", "1s", "-log-level", "warn")

	// The banner says it is ready and names the addresses; an event line
	// then says that the demo route has both backends (readiness means
	// both registered, not that the route table has caught up).
	banner, exited := p.await(`route resolved +petstore /petstore -> petstore via discovery: http://\S+, http://\S+$`, 60*time.Second)
	if exited {
		if strings.Contains(p.stderr.String(), "address already in use") {
			t.Logf("binary could not bind (%v); retrying with other ports", p.err)
			return false
		}
		t.Fatalf("binary exited before routing: %v\noutput: %q\nstderr:\n%s", p.err, banner, p.stderr.String())
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

	if took := p.stop(sig, 10*time.Second); took > 5*time.Second {
		t.Errorf("took %v to exit after %v, want at most 5s", took, sig)
	}
	return true
}
