package registry

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// instanceStore is the registry's instance state: the Instances map and the
// lease bookkeeping behind it. Every change to an instance goes through one
// of its five operations — register, renew, deregister, disconnect and
// expire — each of which updates the bookkeeping and publishes the result
// with publish, the one place that writes the map, under one lock: the map
// and the leases never disagree, and nothing else writes the map.
//
// Those operations, with run, are where a storage backend would plug in: an
// in-memory store (this one) by default, or one that keeps instances in
// etcd, whose run would list them, finish the map's initializer after the
// first list, and publish what its watch reports, leaving expiry to etcd's
// leases.
//
// The operations are safe for concurrent use; they fail with ErrNotRunning
// unless run is running.
type instanceStore struct {
	lease         time.Duration
	maxPerService int
	maxTotal      int
	log           *slog.Logger
	now           func() time.Time // the clock of leases and of the times in Instance

	instances watchable.Map[string, *Instance]
	loaded    func() // the initializer of instances

	mu         sync.Mutex
	running    bool
	leases     map[string]*lease
	byEndpoint map[endpoint]string
	perService map[string]int
}

// lease is the bookkeeping for one instance. Guarded by instanceStore.mu.
type lease struct {
	inst  *Instance // the store's copy; published after every change
	owner *session  // the live WebSocket holding the instance, or nil
	// Without an owner, the instance is marked disconnected at disconnectAt
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

// newInstanceStore returns a store configured by cfg. It registers the
// initializer "registry" on the instances map, which run finishes.
func newInstanceStore(cfg config) *instanceStore {
	s := &instanceStore{
		lease:         cfg.lease,
		maxPerService: cfg.limits.MaxInstancesPerService,
		maxTotal:      cfg.limits.MaxInstances,
		log:           cfg.logger,
		now:           cfg.now,
		leases:        make(map[string]*lease),
		byEndpoint:    make(map[endpoint]string),
		perService:    make(map[string]int),
	}
	s.loaded = s.instances.RegisterInitializer("registry")
	return s
}

// run serves the operations until ctx is done. The in-memory store has
// nothing to load: the instances map is initialized (empty) at once. Leases
// are checked a few times per lease period.
func (s *instanceStore) run(ctx context.Context) {
	s.setRunning(true)
	defer s.setRunning(false)
	s.loaded()
	t := time.NewTicker(min(max(s.lease/10, 5*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.expire()
		}
	}
}

// clock returns the current time in UTC, as Instance shows it.
func (s *instanceStore) clock() time.Time { return s.now().UTC() }

func (s *instanceStore) setRunning(running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = running
}

// isRunning reports whether the operations are served.
func (s *instanceStore) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// publish writes the instances changed and the ids removed to the map, as
// one batch. s.mu is held.
func (s *instanceStore) publish(changed []*Instance, removed []string) {
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

// register stores a validated registration, held by owner if not nil (a
// WebSocket), or else leased by heartbeats, and returns its id. The
// endpoint of an existing instance takes that instance over.
func (s *instanceStore) register(reg Registration, owner *session) (string, error) {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return "", ErrNotRunning
	}
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
	if !l.inst.Connected || l.owner != owner {
		l.inst.ConnectedAt = now
	}
	l.inst.Connected, l.inst.LastSeenAt = true, now
	l.owner = owner
	s.extend(l, now)
	s.publish([]*Instance{l.inst}, nil)
	return id, nil
}

// renew renews the lease of instance id (a heartbeat) and marks it
// connected.
func (s *instanceStore) renew(id string) error {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return ErrNotRunning
	}
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
func (s *instanceStore) extend(l *lease, now time.Time) {
	l.disconnectAt = now.Add(s.lease)
	l.removeAt = now.Add(3 * s.lease)
}

// deregister removes instance id at once.
func (s *instanceStore) deregister(id string) error {
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

// disconnect marks the instance held by owner (a WebSocket that closed)
// disconnected, to be removed one lease later, unless another registration
// has taken it over since. It does nothing for a nil owner, or when the
// store is not running.
func (s *instanceStore) disconnect(id string, owner *session) {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	if !s.running || !ok || owner == nil || l.owner != owner {
		return
	}
	l.owner = nil
	l.inst.Connected = false
	l.disconnectAt, l.removeAt = now, now.Add(s.lease)
	s.publish([]*Instance{l.inst}, nil)
}

// expire marks disconnected the instances whose lease has run out, and
// removes those past their removal time, in one batch.
func (s *instanceStore) expire() {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return
	}
	var changed []*Instance
	var removed []string
	for id, l := range s.leases {
		if l.owner != nil {
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
func (s *instanceStore) forget(id string) {
	l := s.leases[id]
	delete(s.leases, id)
	delete(s.byEndpoint, endpointOf(l.inst))
	if s.perService[l.inst.ServiceID]--; s.perService[l.inst.ServiceID] <= 0 {
		delete(s.perService, l.inst.ServiceID)
	}
}
