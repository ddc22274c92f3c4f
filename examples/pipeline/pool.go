package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// Connection describes one pooled transport, as published in the pool's
// connections map.
type Connection struct {
	ServiceID string `json:"serviceId"`
	Address   string `json:"address"`
	Port      int    `json:"port"`
	// Instances is the number of registered instances sharing the
	// transport (normally one).
	Instances int `json:"instances"`
}

// connKey identifies a pooled transport.
type connKey struct {
	serviceID, address string
	port               int
}

func (k connKey) String() string {
	return k.serviceID + "|" + net.JoinHostPort(k.address, strconv.Itoa(k.port))
}

// Pool keeps one HTTP transport per (serviceId, address, port) of the
// registered instances, the way module-discovery systems keep one client
// per discovered module: a transport is opened when an instance appears,
// replaced when the instance's address changes, and closed when it
// disappears. The gateway uses it for discovered targets, so keep-alive
// connections to an instance never outlive its registration.
//
// Pool is a runner; Transport is safe for concurrent use while it runs.
type Pool struct {
	// Instances is the registry's instance map, keyed by runtimeInstanceId.
	Instances watchable.View[string, *registry.Instance]
	// Logger receives a line per transport opened and closed (default:
	// slog.Default()).
	Logger *slog.Logger
	// Metrics, when set, records the subscription's handling metrics.
	Metrics *message.Metrics

	once        sync.Once
	log         *slog.Logger
	connections watchable.Map[string, Connection]
	initialized func() // marks connections initialized

	mu         sync.RWMutex
	conns      map[connKey]*pooled
	byInstance map[string]connKey // runtimeInstanceId -> its transport
}

type pooled struct {
	transport *http.Transport
	instances int
}

func (p *Pool) init() {
	p.once.Do(func() {
		p.initialized = p.connections.RegisterInitializer("pool")
		p.conns = make(map[connKey]*pooled)
		p.byInstance = make(map[string]connKey)
		logger := p.Logger
		if logger == nil {
			logger = slog.Default()
		}
		p.log = logger.With("runner", p.Name())
	})
}

// Name implements runner.Runner.
func (p *Pool) Name() string { return "pool" }

// Connections returns the pool's contents, keyed "serviceId|host:port",
// for the admin pages. The pool is the map's only writer.
func (p *Pool) Connections() watchable.View[string, Connection] {
	p.init()
	return p.connections.View()
}

// Ready implements runner.Readier: it is the Connections map's Initialized
// channel, closed once the pool holds a transport for every instance of
// the initialized Instances map.
func (p *Pool) Ready() <-chan struct{} {
	return p.Connections().Initialized()
}

// Transport returns the transport of serviceID's instance at hostport
// (host:port), or nil when no registered instance is there.
func (p *Pool) Transport(serviceID, hostport string) http.RoundTripper {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil
	}
	p.init()
	p.mu.RLock()
	defer p.mu.RUnlock()
	if c, ok := p.conns[connKey{serviceID, host, n}]; ok {
		return c.transport
	}
	return nil
}

// Run implements runner.Runner. It closes every transport when ctx is done.
func (p *Pool) Run(ctx context.Context) error {
	p.init()
	message.HandleSnapshots(ctx, message.Loop{Runner: p.Name(), Message: "instances"}, p.Instances.Subscribe(ctx),
		func(ctx context.Context, snap watchable.Snapshot[string, *registry.Instance]) error {
			for _, u := range snap.Updates {
				p.apply(u)
			}
			if snap.Initialized {
				p.initialized()
			}
			return nil
		}, message.WithLogger(p.Logger), message.WithMetrics(p.Metrics)) // it adds "runner" itself
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, c := range p.conns {
		c.transport.CloseIdleConnections()
		delete(p.conns, k)
	}
	clear(p.byInstance)
	return nil
}

// apply follows one change of one instance.
func (p *Pool) apply(u watchable.Update[string, *registry.Instance]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := u.Key
	old, had := p.byInstance[id]
	if u.Delete || u.Value.Port == 0 {
		if had {
			p.release(old, id)
			delete(p.byInstance, id)
		}
		return
	}
	k := connKey{u.Value.ServiceID, u.Value.Address, u.Value.Port}
	if had && old == k {
		return
	}
	if had {
		p.release(old, id)
	}
	p.byInstance[id] = k
	c, ok := p.conns[k]
	if !ok {
		c = &pooled{transport: newUpstreamTransport()}
		p.conns[k] = c
		p.log.Info("transport opened", "key", k.String(), "instance", id)
	}
	c.instances++
	p.publish(k, c)
}

// release drops instance id's use of the transport for k, closing it when
// no instance uses it any more. p.mu is held.
func (p *Pool) release(k connKey, id string) {
	c := p.conns[k]
	c.instances--
	if c.instances > 0 {
		p.publish(k, c)
		return
	}
	c.transport.CloseIdleConnections()
	delete(p.conns, k)
	p.log.Info("transport closed", "key", k.String(), "instance", id)
	p.connections.Delete(k.String())
}

// publish records c in the connections map. p.mu is held; the map is a
// different lock, and nothing subscribed to it calls back into the pool.
func (p *Pool) publish(k connKey, c *pooled) {
	p.connections.Store(k.String(), Connection{ServiceID: k.serviceID, Address: k.address, Port: k.port, Instances: c.instances})
}

// newUpstreamTransport is the transport for one upstream instance.
func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}
