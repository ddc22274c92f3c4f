package bench

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

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
// snapshot. It tells the table which snapshots are no longer held
// (mvcc.Table.Forget) once per pass of the table's size in Stores.
type model[V any] struct {
	t      *mvcc.Table[V]
	mu     sync.Mutex // the writer's
	subs   []*modelSub
	stores int
}

type modelSub struct {
	signal chan struct{}
	held   atomic.Uint64 // the version of the snapshot it holds, or an older one
}

func newModel[V any]() *model[V] { return &model[V]{} }

// Fill makes the table, sized for keys, and stores them. Like every kv's
// Fill, it comes before any subscriber.
func (m *model[V]) Fill(keys []string, value func(int) V) {
	m.mu.Lock()
	m.t = mvcc.New[V](len(keys))
	m.mu.Unlock()
	for i, k := range keys {
		m.Store(k, value(i))
	}
}

func (m *model[V]) Store(k string, v V) {
	v = watchable.DeepCopy(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.t == nil {
		m.t = mvcc.New[V](1 << 10)
	}
	m.t.Store(k, v)
	for _, s := range m.subs {
		tell(s.signal)
	}
	if m.stores++; m.stores >= m.t.Len() {
		m.stores = 0
		m.forget()
	}
}

// forget drops what no held snapshot can read. m.mu is held.
func (m *model[V]) forget() {
	oldest := m.t.Version()
	for _, s := range m.subs {
		if v := s.held.Load(); v < oldest {
			oldest = v
		}
	}
	m.t.Forget(oldest)
}

func (m *model[V]) Load(k string) (V, bool) {
	v, ok := m.t.Load(k)
	if !ok {
		return v, false
	}
	return watchable.DeepCopy(v), true
}

func (m *model[V]) Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{} {
	s := &modelSub{signal: make(chan struct{}, 1)}
	s.held.Store(1) // the first version: its first snapshot may come at any
	s.signal <- struct{}{}
	m.mu.Lock()
	if m.t == nil {
		m.t = mvcc.New[V](1 << 10)
	}
	m.subs = append(m.subs, s)
	log := m.t.Cursor() // under the writer's lock, before the first snapshot
	m.mu.Unlock()
	return onSignal(ctx, s.signal, func() {
		snap := m.t.Snapshot()
		s.held.Store(snap.Version())
		// The updates since the last snapshot, which a switchyard
		// subscriber receives with its snapshot.
		n := log.Read(snap.Version(), func(mvcc.Entry[V]) {})
		fn(modelView[V]{snap, n})
	}, func() {
		log.Close()
		m.mu.Lock()
		defer m.mu.Unlock()
		m.subs = slices.DeleteFunc(m.subs, func(x *modelSub) bool { return x == s })
	})
}

func (m *model[V]) LoadAll() map[string]V { panic("bench: the mvcc model cannot iterate") }
func (m *model[V]) SubscribeIdle(context.Context) {
	panic("bench: the mvcc model has no idle subscribers")
}
func (m *model[V]) Close() {}

type modelView[V any] struct {
	s       mvcc.Snapshot[V]
	updates int
}

func (v modelView[V]) Updates() int           { return v.updates }
func (v modelView[V]) Len() int               { panic("bench: the mvcc model's snapshots have no Len") }
func (v modelView[V]) Get(k string) (V, bool) { return v.s.Get(k) }
