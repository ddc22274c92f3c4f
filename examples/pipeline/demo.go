package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/switchyard-go/switchyard/runner"
)

// DemoBackend is a small HTTP service that registers itself with the
// registry through the public HTTP API and heartbeats like any external
// client would. It answers every request with its runtimeInstanceId, so
// round-robin through the gateway is visible.
type DemoBackend struct {
	// RunnerName is the runner name ("demo-petstore-1").
	RunnerName string
	// ServiceID is the service it registers as.
	ServiceID string
	// Control is the server of the registry's API, which the backend
	// registers with once it knows its address.
	Control interface {
		Ready() <-chan struct{}
		Addr() string
	}
	// Token is the registration token.
	Token registry.Secret
	// Logger receives what the backend and its server log (default:
	// slog.Default()).
	Logger *slog.Logger

	once  sync.Once
	log   *slog.Logger
	ready chan struct{}
	id    atomic.Pointer[string]
}

func (d *DemoBackend) init() {
	d.once.Do(func() {
		d.ready = make(chan struct{})
		if d.Logger == nil {
			d.Logger = slog.Default()
		}
		d.log = d.Logger.With("runner", d.RunnerName)
	})
}

// Name implements runner.Runner.
func (d *DemoBackend) Name() string { return d.RunnerName }

// Ready implements runner.Readier: closed once the backend is registered.
func (d *DemoBackend) Ready() <-chan struct{} {
	d.init()
	return d.ready
}

// ID returns the runtimeInstanceId the registry gave the backend, or "".
func (d *DemoBackend) ID() string {
	if p := d.id.Load(); p != nil {
		return *p
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

// Run serves on a free loopback port, registers, heartbeats, and
// deregisters when ctx is done.
func (d *DemoBackend) Run(ctx context.Context) error {
	d.init()
	srv := httpserver.New(d.RunnerName, "127.0.0.1:0", d, httpserver.WithLogger(d.Logger), httpserver.WithShutdownGrace(time.Second))
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return srv.Run(ctx) })
	eg.Go(func() error {
		// Registering takes the backend's port and the registry's
		// address: both are known once their servers listen.
		for _, listening := range []<-chan struct{}{srv.Ready(), d.Control.Ready()} {
			select {
			case <-listening:
			case <-ctx.Done():
				return nil
			}
		}
		_, port, _ := net.SplitHostPort(srv.Addr())
		n, _ := strconv.Atoi(port)
		d.keepRegistered(ctx, n)
		return nil
	})
	return eg.Wait()
}

// keepRegistered registers, then heartbeats at a third of the lease, and
// registers again if the registry forgot the instance. Failures are
// retried with backoff and reported in the runner's status.
func (d *DemoBackend) keepRegistered(ctx context.Context, port int) {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	backoff := 50 * time.Millisecond
	var id string
	var every time.Duration
	for ctx.Err() == nil {
		var err error
		if id == "" {
			id, every, err = d.register(ctx, client, port)
			if err == nil {
				d.id.Store(&id)
				select {
				case <-d.ready:
				default:
					close(d.ready)
				}
			}
		} else if err = d.heartbeat(ctx, client, id); errors.Is(err, errForgotten) {
			id = "" // register again at once
			continue
		}
		wait := every
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			runner.HealthOf(ctx).Report("registration", err)
			wait, backoff = backoff, min(backoff*2, 2*time.Second)
		} else {
			runner.HealthOf(ctx).Report("registration", nil)
			backoff = 50 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if id != "" {
		// The deregistration outlives ctx, briefly: it is the goodbye.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = d.call(dctx, client, http.MethodDelete, "/v1/services/"+id, nil, http.StatusNoContent, nil)
	}
}

var errForgotten = errors.New("registry forgot the instance")

func (d *DemoBackend) register(ctx context.Context, client *http.Client, port int) (string, time.Duration, error) {
	reg := registry.Registration{
		ServiceID: d.ServiceID,
		Protocol:  "http",
		Address:   "127.0.0.1",
		Port:      port,
		Version:   "demo",
		Tags:      map[string]string{"demo": "true"},
	}
	var resp registry.RegisterResponse
	if err := d.call(ctx, client, http.MethodPost, "/v1/services", reg, http.StatusCreated, &resp); err != nil {
		return "", 0, err
	}
	every := max(time.Duration(resp.LeaseSeconds*float64(time.Second))/3, 10*time.Millisecond)
	d.log.Debug("demo backend registered", "instance", resp.RuntimeInstanceID, "port", port)
	return resp.RuntimeInstanceID, every, nil
}

func (d *DemoBackend) heartbeat(ctx context.Context, client *http.Client, id string) error {
	err := d.call(ctx, client, http.MethodPut, "/v1/services/"+id+"/heartbeat", nil, http.StatusNoContent, nil)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusNotFound {
		return fmt.Errorf("heartbeat %s: %w", id, errForgotten)
	}
	return err
}

type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// call makes one request to the registry API with the bearer token.
func (d *DemoBackend) call(ctx context.Context, client *http.Client, method, path string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+d.Control.Addr()+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+string(d.Token))
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != want {
		return &statusError{method: method, path: path, status: resp.StatusCode, body: string(bytes.TrimSpace(raw))}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode %s: %w", method, path, strconv.Quote(string(raw)), err)
		}
	}
	return nil
}
