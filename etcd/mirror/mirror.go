package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/codec"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

var (
	_ runner.Runner  = (*Mirror[string, string])(nil)
	_ runner.Readier = (*Mirror[string, string])(nil)
)

// ErrAlreadyRun is returned by a second call of Run.
var ErrAlreadyRun = errors.New("mirror: Run called twice")

// progressRetry is how often a waiter asks again for a progress
// notification that has not come (etcd sends none while any watch on the
// stream is still catching up).
const progressRetry = 50 * time.Millisecond

// Mirror keeps a watchable map equal to the keys under an etcd prefix; see
// the package documentation. Create one with New and run it (it is a
// runner.Runner and a runner.Readier); read the map through Output.
//
// All methods are safe for concurrent use.
type Mirror[K comparable, V any] struct {
	client *clientv3.Client
	prefix string
	key    func(string) (K, error)
	codec  codec.Codec[V]
	name   string
	log    *slog.Logger
	lo, hi time.Duration

	m      watchable.Map[K, V]
	loaded func() // the map's initializer, done after the first list

	want chan struct{} // a waiter needs a progress notification; capacity 1

	mu       sync.Mutex
	started  bool
	listed   bool          // the first list is done
	held     int64         // the etcd revision the map reflects
	advanced chan struct{} // closed, and replaced, when held grows
	meta     map[K]Meta
	problems map[string]bool // etcd keys reported as problems
	stats    Stats
}

// Meta is what etcd says of a key besides its value.
type Meta struct {
	// Key is the etcd key, prefix included.
	Key string
	// CreateRevision is the revision of the key's creation (since its last
	// deletion), ModRevision that of its last change.
	CreateRevision, ModRevision int64
	// Version counts the changes since the key was created.
	Version int64
	// Lease is the lease the key is attached to, or 0.
	Lease clientv3.LeaseID
}

// Stats are counters of a Mirror's work, for metrics and tests.
type Stats struct {
	// Revision is the etcd revision the map reflects (see Mirror.Revision).
	Revision int64
	// Behind is how many revisions the newest revision etcd reported is
	// ahead of Revision: the lag of a mirror catching up. Revisions of keys
	// outside the prefix count too, until a progress notification or an
	// event of the prefix moves Revision past them.
	Behind int64
	// Relists counts the lists after the first: after a compaction, or
	// after the revision the mirror held became unavailable.
	Relists uint64
	// Responses counts the watch responses applied (one Batch each), Events
	// the events in them that changed the map or were refused.
	Responses, Events uint64
	// DecodeErrors counts keys and values that failed to decode.
	DecodeErrors uint64
	// WatchRestarts counts watches started again after they failed, without
	// a list.
	WatchRestarts uint64
}

// New returns a mirror of the keys under prefix, read through client. key
// turns an etcd key, with prefix removed, into the map's key; it must give
// distinct map keys for distinct etcd keys, and may refuse a key with an
// error (the entry is then left out and reported). Values are decoded as
// JSON unless WithCodec says otherwise.
//
// The map has an initializer named after the mirror (see WithName): it is
// initialized once Run has listed the prefix.
func New[K comparable, V any](client *clientv3.Client, prefix string, key func(string) (K, error), opts ...Option) *Mirror[K, V] {
	cfg := config{name: "mirror " + prefix, minBackoff: 50 * time.Millisecond, maxBackoff: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	c := codec.JSON[V]()
	if cfg.codec != nil {
		var ok bool
		if c, ok = cfg.codec.(codec.Codec[V]); !ok {
			panic(fmt.Sprintf("mirror.WithCodec: a codec of %s for a mirror of %T values", cfg.codecOf, *new(V)))
		}
	}
	if cfg.minBackoff <= 0 || cfg.maxBackoff < cfg.minBackoff {
		panic(fmt.Sprintf("mirror.WithBackoff(%v, %v): want 0 < lo <= hi", cfg.minBackoff, cfg.maxBackoff))
	}
	m := &Mirror[K, V]{
		client: client, prefix: prefix, key: key, codec: c,
		name: cfg.name, log: cfg.logger, lo: cfg.minBackoff, hi: cfg.maxBackoff,
		want:     make(chan struct{}, 1),
		advanced: make(chan struct{}),
		meta:     make(map[K]Meta),
		problems: make(map[string]bool),
	}
	m.loaded = m.m.RegisterInitializer(cfg.name)
	return m
}

// StringKey is the key function of a mirror keyed by the etcd key with the
// prefix removed.
func StringKey(key string) (string, error) { return key, nil }

// Name returns the runner name (see WithName).
func (m *Mirror[K, V]) Name() string { return m.name }

// Prefix returns the prefix mirrored.
func (m *Mirror[K, V]) Prefix() string { return m.prefix }

// Output returns a read-only view of the map. The mirror is its only
// writer. It is initialized once Run has listed the prefix.
func (m *Mirror[K, V]) Output() watchable.View[K, V] { return m.m.View() }

// Ready returns the map's Initialized channel: closed once the first list
// is published.
func (m *Mirror[K, V]) Ready() <-chan struct{} { return m.m.Initialized() }

// Revision returns the etcd revision the map reflects: every change of the
// prefix at or below it is in the map. It is 0 before the first list.
func (m *Mirror[K, V]) Revision() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// Meta returns what etcd says of the key that maps to key, as of Revision.
// It is updated before the map is, so once Load shows a value, Meta is at
// least as new as that value.
func (m *Mirror[K, V]) Meta(key K) (Meta, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, ok := m.meta[key]
	return md, ok
}

// Stats returns the mirror's counters.
func (m *Mirror[K, V]) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Revision = m.held
	s.Behind = max(0, s.Behind-m.held) // stats.Behind holds the newest revision seen
	return s
}

// WaitRevision waits until the map reflects etcd revision rev (see
// Revision), typically the revision of a write the caller made, and
// returns nil; or returns an error wrapping ctx.Err() when ctx ends first.
// It asks etcd for a progress notification when rev brings no event of the
// prefix. It waits for Run: on a mirror that is not running, it waits until
// ctx ends.
func (m *Mirror[K, V]) WaitRevision(ctx context.Context, rev int64) error {
	var t *time.Timer
	for {
		m.mu.Lock()
		held, advanced := m.held, m.advanced
		m.mu.Unlock()
		if held >= rev {
			if t != nil {
				t.Stop()
			}
			return nil
		}
		select {
		case m.want <- struct{}{}:
		default:
		}
		if t == nil {
			t = time.NewTimer(progressRetry)
		} else {
			t.Reset(progressRetry)
		}
		select {
		case <-advanced:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("wait for revision %d of %s (the mirror is at %d): %w", rev, m.prefix, held, ctx.Err())
		}
	}
}

// Run lists the prefix, publishes it, and follows its changes until ctx
// ends, then returns nil; the map keeps its last contents. Failures to
// reach etcd are retried with backoff and reported meanwhile through
// runner.HealthOf(ctx) under the key "etcd <prefix>"; undecodable entries
// under their etcd key. Run may be called once.
func (m *Mirror[K, V]) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return ErrAlreadyRun
	}
	m.started = true
	m.mu.Unlock()

	health := runner.HealthOf(ctx)
	// The watch and the progress requests must share a gRPC stream, which
	// the client picks by the context's metadata. WithRequireLeader also
	// makes etcd end the watch when its member loses the leader, rather than
	// leave the mirror following a member cut off from the cluster.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.requestProgress(wctx)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()

	problem := "etcd " + m.prefix
	b := backoff{lo: m.lo, hi: m.hi}
	for {
		if err := m.list(ctx, health); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			health.Report(problem, fmt.Errorf("list %s: %w", m.prefix, err))
			m.log.Warn("list failed", "prefix", m.prefix, "error", err)
			if !b.wait(ctx) {
				return nil
			}
			continue
		}
		b.reset()
		health.Report(problem, nil)
		for {
			compacted, err := m.watch(wctx, health, problem, &b)
			if ctx.Err() != nil {
				return nil
			}
			if compacted {
				m.log.Info("revision compacted: listing again", "prefix", m.prefix, "revision", m.Revision())
				break
			}
			health.Report(problem, fmt.Errorf("watch %s: %w", m.prefix, err))
			m.log.Warn("watch failed", "prefix", m.prefix, "error", err)
			if !b.wait(ctx) {
				return nil
			}
			m.mu.Lock()
			m.stats.WatchRestarts++
			m.mu.Unlock()
		}
	}
}

// requestProgress asks etcd for a progress notification whenever a waiter
// wants one, until ctx ends.
func (m *Mirror[K, V]) requestProgress(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.want:
			// Failures (no watch yet, no connection) are for the waiter
			// to outlast: it asks again.
			_ = m.client.RequestProgress(ctx)
		}
	}
}

// list reads the whole prefix and makes it the map's contents.
func (m *Mirror[K, V]) list(ctx context.Context, health runner.Health) error {
	resp, err := m.client.Get(ctx, m.prefix, clientv3.WithPrefix())
	if err != nil {
		return err
	}
	entries := make(map[K]V, len(resp.Kvs))
	meta := make(map[K]Meta, len(resp.Kvs))
	bad := make(map[string]error)
	for _, kv := range resp.Kvs {
		k, v, err := m.decode(kv)
		if err != nil {
			bad[string(kv.Key)] = err
			continue
		}
		entries[k] = v
		meta[k] = metaOf(kv)
	}
	rev := resp.Header.Revision

	m.mu.Lock()
	if rev < m.held {
		m.log.Warn("etcd answered a list at an older revision than the mirror held: was it restored from a backup?",
			"prefix", m.prefix, "revision", rev, "held", m.held)
	}
	m.m.Replace(entries)
	m.meta = meta
	if m.listed {
		m.stats.Relists++
	}
	m.listed = true
	m.stats.DecodeErrors += uint64(len(bad))
	m.stats.Behind = max(m.stats.Behind, rev)
	var reports []report
	for key := range m.problems {
		if _, still := bad[key]; !still {
			delete(m.problems, key)
			reports = append(reports, report{key, nil})
		}
	}
	for key, err := range bad {
		m.problems[key] = true
		reports = append(reports, report{key, err})
	}
	m.setHeld(rev)
	m.mu.Unlock()

	for _, r := range reports {
		health.Report(r.key, r.err)
	}
	m.loaded()
	return nil
}

// watch follows the prefix from the revision after the one held until
// the watch ends: it reports compacted when that revision is no longer
// available (the caller lists again), and otherwise the error that ended
// the watch.
func (m *Mirror[K, V]) watch(ctx context.Context, health runner.Health, problem string, b *backoff) (compacted bool, err error) {
	from := m.Revision() + 1
	wch := m.client.Watch(ctx, m.prefix, clientv3.WithPrefix(), clientv3.WithRev(from))
	healthy := false
	for resp := range wch {
		if resp.CompactRevision != 0 {
			return true, nil
		}
		if err := resp.Err(); err != nil {
			return false, err
		}
		if !healthy { // a watch that works: the next failure starts the backoff over
			health.Report(problem, nil)
			b.reset()
			healthy = true
		}
		if resp.IsProgressNotify() {
			m.mu.Lock()
			m.stats.Behind = max(m.stats.Behind, resp.Header.Revision)
			m.setHeld(resp.Header.Revision)
			m.mu.Unlock()
			continue
		}
		m.apply(resp, health)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, errors.New("the watch ended")
}

// apply publishes the events of one watch response as one batch.
func (m *Mirror[K, V]) apply(resp clientv3.WatchResponse, health runner.Health) {
	var reports []report
	m.mu.Lock()
	held := m.held
	top := held
	events := 0
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision > held {
			events++
		}
	}
	if events > 0 {
		m.m.Batch(func(b *watchable.Batch[K, V]) {
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision <= held {
					continue // a resumed watch repeating what the map has
				}
				top = ev.Kv.ModRevision
				key := string(ev.Kv.Key)
				var err error
				if ev.Type == mvccpb.DELETE {
					var k K
					if k, err = m.key(strings.TrimPrefix(key, m.prefix)); err == nil {
						b.Delete(k)
						delete(m.meta, k)
					}
					err = nil // a key refused when put is gone: nothing to report
				} else {
					var k K
					var v V
					if k, v, err = m.decode(ev.Kv); err == nil {
						b.Store(k, v)
						m.meta[k] = metaOf(ev.Kv)
					} else if k, kerr := m.key(strings.TrimPrefix(key, m.prefix)); kerr == nil {
						b.Delete(k) // the value it had is no longer etcd's
						delete(m.meta, k)
					}
				}
				switch {
				case err != nil:
					m.stats.DecodeErrors++
					m.problems[key] = true
					reports = append(reports, report{key, err})
				case m.problems[key]:
					delete(m.problems, key)
					reports = append(reports, report{key, nil})
				}
			}
		})
	}
	m.stats.Responses++
	m.stats.Events += uint64(events)
	m.stats.Behind = max(m.stats.Behind, resp.Header.Revision)
	m.setHeld(top)
	m.mu.Unlock()
	for _, r := range reports {
		health.Report(r.key, r.err)
	}
}

// decode turns a key-value into the map's key and value.
func (m *Mirror[K, V]) decode(kv *mvccpb.KeyValue) (K, V, error) {
	var v V
	key := string(kv.Key)
	k, err := m.key(strings.TrimPrefix(key, m.prefix))
	if err != nil {
		return k, v, fmt.Errorf("decode key %s: %w", key, err)
	}
	if v, err = m.codec.Decode(kv.Value); err != nil {
		return k, v, fmt.Errorf("decode the value of %s: %w", key, err)
	}
	return k, v, nil
}

// setHeld moves the revision held forward to rev, waking waiters. m.mu is
// held.
func (m *Mirror[K, V]) setHeld(rev int64) {
	if rev == m.held {
		return
	}
	m.held = rev
	close(m.advanced)
	m.advanced = make(chan struct{})
}

func metaOf(kv *mvccpb.KeyValue) Meta {
	return Meta{
		Key: string(kv.Key), CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision,
		Version: kv.Version, Lease: clientv3.LeaseID(kv.Lease),
	}
}

type report struct {
	key string
	err error
}

// backoff is the wait between failed attempts: lo, doubling up to hi.
type backoff struct {
	lo, hi, next time.Duration
}

func (b *backoff) reset() { b.next = 0 }

// wait sleeps the next backoff, or until ctx ends (then it reports false).
func (b *backoff) wait(ctx context.Context) bool {
	b.next = min(max(b.next*2, b.lo), b.hi)
	t := time.NewTimer(b.next)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
