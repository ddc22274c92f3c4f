package registry

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

var (
	_ runner.Runner  = (*Registry)(nil)
	_ runner.Readier = (*Registry)(nil)
)

// Errors that callers of Register, Heartbeat and Deregister branch on.
var (
	// ErrUnknownInstance: no instance has the given runtimeInstanceId.
	ErrUnknownInstance = errors.New("registry: unknown runtimeInstanceId")
	// ErrTooManyInstances: the service has Limits.MaxInstancesPerService
	// instances already.
	ErrTooManyInstances = errors.New("registry: too many instances for the service")
	// ErrNotRunning: Run has not started yet, or has returned.
	ErrNotRunning = errors.New("registry: not running")
)

// Registry is the service-discovery control plane. It owns a watchable map of
// Instances, derives a map of DiscoverySnapshots from it, and serves the HTTP
// and WebSocket JSON-RPC APIs (Handler). It is a runner.Runner: Run expires
// leases and keeps the snapshots up to date.
//
// All methods are safe for concurrent use.
type Registry struct {
	cfg       config // tokens cleared: only their digests are kept
	token     [sha256.Size]byte
	discovery [sha256.Size]byte
	hasDisc   bool

	instances watchable.Map[string, *Instance]
	// loaded finishes the initializer of instances: the in-memory
	// registry has nothing to load, so Run calls it when it starts.
	loaded func()
	// snapshots derives the DiscoverySnapshots from instances; Run runs it.
	snapshots *snapshotGrouping

	encodings encodings // shared JSON of watch answers

	stopped chan struct{} // closed when Run returns

	mu         sync.Mutex
	started    bool
	running    bool
	leases     map[string]*lease
	byEndpoint map[endpoint]string
	perService map[string]int
}

// lease is the registry's private bookkeeping for one instance. Guarded by
// Registry.mu.
type lease struct {
	inst  *Instance // the registry's copy; Stored after every change
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

// New returns a Registry configured by opts; WithToken is required. It
// fails with an error wrapping ErrNoToken when no token, or an empty one,
// is given. The registry serves nothing before Run: see Run and Handler.
func New(opts ...Option) (*Registry, error) {
	cfg := newConfig(opts)
	if cfg.token == "" {
		return nil, fmt.Errorf("%w: New needs WithToken with a non-empty token", ErrNoToken)
	}
	r := &Registry{
		token:      sha256.Sum256([]byte(cfg.token)),
		stopped:    make(chan struct{}),
		leases:     make(map[string]*lease),
		byEndpoint: make(map[endpoint]string),
		perService: make(map[string]int),
	}
	if cfg.discoveryToken != "" {
		r.discovery = sha256.Sum256([]byte(cfg.discoveryToken))
		r.hasDisc = true
	}
	cfg.token, cfg.discoveryToken = "", ""
	r.cfg = cfg
	r.loaded = r.instances.RegisterInitializer("registry")
	r.snapshots = newSnapshots(r.instances.View(), cfg.logger)
	return r, nil
}

// Name returns "registry".
func (r *Registry) Name() string { return "registry" }

// Ready returns the Initialized channel of Snapshots: it is closed once Run
// has started and the snapshots of the instances present then have been
// published, and stays closed. Until Run starts, the handler answers 503.
func (r *Registry) Ready() <-chan struct{} { return r.snapshots.Output().Initialized() }

// Instances returns a read-only view of the registered instances, keyed by
// runtimeInstanceId. The registry is the map's only writer. The map is
// initialized (see watchable.View.Initialized) once Run has started.
func (r *Registry) Instances() watchable.View[string, *Instance] { return r.instances.View() }

// Snapshots returns a read-only view of the DiscoverySnapshots derived from
// Instances (by a translator.GroupBy that Run runs), one per (serviceId,
// envTag, protocol) that has instances. Heartbeats do not change it: nodes
// carry no LastSeenAt. It is initialized, and Ready closed, once it holds
// the snapshots of the instances present when Run started.
func (r *Registry) Snapshots() watchable.View[DiscoveryKey, *DiscoverySnapshot] {
	return r.snapshots.Output()
}

// Run expires leases and keeps Snapshots up to date until ctx is done, then
// returns nil. Run may be called once; a second call fails. When it returns,
// the handler answers 503 and every open watch and WebSocket ends; Instances
// and Snapshots keep their last contents (they are not closed: their
// subscribers end with their own contexts).
//
// The translator deriving Snapshots reports its failures, if any, through
// runner.HealthOf(ctx) under its own key.
func (r *Registry) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return errors.New("registry: Run called twice")
	}
	r.started, r.running = true, true
	r.mu.Unlock()
	r.loaded() // nothing to load: the instances start empty

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.snapshots.Run(gctx) })
	g.Go(func() error { r.expireLeases(gctx); return nil })
	err := g.Wait()

	r.mu.Lock()
	r.running = false
	r.mu.Unlock()
	close(r.stopped)
	return err
}

// expireLeases checks the leases a few times per lease period.
func (r *Registry) expireLeases(ctx context.Context) {
	t := time.NewTicker(min(max(r.cfg.lease/10, 5*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.expire(time.Now())
		}
	}
}

func (r *Registry) expire(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var changed []*lease
	var removed []string
	for id, l := range r.leases {
		if l.owner != nil {
			continue
		}
		switch {
		case !now.Before(l.removeAt):
			removed = append(removed, id)
		case !now.Before(l.disconnectAt) && l.inst.Connected:
			l.inst.Connected = false
			changed = append(changed, l)
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return
	}
	for _, id := range removed {
		r.cfg.logger.Info("lease expired", "instance", id, "service", r.leases[id].inst.ServiceID)
		r.forget(id)
	}
	r.instances.Batch(func(b *watchable.Batch[string, *Instance]) {
		for _, l := range changed {
			b.Store(l.inst.RuntimeInstanceID, l.inst)
		}
		for _, id := range removed {
			b.Delete(id)
		}
	})
}

// forget drops the bookkeeping for id. r.mu is held.
func (r *Registry) forget(id string) {
	l := r.leases[id]
	delete(r.leases, id)
	delete(r.byEndpoint, endpointOf(l.inst))
	if r.perService[l.inst.ServiceID]--; r.perService[l.inst.ServiceID] <= 0 {
		delete(r.perService, l.inst.ServiceID)
	}
}

func (r *Registry) now() time.Time { return time.Now().UTC() }

// Register validates reg and registers it as an instance leased by heartbeats
// (as POST /v1/services does), returning its runtimeInstanceId. Registering
// the endpoint (serviceId, envTag, protocol, address, port) of an existing
// instance takes that instance over and returns its id. Errors are a
// *FieldError for bad input, ErrTooManyInstances or ErrNotRunning.
func (r *Registry) Register(reg Registration) (string, error) {
	if err := r.cfg.limits.validate(&reg); err != nil {
		return "", err
	}
	return r.register(reg, nil)
}

// register stores a validated registration, held by owner if not nil.
func (r *Registry) register(reg Registration, owner *session) (string, error) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return "", ErrNotRunning
	}
	ep := endpoint{reg.ServiceID, reg.EnvTag, reg.Protocol, reg.Address, reg.Port}
	id, ok := r.byEndpoint[ep]
	l := r.leases[id]
	if !ok {
		if r.perService[reg.ServiceID] >= r.cfg.limits.MaxInstancesPerService {
			return "", fmt.Errorf("register instance of service %q: %w (limit %d)", reg.ServiceID, ErrTooManyInstances, r.cfg.limits.MaxInstancesPerService)
		}
		id = newID()
		l = &lease{inst: &Instance{
			RuntimeInstanceID: id, ServiceID: reg.ServiceID, EnvTag: reg.EnvTag,
			Protocol: reg.Protocol, Address: reg.Address, Port: reg.Port,
		}}
		r.leases[id] = l
		r.byEndpoint[ep] = id
		r.perService[reg.ServiceID]++
		r.cfg.logger.Info("registered", "instance", id, "service", reg.ServiceID, "address", reg.Address, "port", reg.Port)
	}
	l.inst.Version, l.inst.Tags = reg.Version, reg.Tags
	if !l.inst.Connected || l.owner != owner {
		l.inst.ConnectedAt = now
	}
	l.inst.Connected, l.inst.LastSeenAt = true, now
	l.owner = owner
	r.renew(l, now)
	r.instances.Store(id, l.inst)
	return id, nil
}

// renew restarts the lease of an instance without a live socket. r.mu is held.
func (r *Registry) renew(l *lease, now time.Time) {
	l.disconnectAt = now.Add(r.cfg.lease)
	l.removeAt = now.Add(3 * r.cfg.lease)
}

// Heartbeat renews the lease of instance id and marks it connected, as
// PUT /v1/services/{id}/heartbeat does. It fails with ErrUnknownInstance or
// ErrNotRunning.
func (r *Registry) Heartbeat(id string) error {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return ErrNotRunning
	}
	l, ok := r.leases[id]
	if !ok {
		return fmt.Errorf("heartbeat %q: %w", id, ErrUnknownInstance)
	}
	if !l.inst.Connected {
		l.inst.Connected, l.inst.ConnectedAt = true, now
	}
	l.inst.LastSeenAt = now
	r.renew(l, now)
	r.instances.Store(id, l.inst)
	return nil
}

// Deregister removes instance id at once, as DELETE /v1/services/{id} does.
// It fails with ErrUnknownInstance or ErrNotRunning.
func (r *Registry) Deregister(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return ErrNotRunning
	}
	if _, ok := r.leases[id]; !ok {
		return fmt.Errorf("deregister %q: %w", id, ErrUnknownInstance)
	}
	r.cfg.logger.Info("deregistered", "instance", id)
	r.forget(id)
	r.instances.Delete(id)
	return nil
}

// disconnect marks the instance held by s disconnected, to be removed one
// lease later, unless another registration has taken it over since.
func (r *Registry) disconnect(id string, s *session) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.leases[id]
	if !ok || l.owner != s {
		return
	}
	l.owner = nil
	l.inst.Connected = false
	l.disconnectAt, l.removeAt = now, now.Add(r.cfg.lease)
	r.instances.Store(id, l.inst)
}

// Lookup returns the snapshot for key. An empty EnvTag or Protocol in key
// matches every value: the result then merges the matching snapshots and has
// that field empty. Nothing matching gives a snapshot with no nodes. The
// result is the caller's.
//
// Lookup reads Instances directly, so it reflects every Register,
// Deregister and disconnection that returned before it, even before
// Snapshots catches up.
func (r *Registry) Lookup(key DiscoveryKey) *DiscoverySnapshot {
	out := &DiscoverySnapshot{ServiceID: key.ServiceID, EnvTag: key.EnvTag, Protocol: key.Protocol, Nodes: []Instance{}}
	for _, inst := range r.instances.State().All() {
		if key.matches(DiscoveryKey{ServiceID: inst.ServiceID, EnvTag: inst.EnvTag, Protocol: inst.Protocol}) {
			node := *inst.DeepCopy()
			node.LastSeenAt = time.Time{}
			out.Nodes = append(out.Nodes, node)
		}
	}
	sortNodes(out.Nodes)
	return out
}

// matches reports whether the snapshot key k is selected by the lookup q.
func (q DiscoveryKey) matches(k DiscoveryKey) bool {
	return k.ServiceID == q.ServiceID &&
		(q.EnvTag == "" || k.EnvTag == q.EnvTag) &&
		(q.Protocol == "" || k.Protocol == q.Protocol)
}

func sortNodes(nodes []Instance) {
	slices.SortFunc(nodes, func(a, b Instance) int {
		return cmp.Or(
			cmp.Compare(a.EnvTag, b.EnvTag), cmp.Compare(a.Protocol, b.Protocol),
			cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port),
			cmp.Compare(a.RuntimeInstanceID, b.RuntimeInstanceID))
	})
}

// newID returns 128 random bits in hex: unguessable.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// checkToken compares a presented token with a stored digest in constant
// time (digests have a fixed length, so the token's length leaks nothing).
func checkToken(presented string, want [sha256.Size]byte) bool {
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// authorizeRegistration reports whether token may register instances.
func (r *Registry) authorizeRegistration(token string) bool {
	return token != "" && checkToken(token, r.token)
}

// authorizeDiscovery reports whether token may look up and watch.
func (r *Registry) authorizeDiscovery(token string) bool {
	if !r.hasDisc {
		return true
	}
	return token != "" && (checkToken(token, r.discovery) || checkToken(token, r.token))
}
