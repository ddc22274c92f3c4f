package registrystore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"

	"github.com/switchyard-go/switchyard/etcd/mirror"
	"github.com/switchyard-go/switchyard/etcd/sink"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

var _ registry.Store = (*Store)(nil)

// errRunTwice is returned by a second Run.
var errRunTwice = errors.New("registrystore: Run called twice (a Store serves one Registry, once)")

// takeoverAttempts bounds the retries of a registration whose key changed
// under it.
const takeoverAttempts = 3

// Store is a registry.Store in etcd; see the package documentation. Create
// one with New and pass it to registry.WithStore; the Registry runs it.
// Its methods are safe for concurrent use.
type Store struct {
	client *clientv3.Client
	prefix string // <prefix>/instances/

	mirror *mirror.Mirror[string, *registry.Instance]
	// held are the instances this replica's WebSockets hold, by key below
	// prefix (<serviceId>/<runtimeInstanceId>); the sink keeps them in
	// etcd under the replica's session lease.
	held watchable.Map[string, *registry.Instance]

	// mu serializes the registrations of this replica, and guards what
	// follows.
	mu      sync.Mutex
	started bool
	running bool
	cfg     registry.StoreConfig
	ttl     int64 // the lease of heartbeat-leased instances, in seconds
	sink    *sink.Sink[string, *registry.Instance]
	holders map[string]registry.Holder // by runtimeInstanceId, for held
}

// Stats are counters of a Store's work.
type Stats struct {
	// Mirror is the mirror of the instances.
	Mirror mirror.Stats
	// Sink writes the instances this replica's WebSockets hold.
	Sink sink.Stats
}

// New returns a store of the instances under prefix + "/instances/",
// reached through client. Several registries on one etcd share their
// instances when they use the same prefix.
func New(client *clientv3.Client, prefix string) *Store {
	p := strings.TrimSuffix(prefix, "/") + "/instances/"
	s := &Store{client: client, prefix: p, holders: make(map[string]registry.Holder)}
	s.mirror = mirror.New[string, *registry.Instance](client, p, instanceID, mirror.WithName("registry instances"))
	return s
}

// instanceID decodes a key below the prefix: <serviceId>/<runtimeInstanceId>.
func instanceID(key string) (string, error) {
	i := strings.LastIndexByte(key, '/')
	if i <= 0 || i == len(key)-1 {
		return "", fmt.Errorf("want <serviceId>/<runtimeInstanceId>, have %q", key)
	}
	return key[i+1:], nil
}

// Instances returns the mirror of the instances: initialized once the
// store has listed them.
func (s *Store) Instances() watchable.View[string, *registry.Instance] { return s.mirror.Output() }

// Meta returns what etcd says of instance id's key, as of the revision the
// mirror has reached: the lease it is under, its revisions.
func (s *Store) Meta(id string) (mirror.Meta, bool) { return s.mirror.Meta(id) }

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	sk := s.sink
	s.mu.Unlock()
	st := Stats{Mirror: s.mirror.Stats()}
	if sk != nil {
		st.Sink = sk.Stats()
	}
	return st
}

// Run mirrors the instances, and keeps the ones this replica's WebSockets
// hold under its session lease, until ctx ends; then it revokes the
// session, so that those instances vanish at once.
func (s *Store) Run(ctx context.Context, cfg registry.StoreConfig) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errRunTwice
	}
	s.started, s.running, s.cfg = true, true, cfg
	s.ttl = ttlOf(cfg.Lease)
	s.sink = sink.New(s.client, s.prefix, s.held.View(), func(k string) string { return k },
		sink.WithName("registry sessions"), sink.WithTTL(cfg.Lease), sink.WithLogger(cfg.Logger))
	sk := s.sink
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.mirror.Run(gctx) })
	g.Go(func() error { return sk.Run(gctx) })
	return g.Wait()
}

// begin checks that the store runs and waits until its mirror has listed
// the instances; it returns the configuration and the sink.
func (s *Store) begin(ctx context.Context) (registry.StoreConfig, *sink.Sink[string, *registry.Instance], error) {
	s.mu.Lock()
	running, cfg, sk := s.running, s.cfg, s.sink
	s.mu.Unlock()
	if !running {
		return cfg, nil, registry.ErrNotRunning
	}
	select {
	case <-s.mirror.Ready():
		return cfg, sk, nil
	case <-ctx.Done():
		return cfg, nil, fmt.Errorf("wait for the instances to be listed: %w", ctx.Err())
	}
}

// Register stores reg in etcd: under a lease of its own when held is
// registry.NoHolder, else under this replica's session lease. It returns
// once the local mirror shows the instance.
func (s *Store) Register(ctx context.Context, reg registry.Registration, held registry.Holder) (string, error) {
	cfg, sk, err := s.begin(ctx)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 1; ; attempt++ {
		id, retry, err := s.register(ctx, cfg, sk, reg, held)
		if !retry || attempt == takeoverAttempts {
			return id, err
		}
	}
}

// register is one attempt of Register; retry reports that the instance's
// key changed under it. s.mu is held.
func (s *Store) register(ctx context.Context, cfg registry.StoreConfig, sk *sink.Sink[string, *registry.Instance], reg registry.Registration, held registry.Holder) (id string, retry bool, err error) {
	now := cfg.Now().UTC()
	state := s.mirror.Output().State()
	var existing *registry.Instance
	perService := 0
	for _, inst := range state.All() {
		if inst.ServiceID != reg.ServiceID {
			continue
		}
		perService++
		if inst.EnvTag == reg.EnvTag && inst.Protocol == reg.Protocol && inst.Address == reg.Address && inst.Port == reg.Port {
			existing = inst
		}
	}
	inst := &registry.Instance{
		ServiceID: reg.ServiceID, EnvTag: reg.EnvTag, Environment: reg.Environment, Version: reg.Version,
		Protocol: reg.Protocol, Address: reg.Address, Port: reg.Port, Tags: reg.Tags,
		Connected: true, ConnectedAt: now, LastSeenAt: now,
	}
	var meta mirror.Meta
	if existing != nil {
		inst.RuntimeInstanceID = existing.RuntimeInstanceID
		meta, _ = s.mirror.Meta(existing.RuntimeInstanceID)
		if existing.Connected && s.holders[existing.RuntimeInstanceID] == held {
			inst.ConnectedAt = existing.ConnectedAt
		}
	} else {
		if perService >= cfg.Limits.MaxInstancesPerService {
			return "", false, fmt.Errorf("register instance of service %q: %w: the service has the maximum of %d",
				reg.ServiceID, registry.ErrTooManyInstances, cfg.Limits.MaxInstancesPerService)
		}
		if state.Len() >= cfg.Limits.MaxInstances {
			return "", false, fmt.Errorf("register instance of service %q: %w: the registry has the maximum of %d instances",
				reg.ServiceID, registry.ErrTooManyInstances, cfg.Limits.MaxInstances)
		}
		inst.RuntimeInstanceID = reg.RuntimeInstanceID // the id it had, before a restart of the registry
		if _, taken := state.Get(inst.RuntimeInstanceID); inst.RuntimeInstanceID == "" || taken {
			inst.RuntimeInstanceID = newID()
		}
	}
	id = inst.RuntimeInstanceID
	rel := reg.ServiceID + "/" + id
	key := s.prefix + rel
	value, err := json.Marshal(inst)
	if err != nil {
		return "", false, fmt.Errorf("encode instance %s: %w", id, err)
	}

	if held == registry.NoHolder {
		lease, err := s.client.Grant(ctx, s.ttl)
		if err != nil {
			return "", false, fmt.Errorf("grant the lease of instance %s: %w", id, err)
		}
		resp, err := s.client.Put(ctx, key, string(value), clientv3.WithLease(lease.ID))
		if err != nil {
			return "", false, fmt.Errorf("write instance %s: %w", id, err)
		}
		if _, ok := s.holders[id]; ok { // no longer held by a socket of ours
			delete(s.holders, id)
			s.held.Delete(rel) // the sink's fenced delete leaves the key on its new lease alone
		}
		if err := s.mirror.WaitRevision(ctx, resp.Header.Revision); err != nil {
			return "", false, err
		}
	} else {
		// Held by a socket: the key goes under the session lease, which
		// the sink keeps. An instance someone else holds is taken over
		// first, unless it changed since the mirror saw it.
		var rev int64
		if own := sk.Lease(); existing != nil && own != 0 && meta.Lease != own {
			resp, err := s.client.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(key), "=", meta.ModRevision)).
				Then(clientv3.OpPut(key, string(value), clientv3.WithLease(own))).
				Commit()
			if err != nil {
				return "", false, fmt.Errorf("take over instance %s: %w", id, err)
			}
			if !resp.Succeeded {
				if err := s.mirror.WaitRevision(ctx, resp.Header.Revision); err != nil {
					return "", false, err
				}
				return "", true, fmt.Errorf("take over instance %s: it changed meanwhile", id)
			}
			rev = resp.Header.Revision
		}
		s.holders[id] = held
		s.held.Store(rel, inst)
		srev, err := sk.Sync(ctx)
		if err == nil {
			err = s.mirror.WaitRevision(ctx, max(rev, srev))
		}
		if err != nil {
			// The caller is told it failed: the socket holds nothing, and
			// what the sink wrote meanwhile, it deletes.
			delete(s.holders, id)
			s.held.Delete(rel)
			return "", false, fmt.Errorf("register instance %s: %w", id, err)
		}
	}
	if _, ok := s.mirror.Output().Load(id); !ok {
		return "", true, fmt.Errorf("register instance %s: etcd refused the write", id)
	}
	if m, _ := s.mirror.Meta(id); held != registry.NoHolder && m.Lease != sk.Lease() {
		return "", true, fmt.Errorf("register instance %s: another writer holds its key", id)
	}
	return id, false, nil
}

// lookup finds instance id in the mirror, first catching up with etcd if
// it is not there: the instance may have been registered through another
// replica an instant ago.
func (s *Store) lookup(ctx context.Context, id string) (*registry.Instance, mirror.Meta, error) {
	inst, ok := s.mirror.Output().Load(id)
	if !ok {
		// Any linearizable read tells etcd's current revision; this one
		// reads a key that never exists.
		resp, err := s.client.Get(ctx, s.prefix, clientv3.WithCountOnly())
		if err != nil {
			return nil, mirror.Meta{}, fmt.Errorf("read the revision of etcd: %w", err)
		}
		if err := s.mirror.WaitRevision(ctx, resp.Header.Revision); err != nil {
			return nil, mirror.Meta{}, err
		}
		if inst, ok = s.mirror.Output().Load(id); !ok {
			return nil, mirror.Meta{}, fmt.Errorf("instance %q: %w", id, registry.ErrUnknownInstance)
		}
	}
	meta, _ := s.mirror.Meta(id)
	return inst, meta, nil
}

// Renew renews the lease of instance id. For a connected instance that is
// one lease renewal and no write. A disconnected one (its socket closed) is
// written again, connected and leased by heartbeats.
func (s *Store) Renew(ctx context.Context, id string) error {
	cfg, _, err := s.begin(ctx)
	if err != nil {
		return err
	}
	inst, meta, err := s.lookup(ctx, id)
	if err != nil {
		return err
	}
	if inst.Connected {
		if meta.Lease == clientv3.NoLease {
			return nil // a key written without a lease never expires
		}
		if _, err := s.client.KeepAliveOnce(ctx, meta.Lease); err != nil {
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				return fmt.Errorf("heartbeat %q: its lease expired: %w", id, registry.ErrUnknownInstance)
			}
			return fmt.Errorf("heartbeat %q: %w", id, err)
		}
		return nil
	}
	now := cfg.Now().UTC()
	re := *inst
	re.Connected, re.ConnectedAt, re.LastSeenAt = true, now, now
	value, err := json.Marshal(&re)
	if err != nil {
		return fmt.Errorf("encode instance %s: %w", id, err)
	}
	lease, err := s.client.Grant(ctx, s.ttl)
	if err != nil {
		return fmt.Errorf("grant the lease of instance %s: %w", id, err)
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(meta.Key), "=", meta.ModRevision)).
		Then(clientv3.OpPut(meta.Key, string(value), clientv3.WithLease(lease.ID))).
		Commit()
	if err != nil {
		return fmt.Errorf("reconnect instance %s: %w", id, err)
	}
	// Not succeeded: it changed meanwhile (registered again, removed); the
	// heartbeat answers for what it is now.
	return s.mirror.WaitRevision(ctx, resp.Header.Revision)
}

// Deregister deletes instance id.
func (s *Store) Deregister(ctx context.Context, id string) error {
	if _, _, err := s.begin(ctx); err != nil {
		return err
	}
	_, meta, err := s.lookup(ctx, id)
	if err != nil {
		return err
	}
	resp, err := s.client.Delete(ctx, meta.Key)
	if err != nil {
		return fmt.Errorf("deregister %s: %w", id, err)
	}
	s.mu.Lock()
	if _, ok := s.holders[id]; ok {
		delete(s.holders, id)
		s.held.Delete(strings.TrimPrefix(meta.Key, s.prefix)) // the key is gone: the sink deletes nothing
	}
	s.mu.Unlock()
	if resp.Deleted == 0 {
		return fmt.Errorf("deregister %q: %w", id, registry.ErrUnknownInstance)
	}
	return s.mirror.WaitRevision(ctx, resp.Header.Revision)
}

// Disconnect marks instance id disconnected when its socket, held, closed,
// and moves it to a lease of its own that nobody renews: it goes one lease
// later unless a heartbeat or a registration brings it back.
func (s *Store) Disconnect(ctx context.Context, id string, held registry.Holder) error {
	cfg, sk, err := s.begin(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.holders[id]; !ok || h != held || held == registry.NoHolder {
		return nil
	}
	delete(s.holders, id)
	inst, ok := s.mirror.Output().Load(id)
	meta, _ := s.mirror.Meta(id)
	if !ok {
		return nil
	}
	rel := strings.TrimPrefix(meta.Key, s.prefix)
	gone := *inst
	gone.Connected, gone.LastSeenAt = false, cfg.Now().UTC()
	value, err := json.Marshal(&gone)
	if err != nil {
		s.held.Delete(rel)
		return fmt.Errorf("encode instance %s: %w", id, err)
	}
	lease, err := s.client.Grant(ctx, s.ttl)
	if err != nil {
		s.held.Delete(rel) // the sink deletes it: gone now rather than later
		return fmt.Errorf("grant the lease of disconnected instance %s: %w", id, err)
	}
	// Only while the session holds the key: another replica's socket may
	// have taken it over (its client reconnected there).
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(meta.Key), "=", sk.Lease())).
		Then(clientv3.OpPut(meta.Key, string(value), clientv3.WithLease(lease.ID))).
		Commit()
	// Whatever happened, the session no longer holds it; on the new lease
	// (or another replica's) the sink's fenced delete leaves it alone.
	s.held.Delete(rel)
	if err != nil {
		return fmt.Errorf("mark instance %s disconnected: %w", id, err)
	}
	return s.mirror.WaitRevision(ctx, resp.Header.Revision)
}

// newID returns 128 random bits in hex, as registry ids are.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// ttlOf is the etcd TTL of a lease period: whole seconds, at least one.
func ttlOf(d time.Duration) int64 { return max(1, int64(math.Ceil(d.Seconds()))) }
