package bench

import (
	"context"
	"slices"
	"sync"

	"github.com/switchyard-go/switchyard/internal/mvcc"
	"github.com/switchyard-go/switchyard/watchable"
)

// modelName is the lib= of the multi-version table modelled in
// internal/mvcc: not a library, and not in the report, but run by the
// Store, Batch, latency, Load, Range, idle-subscriber and memory
// scenarios when -model asks (see withModel), so that docs/design.md can
// set it beside the trie on the same inputs.
const modelName = "mvcc"

// model adapts the multi-version table. Its Store deep-copies the value as
// the libraries do; its subscribers are told of each Store as the floor's
// are, and each takes a snapshot when woken, asks its cursor for the keys
// whose values changed since its last snapshot (the net change of each
// key, as a switchyard snapshot's Updates hold, each with its value read
// from the snapshot), and reads the snapshot. The table learns by itself
// which snapshots are still held.
type model[V any] struct {
	t    *mvcc.Table[string, V]
	mu   sync.Mutex // the writer's
	subs []chan struct{}
}

func newModel[V any]() *model[V] { return &model[V]{t: mvcc.New[string, V](0)} }

// Fill stores keys one by one into the table, which grows as a library's
// would: it is told no size. Like every kv's Fill, it comes before any
// subscriber.
func (m *model[V]) Fill(keys []string, value func(int) V) {
	for i, k := range keys {
		m.Store(k, value(i))
	}
}

func (m *model[V]) Store(k string, v V) {
	v = watchable.DeepCopy(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.t.Store(k, v)
	for _, s := range m.subs {
		tell(s)
	}
}

// StoreBatch deep-copies the values and stores them in one batch of the
// table, which readers see whole, and tells the subscribers once.
func (m *model[V]) StoreBatch(keys []string, values []V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.t.Batch(func(b mvcc.Batch[string, V]) {
		for i, k := range keys {
			b.Store(k, watchable.DeepCopy(values[i]))
		}
	})
	for _, s := range m.subs {
		tell(s)
	}
}

func (m *model[V]) Load(k string) (V, bool) {
	v, ok := m.t.Load(k)
	if !ok {
		return v, false
	}
	return watchable.DeepCopy(v), true
}

// LoadAll deep-copies every entry of a snapshot.
func (m *model[V]) LoadAll() map[string]V {
	s := m.t.Snapshot()
	all := make(map[string]V, s.Len())
	s.All(func(k string, v V) bool {
		all[k] = watchable.DeepCopy(v)
		return true
	})
	return all
}

func (m *model[V]) Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{} {
	signal := make(chan struct{}, 1)
	signal <- struct{}{}
	m.mu.Lock()
	m.subs = append(m.subs, signal)
	log := m.t.Cursor() // under the writer's lock, before the first snapshot
	m.mu.Unlock()
	var last mvcc.Snapshot[string, V]
	return onSignal(ctx, signal, func() {
		snap := m.t.Snapshot()
		// The updates since the last snapshot, which a switchyard
		// subscriber receives with its snapshot.
		n := log.Changes(last, snap, func(string, V, bool) {})
		last = snap
		fn(modelView[V]{snap, n})
	}, func() {
		log.Close()
		m.unwatch(signal)
	})
}

// unwatch stops telling signal of Stores.
func (m *model[V]) unwatch(signal chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs = slices.DeleteFunc(m.subs, func(x chan struct{}) bool { return x == signal })
}

// SubscribeIdle opens a cursor and never reads it: the table records every
// Store for it, and drops what it lags behind by more than Stores to a
// quarter of the keys.
func (m *model[V]) SubscribeIdle(ctx context.Context) {
	signal := make(chan struct{}, 1)
	m.mu.Lock()
	m.subs = append(m.subs, signal)
	log := m.t.Cursor()
	m.mu.Unlock()
	context.AfterFunc(ctx, func() {
		log.Close()
		m.unwatch(signal)
	})
}

// WatchLazily registers a reader that is told of Stores and keeps no
// cursor, and returns the snapshot it holds until its next read: then it
// would compare the two snapshots for the changes, in O(slots).
func (m *model[V]) WatchLazily(ctx context.Context) mvcc.Snapshot[string, V] {
	signal := make(chan struct{}, 1)
	m.mu.Lock()
	m.subs = append(m.subs, signal)
	m.mu.Unlock()
	context.AfterFunc(ctx, func() { m.unwatch(signal) })
	return m.t.Snapshot()
}

func (m *model[V]) Close() {}

type modelView[V any] struct {
	s       mvcc.Snapshot[string, V]
	updates int
}

func (v modelView[V]) Updates() int           { return v.updates }
func (v modelView[V]) Len() int               { return v.s.Len() }
func (v modelView[V]) Get(k string) (V, bool) { return v.s.Get(k) }
