package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/codec"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

var (
	_ runner.Runner  = (*Sink[string, string])(nil)
	_ runner.Readier = (*Sink[string, string])(nil)
)

// ErrAlreadyRun is returned by a second call of Run.
var ErrAlreadyRun = errors.New("sink: Run called twice")

// Sink writes a watchable map's entries under an etcd prefix, attached to
// its own lease; see the package documentation. Create one with New and run
// it (it is a runner.Runner and a runner.Readier).
//
// All methods are safe for concurrent use.
type Sink[K comparable, V any] struct {
	client *clientv3.Client
	prefix string
	in     watchable.View[K, V]
	key    func(K) string
	codec  codec.Codec[V]
	name   string
	log    *slog.Logger
	ttl    time.Duration
	lo, hi time.Duration
	maxOps int

	ready chan struct{} // closed once the first snapshot is written

	mu       sync.Mutex
	started  bool
	lease    clientv3.LeaseID
	written  uint64        // the input revision written
	rev      int64         // the etcd revision of the latest write
	progress chan struct{} // closed, and replaced, when written grows
	refused  map[string]bool
	stats    Stats
}

// Stats are counters of a Sink's work, for metrics and tests.
type Stats struct {
	// Lease is the lease the sink writes with, 0 while it has none.
	Lease clientv3.LeaseID
	// Grants counts the leases granted: more than one means leases were
	// lost.
	Grants uint64
	// Txns counts the etcd transactions that wrote entries; Puts and
	// Deletes the keys they wrote and deleted.
	Txns, Puts, Deletes uint64
	// Refused is the number of keys held by another writer, left alone.
	Refused int
}

// op is a pending write of one key: a put of value, or a delete.
type op struct {
	del   bool
	value string
}

// New returns a sink that writes the entries of in under prefix, each at
// prefix + key(k), encoded as JSON unless WithCodec says otherwise. key
// must give distinct keys for distinct map keys.
func New[K comparable, V any](client *clientv3.Client, prefix string, in watchable.View[K, V], key func(K) string, opts ...Option) *Sink[K, V] {
	cfg := config{name: "sink " + prefix, ttl: DefaultTTL, minBackoff: 50 * time.Millisecond, maxBackoff: 2 * time.Second, maxOps: 64}
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
			panic(fmt.Sprintf("sink.WithCodec: a codec of %s for a sink of %T values", cfg.codecOf, *new(V)))
		}
	}
	switch {
	case cfg.ttl <= 0:
		panic(fmt.Sprintf("sink.WithTTL(%v): want a positive TTL", cfg.ttl))
	case cfg.minBackoff <= 0 || cfg.maxBackoff < cfg.minBackoff:
		panic(fmt.Sprintf("sink.WithBackoff(%v, %v): want 0 < lo <= hi", cfg.minBackoff, cfg.maxBackoff))
	case cfg.maxOps <= 0:
		panic(fmt.Sprintf("sink.WithMaxOps(%d): want a positive number", cfg.maxOps))
	}
	return &Sink[K, V]{
		client: client, prefix: prefix, in: in, key: key, codec: c,
		name: cfg.name, log: cfg.logger, ttl: cfg.ttl, lo: cfg.minBackoff, hi: cfg.maxBackoff, maxOps: cfg.maxOps,
		ready:    make(chan struct{}),
		progress: make(chan struct{}),
		refused:  make(map[string]bool),
	}
}

// Name returns the runner name (see WithName).
func (s *Sink[K, V]) Name() string { return s.name }

// Ready is closed once the input map's first complete contents are written.
func (s *Sink[K, V]) Ready() <-chan struct{} { return s.ready }

// Lease returns the lease the sink writes with, or 0 while it has none (not
// running, or granting a new one). A caller that writes a key with it and
// then stores the entry in the input map hands the key to the sink: the
// sink's fenced write finds its own lease there.
func (s *Sink[K, V]) Lease() clientv3.LeaseID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease
}

// Stats returns the sink's counters.
func (s *Sink[K, V]) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Lease = s.lease
	st.Refused = len(s.refused)
	return st
}

// Sync waits until the input map's contents as of the call are written (or
// refused, for keys another writer holds), and returns the etcd revision of
// the sink's latest write: a mirror of the prefix that has reached it
// reflects them. It returns an error wrapping ctx.Err() if ctx ends first;
// on a sink that is not running, it waits until then.
func (s *Sink[K, V]) Sync(ctx context.Context) (int64, error) {
	target := s.in.Revision()
	for {
		s.mu.Lock()
		written, rev, progress := s.written, s.rev, s.progress
		s.mu.Unlock()
		if written >= target {
			return rev, nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return 0, fmt.Errorf("sync %s: %w", s.prefix, ctx.Err())
		}
	}
}

// Run writes the input map under the prefix until ctx ends, then revokes
// the lease (the keys vanish) and returns nil. It waits for the input map
// to be initialized before writing anything. Failures to reach etcd are
// retried with backoff and reported meanwhile through runner.HealthOf(ctx)
// under the key "etcd <prefix>"; keys held by another writer under their
// etcd key. Run may be called once.
func (s *Sink[K, V]) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrAlreadyRun
	}
	s.started = true
	s.mu.Unlock()

	select {
	case <-s.in.Initialized():
	case <-ctx.Done():
		return nil
	}
	w := &writer[K, V]{s: s, health: runner.HealthOf(ctx), problem: "etcd " + s.prefix, pending: make(map[string]op)}
	defer w.stop()
	return w.run(ctx)
}

// writer is the state of one Run.
type writer[K comparable, V any] struct {
	s       *Sink[K, V]
	health  runner.Health
	problem string

	lease  clientv3.LeaseID   // 0 while there is none
	prev   []clientv3.LeaseID // leases lost, whose keys move to lease
	lost   chan struct{}      // closed when lease is lost
	cancel context.CancelFunc
	wg     sync.WaitGroup // the keep-alive reader

	pending map[string]op // by etcd key
	target  uint64        // the input revision pending brings the keys to
}

func (w *writer[K, V]) run(ctx context.Context) error {
	s := w.s
	sub := s.in.Subscribe(ctx)
	b := backoff{lo: s.lo, hi: s.hi}
	for {
		if w.lease == 0 {
			if !w.grant(ctx, &b) {
				return nil
			}
			if w.ready() {
				// Everything again, under the new lease: the keys under
				// the lost one move over, and the rest go with it.
				rev := s.in.Revision()
				for k, v := range s.in.State().All() {
					w.put(k, v)
				}
				w.target = max(w.target, rev)
			}
		}
		if len(w.pending) > 0 || len(w.prev) > 0 {
			if err := w.flush(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if errors.Is(err, rpctypes.ErrLeaseNotFound) {
					w.dropLease("etcd no longer knows the lease")
					continue
				}
				w.health.Report(w.problem, fmt.Errorf("write under %s: %w", s.prefix, err))
				s.log.Warn("write failed", "prefix", s.prefix, "error", err)
				if !w.sleep(ctx, &b) {
					return nil
				}
				continue
			}
			b.reset()
			w.health.Report(w.problem, nil)
			w.markWritten()
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.lost:
			w.dropLease("the lease expired before etcd could renew it")
		case snap, ok := <-sub:
			if !ok {
				return nil
			}
			for _, u := range snap.Updates {
				if u.Delete {
					w.pending[s.prefix+s.key(u.Key)] = op{del: true}
				} else {
					w.put(u.Key, u.Value)
				}
			}
			w.target = max(w.target, snap.Revision)
			if len(w.pending) == 0 { // nothing to write: the revision is written
				w.markWritten()
			}
		}
	}
}

// put makes k's value pending, or reports why it cannot be encoded.
func (w *writer[K, V]) put(k K, v V) {
	key := w.s.prefix + w.s.key(k)
	data, err := w.s.codec.Encode(v)
	if err != nil {
		w.health.Report(key, fmt.Errorf("encode the value of %s: %w", key, err))
		return
	}
	w.pending[key] = op{value: string(data)}
}

// grant gets a new lease and keeps it alive, retrying until it succeeds
// or ctx ends (then it reports false).
func (w *writer[K, V]) grant(ctx context.Context, b *backoff) bool {
	s := w.s
	ttl := int64(math.Ceil(s.ttl.Seconds()))
	for {
		gctx, cancel := context.WithTimeout(ctx, s.ttl)
		resp, err := s.client.Grant(gctx, ttl)
		cancel()
		if err == nil {
			kctx, kcancel := context.WithCancel(ctx)
			var ch <-chan *clientv3.LeaseKeepAliveResponse
			if ch, err = s.client.KeepAlive(kctx, resp.ID); err == nil {
				lost := make(chan struct{})
				w.wg.Add(1)
				go func() {
					defer w.wg.Done()
					for range ch { // drained, so the client never finds it full
					}
					close(lost)
				}()
				w.lease, w.lost, w.cancel = resp.ID, lost, kcancel
				s.mu.Lock()
				s.lease = resp.ID
				s.stats.Grants++
				s.mu.Unlock()
				s.log.Info("lease granted", "prefix", s.prefix, "lease", fmt.Sprintf("%x", int64(resp.ID)), "ttl", resp.TTL)
				return true
			}
			kcancel()
		}
		if ctx.Err() != nil {
			return false
		}
		w.health.Report(w.problem, fmt.Errorf("grant a lease for %s: %w", s.prefix, err))
		if !w.sleep(ctx, b) {
			return false
		}
	}
}

// dropLease forgets a lost lease; the next round grants another and moves
// the keys over.
func (w *writer[K, V]) dropLease(why string) {
	s := w.s
	s.log.Warn("lease lost: granting another and writing every entry again", "prefix", s.prefix,
		"lease", fmt.Sprintf("%x", int64(w.lease)), "reason", why)
	w.cancel()
	w.prev = append(w.prev, w.lease) // an older one may still hold keys that did not move yet
	w.lease, w.lost = 0, nil
	s.mu.Lock()
	s.lease = 0
	s.mu.Unlock()
}

// sleep waits the next backoff, or until ctx ends or the lease is lost.
func (w *writer[K, V]) sleep(ctx context.Context, b *backoff) bool {
	b.next = min(max(b.next*2, b.lo), b.hi)
	t := time.NewTimer(b.next)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.lost:
		w.dropLease("the lease expired before etcd could renew it")
	case <-ctx.Done():
		return false
	}
	return true
}

// flush writes the pending keys, fenced, in transactions of at most maxOps
// keys; written keys leave pending. Once nothing is pending, a lease lost
// earlier is revoked: its keys have moved, or belong to entries deleted.
func (w *writer[K, V]) flush(ctx context.Context) error {
	s := w.s
	own := append([]clientv3.LeaseID{w.lease}, w.prev...)
	keys := make([]string, 0, len(w.pending))
	for k := range w.pending {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for chunk := range slices.Chunk(keys, s.maxOps) {
		ops := make([]clientv3.Op, len(chunk))
		for i, key := range chunk {
			if o := w.pending[key]; o.del {
				ops[i] = fencedDelete(key, own)
			} else {
				ops[i] = fencedPut(key, o.value, w.lease, own)
			}
		}
		tctx, cancel := context.WithTimeout(ctx, s.ttl)
		resp, err := s.client.Txn(tctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			return err
		}
		var reports []report
		s.mu.Lock()
		s.stats.Txns++
		s.rev = max(s.rev, resp.Header.Revision)
		for i, key := range chunk {
			o := w.pending[key]
			delete(w.pending, key)
			if o.del {
				s.stats.Deletes++
			} else if ok, holder := putResult(resp.Responses[i]); ok {
				s.stats.Puts++
			} else {
				s.refused[key] = true
				reports = append(reports, report{key, fmt.Errorf("key %s is held by lease %x, not by this writer: left alone", key, holder)})
				continue
			}
			if s.refused[key] {
				delete(s.refused, key)
				reports = append(reports, report{key, nil})
			}
		}
		s.mu.Unlock()
		for _, r := range reports {
			w.health.Report(r.key, r.err)
		}
	}
	for _, l := range w.prev {
		w.revoke(ctx, l)
	}
	w.prev = nil
	return nil
}

// markWritten records that the input is written up to w.target; the first
// time, the sink is ready.
func (w *writer[K, V]) markWritten() {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !w.ready() {
		close(s.ready)
	}
	if w.target > s.written {
		s.written = w.target
		close(s.progress)
		s.progress = make(chan struct{})
	}
}

// ready reports whether the first contents were written.
func (w *writer[K, V]) ready() bool {
	select {
	case <-w.s.ready:
		return true
	default:
		return false
	}
}

// revoke revokes lease, best effort: if etcd cannot be reached, the lease
// expires on its own one TTL later.
func (w *writer[K, V]) revoke(ctx context.Context, lease clientv3.LeaseID) {
	rctx, cancel := context.WithTimeout(ctx, w.s.ttl)
	defer cancel()
	if _, err := w.s.client.Revoke(rctx, lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		w.s.log.Warn("revoke failed: the lease will expire", "prefix", w.s.prefix, "lease", fmt.Sprintf("%x", int64(lease)), "error", err)
	}
}

// stop ends the keep-alive and revokes the lease, so that the keys vanish
// now rather than one TTL later.
func (w *writer[K, V]) stop() {
	if w.lease != 0 {
		w.cancel()
		w.revoke(context.Background(), w.lease)
	}
	for _, l := range w.prev {
		w.revoke(context.Background(), l)
	}
	w.wg.Wait()
	w.s.mu.Lock()
	w.s.lease = 0
	w.s.mu.Unlock()
}

// fencedPut writes value at key under lease if the key is absent or
// attached to one of the leases own; otherwise it reads the key, to tell
// who holds it.
func fencedPut(key, value string, lease clientv3.LeaseID, own []clientv3.LeaseID) clientv3.Op {
	put := clientv3.OpPut(key, value, clientv3.WithLease(lease))
	orElse := clientv3.OpGet(key, clientv3.WithKeysOnly())
	for _, l := range slices.Backward(own) {
		orElse = clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.LeaseValue(key), "=", l)}, []clientv3.Op{put}, []clientv3.Op{orElse})
	}
	return clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(key), "=", 0)}, []clientv3.Op{put}, []clientv3.Op{orElse})
}

// fencedDelete deletes key if it is attached to one of the leases own.
func fencedDelete(key string, own []clientv3.LeaseID) clientv3.Op {
	var orElse []clientv3.Op
	var o clientv3.Op
	for _, l := range slices.Backward(own) {
		o = clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.LeaseValue(key), "=", l)}, []clientv3.Op{clientv3.OpDelete(key)}, orElse)
		orElse = []clientv3.Op{o}
	}
	return o
}

// putResult reads the answer to a fencedPut: whether it wrote, and if not,
// the lease holding the key.
func putResult(r *pb.ResponseOp) (ok bool, holder int64) {
	for t := r.GetResponseTxn(); t != nil; {
		if t.Succeeded {
			return true, 0
		}
		if len(t.Responses) != 1 {
			break
		}
		if rr := t.Responses[0].GetResponseRange(); rr != nil {
			if len(rr.Kvs) == 1 {
				return false, rr.Kvs[0].Lease
			}
			break
		}
		t = t.Responses[0].GetResponseTxn()
	}
	return false, 0
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
