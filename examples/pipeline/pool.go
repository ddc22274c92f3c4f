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
	Instances *watchable.Map[string, *registry.Instance]
	// Connections, when set, receives the pool's contents, keyed
	// "serviceId|host:port", for the admin pages and event lines.
	Connections *watchable.Map[string, Connection]
	// Logger receives a line per transport opened and closed.
	Logger *slog.Logger
	// Metrics, when set, records the subscription's handling metrics.
	Metrics *message.Metrics

	once  sync.Once
	ready chan struct{}

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
		p.ready = make(chan struct{})
		p.conns = make(map[connKey]*pooled)
		p.byInstance = make(map[string]connKey)
		if p.Logger == nil {
			p.Logger = slog.New(slog.DiscardHandler)
		}
	})
}

// Name implements runner.Runner.
func (p *Pool) Name() string { return "pool" }

// Ready implements runner.Readier: closed once the pool holds a transport
// for every instance registered when it started.
func (p *Pool) Ready() <-chan struct{} {
	p.init()
	return p.ready
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
	first := true
	message.HandleSnapshots(ctx, message.Metadata{Runner: p.Name(), Message: "instances"}, p.Instances.Subscribe(ctx),
		func(ctx context.Context, snap watchable.Snapshot[string, *registry.Instance]) error {
			for _, u := range snap.Updates {
				p.apply(u)
			}
			if first {
				first = false
				close(p.ready)
			}
			return nil
		}, message.WithLogger(p.Logger), message.WithMetrics(p.Metrics))
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
		p.Logger.Info("transport opened", "key", k.String(), "instance", id)
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
	p.Logger.Info("transport closed", "key", k.String(), "instance", id)
	if p.Connections != nil {
		p.Connections.Delete(k.String())
	}
}

// publish records c in the connections map. p.mu is held; the map is a
// different lock, and nothing subscribed to it calls back into the pool.
func (p *Pool) publish(k connKey, c *pooled) {
	if p.Connections != nil {
		p.Connections.Store(k.String(), Connection{ServiceID: k.serviceID, Address: k.address, Port: k.port, Instances: c.instances})
	}
}

// newUpstreamTransport is the transport for one upstream instance.
func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}
