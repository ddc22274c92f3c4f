package watchable

import (
	"slices"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// Batch collects writes that a Map applies atomically: subscribers see all
// of them in one snapshot, at one new revision, or none of them. A Batch is
// valid only inside the function passed to Map.Batch: its methods panic if
// it is used after that function returned. It must not be used from other
// goroutines.
type Batch[K comparable, V any] struct {
	txn     *hamt.Txn[K, V]
	changes []change[K, V]

	// put is not nil while the batch is in put mode: every write so far
	// overwrote an existing key with a value of one word, in a version
	// nobody holds, so the batch keeps the replacements (put.puts) rather
	// than copying nodes into txn, and the commit makes them in place all
	// at once (hamt's Live.Put). The first write that cannot be made so
	// ends put mode: the writes are replayed into txn (toTxn), which has
	// stayed unchanged, and the batch goes on as a copying one.
	put  *putBatch[K, V]
	done bool
	// filling is true while the batch fills an empty map and has made
	// nothing but Stores: they are kept in fill, with their keys' hashes,
	// and the trie is built from all of them at once (hamt's Txn.Fill)
	// when the batch commits, or first loads, counts or deletes. Built so,
	// a large map is made several times faster than by one Set after the
	// other, and its nodes lie in memory in the order State.All reads
	// them. While filling, changes[i] (when record) is fill[i]'s.
	filling bool
	fill    []hamt.Item[K, V]
	// record reports that the map has subscribers to tell what changed;
	// without them, the batch only notes whether anything changed at all
	// (dirty) and whether it makes a new revision (effective).
	record           bool
	dirty, effective bool

	// group reports that the map is large enough for Stores to be applied
	// in groups (see flush); pending holds those not applied yet, in
	// order, at most hamt.WarmGroup of them. Its array is the map's,
	// reused from batch to batch.
	group   bool
	pending []pendingStore[K, V]

	plain uint32 // the map's plain kind of V (see plain.go)
}

// groupMin is the least number of entries for which a Batch groups its
// Stores. Below it the trie is small enough to stay in cache (a few
// hundred kilobytes at most), where a second descent per Store costs more
// than lockstep descents save: a batch of 20 Stores into 10,000 entries
// took about 20% longer grouped.
const groupMin = 1 << 15

// pendingStore is a Store the batch has deep-copied but not applied yet.
type pendingStore[K comparable, V any] struct {
	key K
	val V
}

// putBatch is what a Batch in put mode keeps: the replacements in the
// order they were first made, and the index that finds a key's
// replacement when it is stored again. toTxn and Load find a
// replacement's key and value through it (hamt.PutKey, hamt.PutValue). A
// Map keeps one between batches, emptied, to reuse its arrays.
type putBatch[K comparable, V any] struct {
	live  *hamt.Live[K, V]
	puts  []hamt.Put
	index putIndex
}

// reset empties p for the next batch; keepPuts is false when a reader may
// still read the array of puts (see hamt's Live.Put).
func (p *putBatch[K, V]) reset(keepPuts bool) {
	if keepPuts {
		clear(p.puts)
		p.puts = p.puts[:0]
	} else {
		p.puts = nil
	}
	p.index.reset()
}

// addr returns the address of the word the put at position i replaces.
func (p *putBatch[K, V]) addr(i int) uintptr { return p.puts[i].Addr() }

// storePut records the overwrite of the value found at spot c by value.
// It reports false, recording nothing, if the overwrite cannot be made in
// place.
func (b *Batch[K, V]) storePut(c *hamt.Spot[K, V], value V) bool {
	p := b.put
	put, ok := c.Put(value)
	if !ok {
		return false
	}
	at, again := p.index.findOrAdd(put.Addr(), len(p.puts), p.addr)
	var old V
	if again {
		old = hamt.PutValue[V](&p.puts[at]) // as this batch has it
	} else {
		old, _ = c.Value()
	}
	silent := false
	if equalAs(b.plain, old, value) {
		if exactAs[V](b.plain) { // nobody could tell the two apart: keep the old
			if !again { // the index has its place: the old value stays
				keep, _ := c.Put(old)
				p.puts = append(p.puts, keep)
			}
			return true
		}
		silent = true
	}
	if again {
		p.puts[at] = put
	} else {
		p.puts = append(p.puts, put)
	}
	// The change is made only for subscribers: built and copied for
	// nothing, it was a tenth of a batch's time.
	b.note(silent)
	if b.record {
		b.changes = append(b.changes, change[K, V]{key: c.Key(), hash: c.Hash(), old: old, new: value, hadOld: true, hasNew: true, silent: silent})
	}
	return true
}

// toTxn ends put mode: the writes made so far go into the Txn, which the
// batch uses from then on.
func (b *Batch[K, V]) toTxn() {
	p := b.put
	if p == nil {
		return
	}
	b.put = nil
	for i := range p.puts {
		k := hamt.PutKey[K, V](&p.puts[i])
		b.txn.SetHashed(k, hamt.Hash(k), hamt.PutValue[V](&p.puts[i]))
	}
	p.reset(true) // never handed to Live.Put
}

// flush applies the pending Stores, in the order they were made. Each
// needs a descent of the trie to find the value it replaces, and in a large
// map every descent is a chain of loads from cold memory; the group's
// descents are first made together, level by level (hamt's Txn.Warm), so
// that the processor fetches their nodes at once, and each Store then finds
// its path in cache. Nothing about what the batch does changes: only when
// its memory is read. Load, Len, Delete and the commit flush first, so
// they see every Store made before them.
func (b *Batch[K, V]) flush() {
	b.endFill()
	n := len(b.pending)
	if n == 0 {
		return
	}
	var hs [hamt.WarmGroup]uint64
	for i := range b.pending {
		hs[i] = hamt.Hash(b.pending[i].key)
	}
	start := 0
	if b.put != nil { // the descents find the values they replace, too
		start = b.flushPuts(hs[:n])
	} else if n > 1 { // one descent gains nothing from being made twice
		b.txn.Warm(hs[:n])
	}
	for i := start; i < n; i++ {
		p := &b.pending[i]
		b.storeHashed(p.key, hs[i], p.val)
		*p = pendingStore[K, V]{} // keep no value alive
	}
	b.pending = b.pending[:0]
}

// flushPuts is flush in put mode, for the pending Stores, whose keys' hashes
// are hs: it finds them all in one grouped descent, and records them as
// puts in order, until one cannot be (then put mode ends). It returns how
// many it recorded.
func (b *Batch[K, V]) flushPuts(hs []uint64) int {
	var (
		ks [hamt.WarmGroup]K
		ss [hamt.WarmGroup]hamt.Spot[K, V]
	)
	for i := range b.pending {
		ks[i] = b.pending[i].key
	}
	b.put.live.FindGroup(ks[:len(hs)], hs, ss[:len(hs)])
	clear(ks[:]) // keep no key alive
	for i := range hs {
		p := &b.pending[i]
		if !b.storePut(&ss[i], p.val) {
			b.toTxn()
			return i
		}
		*p = pendingStore[K, V]{}
	}
	return len(hs)
}

// endFill ends filling: the trie is built from the Stores kept. A key
// stored again is told to subscribers as a Store over the value it had, and
// is kept as Store would keep it (see storeHashed).
func (b *Batch[K, V]) endFill() {
	if !b.filling {
		return
	}
	b.filling = false
	var drop []int // Stores that kept the value held: nobody is told of them
	b.txn.Fill(b.fill, func(held, later int) bool {
		old, v := b.fill[held].Val, b.fill[later].Val
		silent := false
		if equalAs(b.plain, old, v) {
			if exactAs[V](b.plain) {
				if b.record {
					drop = append(drop, later)
				}
				return true
			}
			silent = true
		}
		if b.record {
			c := &b.changes[later]
			c.old, c.hadOld, c.silent = old, true, silent
		}
		return false
	})
	clear(b.fill) // keep no value alive
	b.fill = nil
	if len(drop) > 0 {
		slices.Sort(drop)
		kept := b.changes[:0]
		for i, c := range b.changes {
			if len(drop) > 0 && drop[0] == i {
				drop = drop[1:]
				continue
			}
			kept = append(kept, c)
		}
		clear(b.changes[len(kept):])
		b.changes = kept
	}
}

// hold keeps a Store of a filling batch, whose change is c, for endFill.
func (b *Batch[K, V]) hold(c change[K, V]) {
	if len(b.fill) == cap(b.fill) {
		// Doubling: append grows large slices by a quarter, and a
		// million Stores copied the array over five times its size.
		b.fill = append(make([]hamt.Item[K, V], 0, max(16, 2*cap(b.fill))), b.fill...)
	}
	b.fill = append(b.fill, hamt.Item[K, V]{Key: c.key, Hash: c.hash, Val: c.new})
	b.add(c)
}

// add notes one write of the batch.
func (b *Batch[K, V]) add(c change[K, V]) {
	b.note(c.silent)
	if b.record {
		b.changes = append(b.changes, c)
	}
}

// note notes that the batch wrote, and made a new revision unless the
// write was silent.
func (b *Batch[K, V]) note(silent bool) {
	b.dirty = true
	if !silent {
		b.effective = true
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
	value = copyAs(b.plain, value)
	if b.filling {
		b.hold(change[K, V]{key: key, hash: hamt.Hash(key), new: value, hasNew: true})
		return
	}
	if !b.group {
		b.storeHashed(key, hamt.Hash(key), value)
		return
	}
	if len(b.pending) == hamt.WarmGroup {
		b.flush()
	}
	b.pending = append(b.pending, pendingStore[K, V]{key, value})
}

func (b *Batch[K, V]) storeHashed(key K, h uint64, value V) {
	if b.put != nil {
		var cur hamt.Cursor[K, V]
		cur.Seek(b.put.live, key, h)
		if spot := cur.Spot(); b.storePut(&spot, value) {
			return
		}
		b.toTxn()
	}
	c := change[K, V]{key: key, hash: h, new: value, hasNew: true}
	skip := false
	b.txn.SetHashedUnless(key, h, value, func(old V) bool {
		c.old, c.hadOld = old, true
		if equalAs(b.plain, old, value) {
			if exactAs[V](b.plain) {
				skip = true // nobody could tell the two apart
				return true
			}
			c.silent = true
		}
		return false
	})
	if !skip {
		b.add(c)
	}
}

// Delete removes key within the batch.
func (b *Batch[K, V]) Delete(key K) {
	b.live()
	b.flush()
	b.toTxn()
	h := hamt.Hash(key)
	old, ok := b.txn.GetHashed(key, h)
	if !ok {
		return
	}
	b.txn.Delete(key)
	b.add(change[K, V]{key: key, hash: h, old: old, hadOld: true})
}

// Load returns a deep copy of the value for key as the batch has it so far.
func (b *Batch[K, V]) Load(key K) (V, bool) {
	b.live()
	b.flush()
	if p := b.put; p != nil {
		var c hamt.Cursor[K, V]
		c.Seek(p.live, key, hamt.Hash(key))
		v, ok := c.Value()
		if !ok {
			return v, false
		}
		if put, ok := c.Put(v); ok {
			if at, again := p.index.find(put.Addr(), p.addr); again {
				v = hamt.PutValue[V](&p.puts[at]) // as this batch has it
			}
		}
		return copyAs(b.plain, v), true
	}
	v, ok := b.txn.Get(key)
	if !ok {
		return v, false
	}
	return copyAs(b.plain, v), true
}

// Len returns the number of entries as the batch has it so far.
func (b *Batch[K, V]) Len() int {
	b.live()
	b.flush()
	if b.put != nil {
		return b.put.live.Len() // overwrites keep it
	}
	return b.txn.Len()
}

// Batch calls fn with a Batch and applies the writes fn made to it as one
// revision and one notification. If fn panics, nothing is applied and the
// panic propagates. fn runs with the map's write lock held: it must not call
// methods of this Map (they would deadlock), and should be quick. After
// Close, the writes are ignored.
//
// A batch that only overwrites keys already present, with values of one
// word (pointers, maps, 8-byte integers), while no State or unread snapshot
// holds the current version, changes the map in place and copies nothing,
// for keys whose place in the map was written since the last State was
// taken (all of them in a map nobody has read since it was filled); a Load
// that meets such a batch being applied makes the rest of it itself rather
// than wait, so it never sees half of it. Any other batch copies each node
// it touches once; one that starts in place and then inserts, deletes or
// meets a key in a part of the map a State still shares goes on copying
// from there, and what it copies is the map's own again for the next one.
//
// A batch into an empty map (a provider's first load) keeps its Stores
// until it commits, or until it first calls Load, Len or Delete, and then
// builds the map from all of them at once: three to five times faster
// than one Store after another for large batches, with about a third of
// the allocation, and laid out in memory so that State().All() of a
// large map is faster too (docs/design.md). Replace into an empty map does
// the same.
func (m *Map[K, V]) Batch(fn func(b *Batch[K, V])) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.newBatch(m.live.Len() >= groupMin)
	defer b.end() // also when fn panics
	fn(b)
	m.commit(b)
}

// newBatch starts a batch, in put mode when it may be (see Batch.put), and
// grouping its Stores when group is true (see Batch.flush). m.mu is held.
func (m *Map[K, V]) newBatch(group bool) *Batch[K, V] {
	b := &Batch[K, V]{txn: m.live.Txn(), record: m.watched(), group: group, plain: m.plain()}
	if b.group {
		if m.pending == nil {
			m.pending = make([]pendingStore[K, V], 0, hamt.WarmGroup)
		}
		b.pending = m.pending
	}
	if m.live.Len() == 0 {
		b.filling = true
	} else if hamt.CanPut[V]() && m.live.InPlace() {
		if m.puts == nil {
			m.puts = &putBatch[K, V]{live: &m.live}
		}
		b.put = m.puts
	}
	return b
}

// end ends the batch, committed or not, and empties what m keeps for the
// next one.
func (b *Batch[K, V]) end() {
	b.done = true
	clear(b.fill) // keep no value alive
	b.fill = nil
	clear(b.pending)
	b.pending = nil
	if b.put != nil { // not committed in place
		b.put.reset(true)
		b.put = nil
	}
}

// Replace makes the map's contents exactly entries: keys whose values
// changed are stored, keys absent from entries are deleted, and equal values
// are stored as an equal Store is (kept without a notification; see Store).
// It is one revision and one notification, and none at all when nothing
// changed. Only the values that changed (or, for types whose Equal method
// ignores fields, that are equal but not identical) are deep-copied, so
// re-listing a large, mostly unchanged source costs a comparison per entry;
// the caller keeps entries and must not change it during the call. Like a
// Batch, a Replace that deletes nothing and only overwrites one-word values
// of keys present changes the map in place (see Map.Batch). After Close,
// Replace does nothing.
func (m *Map[K, V]) Replace(entries map[K]V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	cur := m.live.Peek()
	b := m.newBatch(false)
	defer b.end()
	if b.filling {
		b.fill = make([]hamt.Item[K, V], 0, len(entries))
	}
	for k := range cur.All() {
		if _, keep := entries[k]; !keep {
			b.Delete(k)
		}
	}
	exact := exactAs[V](b.plain)
	for k, v := range entries {
		h := hamt.Hash(k)
		var (
			c   hamt.Cursor[K, V]
			old V
			ok  bool
		)
		if b.put != nil { // one descent finds the value and its place
			c.Seek(b.put.live, k, h)
			old, ok = c.Value()
		} else {
			old, ok = cur.Get(k)
		}
		silent := ok && equalAs(b.plain, old, v)
		if silent && exact {
			continue
		}
		v = copyAs(b.plain, v)
		ch := change[K, V]{key: k, hash: h, old: old, hadOld: ok, new: v, hasNew: true, silent: silent}
		if b.filling { // the map is empty: its trie is built at once
			b.hold(ch)
			continue
		}
		if b.put != nil {
			if put, inPlace := c.Put(v); inPlace {
				// Keys are unique here: no index needed, and no Load asks.
				b.put.puts = append(b.put.puts, put)
				b.add(ch)
				continue
			}
			b.toTxn()
		}
		b.txn.SetHashed(k, h, v)
		b.add(ch)
	}
	m.commit(b)
}

// commit publishes a finished batch. m.mu is held.
func (m *Map[K, V]) commit(b *Batch[K, V]) {
	if m.closed {
		return // the Txn is dropped: nothing it made was ever reachable
	}
	b.flush()
	if !b.dirty {
		return // the Txn is dropped: nothing it made was ever reachable
	}
	apply := func(rev uint64) { m.live.Apply(b.txn, rev) }
	if p := b.put; p != nil {
		apply = func(rev uint64) {
			made, reuse := m.live.Put(p.puts, rev)
			if !made { // a State froze the version meanwhile: copy
				b.toTxn()
				m.live.Apply(b.txn, rev)
				return
			}
			b.put = nil
			p.reset(reuse)
		}
	}
	if !b.record {
		rev := m.live.Stamp()
		if b.effective {
			rev++
		}
		apply(rev)
		if b.effective {
			m.signal()
		}
		return
	}
	m.publish(b.changes, apply)
}
