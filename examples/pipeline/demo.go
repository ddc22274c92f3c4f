package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
)

// DemoBackend is a small HTTP service that registers itself with the
// registry through the public HTTP API and heartbeats, like any external
// client would: with a client.Registrar. It answers every request with its
// runtimeInstanceId, so round-robin through the gateway is visible.
type DemoBackend struct {
	// RunnerName is the runner name ("demo-petstore-1").
	RunnerName string
	// ServiceID is the service it registers as.
	ServiceID string
	// ControllerURL is the base URL of the registry to register with. When
	// empty, Control is that of the registry in this process.
	ControllerURL string
	// Control is the server of the in-process registry's API, whose
	// address the backend learns once it listens.
	Control interface {
		Ready() <-chan struct{}
		Addr() string
	}
	// Token is the registration token.
	Token registry.Secret
	// StartOnRegistryFailure: see client.WithStartOnRegistryFailure.
	StartOnRegistryFailure bool
	// Logger receives what the backend and its server log (default:
	// slog.Default()).
	Logger *slog.Logger

	once      sync.Once
	ready     chan struct{}
	registrar atomic.Pointer[client.Registrar]
}

func (d *DemoBackend) init() {
	d.once.Do(func() {
		d.ready = make(chan struct{})
		if d.Logger == nil {
			d.Logger = slog.Default()
		}
	})
}

// Name implements runner.Runner.
func (d *DemoBackend) Name() string { return d.RunnerName }

// Ready implements runner.Readier: closed once the backend is registered
// (or, starting on registry failure, once its registrar gave up waiting).
func (d *DemoBackend) Ready() <-chan struct{} {
	d.init()
	return d.ready
}

// ID returns the runtimeInstanceId the registry gave the backend, or "".
func (d *DemoBackend) ID() string {
	if r := d.registrar.Load(); r != nil {
		return r.RuntimeInstanceID()
	}
	return ""
}

// ServeHTTP answers with the instance's identity, the request path and
// the X-Forwarded-* headers it received, so that what the gateway does to
// a request is visible with curl.
func (d *DemoBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	forwarded := map[string]string{}
	for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v := r.Header.Get(h); v != "" {
			forwarded[h] = v
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"serviceId":         d.ServiceID,
		"runtimeInstanceId": d.ID(),
		"path":              r.URL.Path,
		"forwarded":         forwarded,
		"pets":              []string{"Rex", "Tom", "Bubbles"},
	})
}

// Run serves on a free loopback port and keeps the backend registered
// (a client.Registrar: register, heartbeat, register again when the
// registry forgot it, deregister when ctx is done).
func (d *DemoBackend) Run(ctx context.Context) error {
	d.init()
	srv := httpserver.New(d.RunnerName, "127.0.0.1:0", d, httpserver.WithLogger(d.Logger), httpserver.WithShutdownGrace(time.Second))
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return srv.Run(ctx) })
	eg.Go(func() error {
		// Registering takes the backend's port and the registry's
		// address: both are known once their servers listen.
		controller := d.ControllerURL
		waits := []<-chan struct{}{srv.Ready()}
		if controller == "" {
			waits = append(waits, d.Control.Ready())
		}
		for _, listening := range waits {
			select {
			case <-listening:
			case <-ctx.Done():
				return nil
			}
		}
		if controller == "" {
			controller = "http://" + d.Control.Addr()
		}
		_, port, _ := net.SplitHostPort(srv.Addr())
		n, _ := strconv.Atoi(port)
		r, err := client.NewRegistrar(controller, registry.Registration{
			ServiceID: d.ServiceID, Protocol: "http", Address: "127.0.0.1", Port: n,
			Version: "demo", Tags: map[string]string{"demo": "true"},
		}, client.WithName(d.RunnerName), client.WithToken(d.Token), client.WithLogger(d.Logger),
			client.WithStartOnRegistryFailure(d.StartOnRegistryFailure))
		if err != nil {
			return err
		}
		d.registrar.Store(r)
		eg.Go(func() error {
			select {
			case <-r.Ready():
				close(d.ready)
			case <-ctx.Done():
			}
			return nil
		})
		return r.Run(ctx)
	})
	return eg.Wait()
}
