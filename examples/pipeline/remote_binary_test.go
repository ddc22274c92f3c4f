package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
)

// TestTwoPipelines runs the deployment of the design with the real
// binary: one pipeline as the controller, one as its gateway
// (-registry-url). A backend registered with the controller is routed by
// the gateway; the controller killed, the gateway keeps routing what it
// knew; the controller restarted (empty), the gateway answers 503 naming
// the service until the backend registers again, then routes again,
// without being restarted.
func TestTwoPipelines(t *testing.T) {
	bin := buildBinary(t)
	ctlAddr, gwAddr, gwControl := freeAddr(t), freeAddr(t), freeAddr(t)
	controllerArgs := []string{"-gateway-addr", freeAddr(t), "-control-addr", ctlAddr, "-admin-addr", freeAddr(t),
		"-demo=false", "-lease", "1s", "-log-level", "warn"}
	tokenEnv := []string{"SWITCHYARD_TOKEN=" + testToken}
	ctl := startProcess(t, "controller", bin, tokenEnv, controllerArgs...)
	ctl.waitLine("switchyard pipeline ready")
	controller := "http://" + ctlAddr

	gw := startProcess(t, "gateway", bin, tokenEnv, "-registry-url", controller, "-gateway-addr", gwAddr, "-control-addr", gwControl,
		"-admin-addr", freeAddr(t), "-demo=false", "-log-level", "warn")
	ready := gw.waitLine(`registry +remote controller`)
	if !strings.Contains(ready, controller) || !strings.Contains(ready, "instance ") {
		t.Errorf("banner line %q: want the controller and the gateway's instance", ready)
	}

	// A backend of "inventory" (a route of the embedded configuration)
	// registers with the controller over HTTP.
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"backend": "inventory-1", "path": r.URL.Path})
	}))
	defer backend.Close()
	host, port := hostPort(t, backend)
	reg := registry.Registration{ServiceID: "inventory", Protocol: "http", Address: host, Port: port}
	registerBackend := func() (stop func()) {
		r, err := client.NewRegistrar(controller, reg, client.WithToken(testToken),
			client.WithBackoff(client.Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		var once sync.Once
		stop = func() { once.Do(func() { cancel(); <-done }) }
		t.Cleanup(stop)
		return stop
	}
	stopBackend := registerBackend()

	routed := func(r httpReply) bool { return r.status == 200 && r.body["backend"] == "inventory-1" }
	r := waitGET(t, "http://"+gwAddr+"/inventory/items", "routed through the gateway", routed)
	if r.header.Get(HeaderSource) != "discovery" || r.body["path"] != "/items" {
		t.Errorf("GET /inventory/items: %v, source %s", r.body, r.header.Get(HeaderSource))
	}

	// The controller dies: the gateway keeps routing to what it knew.
	ctl.kill()
	if r := getOnce(t, "http://"+gwAddr+"/inventory/items"); !routed(r) {
		t.Errorf("with the controller down: %d %v, want the backend still routed", r.status, r.body)
	}

	// The backend is gone too when the controller comes back, empty: the
	// gateway follows the controller and answers 503 naming the service.
	stopBackend()
	ctl = startProcess(t, "controller (restarted)", bin, tokenEnv, controllerArgs...)
	ctl.waitLine("switchyard pipeline ready")
	r = waitGET(t, "http://"+gwAddr+"/inventory/items", "503 once the gateway follows the restarted controller", func(r httpReply) bool {
		return r.status == 503
	})
	if r.body["serviceId"] != "inventory" {
		t.Errorf("503 body %v, want it to name inventory", r.body)
	}
	// The gateway registered itself again with the new controller.
	waitGET(t, controller+"/v1/discovery?serviceId=gateway", "the gateway registered again", func(r httpReply) bool {
		nodes, _ := r.body["nodes"].([]any)
		return r.status == 200 && len(nodes) == 1
	})

	// The backend registers again: routed again, the gateway untouched.
	registerBackend()
	waitGET(t, "http://"+gwAddr+"/inventory/items", "routed again", routed)

	gw.stop(syscall.SIGTERM, 30*time.Second)
	ctl.stop(syscall.SIGTERM, 30*time.Second)
}

type httpReply struct {
	status int
	header http.Header
	body   map[string]any
}

func getOnce(t *testing.T, url string) httpReply {
	t.Helper()
	code, h, raw := fetch(t, url)
	r := httpReply{status: code, header: h}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// waitGET retries GET url until ok accepts the reply.
func waitGET(t *testing.T, url, what string, ok func(httpReply) bool) httpReply {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := getOnce(t, url)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: GET %s still answers %d %v after 60s", what, url, r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
