package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// memoryStore is the default Store: the Instances map and the lease
// bookkeeping behind it, in memory. Every change to an instance goes
// through one of its five operations — Register, Renew, Deregister,
// Disconnect and expire — each of which updates the bookkeeping and
// publishes the result with publish, the one place that writes the map,
// under one lock: the map and the leases never disagree, and nothing else
// writes the map.
//
// The operations are safe for concurrent use; they fail with ErrNotRunning
// unless Run is running.
type memoryStore struct {
	instances watchable.Map[string, *Instance]
	loaded    func() // the initializer of instances

	mu            sync.Mutex
	started       bool
	running       bool
	lease         time.Duration
	maxPerService int
	maxTotal      int
	log           *slog.Logger
	now           func() time.Time // the clock of leases and of the times in Instance
	leases        map[string]*lease
	byEndpoint    map[endpoint]string
	perService    map[string]int
}

// lease is the bookkeeping for one instance. Guarded by memoryStore.mu.
type lease struct {
	inst   *Instance // the store's copy; published after every change
	holder Holder    // the live WebSocket holding the instance, or NoHolder
	// Without a holder, the instance is marked disconnected at disconnectAt
	// and removed at removeAt.
	disconnectAt, removeAt time.Time
}

// endpoint identifies an instance for re-registration: registering the same
// endpoint again takes over the existing instance and its id.
type endpoint struct {
	serviceID, envTag, protocol, address string
	port                                 int
}

func endpointOf(i *Instance) endpoint {
	return endpoint{i.ServiceID, i.EnvTag, i.Protocol, i.Address, i.Port}
}

// NewMemoryStore returns the store a Registry has without WithStore: an
// empty one, in memory. An instance leased by heartbeats is marked
// disconnected one lease after its last heartbeat and removed after three;
// one held by a WebSocket, one lease after the socket closed. Its Instances
// map is initialized as soon as Run starts.
func NewMemoryStore() Store { return newMemoryStore() }

// newMemoryStore returns an empty store. It registers the initializer
// "registry" on the instances map, which Run finishes.
func newMemoryStore() *memoryStore {
	s := &memoryStore{
		leases:     make(map[string]*lease),
		byEndpoint: make(map[endpoint]string),
		perService: make(map[string]int),
	}
	s.loaded = s.instances.RegisterInitializer("registry")
	return s
}

// Instances returns the map of instances.
func (s *memoryStore) Instances() watchable.View[string, *Instance] { return s.instances.View() }

// errRunTwice is returned by a second Run of a store.
var errRunTwice = errors.New("registry: the store is run twice (a Store serves one Registry, once)")

// Run serves the operations until ctx is done. The in-memory store has
// nothing to load: the instances map is initialized (empty) at once. Leases
// are checked a few times per lease period.
func (s *memoryStore) Run(ctx context.Context, cfg StoreConfig) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errRunTwice
	}
	s.started, s.running = true, true
	s.lease, s.log, s.now = cfg.Lease, cfg.Logger, cfg.Now
	s.maxPerService, s.maxTotal = cfg.Limits.MaxInstancesPerService, cfg.Limits.MaxInstances
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	s.loaded()
	t := time.NewTicker(min(max(cfg.Lease/10, 5*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.expire()
		}
	}
}

// clock returns the current time in UTC, as Instance shows it. s.mu is
// held.
func (s *memoryStore) clock() time.Time { return s.now().UTC() }

// publish writes the instances changed and the ids removed to the map, as
// one batch. s.mu is held.
func (s *memoryStore) publish(changed []*Instance, removed []string) {
	if len(changed) == 1 && len(removed) == 0 { // most calls: skip making a batch
		s.instances.Store(changed[0].RuntimeInstanceID, changed[0])
		return
	}
	s.instances.Batch(func(b *watchable.Batch[string, *Instance]) {
		for _, inst := range changed {
			b.Store(inst.RuntimeInstanceID, inst)
		}
		for _, id := range removed {
			b.Delete(id)
		}
	})
}

// Register stores a validated registration, held by held (a WebSocket),
// or else leased by heartbeats, and returns its id. The endpoint of an
// existing instance takes that instance over.
func (s *memoryStore) Register(_ context.Context, reg Registration, held Holder) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return "", ErrNotRunning
	}
	now := s.clock()
	ep := endpoint{reg.ServiceID, reg.EnvTag, reg.Protocol, reg.Address, reg.Port}
	id, ok := s.byEndpoint[ep]
	l := s.leases[id]
	if !ok {
		if s.perService[reg.ServiceID] >= s.maxPerService {
			return "", fmt.Errorf("register instance of service %q: %w: the service has the maximum of %d", reg.ServiceID, ErrTooManyInstances, s.maxPerService)
		}
		if len(s.leases) >= s.maxTotal {
			return "", fmt.Errorf("register instance of service %q: %w: the registry has the maximum of %d instances", reg.ServiceID, ErrTooManyInstances, s.maxTotal)
		}
		id = reg.RuntimeInstanceID // the id it had, before a restart of the registry
		if _, taken := s.leases[id]; id == "" || taken {
			id = newID()
		}
		l = &lease{inst: &Instance{
			RuntimeInstanceID: id, ServiceID: reg.ServiceID, EnvTag: reg.EnvTag,
			Protocol: reg.Protocol, Address: reg.Address, Port: reg.Port,
		}}
		s.leases[id] = l
		s.byEndpoint[ep] = id
		s.perService[reg.ServiceID]++
		s.log.Debug("registered", "instance", id, "service", reg.ServiceID, "address", reg.Address, "port", reg.Port)
	}
	l.inst.Version, l.inst.Tags, l.inst.Environment = reg.Version, reg.Tags, reg.Environment
	if !l.inst.Connected || l.holder != held {
		l.inst.ConnectedAt = now
	}
	l.inst.Connected, l.inst.LastSeenAt = true, now
	l.holder = held
	s.extend(l, now)
	s.publish([]*Instance{l.inst}, nil)
	return id, nil
}

// Renew renews the lease of instance id (a heartbeat) and marks it
// connected.
func (s *memoryStore) Renew(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return ErrNotRunning
	}
	now := s.clock()
	l, ok := s.leases[id]
	if !ok {
		return fmt.Errorf("heartbeat %q: %w", id, ErrUnknownInstance)
	}
	if !l.inst.Connected {
		l.inst.Connected, l.inst.ConnectedAt = true, now
	}
	l.inst.LastSeenAt = now
	s.extend(l, now)
	s.publish([]*Instance{l.inst}, nil)
	return nil
}

// extend restarts the lease of an instance without a live socket. s.mu is
// held.
func (s *memoryStore) extend(l *lease, now time.Time) {
	l.disconnectAt = now.Add(s.lease)
	l.removeAt = now.Add(3 * s.lease)
}

// Deregister removes instance id at once.
func (s *memoryStore) Deregister(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return ErrNotRunning
	}
	if _, ok := s.leases[id]; !ok {
		return fmt.Errorf("deregister %q: %w", id, ErrUnknownInstance)
	}
	s.log.Debug("deregistered", "instance", id)
	s.forget(id)
	s.publish(nil, []string{id})
	return nil
}

// Disconnect marks the instance held by held (a WebSocket that closed)
// disconnected, to be removed one lease later, unless another registration
// has taken it over since. It does nothing for NoHolder.
func (s *memoryStore) Disconnect(_ context.Context, id string, held Holder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return ErrNotRunning
	}
	l, ok := s.leases[id]
	if !ok || held == NoHolder || l.holder != held {
		return nil
	}
	now := s.clock()
	l.holder = NoHolder
	l.inst.Connected = false
	l.disconnectAt, l.removeAt = now, now.Add(s.lease)
	s.publish([]*Instance{l.inst}, nil)
	return nil
}

// expire marks disconnected the instances whose lease has run out, and
// removes those past their removal time, in one batch.
func (s *memoryStore) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return
	}
	now := s.clock()
	var changed []*Instance
	var removed []string
	for id, l := range s.leases {
		if l.holder != NoHolder {
			continue
		}
		switch {
		case !now.Before(l.removeAt):
			removed = append(removed, id)
		case !now.Before(l.disconnectAt) && l.inst.Connected:
			l.inst.Connected = false
			changed = append(changed, l.inst)
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return
	}
	for _, id := range removed {
		s.log.Debug("lease expired", "instance", id, "service", s.leases[id].inst.ServiceID)
		s.forget(id)
	}
	s.publish(changed, removed)
}

// forget drops the bookkeeping for id. s.mu is held.
func (s *memoryStore) forget(id string) {
	l := s.leases[id]
	delete(s.leases, id)
	delete(s.byEndpoint, endpointOf(l.inst))
	if s.perService[l.inst.ServiceID]--; s.perService[l.inst.ServiceID] <= 0 {
		delete(s.perService, l.inst.ServiceID)
	}
}
