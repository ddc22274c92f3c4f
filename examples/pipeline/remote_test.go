package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const remoteRoutes = `
kind: Route
metadata: {name: extra}
spec: {pathPrefix: /extra, serviceId: extra}
---
kind: Route
metadata: {name: petstore}
spec: {pathPrefix: /petstore, serviceId: petstore, stripPrefix: true}
`

// startGatewayOf runs a pipeline that uses the controller at url, with the
// routes of remoteRoutes, and waits until it is ready.
func startGatewayOf(t testing.TB, url string, configure func(*config)) *e2e {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "routes.yaml"), []byte(remoteRoutes), 0o644); err != nil {
		t.Fatal(err)
	}
	e := launchPipeline(t, func(cfg *config) {
		cfg.ConfigDir, cfg.Demo, cfg.RegistryURL, cfg.StartOnRegistryFailure = dir, false, url, true
		if configure != nil {
			configure(cfg)
		}
	}, nil)
	e.waitReady()
	// The banner follows readiness: the announce runner prints it once
	// the group is ready.
	eventually(t, "banner printed", func() bool { return strings.Contains(e.out.String(), "\ntry:\n") })
	return e
}

// TestRemoteController runs two pipelines in this process: a controller
// (with its demo backends) and a gateway of it (-registry-url).
func TestRemoteController(t *testing.T) {
	ctrl := startPipeline(t, map[string]string{"routes.yaml": remoteRoutes})
	gw := startGatewayOf(t, ctrl.control, nil)

	// The gateway registered itself with the controller, and runs no
	// registry of its own.
	id := gw.p.remote.RuntimeInstanceID()
	inst, ok := ctrl.p.registry.Instances().Load(id)
	if !ok || inst.ServiceID != gatewayServiceID || fmt.Sprintf("%s:%d", inst.Address, inst.Port) != gw.p.gateway.Addr() || !inst.Connected {
		t.Errorf("the gateway's instance at the controller: %+v, want %s at %s", inst, gatewayServiceID, gw.p.gateway.Addr())
	}
	if r := gw.do("GET", gw.control+"/v1/discovery?serviceId=extra", "", testToken, nil); r.status != 404 {
		t.Errorf("the gateway's control address serves the registry API: %d", r.status)
	}
	for _, want := range []string{"remote controller " + ctrl.control, "instance " + id, "curl -N '" + ctrl.control + "/v1/discovery/watch"} {
		if !strings.Contains(gw.out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, gw.out.String())
		}
	}

	// The controller's demo backends are routed by the gateway.
	r := gw.waitFor("petstore routed through the remote controller", "/petstore/pets", func(r reply) bool { return r.status == 200 })
	if r.body["serviceId"] != "petstore" || r.header.Get(HeaderSource) != "discovery" {
		t.Errorf("GET /petstore/pets: %s, source %s", r.raw, r.header.Get(HeaderSource))
	}

	// A backend registered with the controller is routed by the gateway;
	// deregistered, it is not.
	if r := gw.get("/extra/x"); r.status != 503 || r.body["serviceId"] != "extra" {
		t.Fatalf("before registration: %d %s, want 503 naming extra", r.status, r.raw)
	}
	in := ctrl.register("extra", "extra-1")
	r = gw.waitFor("extra routed", "/extra/x", func(r reply) bool { return r.status == 200 })
	if r.body["backend"] != "extra-1" {
		t.Errorf("GET /extra/x: %s, want extra-1", r.raw)
	}
	if r := ctrl.do("DELETE", ctrl.control+"/v1/services/"+in.id, "", testToken, nil); r.status != 204 {
		t.Fatalf("deregister: %d %s", r.status, r.raw)
	}
	r = gw.waitFor("extra unrouted", "/extra/x", func(r reply) bool { return r.status != 200 })
	if r.status != 503 || r.body["serviceId"] != "extra" {
		t.Errorf("after deregistration: %d %s, want 503 naming extra", r.status, r.raw)
	}

	// Its maps: the mirror, no instances.
	maps := gw.do("GET", gw.admin+"/debug/maps", "", "", nil)
	if !strings.Contains(maps.raw, `"discovery"`) || strings.Contains(maps.raw, `"instances"`) {
		t.Errorf("/debug/maps of the gateway: want discovery (the mirror) and no instances")
	}
}

func TestRemoteControllerUnreachable(t *testing.T) {
	t.Run("start anyway", func(t *testing.T) {
		addr := "http://" + freeAddr(t)
		gw := startGatewayOf(t, addr, func(cfg *config) { cfg.registryWait = 100 * time.Millisecond })
		if r := gw.get("/extra/x"); r.status != 503 || r.body["serviceId"] != "extra" {
			t.Errorf("GET /extra/x without a controller: %d %s, want 503 naming extra", r.status, r.raw)
		}
		if !strings.Contains(gw.out.String(), "not yet: the controller cannot be reached") {
			t.Errorf("banner does not say the controller is unreachable:\n%s", gw.out.String())
		}
	})
	t.Run("refuse to start", func(t *testing.T) {
		addr := "http://" + freeAddr(t)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "routes.yaml"), []byte(remoteRoutes), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := newPipeline(config{GatewayAddr: "127.0.0.1:0", ControlAddr: "127.0.0.1:0", ConfigDir: dir, Lease: time.Second,
			Wait: 100 * time.Millisecond, Token: testToken, RegistryURL: addr, registryWait: 100 * time.Millisecond}, newSyncBuffer())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = p.run(ctx)
		if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("run = %v, want an error naming %s", err, addr)
		}
	})
}
