package watchable

import "github.com/switchyard-go/switchyard/internal/mvcc"

// Batch collects writes that a Map applies atomically: subscribers see all
// of them in one snapshot, at one new revision, or none of them. A Batch is
// valid only inside the function passed to Map.Batch: its methods panic if
// it is used after that function returned. It must not be used from other
// goroutines.
type Batch[K comparable, V any] struct {
	m       *Map[K, V]
	changes []change[K, V]
	// record reports that the map has subscribers to tell what changed;
	// without them, the batch only notes whether anything changed at all
	// (dirty) and whether it makes a new revision (effective).
	record           bool
	dirty, effective bool
	done             bool
	plain            uint32             // the map's plain kind of V (see plain.go)
	recheck          int32              // Stores before startAhead asks again
	n                int                // the number of entries, as the batch has them
	ahead            *storesAhead[K, V] // the map's, while Stores wait in it (see Store)
}

func (b *Batch[K, V]) live() {
	if b.done {
		panic("watchable: Batch used after the function passed to Map.Batch returned")
	}
}

// Store sets key to a deep copy of value within the batch, with the same
// rules as Map.Store.
//
// In a large map, a Store waits until a few more have been made before it
// is applied, its key's slot fetched into the cache meanwhile, so that the
// cache misses of consecutive Stores overlap (see storesAhead). Nothing
// of that shows: Delete, Load and Len apply the Stores waiting first, and
// so does the end of the batch.
func (b *Batch[K, V]) Store(key K, value V) {
	b.live()
	value = copyAs(b.plain, value)
	if b.m.closed { // m.mu is held: it stays as the batch found it
		return
	}
	a := b.ahead
	if a == nil {
		if b.recheck--; b.recheck >= 0 || !b.startAhead() {
			b.apply(key, &value, 0)
			return
		}
		a = b.ahead
	}
	// Hold the Store back, its slot prefetched, and apply the oldest
	// held if that makes too many.
	h := b.m.tab.Prefetch(key)
	if a.n < aheadStores {
		a.waiting[(a.first+a.n)%aheadStores] = waitingStore[K, V]{key, value, h}
		a.n++
		return
	}
	w := &a.waiting[a.first]
	b.apply(w.key, &w.value, w.hash)
	*w = waitingStore[K, V]{key, value, h}
	a.first = (a.first + 1) % aheadStores
}

// apply sets key, whose hash is h (or 0, unknown), to value, the map's own
// copy, unless the two are identical.
func (b *Batch[K, V]) apply(key K, value *V, h uint64) {
	var c mvcc.Ref[K, V]
	b.m.tab.FindHashed(key, h, &c)
	old, ok := c.Value()
	silent := ok && equalAs(b.plain, old, *value)
	if silent && exactAs[V](b.plain) {
		return // nobody could tell the two apart
	}
	b.put(&c, old, ok, *value, silent)
}

// put sets the key c found, whose value is old if ok, to value, the map's
// own copy; silent reports that the two are equal.
func (b *Batch[K, V]) put(c *mvcc.Ref[K, V], old V, ok bool, value V, silent bool) {
	c.Set(value, 0) // the batch's stamp is set when it commits
	if !ok {
		b.n++
	}
	b.dirty = true
	if !silent {
		b.effective = true
	}
	if b.record {
		b.changes = append(b.changes, change[K, V]{key: c.Key(), hash: c.Hash(), old: old, hadOld: ok, new: value, hasNew: true, silent: silent})
	}
}

// Delete removes key within the batch.
func (b *Batch[K, V]) Delete(key K) {
	b.live()
	if b.m.closed {
		return
	}
	b.flush()
	var c mvcc.Ref[K, V]
	b.m.tab.Find(key, &c)
	old, ok := c.Value()
	if !ok {
		return
	}
	c.Delete(0)
	b.n--
	b.dirty, b.effective = true, true
	if b.record {
		b.changes = append(b.changes, change[K, V]{key: key, hash: c.Hash(), old: old, hadOld: true})
	}
}

// Load returns a deep copy of the value for key as the batch has it so far.
func (b *Batch[K, V]) Load(key K) (V, bool) {
	b.live()
	b.flush()
	var c mvcc.Ref[K, V]
	b.m.tab.Find(key, &c)
	v, ok := c.Value()
	if !ok {
		return v, false
	}
	return copyAs(b.plain, v), true
}

// Len returns the number of entries as the batch has it so far.
func (b *Batch[K, V]) Len() int {
	b.live()
	b.flush()
	return b.n
}

// Batch calls fn with a Batch and applies the writes fn made to it as one
// revision and one notification. If fn panics, nothing is applied and the
// panic propagates; so does a panic in a subset subscriber's include
// function or a partition function, which are asked before the batch is
// published. fn runs with the map's write lock held: it must not call
// methods of this Map (they would deadlock), and should be quick. After
// Close, the writes are ignored.
//
// The batch writes into the map's table as it goes, each write with one
// probe, and publishes them all at once when fn returns: until then
// readers see the map as it was, and never wait for it (docs/design.md).
// In a large map it holds its last few Stores back, so that their probes'
// cache misses overlap (see Batch.Store); the batch's own reads see them.
// A batch keeps no copy of what it replaces beyond one entry a key in a
// log it reuses, unless a State held across the batch may read the old
// values; then it keeps those.
func (m *Map[K, V]) Batch(fn func(b *Batch[K, V])) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.newBatch()
	defer b.end() // also when fn panics
	if m.closed {
		fn(b)
		return
	}
	m.commit(b, fn)
}

// newBatch starts a batch. m.mu is held.
func (m *Map[K, V]) newBatch() *Batch[K, V] {
	// The first few Stores are applied at once: a batch that makes no
	// more gains nothing from holding them back (see storesAhead).
	return &Batch[K, V]{m: m, record: m.watched(), n: m.tab.Len(), plain: m.plain(), recheck: aheadStores}
}

// end ends the batch, committed or not.
func (b *Batch[K, V]) end() {
	b.done = true
	if b.ahead != nil {
		b.ahead.drop() // Stores left waiting when fn panicked
		b.ahead = nil
	}
	clear(b.changes) // keep no value alive
	b.changes = nil
}

// commit runs fn on b inside a batch of the map's table, and publishes
// what it wrote: asks the include and partition functions (inside the
// table's batch, so that a panic there undoes the writes too), stamps the
// revision, and, once the table's batch is published, tells the
// subscribers. m.mu is held and the map is open.
func (m *Map[K, V]) commit(b *Batch[K, V], fn func(b *Batch[K, V])) {
	var (
		rev       uint64
		effective bool
	)
	m.tab.Batch(func(tb mvcc.Batch[K, V]) {
		fn(b)
		b.flush()
		if !b.dirty {
			return
		}
		if b.record {
			rev, effective = m.prepare(b.changes)
		} else {
			rev, effective = m.tab.Stamp(), b.effective
			if effective {
				rev++
			}
		}
		tb.Stamp(rev)
	})
	switch {
	case !b.dirty:
	case b.record:
		m.tell(b.changes, rev, effective)
	case effective:
		m.signal()
	}
}

// Replace makes the map's contents exactly entries: keys whose values
// changed are stored, keys absent from entries are deleted, and equal values
// are stored as an equal Store is (kept without a notification; see Store).
// It is one revision and one notification, and none at all when nothing
// changed. Only the values that changed (or, for types whose Equal method
// ignores fields, that are equal but not identical) are deep-copied, so
// re-listing a large, mostly unchanged source costs a comparison per entry,
// and when the map holds no key that entries lacks, nothing more: only a
// map with keys to delete is ranged over to find them. Keys new to the map
// are added after the deletes, so that a re-list of new keys for old ones
// does not grow the map to hold both. The caller keeps entries and must
// not change it during the call. With
// many entries, or into a large map, Replace prefetches each entry's slot
// a few entries before it compares it, as a Batch does its Stores (see
// Map.Batch). After Close, Replace does nothing.
func (m *Map[K, V]) Replace(entries map[K]V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	b := m.newBatch()
	defer b.end()
	m.commit(b, func(b *Batch[K, V]) {
		exact := exactAs[V](b.plain)
		// First the keys the map has: their count says whether any of
		// its keys is missing from entries. The others wait until those
		// are deleted, so that a re-list of new keys for old ones does
		// not grow the table to hold both.
		kept, added := b.replaceEach(entries, exact, false)
		if kept < b.Len() {
			// Some key is not in entries: find them all.
			var gone []K
			for k := range m.tab.Range {
				if _, keep := entries[k]; !keep {
					gone = append(gone, k)
				}
			}
			for _, k := range gone {
				b.Delete(k)
			}
		}
		b.replaceEach(added, exact, true)
	})
}

// replaceEach writes entries with replaceOne, and returns how many of
// their keys the map had and, unless add, the entries whose keys it did
// not have, unwritten. The keys are distinct, so the order they are
// written in does not matter: with many entries, or into a large table
// (see replaceAhead), each waits in a ring while its slot is prefetched,
// and is written when the next few have been hashed (see storesAhead).
func (b *Batch[K, V]) replaceEach(entries map[K]V, exact, add bool) (kept int, added map[K]V) {
	write := func(k K, v *V, h uint64) {
		switch {
		case b.replaceOne(k, v, h, exact, add):
			kept++
		case !add:
			if added == nil {
				added = map[K]V{}
			}
			added[k] = *v
		}
	}
	if !replaceAhead(b.m, len(entries)) {
		for k, v := range entries {
			write(k, &v, 0)
		}
		return kept, added
	}
	var ring [aheadStores]waitingStore[K, V]
	i := 0
	for k, v := range entries {
		w := &ring[i%aheadStores]
		if i >= aheadStores {
			write(w.key, &w.value, w.hash)
		}
		*w = waitingStore[K, V]{k, v, b.m.tab.Prefetch(k)}
		i++
	}
	for j := max(0, i-aheadStores); j < i; j++ {
		w := &ring[j%aheadStores]
		write(w.key, &w.value, w.hash)
	}
	clear(ring[:]) // keep no value alive
	return kept, added
}

// replaceOne is Replace's write of one entry: key, whose hash is h (or 0,
// unknown), gets a deep copy of *value unless the two are identical. A
// key the map does not have is added only if add. It reports whether the
// map had the key. exact is exactAs[V](b.plain), which Replace asks once.
func (b *Batch[K, V]) replaceOne(key K, value *V, h uint64, exact, add bool) bool {
	var c mvcc.Ref[K, V]
	b.m.tab.FindHashed(key, h, &c)
	old, ok := c.Value()
	if !ok && !add {
		return false
	}
	silent := ok && equalAs(b.plain, old, *value)
	if silent && exact {
		return true
	}
	b.put(&c, old, ok, copyAs(b.plain, *value), silent)
	return ok
}
