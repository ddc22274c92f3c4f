package bench

import (
	"context"
	"slices"
	"sync"

	"github.com/switchyard-go/switchyard/bench/internal/mvcc"
	"github.com/switchyard-go/switchyard/watchable"
)

// modelName is the lib= of the multi-version table modelled in
// internal/mvcc: not a library, and not in the report, but run by the
// Store, latency, Load and memory scenarios when -model asks (see
// withModel), so that docs/design.md can set it beside the trie on the
// same inputs.
const modelName = "mvcc"

// model adapts the multi-version table. Its Store deep-copies the value as
// the libraries do; its subscribers are told of each Store as the floor's
// are, and each takes a snapshot when woken, reads the updates since its
// last one from the table's change log (one per Store, where a switchyard
// snapshot's Updates hold the net change of each key), and reads the
// snapshot. The table learns by itself which snapshots are still held.
type model[V any] struct {
	t    *mvcc.Table[V]
	mu   sync.Mutex // the writer's
	subs []chan struct{}
}

func newModel[V any]() *model[V] { return &model[V]{t: mvcc.New[V](0)} }

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
	return onSignal(ctx, signal, func() {
		snap := m.t.Snapshot()
		// The updates since the last snapshot, which a switchyard
		// subscriber receives with its snapshot.
		n := log.Read(snap.Version(), func(mvcc.Entry[V]) {})
		fn(modelView[V]{snap, n})
	}, func() {
		log.Close()
		m.mu.Lock()
		defer m.mu.Unlock()
		m.subs = slices.DeleteFunc(m.subs, func(x chan struct{}) bool { return x == signal })
	})
}

func (m *model[V]) SubscribeIdle(context.Context) {
	panic("bench: the mvcc model has no idle subscribers")
}
func (m *model[V]) Close() {}

type modelView[V any] struct {
	s       mvcc.Snapshot[V]
	updates int
}

func (v modelView[V]) Updates() int           { return v.updates }
func (v modelView[V]) Len() int               { return v.s.Len() }
func (v modelView[V]) Get(k string) (V, bool) { return v.s.Get(k) }
