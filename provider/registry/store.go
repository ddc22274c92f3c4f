package registry

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// Store is where a Registry keeps its instances: the map it publishes them
// in, and their leases. Every change to an instance goes through one of its
// operations — Register, Renew, Deregister and Disconnect — and expiry is
// the store's own business. The default store lives in memory and dies with
// the process; the etcd module's registrystore keeps instances in etcd,
// where several registries share them (see WithStore).
//
// The registry validates what it passes: a Store trusts its arguments. Its
// operations fail with ErrNotRunning unless Run is running, with
// ErrUnknownInstance for an id it does not have, and with
// ErrTooManyInstances at the limits of StoreConfig. Implementations must be
// safe for concurrent use.
type Store interface {
	// Instances returns the map of instances keyed by runtimeInstanceId,
	// which the store alone writes. It is uninitialized until Run has
	// published the instances present when it started (see
	// watchable.Map.RegisterInitializer).
	Instances() watchable.View[string, *Instance]
	// Run serves the operations with the registry's settings until ctx
	// ends, then returns nil; or returns an error if the store cannot go
	// on. A Store is run once, by one Registry.
	Run(ctx context.Context, cfg StoreConfig) error
	// Register stores a registration and returns the instance's id. The
	// instance is held by the connection held (a WebSocket), or, when held
	// is NoHolder, leased by heartbeats. Registering the endpoint
	// (serviceId, envTag, protocol, address, port) of an existing instance
	// takes that instance over and returns its id. Otherwise the instance
	// gets reg.RuntimeInstanceID if it is set and no other instance has
	// it, or else a new random id of 32 hexadecimal digits. Once Register
	// returns, Instances shows the instance.
	Register(ctx context.Context, reg Registration, held Holder) (string, error)
	// Renew renews the lease of instance id (a heartbeat) and marks it
	// connected.
	Renew(ctx context.Context, id string) error
	// Deregister removes instance id at once.
	Deregister(ctx context.Context, id string) error
	// Disconnect tells that the connection held, which held instance id,
	// closed: the instance is marked disconnected and removed one lease
	// later, unless it was registered again (over another connection or
	// over HTTP) since. It does nothing for an instance held otherwise.
	Disconnect(ctx context.Context, id string, held Holder) error
}

// StoreConfig is what a Registry tells its Store when it runs it.
type StoreConfig struct {
	// Lease is how long an instance leased by heartbeats lives without
	// one (see WithLease).
	Lease time.Duration
	// Limits are the registry's limits, defaults filled in; a store
	// enforces MaxInstancesPerService and MaxInstances.
	Limits Limits
	// Logger receives the store's records; never nil.
	Logger *slog.Logger
	// Now is the clock of leases and of the times in Instance.
	Now func() time.Time
}

// Holder identifies a connection (a WebSocket) that holds the instances it
// registered: they stay connected while it is open, whatever the
// heartbeats. Stores compare holders with ==; NoHolder means none.
type Holder uint64

// NoHolder is the Holder of an instance leased by heartbeats.
const NoHolder Holder = 0

// WithStore makes s the registry's store: where instances are kept, and
// how their leases run out. Without it, instances live in the registry's
// memory and are lost when the process ends.
func WithStore(s Store) Option {
	return func(c *config) { c.store = s }
}

// storeTimeout bounds one operation of the store, whatever the request
// that asked for it does meanwhile.
const storeTimeout = 10 * time.Second

// instanceStore is the registry's side of its Store: it runs it, gives each
// WebSocket session a Holder, and bounds each operation in time. The HTTP
// and WebSocket handlers call it.
type instanceStore struct {
	st        Store
	instances watchable.View[string, *Instance]

	mu      sync.Mutex
	running bool
	ctx     context.Context // Run's, while running
	log     *slog.Logger
	holders map[*session]Holder
	next    Holder
}

func newInstanceStore(st Store) *instanceStore {
	return &instanceStore{st: st, instances: st.Instances(), holders: make(map[*session]Holder)}
}

// run runs the store with the settings of cfg until ctx ends.
func (s *instanceStore) run(ctx context.Context, cfg config) error {
	s.mu.Lock()
	s.running, s.ctx, s.log = true, ctx, cfg.logger
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running, s.ctx = false, nil
		s.mu.Unlock()
	}()
	return s.st.Run(ctx, StoreConfig{Lease: cfg.lease, Limits: cfg.limits, Logger: cfg.logger, Now: cfg.now})
}

// isRunning reports whether the registry serves requests.
func (s *instanceStore) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// opContext returns the context of one operation: it ends with Run or
// after storeTimeout.
func (s *instanceStore) opContext() (context.Context, context.CancelFunc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil, nil, ErrNotRunning
	}
	ctx, cancel := context.WithTimeout(s.ctx, storeTimeout)
	return ctx, cancel, nil
}

// holder returns owner's Holder, making one on first use; NoHolder for nil.
func (s *instanceStore) holder(owner *session) Holder {
	if owner == nil {
		return NoHolder
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holders[owner]
	if !ok {
		s.next++
		h = s.next
		s.holders[owner] = h
	}
	return h
}

func (s *instanceStore) register(reg Registration, owner *session) (string, error) {
	ctx, cancel, err := s.opContext()
	if err != nil {
		return "", err
	}
	defer cancel()
	id, err := s.st.Register(ctx, reg, s.holder(owner))
	if err != nil && owner != nil { // a socket registers once: it holds nothing
		s.mu.Lock()
		delete(s.holders, owner)
		s.mu.Unlock()
	}
	return id, err
}

func (s *instanceStore) renew(id string) error {
	ctx, cancel, err := s.opContext()
	if err != nil {
		return err
	}
	defer cancel()
	return s.st.Renew(ctx, id)
}

func (s *instanceStore) deregister(id string) error {
	ctx, cancel, err := s.opContext()
	if err != nil {
		return err
	}
	defer cancel()
	return s.st.Deregister(ctx, id)
}

// disconnect tells the store that owner's socket closed, and forgets
// owner's Holder. Failures are logged: the instance then runs out as if
// its holder had died.
func (s *instanceStore) disconnect(id string, owner *session) {
	if owner == nil {
		return
	}
	s.mu.Lock()
	h, ok := s.holders[owner]
	delete(s.holders, owner)
	log := s.log
	s.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel, err := s.opContext()
	if err != nil {
		return
	}
	defer cancel()
	if err := s.st.Disconnect(ctx, id, h); err != nil && !errors.Is(err, ErrNotRunning) {
		log.Warn("disconnect failed", "instance", id, "error", err)
	}
}
