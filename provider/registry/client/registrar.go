package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/runner"
)

var (
	_ runner.Runner  = (*Registrar)(nil)
	_ runner.Readier = (*Registrar)(nil)
)

// ErrNotRegistered is what a heartbeat fails with when the controller does
// not know the instance (its lease ran out, or the controller restarted):
// the Registrar then registers again at once.
var ErrNotRegistered = errors.New("registry client: the controller does not know the instance")

// Registrar keeps one instance registered with a controller over its HTTP
// API, for programs that cannot hold a WebSocket: it registers, heartbeats
// at a third of the lease, registers again (proposing the
// runtimeInstanceId it had) whenever a heartbeat is answered 404, retries
// with backoff, and deregisters when it stops. It is a runner.Runner and a
// runner.Readier.
//
// All methods are safe for concurrent use.
type Registrar struct {
	cfg       config
	ctrl      endpoint
	reg       registry.Registration
	transport *http.Transport
	http      *http.Client
	log       *slog.Logger
	track     *tracker

	ready          chan struct{}
	markReady      func()
	registered     chan struct{}
	markRegistered func()

	mu      sync.Mutex
	running bool
	id      string
}

// NewRegistrar returns a Registrar of reg with the controller whose base
// URL is controller (as for New). It fails for a bad URL, and for options
// that only a Client takes (WithServices, WithKeepAlive,
// WithRegistration...), naming them. reg.RuntimeInstanceID, when set, is
// proposed at the first registration.
func NewRegistrar(controller string, reg registry.Registration, opts ...Option) (*Registrar, error) {
	ctrl, err := parseController(controller)
	if err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	if cfg.registerOpt != "" {
		cfg.socketOnly = append(cfg.socketOnly, cfg.registerOpt)
	}
	if len(cfg.socketOnly) > 0 {
		return nil, fmt.Errorf("registry client: NewRegistrar does not take %v: only a Client (New) does", cfg.socketOnly)
	}
	track, err := newTracker(cfg, ctrl)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: cfg.tls, Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	r := &Registrar{
		cfg: cfg, ctrl: ctrl, reg: reg, transport: tr,
		http:  &http.Client{Transport: tr, Timeout: cfg.timeout},
		log:   cfg.logger.With("runner", cfg.name, "controller", ctrl.String()),
		track: track, ready: make(chan struct{}), registered: make(chan struct{}), id: reg.RuntimeInstanceID,
	}
	r.markReady = sync.OnceFunc(func() { close(r.ready) })
	r.markRegistered = sync.OnceFunc(func() { close(r.registered) })
	return r, nil
}

// Name returns the runner name.
func (r *Registrar) Name() string { return r.cfg.name }

// Ready is closed once the instance is registered; or, with
// WithStartOnRegistryFailure(true), the default, after the initial wait
// whatever happened.
func (r *Registrar) Ready() <-chan struct{} { return r.ready }

// RuntimeInstanceID returns the id the controller gave the instance last,
// or "" before the first registration.
func (r *Registrar) RuntimeInstanceID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// Status returns the state of the registration.
func (r *Registrar) Status() Status { return r.track.status() }

// Run registers and heartbeats until ctx is done, then deregisters (waiting
// at most a second for the answer) and returns nil. With
// WithStartOnRegistryFailure(false), it returns an error naming the
// controller when the first registration has not succeeded within the
// initial wait. Failures are reported through runner.HealthOf(ctx) under
// the key "controller". Run may be called once.
func (r *Registrar) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.running {
		r.mu.Unlock()
		return fmt.Errorf("registry client %s: Run called twice", r.cfg.name)
	}
	r.running = true
	r.mu.Unlock()
	defer r.transport.CloseIdleConnections()

	var wg sync.WaitGroup
	defer wg.Wait()
	readyCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting() // before wg.Wait
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(r.cfg.initialWait)
		defer t.Stop()
		select {
		case <-r.registered:
			r.markReady()
		case <-t.C:
			if r.cfg.startOnFailure {
				r.log.Warn("registry client: starting unregistered after the initial wait; retrying in the background",
					"wait", r.cfg.initialWait, "lastError", r.track.status().LastError)
				r.markReady()
				return
			}
			select {
			case <-r.registered:
				r.markReady()
			case <-readyCtx.Done():
			}
		case <-readyCtx.Done():
		}
	}()

	firstDeadline := time.Now().Add(r.cfg.initialWait)
	failures := 0
	registered := false // the current id is known to the controller
	var every time.Duration
	var telling error // the latest failure not due to the initial wait's deadline
	for ctx.Err() == nil {
		var err error
		if !registered {
			rctx, cancel := ctx, context.CancelFunc(func() {})
			if !r.cfg.startOnFailure && !r.isRegistered() {
				rctx, cancel = context.WithDeadline(ctx, firstDeadline.Add(time.Millisecond))
			}
			every, err = r.register(rctx)
			cancel()
			registered = err == nil
		} else if err = r.heartbeat(ctx); errors.Is(err, ErrNotRegistered) {
			r.log.Info("registry client: the controller forgot the instance; registering again", "instance", r.RuntimeInstanceID(), "err", err)
			r.track.down(err)
			registered = false
			continue
		}
		if ctx.Err() != nil {
			break
		}
		wait := every
		if err != nil {
			failures++
			r.track.down(err)
			runner.HealthOf(ctx).Report("controller", fmt.Errorf("controller %s: %w", r.ctrl, err))
			if failures == 1 {
				r.log.Warn("registry client: the controller cannot be reached; retrying", "err", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) || telling == nil {
				telling = err
			}
			isRegistered := r.isRegistered()
			if !r.cfg.startOnFailure && !isRegistered && !time.Now().Before(firstDeadline) {
				return fmt.Errorf("registry client %s: no registration with the controller %s within %v: %w", r.cfg.name, r.ctrl, r.cfg.initialWait, telling)
			}
			wait = r.cfg.backoff.wait(failures)
			if !r.cfg.startOnFailure && !isRegistered {
				wait = min(wait, max(time.Until(firstDeadline), 0))
			}
		} else {
			if failures > 0 {
				r.log.Warn("registry client: the controller answers again", "instance", r.RuntimeInstanceID(), "failures", failures)
			}
			if failures > 0 || !r.track.status().Connected {
				runner.HealthOf(ctx).Report("controller", nil)
			}
			failures = 0
			r.track.up(r.RuntimeInstanceID())
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if registered {
		// The goodbye outlives ctx, briefly.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_, _ = r.do(dctx, http.MethodDelete, "/v1/services/"+url.PathEscape(r.RuntimeInstanceID()), nil, http.StatusNoContent, nil)
	}
	r.track.down(nil)
	return nil
}

func (r *Registrar) isRegistered() bool {
	select {
	case <-r.registered:
		return true
	default:
		return false
	}
}

// register registers the instance, proposing the id it had, and returns
// how often to heartbeat.
func (r *Registrar) register(ctx context.Context) (time.Duration, error) {
	reg := r.reg
	reg.RuntimeInstanceID = r.RuntimeInstanceID()
	var res registry.RegisterResponse
	if _, err := r.do(ctx, http.MethodPost, "/v1/services", reg, http.StatusCreated, &res); err != nil {
		return 0, err
	}
	if res.RuntimeInstanceID == "" {
		return 0, errors.New("POST /v1/services: the controller gave no runtimeInstanceId")
	}
	r.mu.Lock()
	prev := r.id
	r.id = res.RuntimeInstanceID
	r.mu.Unlock()
	if prev != "" && prev != res.RuntimeInstanceID {
		r.log.Warn("registry client: registered again under a new runtimeInstanceId", "previous", prev, "instance", res.RuntimeInstanceID)
	}
	r.markRegistered()
	r.log.Debug("registry client: registered", "instance", res.RuntimeInstanceID, "leaseSeconds", res.LeaseSeconds)
	return max(time.Duration(res.LeaseSeconds*float64(time.Second))/3, 10*time.Millisecond), nil
}

// heartbeat renews the lease; it fails with ErrNotRegistered when the
// controller answers 404, whether its body says not_registered or
// nothing (a controller older than that code, a proxy).
func (r *Registrar) heartbeat(ctx context.Context) error {
	id := r.RuntimeInstanceID()
	status, err := r.do(ctx, http.MethodPut, "/v1/services/"+url.PathEscape(id)+"/heartbeat", nil, http.StatusNoContent, nil)
	if status == http.StatusNotFound {
		return fmt.Errorf("heartbeat of %s: %w (%v)", id, ErrNotRegistered, err)
	}
	return err
}

// Lookup asks the controller for the snapshot of key over HTTP (see
// registry.Registry.Lookup).
func (r *Registrar) Lookup(ctx context.Context, key registry.DiscoveryKey) (*registry.DiscoverySnapshot, error) {
	q := url.Values{"serviceId": {key.ServiceID}}
	if key.EnvTag != "" {
		q.Set("envTag", key.EnvTag)
	}
	if key.Protocol != "" {
		q.Set("protocol", key.Protocol)
	}
	var snap registry.DiscoverySnapshot
	if _, err := r.do(ctx, http.MethodGet, "/v1/discovery?"+q.Encode(), nil, http.StatusOK, &snap); err != nil {
		return nil, fmt.Errorf("lookup %q at %s: %w", key.ServiceID, r.ctrl, err)
	}
	return &snap, nil
}

// StatusError is an answer of the controller other than the one expected.
type StatusError struct {
	Method, Path string
	Status       int
	// Message, Field and Code are those of the controller's JSON error
	// body, when it had one.
	Message, Field, Code string
}

// Error names the request and what the controller said.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s %s: the controller answered %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

// do sends one request with the token and decodes the answer into out.
// It returns the status (0 when there was no answer).
func (r *Registrar) do(ctx context.Context, method, path string, in any, want int, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.ctrl.http(path), body)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+string(r.cfg.token))
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, pathOnly(path), unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, r.cfg.readLimit))
	if resp.StatusCode != want {
		se := &StatusError{Method: method, Path: pathOnly(path), Status: resp.StatusCode}
		var fe struct {
			Error string `json:"error"`
			Field string `json:"field"`
			Code  string `json:"code"`
		}
		if json.Unmarshal(raw, &fe) == nil {
			se.Message, se.Field, se.Code = truncate(fe.Error, 256), truncate(fe.Field, 64), truncate(fe.Code, 64)
		}
		return resp.StatusCode, se
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode the answer: %w", method, pathOnly(path), err)
		}
	}
	return resp.StatusCode, nil
}

// pathOnly drops the query of a path, for messages.
func pathOnly(p string) string {
	if i := bytes.IndexByte([]byte(p), '?'); i >= 0 {
		return p[:i]
	}
	return p
}

// unwrapURLError returns the cause of a *url.Error: its URL is the
// controller's, which the caller names already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
