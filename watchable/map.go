package watchable

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/switchyard-go/switchyard/internal/mvcc"
)

// Map is a typed map that publishes its changes to subscribers.
//
// All methods are safe for concurrent use by any number of goroutines, at
// any time, including concurrently with Close. Load, LoadAll, Len and
// Revision never wait for writers; State waits at most for the one write
// under way, if that write changes the current version in place (see
// State). Writes are serialized; each costs O(1) expected in the number of
// entries plus O(1) per subscriber it concerns, and never waits for a
// subscriber to read.
//
// The zero Map is empty and ready to use. A Map must not be copied after
// first use.
type Map[K comparable, V any] struct {
	// tab holds the contents, its stamp the revision. While no State or
	// delivered snapshot holds the current version, writes change it in
	// place; see docs/design.md.
	tab mvcc.Table[K, V]

	mu        sync.Mutex // serializes writes, Subscribe and Close
	subs      []*subscription[K, V]
	routers   []*router[K, V] // keyed and partitioned subscriptions
	notifiers []*notifier
	closed    bool
	matches   []bool          // publish's scratch space for include results
	one       [1]change[K, V] // a single write's change, without allocating

	// uninitialized reports that an initializer is pending (see
	// RegisterInitializer). It is negative so that the zero Map, which has
	// no initializer, is initialized.
	uninitialized bool
	init          initialization     // see init.go
	keys          *keyIndex[K, V]    // SubscribeKeys' index, made on first use
	keyNotes      *keyNotifiers[K]   // NotifyKeys' index, made on first use
	ahead         *storesAhead[K, V] // large batches' Stores waiting, made on first use

	plainKind atomic.Uint32 // see plain.go
}

// change is one write to one key.
type change[K comparable, V any] struct {
	key K
	// hash is hamt.Hash(key), which subscribers' windows and views index
	// keys by: the hash the table found key by (mvcc.Ref.Hash), the same.
	hash     uint64
	old, new V
	hadOld   bool
	hasNew   bool
	// silent marks a store of a value equal to the old one: the map keeps
	// the new value, but nobody is told (see Store).
	silent bool
}

// State returns the current contents as an immutable State, in O(1) and
// without copying: later writes never change it. Its values are shared with
// the map and MUST NOT be mutated.
//
// A State freezes the current version: the next write makes a new one
// beside it rather than change it in place. A write that was changing the
// current version in place when State was called (one Store, Delete or
// Restamp; never a Batch) is waited for, which takes a few stores to
// memory unless the writer's goroutine is descheduled. That wait is the
// price of writes in place; see docs/design.md.
func (m *Map[K, V]) State() State[K, V] {
	snap := m.tab.Snapshot()
	return State[K, V]{snap: snap, rev: snap.Stamp()}
}

// Len returns the number of entries.
func (m *Map[K, V]) Len() int {
	return m.tab.Len()
}

// Load returns a deep copy of the value stored for key, and whether there is one.
func (m *Map[K, V]) Load(key K) (value V, ok bool) {
	v, ok := m.tab.Load(key)
	if !ok {
		return v, false
	}
	return m.copyValue(v), true
}

// LoadAll returns a deep copy of the whole map: O(N) copies. Use State to
// read without copying.
func (m *Map[K, V]) LoadAll() map[K]V {
	entries := m.State()
	out := make(map[K]V, entries.Len())
	for k, v := range entries.All() {
		out[k] = DeepCopy(v)
	}
	return out
}

// LoadAllMatching returns a deep copy of the entries for which include
// returns true. include sees the shared values and must not mutate them.
func (m *Map[K, V]) LoadAllMatching(include func(K, V) bool) map[K]V {
	out := make(map[K]V)
	for k, v := range m.State().All() {
		if include(k, v) {
			out[k] = DeepCopy(v)
		}
	}
	return out
}

// Store sets the value for key to a deep copy of value; the caller may keep
// using value. After Close, Store does nothing. Store panics if values of
// type V cannot be deep-copied (see DeepCopy), before changing anything.
//
// Storing a value equal (see DeepEqual) to the current one is not a change:
// the revision stays, and no subscriber is notified. The map does keep the
// new value, so Load, a State taken afterwards and new subscribers see it,
// and existing subscribers find it in the State of their next snapshot
// (without an Update for it). This matters only for types whose Equal
// method ignores some fields, such as a heartbeat's timestamp: the newest
// timestamp is readable, yet heartbeats wake nobody. For other types an
// equal value is indistinguishable from the one in the map, and Store
// leaves the map as it is.
func (m *Map[K, V]) Store(key K, value V) {
	value = m.copyValue(value)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store(key, value)
}

// store sets key to value, which is already the map's own copy. m.mu is held.
func (m *Map[K, V]) store(key K, value V) {
	if m.closed {
		return
	}
	var c mvcc.Ref[K, V]
	m.tab.Find(key, &c)
	m.storeAt(&c, value)
}

// storeAt sets the key c found to value, which is already the map's own
// copy: the lookup, the comparison and the write share one probe of the
// table. m.mu is held and the map is open.
func (m *Map[K, V]) storeAt(c *mvcc.Ref[K, V], value V) {
	old, ok := c.Value()
	silent := false
	if ok && m.equal(old, value) {
		if m.exact() {
			return
		}
		silent = true
	}
	if !m.watched() {
		// Nobody needs to know what changed: no change record, no
		// subscriber work, just the write and, if it counts, a signal.
		rev := m.tab.Stamp()
		if !silent {
			rev++
		}
		c.Set(value, rev)
		if !silent {
			m.signal()
		}
		return
	}
	m.one[0] = change[K, V]{key: c.Key(), hash: c.Hash(), old: old, hadOld: ok, new: value, hasNew: true, silent: silent}
	m.publish(m.one[:], func(rev uint64) { c.Set(value, rev) })
	m.one[0] = change[K, V]{} // keep no value alive
}

// Delete removes key. Deleting a missing key does nothing. After Close,
// Delete does nothing.
func (m *Map[K, V]) Delete(key K) {
	m.delete(key)
}

// delete removes key and returns the value it had, and whether it was
// present.
func (m *Map[K, V]) delete(key K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c mvcc.Ref[K, V]
	m.tab.Find(key, &c)
	old, ok := c.Value()
	if !ok || m.closed {
		return old, ok
	}
	if !m.watched() {
		c.Delete(m.tab.Stamp() + 1)
		m.signal()
		return old, true
	}
	m.one[0] = change[K, V]{key: key, hash: c.Hash(), old: old, hadOld: true}
	m.publish(m.one[:], func(rev uint64) { c.Delete(rev) })
	m.one[0] = change[K, V]{}
	return old, true
}

// LoadOrStore returns a deep copy of the value stored for key if there is
// one, with loaded true. Otherwise it stores value as Store does and returns
// a deep copy of it, with loaded false (also after Close, when nothing is
// stored).
func (m *Map[K, V]) LoadOrStore(key K, value V) (actual V, loaded bool) {
	actual, loaded = m.loadOrStore(key, DeepCopy(value))
	// Values in the map never change, so the copy needs no lock.
	return DeepCopy(actual), loaded
}

func (m *Map[K, V]) loadOrStore(key K, value V) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c mvcc.Ref[K, V]
	m.tab.Find(key, &c)
	if v, ok := c.Value(); ok {
		return v, true
	}
	if !m.closed {
		m.storeAt(&c, value)
	}
	return value, false
}

// LoadAndDelete deletes key and returns a deep copy of the value it had, and
// whether it was present. After Close nothing is deleted, but the value is
// still returned.
func (m *Map[K, V]) LoadAndDelete(key K) (value V, loaded bool) {
	value, loaded = m.delete(key)
	if loaded {
		value = DeepCopy(value)
	}
	return value, loaded
}

// CompareAndSwap stores new for key, as Store does, if key is present with a
// value equal (see DeepEqual) to old, and reports whether it did. When new
// is equal to the current value, it is stored as an equal Store is: kept,
// without a new revision or a notification, and CompareAndSwap reports true.
// It reports false after Close.
func (m *Map[K, V]) CompareAndSwap(key K, old, new V) bool {
	new = DeepCopy(new)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	var c mvcc.Ref[K, V]
	m.tab.Find(key, &c)
	v, ok := c.Value()
	if !ok || !DeepEqual(v, old) {
		return false
	}
	m.storeAt(&c, new)
	return true
}

// Close closes every subscription; a snapshot that was pending is still
// readable before its channel reports closed. Afterwards writes are ignored,
// Subscribe returns closed channels, and reads keep working. Close is
// idempotent.
func (m *Map[K, V]) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	for _, s := range m.subs {
		s.close()
	}
	m.subs = nil
	for _, r := range m.routers {
		r.closeAll()
	}
	m.routers = nil
	m.keys = nil
	m.keyNotes = nil
	for _, n := range m.notifiers {
		n.stop()
		n.remove()
	}
	m.notifiers = nil
}

// watched reports whether a write has anyone to tell what changed, beyond
// a Notify signal. m.mu is held.
func (m *Map[K, V]) watched() bool {
	if len(m.subs) > 0 {
		return true
	}
	for _, r := range m.routers {
		if r.active() {
			return true
		}
	}
	return false
}

// dropRouter removes r from the routers that writes consult. m.mu is held.
func (m *Map[K, V]) dropRouter(r *router[K, V]) {
	m.routers = slices.DeleteFunc(m.routers, func(x *router[K, V]) bool { return x == r })
}

// signal wakes every Notify channel. m.mu is held.
func (m *Map[K, V]) signal() {
	for _, n := range m.notifiers {
		n.signal()
	}
}

// publish applies changes, which apply makes to the contents at the
// revision it is given, and tells every subscriber they concern. m.mu is
// held.
//
// Subset subscribers' include functions and the routers' partition
// functions are asked first, before anything changes: they are the callers'
// code and may panic, and a panic must leave the map and every subscriber as
// they were rather than half-told.
//
// A publication whose changes are all silent (equal values stored) keeps
// the revision and tells nobody, unless a silent change moves an entry into
// or out of a subset subscriber's view or between partitions: include saw a
// difference that DeepEqual did not, and for that subscriber it is a change
// like any other.
func (m *Map[K, V]) publish(changes []change[K, V], apply func(rev uint64)) {
	rev, effective := m.prepare(changes)
	apply(rev)
	m.tell(changes, rev, effective)
}

// prepare is publish's first half: it asks the include and partition
// functions, and returns the revision the changes make and whether it is a
// new one. It changes nothing a panic in those functions must undo. m.mu is
// held.
func (m *Map[K, V]) prepare(changes []change[K, V]) (rev uint64, effective bool) {
	m.matches = m.matches[:0]
	for _, s := range m.subs {
		if s.include == nil {
			continue
		}
		for i := range changes {
			c := &changes[i]
			m.matches = append(m.matches, c.hasNew && s.include(c.key, c.new))
		}
	}
	for _, r := range m.routers {
		r.prepare(changes)
	}

	effective = m.effective(changes)
	rev = m.tab.Stamp()
	if effective {
		rev++
		// Take back the snapshots whole-map subscribers have not read yet:
		// if every one comes back, nobody holds the current version, and
		// the write may change it in place.
		for _, s := range m.subs {
			if !s.filtered {
				s.open()
			}
		}
	}
	return rev, effective
}

// tell is publish's second half, once the changes are made at rev: it
// merges them into every subscriber's window, and delivers if effective.
// m.mu is held.
func (m *Map[K, V]) tell(changes []change[K, V], rev uint64, effective bool) {
	matches := m.matches
	for _, s := range m.subs {
		for i := range changes {
			hasAfter := changes[i].hasNew
			if s.include != nil {
				hasAfter, matches = matches[0], matches[1:]
			}
			s.record(&changes[i], hasAfter)
		}
		if effective {
			s.flush(rev, false)
		}
	}
	for _, r := range m.routers {
		r.tell(changes, rev)
	}
	if effective {
		m.signal()
	}
}

// effective reports whether changes make a new revision: whether one of
// them is not silent, moves an entry into or out of a subset subscriber's
// view, or moves it between partitions. m.matches holds the include
// results. m.mu is held.
func (m *Map[K, V]) effective(changes []change[K, V]) bool {
	for i := range changes {
		if !changes[i].silent {
			return true
		}
	}
	matches := m.matches
	for _, s := range m.subs {
		if s.include == nil {
			continue
		}
		for i := range changes {
			_, had := s.view.GetHashed(changes[i].key, changes[i].hash)
			if matches[i] != had {
				return true
			}
		}
		matches = matches[len(changes):]
	}
	for _, r := range m.routers {
		if r.moves(changes) {
			return true
		}
	}
	return false
}

// Revision returns the current revision: the number of effective writes so
// far. It never decreases, and stops growing when the map is closed.
func (m *Map[K, V]) Revision() uint64 {
	return m.tab.Stamp()
}

// Subscribers returns the number of open subscriptions (Subscribe,
// SubscribeSubset, SubscribeKeys and partition subscriptions). One whose
// context is done is removed by a goroutine that context.AfterFunc starts,
// so it may still be counted for a moment; a subscription is no longer
// counted once its channel is closed.
func (m *Map[K, V]) Subscribers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.subs)
	for _, r := range m.routers {
		n += r.subscribers()
	}
	return n
}

// Notifiers returns the number of active Notify, NotifyKeys and
// Partitions.Notify registrations, with the same lag as Subscribers once
// their context is done.
func (m *Map[K, V]) Notifiers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.notifiers)
	for _, r := range m.routers {
		n += r.notifiers()
	}
	return n
}
