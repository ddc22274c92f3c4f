package registry

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

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
	// instances already, or the registry has Limits.MaxInstances.
	ErrTooManyInstances = errors.New("registry: too many instances for the service")
	// ErrNotRunning: Run has not started yet, or has returned.
	ErrNotRunning = errors.New("registry: not running")
)

// Registry is the service-discovery control plane. It owns a watchable map of
// Instances, derives a map of DiscoverySnapshots from it, and serves the HTTP
// and WebSocket JSON-RPC APIs (Handler). It is a runner.Runner and a
// runner.Readier: Run expires leases and keeps the snapshots up to date, and
// Ready follows the snapshots' initialization.
//
// All methods are safe for concurrent use.
type Registry struct {
	cfg       config        // tokens cleared: only their digests are kept
	creds     []*credential // registration tokens
	discovery [sha256.Size]byte
	hasDisc   bool

	counts                       counters
	authLog, forbidLog, limitLog sampledLog   // one record a second each
	watchers, sockets            atomic.Int64 // live SSE watches and subscriptions; open WebSockets

	// store holds the instances and their leases: every change to an
	// instance goes through it.
	store *instanceStore
	// snapshots derives the DiscoverySnapshots from the instances; Run
	// runs it.
	snapshots *snapshotGrouping

	encodings encodings // shared JSON of watch answers
	deltas    deltas    // shared JSON of delta watch answers
	index     serviceIndex

	mu      sync.Mutex
	started bool          // Run was called
	stopped chan struct{} // closed when Run returns
}

// New returns a Registry configured by opts; a registration token is
// required (WithToken, or at least one WithServiceToken). It fails with an
// error wrapping ErrNoToken when none, or only empty ones, are given. The
// registry serves nothing before Run: see Run and Handler.
func New(opts ...Option) (*Registry, error) {
	cfg := newConfig(opts)
	r := &Registry{
		creds:   newCredentials(cfg),
		stopped: make(chan struct{}),
	}
	if len(r.creds) == 0 {
		return nil, fmt.Errorf("%w: New needs WithToken, or WithServiceToken, with a non-empty token", ErrNoToken)
	}
	if cfg.discoveryToken != "" {
		r.discovery = sha256.Sum256([]byte(cfg.discoveryToken))
		r.hasDisc = true
	}
	cfg.token, cfg.discoveryToken, cfg.scoped = "", "", nil
	r.cfg = cfg
	if cfg.store == nil {
		cfg.store = newMemoryStore()
	}
	r.store = newInstanceStore(cfg.store)
	r.snapshots = newSnapshots(r.store.instances, cfg.logger)
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
// initialized (see watchable.View.Initialized) once Run has started. A
// heartbeat that moves only LastSeenAt is no change to it (see
// Instance.Equal): it wakes no subscriber, yet Load and State show the
// newest LastSeenAt.
func (r *Registry) Instances() watchable.View[string, *Instance] { return r.store.instances }

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
	r.started = true
	r.mu.Unlock()

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.store.run(gctx, r.cfg) })
	g.Go(func() error { return r.snapshots.Run(gctx) })
	g.Go(func() error { r.index.follow(gctx, r.store.instances); return nil })
	err := g.Wait()
	close(r.stopped)
	return err
}

// isRunning reports whether the registry serves requests: Run has started
// and not returned.
func (r *Registry) isRunning() bool { return r.store.isRunning() }

// Register validates reg and registers it as an instance leased by heartbeats
// (as POST /v1/services does), returning its runtimeInstanceId. Registering
// the endpoint (serviceId, envTag, protocol, address, port) of an existing
// instance takes that instance over and returns its id. Otherwise the
// instance gets reg.RuntimeInstanceID when it is set and no other instance
// holds it (so that a client registering again after the registry
// restarted keeps its identity), or else a new random id. Errors are a
// *FieldError for bad input or an address the AddressPolicy refuses,
// ErrTooManyInstances or ErrNotRunning.
func (r *Registry) Register(reg Registration) (string, error) {
	if err := r.cfg.limits.validate(&reg); err != nil {
		return "", err
	}
	if why := r.cfg.addresses.check(reg.Address, reg.Port, nil); why != "" {
		return "", fieldErr("address", "%s", why)
	}
	return r.register(reg, nil)
}

// Heartbeat renews the lease of instance id and marks it connected, as
// PUT /v1/services/{id}/heartbeat does. It fails with ErrUnknownInstance or
// ErrNotRunning.
func (r *Registry) Heartbeat(id string) error { return r.store.renew(id) }

// Deregister removes instance id at once, as DELETE /v1/services/{id} does.
// It fails with ErrUnknownInstance or ErrNotRunning.
func (r *Registry) Deregister(id string) error { return r.store.deregister(id) }

// Lookup returns the snapshot for key. An empty EnvTag or Protocol in key
// matches every value: the result then merges the matching snapshots and has
// that field empty. Nothing matching gives a snapshot with no nodes. The
// result is the caller's.
//
// Lookup reads Instances directly, so it reflects every Register,
// Deregister, heartbeat and disconnection that returned before it, even
// before Snapshots catches up. Unlike the nodes of Snapshots (and of watches
// and subscriptions), its nodes carry LastSeenAt: a lookup is asked for, so
// the newest heartbeat time costs nobody a wake-up.
func (r *Registry) Lookup(key DiscoveryKey) *DiscoverySnapshot {
	out := &DiscoverySnapshot{ServiceID: key.ServiceID, EnvTag: key.EnvTag, Protocol: key.Protocol, Nodes: []Instance{}}
	for _, inst := range r.instancesOf(r.store.instances.State(), key) {
		out.Nodes = append(out.Nodes, *watchable.DeepCopy(inst))
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

// validInstanceID reports whether id has the shape of an id newID makes:
// 32 lowercase hexadecimal digits.
func validInstanceID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
