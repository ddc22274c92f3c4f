package watchable

import "github.com/switchyard-go/switchyard/watchable/internal/hamt"

// Batch collects writes that a Map applies atomically: subscribers see all
// of them in one snapshot, at one new revision, or none of them. A Batch is
// valid only inside the function passed to Map.Batch: its methods panic if
// it is used after that function returned. It must not be used from other
// goroutines.
type Batch[K comparable, V any] struct {
	txn     *hamt.Txn[K, V]
	changes []change[K, V]
	done    bool
	// record reports that the map has subscribers to tell what changed;
	// without them, the batch only notes whether anything changed at all
	// (dirty) and whether it makes a new revision (effective).
	record           bool
	dirty, effective bool
}

// add notes one write of the batch.
func (b *Batch[K, V]) add(c change[K, V]) {
	b.dirty = true
	if !c.silent {
		b.effective = true
	}
	if b.record {
		b.changes = append(b.changes, c)
	}
}

func (b *Batch[K, V]) live() {
	if b.done {
		panic("watchable: Batch used after the function passed to Map.Batch returned")
	}
}

// Store sets key to a deep copy of value within the batch, with the same
// rules as Map.Store.
func (b *Batch[K, V]) Store(key K, value V) {
	b.live()
	b.store(key, DeepCopy(value))
}

func (b *Batch[K, V]) store(key K, value V) {
	old, ok := b.txn.Get(key)
	c := change[K, V]{key: key, old: old, hadOld: ok, new: value, hasNew: true}
	if ok && DeepEqual(old, value) {
		if exactEqual[V]() {
			return
		}
		c.silent = true
	}
	b.txn.Set(key, value)
	b.add(c)
}

// Delete removes key within the batch.
func (b *Batch[K, V]) Delete(key K) {
	b.live()
	old, ok := b.txn.Get(key)
	if !ok {
		return
	}
	b.txn.Delete(key)
	b.add(change[K, V]{key: key, old: old, hadOld: true})
}

// Load returns a deep copy of the value for key as the batch has it so far.
func (b *Batch[K, V]) Load(key K) (V, bool) {
	b.live()
	v, ok := b.txn.Get(key)
	if !ok {
		return v, false
	}
	return DeepCopy(v), true
}

// Len returns the number of entries as the batch has it so far.
func (b *Batch[K, V]) Len() int {
	b.live()
	return b.txn.Len()
}

// Batch calls fn with a Batch and applies the writes fn made to it as one
// revision and one notification. If fn panics, nothing is applied and the
// panic propagates. fn runs with the map's write lock held: it must not call
// methods of this Map (they would deadlock), and should be quick. After
// Close, the writes are ignored.
func (m *Map[K, V]) Batch(fn func(b *Batch[K, V])) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := &Batch[K, V]{txn: m.live.Txn(), record: m.watched()}
	defer func() { b.done = true }() // also when fn panics
	fn(b)
	m.commit(b)
}

// Replace makes the map's contents exactly entries: keys whose values
// changed are stored, keys absent from entries are deleted, and equal values
// are stored as an equal Store is (kept without a notification; see Store).
// It is one revision and one notification, and none at all when nothing
// changed. Only the values that changed (or, for types whose Equal method
// ignores fields, that are equal but not identical) are deep-copied, so
// re-listing a large, mostly unchanged source costs a comparison per entry;
// the caller keeps entries and must not change it during the call. After
// Close, Replace does nothing.
func (m *Map[K, V]) Replace(entries map[K]V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	cur := m.live.Peek()
	b := &Batch[K, V]{txn: m.live.Txn(), record: m.watched()}
	for k := range cur.All() {
		if _, keep := entries[k]; !keep {
			b.Delete(k)
		}
	}
	exact := exactEqual[V]()
	for k, v := range entries {
		old, ok := cur.Get(k)
		silent := ok && DeepEqual(old, v)
		if silent && exact {
			continue
		}
		v = DeepCopy(v)
		b.txn.Set(k, v)
		b.add(change[K, V]{key: k, old: old, hadOld: ok, new: v, hasNew: true, silent: silent})
	}
	m.commit(b)
}

// commit publishes a finished batch. m.mu is held.
func (m *Map[K, V]) commit(b *Batch[K, V]) {
	if m.closed || !b.dirty {
		return // the Txn is dropped: nothing it made was ever reachable
	}
	if !b.record {
		rev := m.live.Stamp()
		if b.effective {
			rev++
		}
		m.live.Apply(b.txn, rev)
		if b.effective {
			m.signal()
		}
		return
	}
	m.publish(b.changes, func(rev uint64) { m.live.Apply(b.txn, rev) })
}
