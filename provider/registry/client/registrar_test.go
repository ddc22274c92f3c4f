package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/watchable"
)

var backend = registry.Registration{ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8081, Version: "1"}

func TestRegistrarHeartbeatsAndDeregisters(t *testing.T) {
	ctrl := startController(t, "127.0.0.1:0", registry.WithLease(300*time.Millisecond)) // heartbeats every 100ms
	r, err := client.NewRegistrar(ctrl.url(), backend, client.WithToken(testToken), quiet(t), fast)
	if err != nil {
		t.Fatal(err)
	}
	stop := run(t, r)
	waitReady(t, "registrar", r.Ready())
	id := r.RuntimeInstanceID()
	inst, ok := ctrl.registry().Instances().Load(id)
	if !ok || !inst.Connected {
		t.Fatalf("instance %s: %+v", id, inst)
	}
	// Heartbeats move lastSeenAt (silently: Load shows it).
	first := inst.LastSeenAt
	eventually(t, "a heartbeat", func() bool {
		inst, _ := ctrl.registry().Instances().Load(id)
		return inst.LastSeenAt.After(first)
	})
	snap, err := r.Lookup(context.Background(), registry.DiscoveryKey{ServiceID: "pets"})
	if err != nil || len(snap.Nodes) != 1 || snap.Nodes[0].RuntimeInstanceID != id {
		t.Errorf("Lookup = %+v, %v", snap, err)
	}
	stop()
	if _, ok := ctrl.registry().Instances().Load(id); ok {
		t.Error("still registered after the registrar stopped: it deregisters")
	}
}

// TestRegistrarRegistersAgain restarts the controller under a registrar:
// its next heartbeat is answered 404, and it registers again with the id
// it had. Once with the controller's own answer, once through a proxy
// that strips the body of 404s (an older controller says as little).
func TestRegistrarRegistersAgain(t *testing.T) {
	for _, bare := range []bool{false, true} {
		name := "404 from the controller"
		if bare {
			name = "bare 404"
		}
		t.Run(name, func(t *testing.T) {
			ctrl := startController(t, "127.0.0.1:0", registry.WithLease(300*time.Millisecond))
			target := ctrl.url()
			var stripped atomic.Int64
			if bare {
				proxy := httptest.NewServer(strip404(target, &stripped))
				t.Cleanup(proxy.Close)
				target = proxy.URL
			}
			r, err := client.NewRegistrar(target, backend, client.WithToken(testToken), quiet(t), fast)
			if err != nil {
				t.Fatal(err)
			}
			run(t, r)
			waitReady(t, "registrar", r.Ready())
			id := r.RuntimeInstanceID()

			ctrl.restart()
			waitState(t, ctrl.registry().Instances(), "registered again with the restarted controller", func(st watchable.State[string, *registry.Instance]) bool {
				inst, ok := st.Get(id)
				return ok && inst.Connected
			})
			if got := r.RuntimeInstanceID(); got != id {
				t.Errorf("id after registering again %s, want %s", got, id)
			}
			if bare && stripped.Load() == 0 {
				t.Error("the proxy stripped no 404: the test did not test a bare one")
			}
		})
	}
}

// upstream is the proxy's client: no keep-alive, so that no connection
// outlives a test.
var upstream = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// strip404 forwards requests to target and answers its 404s with no body.
func strip404(target string, stripped *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out, err := http.NewRequestWithContext(req.Context(), req.Method, target+req.URL.RequestURI(), req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = req.Header.Clone()
		resp, err := upstream.Do(out)
		if err != nil {
			http.Error(w, "upstream down", http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			stripped.Add(1)
			w.WriteHeader(http.StatusNotFound)
			return
		}
		for k, v := range resp.Header {
			if !strings.EqualFold(k, "Content-Length") {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
}
