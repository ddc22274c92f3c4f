package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

var (
	_ runner.Runner  = (*Client)(nil)
	_ runner.Readier = (*Client)(nil)
)

// ErrDisconnected is what a call fails with, at once, while the client is
// not connected to its controller (and registered, when it registers).
var ErrDisconnected = errors.New("registry client: not connected to the controller")

// Client is a client of a registry controller over one WebSocket: it
// registers an instance (WithRegistration), looks services up (Lookup) and
// mirrors the DiscoverySnapshots of the services it follows (SetServices)
// into a local watchable map (Snapshots), reconnecting with backoff for as
// long as it runs. It is a runner.Runner and a runner.Readier.
//
// All methods are safe for concurrent use.
type Client struct {
	cfg       config
	ctrl      endpoint
	path      string // /ws/microservice or /ws/discovery
	transport *http.Transport
	log       *slog.Logger
	track     *tracker

	snapshots watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	loaded    func() // the initializer of snapshots

	ready          chan struct{}
	markReady      func()
	registered     chan struct{} // closed at the first connection (and registration)
	markRegistered func()
	changed        chan struct{} // the services changed; buffered

	mu          sync.Mutex
	running     bool
	services    map[string]bool // followed; nil until known
	seen        map[string]bool // services whose snapshot has arrived
	keys        map[string]map[registry.DiscoveryKey]bool
	initialized bool
	connected   bool            // at least once
	id          string          // the runtimeInstanceId the controller gave last
	sess        *session        // the live session, registered; nil when none
	sessSeen    map[string]bool // services whose snapshot arrived on the current session
}

// New returns a client of the controller whose base URL is controller:
// http://host:port or https://host:port (ws and wss are accepted too, and
// a path ending in /ws/microservice or /v1/services is cut to its base).
// The client registers and discovers over /ws/microservice with
// WithRegistration or WithRegistrationFunc, and only discovers over
// /ws/discovery without. Nothing happens before Run.
func New(controller string, opts ...Option) (*Client, error) {
	ctrl, err := parseController(controller)
	if err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	track, err := newTracker(cfg, ctrl)
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg: cfg, ctrl: ctrl, path: "/ws/discovery",
		transport: &http.Transport{TLSClientConfig: cfg.tls, Proxy: http.ProxyFromEnvironment},
		log:       cfg.logger.With("runner", cfg.name, "controller", ctrl.String()),
		track:     track,
		ready:     make(chan struct{}), registered: make(chan struct{}), changed: make(chan struct{}, 1),
		seen: make(map[string]bool), keys: make(map[string]map[registry.DiscoveryKey]bool),
	}
	if cfg.register != nil {
		c.path = "/ws/microservice"
	}
	c.markReady = sync.OnceFunc(func() { close(c.ready) })
	c.markRegistered = sync.OnceFunc(func() { close(c.registered) })
	c.loaded = c.snapshots.RegisterInitializer(cfg.name)
	if cfg.servicesSet {
		c.services = setOf(cfg.services)
	}
	return c, nil
}

// Name returns the runner name (WithName; "registry-client" by default).
func (c *Client) Name() string { return c.cfg.name }

// Ready is closed once the client is connected (and registered, when it
// registers) and Snapshots is initialized; or, with
// WithStartOnRegistryFailure(true), the default, after the initial wait
// (WithInitialWait) whatever happened. It stays closed.
func (c *Client) Ready() <-chan struct{} { return c.ready }

// Snapshots returns a read-only view of the mirrored DiscoverySnapshots,
// keyed like registry.Registry.Snapshots: one per (serviceId, envTag,
// protocol) of the followed services that has instances. The client is its
// only writer.
//
// It is initialized once the set of services is known (WithServices, or a
// first SetServices) and the first snapshot of each has arrived; or, when
// the controller cannot be reached, after the initial wait with
// WithStartOnRegistryFailure(true). It survives reconnections: while the
// client is disconnected it keeps its contents (nothing is deleted because
// the controller is unreachable), and the first snapshots after a
// reconnection change only what changed meanwhile. A service dropped with
// SetServices is deleted from it at once. After Run returns it keeps its
// last contents.
func (c *Client) Snapshots() watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot] {
	return c.snapshots.View()
}

// SetServices makes the client follow exactly serviceIDs: it subscribes to
// the new ones (at once when connected, else on connecting) and forgets
// the others, deleting their snapshots from Snapshots.
func (c *Client) SetServices(serviceIDs ...string) {
	want := setOf(serviceIDs)
	c.mu.Lock()
	var dropped []string
	for s := range c.services {
		if !want[s] {
			dropped = append(dropped, s)
		}
	}
	c.services = want
	if len(dropped) > 0 {
		c.snapshots.Batch(func(b *watchable.Batch[registry.DiscoveryKey, *registry.DiscoverySnapshot]) {
			for _, s := range dropped {
				for k := range c.keys[s] {
					b.Delete(k)
				}
				delete(c.keys, s)
			}
		})
	}
	c.checkInitialized()
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default: // a change is already pending: the session reads the newest set
	}
}

// Lookup asks the controller for the snapshot of key (see
// registry.Registry.Lookup: an empty EnvTag or Protocol matches every
// value; nodes carry lastSeenAt). It fails at once with an error wrapping
// ErrDisconnected while the client is not connected, and with a *CallError
// when the controller refuses.
func (c *Client) Lookup(ctx context.Context, key registry.DiscoveryKey) (*registry.DiscoverySnapshot, error) {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("lookup %q at %s: %w", key.ServiceID, c.ctrl, ErrDisconnected)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	var snap registry.DiscoverySnapshot
	params := map[string]string{"serviceId": key.ServiceID, "envTag": key.EnvTag, "protocol": key.Protocol}
	if err := s.call(ctx, "discovery/lookup", params, &snap, nil); err != nil {
		return nil, fmt.Errorf("lookup %q at %s: %w", key.ServiceID, c.ctrl, err)
	}
	if snap.Nodes == nil {
		snap.Nodes = []registry.Instance{}
	}
	return &snap, nil
}

// RuntimeInstanceID returns the id the controller gave the instance last,
// or "" before the first registration.
func (c *Client) RuntimeInstanceID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Status returns the state of the client's link to its controller.
func (c *Client) Status() Status {
	st := c.track.status()
	c.mu.Lock()
	defer c.mu.Unlock()
	st.Synced = c.sess != nil
	for s := range c.services {
		st.Synced = st.Synced && c.sessSeen[s]
	}
	return st
}

// Run connects, registers and follows the services until ctx is done,
// reconnecting with backoff (WithBackoff) whenever the connection fails or
// ends, and registering again, proposing the runtimeInstanceId it had,
// each time. It then closes the socket (the controller marks the instance
// disconnected at once) and returns nil. With
// WithStartOnRegistryFailure(false), it returns an error naming the
// controller when the first registration has not succeeded within the
// initial wait. Run may be called once.
//
// Failures are reported through runner.HealthOf(ctx) under the key
// "controller" until the next connection.
func (c *Client) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return fmt.Errorf("registry client %s: Run called twice", c.cfg.name)
	}
	c.running = true
	c.mu.Unlock()
	defer c.transport.CloseIdleConnections()

	var wg sync.WaitGroup
	defer wg.Wait()
	readyCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting() // before wg.Wait
	wg.Add(1)
	go func() { defer wg.Done(); c.awaitReady(readyCtx) }()

	firstDeadline := time.Now().Add(c.cfg.initialWait)
	failures := 0
	var telling error // the latest failure not due to the initial wait's deadline
	for {
		err := c.serve(ctx, firstDeadline, &failures)
		if ctx.Err() != nil {
			c.track.down(nil)
			return nil
		}
		failures++
		c.track.down(err)
		runner.HealthOf(ctx).Report("controller", fmt.Errorf("controller %s: %w", c.ctrl, err))
		if failures == 1 {
			c.log.Warn("registry client: no connection to the controller; retrying", "err", err)
		} else {
			c.log.Debug("registry client: still no connection to the controller", "err", err, "failures", failures)
		}
		if !errors.Is(err, context.DeadlineExceeded) || telling == nil {
			telling = err
		}
		if !c.cfg.startOnFailure && !c.isRegistered() && !time.Now().Before(firstDeadline) {
			// The last attempt was cut short by the initial wait: the one
			// before it says more.
			return fmt.Errorf("registry client %s: no registration with the controller %s within %v: %w", c.cfg.name, c.ctrl, c.cfg.initialWait, telling)
		}
		wait := c.cfg.backoff.wait(failures)
		if !c.isRegistered() && !c.cfg.startOnFailure {
			wait = min(wait, max(time.Until(firstDeadline), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			c.track.down(nil)
			return nil
		case <-t.C:
		}
	}
}

// awaitReady closes Ready once the client is registered and Snapshots
// initialized, or, starting on registry failure, after the initial wait.
func (c *Client) awaitReady(ctx context.Context) {
	timeout := time.NewTimer(c.cfg.initialWait)
	defer timeout.Stop()
	for _, ch := range []<-chan struct{}{c.registered, c.snapshots.Initialized()} {
		for waiting := true; waiting; {
			select {
			case <-ch:
				waiting = false
			case <-timeout.C:
				if c.cfg.startOnFailure {
					c.startWithout()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
	c.markReady()
}

// startWithout makes the client ready although it has not (fully) reached
// the controller within the initial wait: Snapshots is initialized with
// what it holds.
func (c *Client) startWithout() {
	c.mu.Lock()
	if !c.initialized {
		c.initialized = true
		c.loaded()
	}
	c.mu.Unlock()
	c.log.Warn("registry client: starting without the controller after the initial wait; retrying in the background",
		"wait", c.cfg.initialWait, "lastError", c.track.status().LastError)
	c.markReady()
}

func (c *Client) isRegistered() bool {
	select {
	case <-c.registered:
		return true
	default:
		return false
	}
}

// serve makes one session: it connects, registers, subscribes, and follows
// until the socket ends (returning why) or ctx is done (returning nil).
// It resets *failures once registered.
func (c *Client) serve(ctx context.Context, firstDeadline time.Time, failures *int) error {
	var reg registry.Registration
	if c.cfg.register != nil {
		var err error
		if reg, err = c.cfg.register(ctx); err != nil {
			return fmt.Errorf("registration: %w", err)
		}
	}
	timeout := c.cfg.timeout
	if !c.isRegistered() && !c.cfg.startOnFailure {
		timeout = min(timeout, max(time.Until(firstDeadline), time.Millisecond))
	}
	dialCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c.mu.Lock()
	c.sessSeen = make(map[string]bool)
	c.mu.Unlock()
	header := http.Header{}
	if c.cfg.token != "" {
		header.Set("Authorization", "Bearer "+string(c.cfg.token))
	}
	s, err := dialSession(dialCtx, c.ctrl.socket(c.path), &http.Client{Transport: c.transport}, header, c.cfg.readLimit,
		c.apply, func(msg string, args ...any) { c.log.Debug(msg, args...) })
	if err != nil {
		return err
	}
	id := ""
	if c.cfg.register != nil {
		if id, err = c.register(dialCtx, s, reg); err != nil {
			s.abort()
			return err
		}
	}
	subs, err := c.follow(dialCtx, s, nil)
	if err != nil {
		s.abort()
		return err
	}
	cancel()

	c.mu.Lock()
	c.sess, c.connected = s, true
	c.checkInitialized()
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.sess = nil
		c.mu.Unlock()
	}()
	c.track.up(id)
	c.markRegistered()
	if *failures > 0 {
		// At the level of the warning that said it was lost.
		c.log.Warn("registry client: connected to the controller again", "instance", id, "services", len(subs), "failures", *failures)
	} else {
		c.log.Info("registry client: connected to the controller", "instance", id, "services", len(subs))
	}
	*failures = 0
	runner.HealthOf(ctx).Report("controller", nil)

	ping := time.NewTicker(c.cfg.keepAlive)
	defer ping.Stop()
	for {
		select {
		case <-s.done:
			return fmt.Errorf("connection lost: %w", s.err)
		case <-ctx.Done():
			s.close(websocket.StatusGoingAway, "client stopping")
			return nil
		case <-c.changed:
			cctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
			subs, err = c.follow(cctx, s, subs)
			cancel()
			if err != nil {
				s.abort()
				return err
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
			err := s.conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				s.abort()
				return fmt.Errorf("ping: the controller did not answer: %w", err)
			}
		}
	}
}

// register registers reg on s, proposing the id the controller gave last.
// A controller older than the client may refuse a field it does not know
// (runtimeInstanceId, environment): the client then registers without it.
func (c *Client) register(ctx context.Context, s *session, reg registry.Registration) (string, error) {
	c.mu.Lock()
	reg.RuntimeInstanceID = c.id
	prev := c.id
	c.mu.Unlock()
	var res struct {
		RuntimeInstanceID string `json:"runtimeInstanceId"`
	}
	for attempt := 0; ; attempt++ {
		err := s.call(ctx, "service/register", reg, &res, nil)
		var ce *CallError
		if attempt < 2 && errors.As(err, &ce) && ce.Err.Code == registry.CodeInvalidParams && ce.Err.Data != nil {
			switch {
			case ce.Err.Data.Field == "runtimeInstanceId" && reg.RuntimeInstanceID != "":
				reg.RuntimeInstanceID = ""
				continue
			case ce.Err.Data.Field == "environment" && reg.Environment != "":
				reg.Environment = ""
				continue
			}
		}
		if err != nil {
			return "", err
		}
		break
	}
	if res.RuntimeInstanceID == "" {
		return "", errors.New("service/register: the controller gave no runtimeInstanceId")
	}
	if prev != "" && prev != res.RuntimeInstanceID {
		c.log.Warn("registry client: registered again under a new runtimeInstanceId", "previous", prev, "instance", res.RuntimeInstanceID)
	}
	c.mu.Lock()
	c.id = res.RuntimeInstanceID
	c.mu.Unlock()
	return res.RuntimeInstanceID, nil
}

// follow subscribes s to the services followed now that subs (service →
// subscriptionId) lacks, and unsubscribes those no longer followed. It
// returns the new subs.
func (c *Client) follow(ctx context.Context, s *session, subs map[string]string) (map[string]string, error) {
	c.mu.Lock()
	want := make([]string, 0, len(c.services))
	for svc := range c.services {
		want = append(want, svc)
	}
	c.mu.Unlock()
	slices.Sort(want)
	next := make(map[string]string, len(want))
	for _, svc := range want {
		if id, ok := subs[svc]; ok {
			next[svc] = id
			continue
		}
		id, err := s.subscribe(ctx, svc)
		if err != nil {
			return nil, err
		}
		next[svc] = id
	}
	for svc, id := range subs {
		if _, ok := next[svc]; !ok {
			if err := s.unsubscribe(ctx, id); err != nil {
				return nil, err
			}
		}
	}
	return next, nil
}

// apply mirrors one notification: the snapshot of a whole service, split
// into one snapshot per (envTag, protocol) as the controller keys them.
// It runs on the session's read loop.
func (c *Client) apply(n *registry.SubscriptionNotification) {
	svc := n.ServiceID
	groups := split(n.DiscoverySnapshot)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.services[svc] {
		return // dropped by SetServices since
	}
	old := c.keys[svc]
	c.snapshots.Batch(func(b *watchable.Batch[registry.DiscoveryKey, *registry.DiscoverySnapshot]) {
		for k, s := range groups {
			b.Store(k, s) // a snapshot equal to the one held is no change
		}
		for k := range old {
			if _, ok := groups[k]; !ok {
				b.Delete(k)
			}
		}
	})
	keys := make(map[registry.DiscoveryKey]bool, len(groups))
	for k := range groups {
		keys[k] = true
	}
	c.keys[svc] = keys
	c.seen[svc] = true
	c.sessSeen[svc] = true
	c.checkInitialized()
}

// checkInitialized finishes the initializer of Snapshots once the
// services are known, the client has connected, and each service's first
// snapshot has arrived. c.mu is held.
func (c *Client) checkInitialized() {
	if c.initialized || c.services == nil || !c.connected {
		return
	}
	for s := range c.services {
		if !c.seen[s] {
			return
		}
	}
	c.initialized = true
	c.loaded()
}

// split divides the snapshot of one service into one snapshot per
// (envTag, protocol) of its nodes, nodes in their order.
func split(s *registry.DiscoverySnapshot) map[registry.DiscoveryKey]*registry.DiscoverySnapshot {
	out := make(map[registry.DiscoveryKey]*registry.DiscoverySnapshot)
	for _, n := range s.Nodes {
		k := registry.DiscoveryKey{ServiceID: s.ServiceID, EnvTag: n.EnvTag, Protocol: n.Protocol}
		g := out[k]
		if g == nil {
			g = &registry.DiscoverySnapshot{ServiceID: k.ServiceID, EnvTag: k.EnvTag, Protocol: k.Protocol}
			out[k] = g
		}
		g.Nodes = append(g.Nodes, n)
	}
	return out
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id != "" {
			m[id] = true
		}
	}
	return m
}
