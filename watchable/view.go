package watchable

import "context"

// View is the read-only face of a Map: everything but writing. A component
// that owns a map (it is the map's only writer) hands out a View of it, so
// that nobody else can write to the map by mistake: a View has no method
// that writes, and there is no way back from a View to its Map.
//
// A View is a small value: copy it freely. Its methods behave exactly as
// the Map's methods of the same names, and are safe for concurrent use. The
// zero View is not usable: get one from Map.View.
type View[K comparable, V any] struct {
	m *Map[K, V]
}

// View returns the read-only face of m.
func (m *Map[K, V]) View() View[K, V] { return View[K, V]{m: m} }

func (v View[K, V]) mp() *Map[K, V] {
	if v.m == nil {
		panic("watchable: use of a zero View; get one from Map.View")
	}
	return v.m
}

// Load returns a deep copy of the value stored for key; see Map.Load.
func (v View[K, V]) Load(key K) (V, bool) { return v.mp().Load(key) }

// LoadAll returns a deep copy of the whole map; see Map.LoadAll.
func (v View[K, V]) LoadAll() map[K]V { return v.mp().LoadAll() }

// LoadAllMatching returns a deep copy of the matching entries; see
// Map.LoadAllMatching.
func (v View[K, V]) LoadAllMatching(include func(K, V) bool) map[K]V {
	return v.mp().LoadAllMatching(include)
}

// Len returns the number of entries.
func (v View[K, V]) Len() int { return v.mp().Len() }

// State returns the current contents, immutable; see Map.State.
func (v View[K, V]) State() State[K, V] { return v.mp().State() }

// Revision returns the current revision; see Map.Revision.
func (v View[K, V]) Revision() uint64 { return v.mp().Revision() }

// Subscribe returns a channel of snapshots of the whole map; see
// Map.Subscribe.
func (v View[K, V]) Subscribe(ctx context.Context) <-chan Snapshot[K, V] {
	return v.mp().Subscribe(ctx)
}

// SubscribeSubset returns a channel of snapshots of the entries include
// selects; see Map.SubscribeSubset.
func (v View[K, V]) SubscribeSubset(ctx context.Context, include func(K, V) bool) <-chan Snapshot[K, V] {
	return v.mp().SubscribeSubset(ctx, include)
}

// Notify signals ch after every effective write; see Map.Notify.
func (v View[K, V]) Notify(ctx context.Context, ch chan<- struct{}) { v.mp().Notify(ctx, ch) }

// Initialized returns a channel closed while the map is initialized; see
// Map.Initialized.
func (v View[K, V]) Initialized() <-chan struct{} { return v.mp().Initialized() }

// PendingInitializers returns who the map's consumers are waiting for; see
// Map.PendingInitializers.
func (v View[K, V]) PendingInitializers() []string { return v.mp().PendingInitializers() }

// Subscribers returns the number of open subscriptions; see
// Map.Subscribers.
func (v View[K, V]) Subscribers() int { return v.mp().Subscribers() }

// Notifiers returns the number of Notify registrations; see Map.Notifiers.
func (v View[K, V]) Notifiers() int { return v.mp().Notifiers() }
