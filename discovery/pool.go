package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Errors of Pool.Get, for callers that branch on them.
var (
	// ErrUnknownTarget: no instance with that runtimeInstanceId is in the
	// snapshots the pool follows (it never was, or it is gone).
	ErrUnknownTarget = errors.New("discovery: unknown target")
	// ErrDisconnected: the instance is known but its registry marks it not
	// connected, or its connection could not be opened.
	ErrDisconnected = errors.New("discovery: target disconnected")
	// ErrClosed: the pool has stopped and closed every connection.
	ErrClosed = errors.New("discovery: pool closed")
)

// Connection is the state of one pooled connection, as the pool publishes
// it in Connections, keyed by runtimeInstanceId.
type Connection struct {
	ServiceID string `json:"serviceId"`
	EnvTag    string `json:"envTag,omitempty"`
	Protocol  string `json:"protocol"`
	Address   string `json:"address"`
	Port      int    `json:"port"`
	// Connected is the instance's Connected as the registry last said.
	Connected bool `json:"connected"`
	// Error is why the connection could not be opened, if it could not.
	Error string `json:"error,omitempty"`
}

// Option configures a Pool.
type Option func(*poolConfig)

type poolConfig struct {
	logger  *slog.Logger
	metrics *message.Metrics
}

// WithLogger sends the pool's records (connections opened, replaced and
// closed at debug level; failures to open one at warn) to l. Without it,
// or with a nil l, they go to slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *poolConfig) { c.logger = l } }

// WithMetrics records the handling of the pool's subscription to the
// snapshots in m.
func WithMetrics(m *message.Metrics) Option { return func(c *poolConfig) { c.metrics = m } }

// Pool keeps one connection (of any type C: an *http.Transport, a gRPC
// client connection) per instance of the DiscoverySnapshots it follows,
// keyed by runtimeInstanceId: it opens one with dial when an instance
// appears, replaces it (closing the old one) when the instance's protocol,
// address or port changes, and closes it when the instance disappears. An
// instance its registry marks disconnected keeps its connection, but Get
// refuses it until it is connected again. Instances without a port are
// left out.
//
// Pool is a runner: Run follows the snapshots and closes every connection
// when it returns; Ready is closed once the pool holds a connection for
// every instance of the initialized snapshots. All methods are safe for
// concurrent use.
type Pool[C any] struct {
	name      string
	snapshots watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	dial      func(ctx context.Context, n *registry.Instance) (C, error)
	close     func(C)
	log       *slog.Logger
	metrics   *message.Metrics

	connections watchable.Map[string, Connection]
	loaded      func() // the initializer of connections

	mu      sync.RWMutex
	entries map[string]*entry[C]
	byKey   map[registry.DiscoveryKey][]string // the instances each snapshot listed
	closed  bool
}

type entry[C any] struct {
	node registry.Instance
	key  registry.DiscoveryKey
	conn C
	err  error // of dial; conn is the zero value then
}

// NewPool returns a pool named name (its runner name) that follows
// snapshots, opening connections with dial and closing them with closeConn.
// dial runs on the pool's loop: it should not block for long (an
// *http.Transport, which connects lazily, is the model); a dial that fails
// is tried again when the instance next changes, and Get answers
// ErrDisconnected meanwhile.
func NewPool[C any](name string, snapshots watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot],
	dial func(ctx context.Context, n *registry.Instance) (C, error), closeConn func(C), opts ...Option) *Pool[C] {
	var cfg poolConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	p := &Pool[C]{
		name: name, snapshots: snapshots, dial: dial, close: closeConn,
		log: cfg.logger.With("runner", name), metrics: cfg.metrics,
		entries: make(map[string]*entry[C]),
		byKey:   make(map[registry.DiscoveryKey][]string),
	}
	p.loaded = p.connections.RegisterInitializer(name)
	return p
}

// Name returns the name given to NewPool.
func (p *Pool[C]) Name() string { return p.name }

// Ready returns the Initialized channel of Connections: closed once the
// pool holds a connection for every instance of the initialized snapshots.
func (p *Pool[C]) Ready() <-chan struct{} { return p.connections.Initialized() }

// Connections returns a read-only view of the pool's connections, keyed by
// runtimeInstanceId. The pool is its only writer.
func (p *Pool[C]) Connections() watchable.View[string, Connection] { return p.connections.View() }

// Get returns the connection of the instance with runtimeInstanceId id.
// It fails with an error wrapping ErrUnknownTarget, ErrDisconnected or
// ErrClosed, and naming id.
func (p *Pool[C]) Get(id string) (C, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var zero C
	if p.closed {
		return zero, fmt.Errorf("get connection of instance %s: %w", id, ErrClosed)
	}
	e, ok := p.entries[id]
	switch {
	case !ok:
		return zero, fmt.Errorf("get connection of instance %s: %w", id, ErrUnknownTarget)
	case e.err != nil:
		return zero, fmt.Errorf("get connection of instance %s of %s: %w: %v", id, e.node.ServiceID, ErrDisconnected, e.err)
	case !e.node.Connected:
		return zero, fmt.Errorf("get connection of instance %s of %s: %w", id, e.node.ServiceID, ErrDisconnected)
	}
	return e.conn, nil
}

// Run follows the snapshots until ctx is done, then closes every
// connection and returns nil; Get then fails with ErrClosed. Failures to
// dial are reported through runner.HealthOf(ctx) under the key "dial"
// (cleared once every connection is open).
func (p *Pool[C]) Run(ctx context.Context) error {
	message.HandleSnapshots(ctx, message.Loop{Runner: p.name, Message: "snapshots"}, p.snapshots.Subscribe(ctx),
		func(ctx context.Context, snap watchable.Snapshot[registry.DiscoveryKey, *registry.DiscoverySnapshot]) error {
			p.apply(ctx, snap.Updates)
			if snap.Initialized {
				p.loaded()
			}
			return nil
		}, message.WithLogger(p.log), message.WithMetrics(p.metrics))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for id, e := range p.entries {
		if e.err == nil {
			p.close(e.conn)
		}
		delete(p.entries, id)
	}
	clear(p.byKey)
	return nil
}

// apply follows the snapshots that changed. An instance that moves from
// one snapshot to another in the same change (its envTag or protocol
// changed) is updated, not closed and opened again.
func (p *Pool[C]) apply(ctx context.Context, updates []watchable.Update[registry.DiscoveryKey, *registry.DiscoverySnapshot]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	listed := make(map[string]bool)
	var gone []string
	for _, u := range updates {
		gone = append(gone, p.byKey[u.Key]...)
		delete(p.byKey, u.Key)
		if u.Delete {
			continue
		}
		var ids []string
		for _, n := range u.Value.Nodes {
			if n.Port == 0 || n.RuntimeInstanceID == "" {
				continue
			}
			n.ServiceID = cmp.Or(n.ServiceID, u.Key.ServiceID)
			n.EnvTag = cmp.Or(n.EnvTag, u.Key.EnvTag)
			n.Protocol = cmp.Or(n.Protocol, u.Key.Protocol)
			ids = append(ids, n.RuntimeInstanceID)
			listed[n.RuntimeInstanceID] = true
			p.upsert(ctx, u.Key, n)
		}
		if len(ids) > 0 {
			p.byKey[u.Key] = ids
		}
	}
	p.connections.Batch(func(b *watchable.Batch[string, Connection]) {
		for _, id := range gone {
			if e, ok := p.entries[id]; ok && !listed[id] {
				p.drop(id, e)
				b.Delete(id)
			}
		}
		for id := range listed {
			b.Store(id, p.entries[id].connection())
		}
	})
	failed := 0
	for _, e := range p.entries {
		if e.err != nil {
			failed++
		}
	}
	if failed == 0 {
		runner.HealthOf(ctx).Report("dial", nil)
	}
}

// upsert opens, replaces or updates the connection of n. p.mu is held.
func (p *Pool[C]) upsert(ctx context.Context, key registry.DiscoveryKey, n registry.Instance) {
	id := n.RuntimeInstanceID
	e, ok := p.entries[id]
	if ok && e.err == nil && e.node.Protocol == n.Protocol && e.node.Address == n.Address && e.node.Port == n.Port {
		e.node, e.key = n, key
		return
	}
	if ok {
		p.drop(id, e)
		p.log.Debug("connection replaced: the instance moved", "instance", id, "service", n.ServiceID, "url", URL(&n))
	}
	e = &entry[C]{node: n, key: key}
	e.conn, e.err = p.dial(ctx, &n)
	if e.err != nil {
		p.log.Warn("cannot open a connection", "instance", id, "service", n.ServiceID, "url", URL(&n), "err", e.err)
		runner.HealthOf(ctx).Report("dial", fmt.Errorf("open connection to instance %s of %s: %w", id, n.ServiceID, e.err))
	} else if !ok {
		p.log.Debug("connection opened", "instance", id, "service", n.ServiceID, "url", URL(&n))
	}
	p.entries[id] = e
}

// drop closes the connection of e and forgets it. p.mu is held.
func (p *Pool[C]) drop(id string, e *entry[C]) {
	if e.err == nil {
		p.close(e.conn)
	}
	delete(p.entries, id)
	p.log.Debug("connection closed", "instance", id, "service", e.node.ServiceID)
}

func (e *entry[C]) connection() Connection {
	c := Connection{ServiceID: e.node.ServiceID, EnvTag: e.node.EnvTag, Protocol: e.node.Protocol, Address: e.node.Address, Port: e.node.Port, Connected: e.node.Connected}
	if e.err != nil {
		c.Error = e.err.Error()
	}
	return c
}
