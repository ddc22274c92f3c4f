package mvcc

import (
	"math/bits"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/switchyard-go/switchyard/internal/keyhash"
)

// Table is a map from keys of type K to values of type V. The methods
// marked "writer only" must not be called concurrently with each other;
// the others may be called from any goroutine at any time. The zero
// Table is empty and ready to use.
type Table[K comparable, V any] struct {
	// state is the current version << statusShift | its status.
	state atomic.Uint64
	// meta is the slot array and length of the current version, and
	// through prev of the version before the last change of either.
	meta    atomic.Pointer[meta]
	vals    valueMode // how the slots keep values (see slot)
	ptr     bool      // vals is not valueWord: the slots' values are pointers
	strKeys bool      // K is a string: most keys are kept as their bytes
	intKeys uint8     // K is an integer of this many bytes, hashed by its bits; 0 if not

	// stamps is the stamp of the current version (see Stamp) at
	// stamps[version&1]; the writer sets the next version's at the
	// other index before it publishes it, and a reader that read a
	// stamp checks that the version did not move on meanwhile.
	stamps [2]atomic.Uint64

	// The writer's own.
	n, used int // live keys; slots taken, by keys or the deleted
	kept    int // older values kept since the last trim
	stores  int // Stores since the last trim
	// lastHeld is the versions held at the last trim that looked at the
	// lists, every older value in which one of them reads; left is the
	// number of those values. keptAt is the versions whose Stores kept
	// older values since: a value kept at version c is read by the
	// snapshot of c-1, if it is held.
	lastHeld []uint64
	left     int
	keptAt   []uint64
	trimAt   int        // kept at which the writer trims
	slab     []record   // records allocated together
	unlinked []*record  // trim's scratch space
	blocks   keepBlocks // the older values of a table of pointers
	batch    uint64     // the first version a Batch writes, not yet published; 0 outside one
	stamp    uint64     // the stamp a Batch publishes
	// bare is the version in which the writer found no snapshot of an
	// older one held: changed in place, it keeps nothing (bare.go).
	// olderHeld says that the last look found one, when droppedSeen marks
	// had gone.
	bare        uint64
	olderHeld   bool
	droppedSeen uint64
	// undo is what a Batch found in each slot it wrote: for readers of
	// the published version, and to put back if the batch panics.
	undo undoLog
	// sealed is the snapshot Seal made of the current version, while
	// Unseal may still take it back, and seals how many times Seal gave
	// it; spare is one that Unseal took back, for Seal to use again.
	sealed, spare *snapshot[K, V]
	seals         int

	initOnce sync.Once // the first writer sets up a zero Table (see ready)

	held heldSnapshots
	// last is the newest snapshot made, which Snapshot gives again
	// while its version is current rather than make another.
	last atomic.Pointer[snapshot[K, V]]
	log  changeLog[K]
}

const (
	statusOpen     = 0 // no snapshot holds the version: Stores change it in place
	statusChanging = 1 // a Store is changing the version in place
	statusWanted   = 2 // ... and a snapshot waits for it to end
	statusFrozen   = 3 // a snapshot holds the version: Stores make the next one
	statusSealed   = 4 // frozen by the writer's Seal alone, which Unseal may undo
	statusMask     = 7
	statusShift    = 3
)

// meta is a slot array and the number of live keys in it, from version
// born on. Its size changes only while born is the current version and
// that version is open, or born is a Batch's unpublished version; a
// change to either in any other version makes a new meta.
type meta struct {
	born uint64
	arr  *array
	size atomic.Int64
	prev atomic.Pointer[meta] // cut when the next meta is made
}

// beforePublish, when not nil, is called by a Store into the next version
// after its writes and before it publishes the version, and inChange by a
// Store changing the current version in place, before it ends the change:
// tests look at the table there, as a reader could.
var beforePublish, inChange func()

// inRead, when not nil, is called by a reader of a slot's value with 0
// after it read the slot's word, and with 1 after it read the value,
// before it reads the word again; with 2 when the word it read is newer
// than the version it reads, before it looks for an older value; and
// with 3 when it found the slot's version in a Batch's undo log, before
// it reads the log's blocks and the entry; and with 4 when it found the
// page copy it reads the slot's older value from, before it reads it.
var inRead func(step int)

// inAbort, when not nil, is called by a Batch putting back a slot after
// its first write, and before its second.
var inAbort func()

// afterFreeze, when not nil, is called by Snapshot after it froze a
// version and before it reads the version's stamp.
var afterFreeze func()

// New returns an empty table with room for about capacity keys before it
// grows.
func New[K comparable, V any](capacity int) *Table[K, V] {
	tb := new(Table[K, V])
	tb.initOnce.Do(func() { tb.init(capacity) })
	return tb
}

// ready sets up a zero table before its writer's first change. Writer
// only, and Cursor.
func (t *Table[K, V]) ready() {
	if t.meta.Load() == nil {
		t.initOnce.Do(func() { t.init(0) })
	}
}

// init sets up the table with room for capacity keys. Until it publishes
// the meta, readers find the table empty (see emptyArray); it then moves
// the version on to 1, for an empty key's slot at version 0 would have a
// word of 0, which means an empty slot. A Snapshot of version 0 taken
// before reads the new array as empty, since all its words are newer.
func (t *Table[K, V]) init(capacity int) {
	t.vals = modeOf[V]()
	t.ptr = t.vals != valueWord
	t.strKeys = reflect.TypeFor[K]().Kind() == reflect.String
	t.intKeys = keyhash.IntSize[K]()
	t.trimAt = 1024
	t.log.head = new(chunk[K])
	t.log.tail.Store(t.log.head)
	t.log.blocks, t.log.limit = 1, 4
	t.meta.Store(&meta{born: 0, arr: newArray(slotsFor(capacity), t.ptr)})
	if t.ptr {
		t.blocks.start()
	}
	t.state.Store(1 << statusShift) // open: a frozen version 0 is frozen for good
}

// emptyArray is what a Snapshot of a table not yet set up reads: one
// empty slot, never written. Such a snapshot reads none of the table's
// fields, which init sets.
var emptyArray = newArray(1, false)

// nextVersion is the version after v. The slots' words have room for
// versions below 1<<verBits only: beyond, the table stops with a panic
// rather than let an old version look new.
func nextVersion(v uint64) uint64 {
	if v+1 > verMask {
		panic("mvcc: the table has used up its 2^50 versions")
	}
	return v + 1
}

// maxLoad is the share of slots, in eighths, that keys and deleted keys
// may take before the table grows.
const maxLoad = 7

// slotsFor is the number of slots for n keys: twice as many as the load
// factor needs, so that a table grown for n keys takes as many again
// before it grows once more.
func slotsFor(n int) int { return max(16, n*8/maxLoad+1) }

// Version is the current version. It freezes nothing.
func (t *Table[K, V]) Version() uint64 { return t.state.Load() >> statusShift }

// Len is the number of keys in the current version.
func (t *Table[K, V]) Len() int {
	for {
		m := t.metaAt(t.state.Load() >> statusShift)
		if m != nil {
			return int(m.size.Load())
		}
		if t.meta.Load() == nil {
			return 0
		}
	}
}

// find returns the slot of k in slots, or the empty slot where k would go;
// k's tag and length, shifted into place; and the slot's word as find saw
// it, 0 if it was empty. A slot find saw empty may hold another key by the
// time the caller looks again; one that held k holds it for good.
//
// It inlines, and findHashed hashes a string key itself: Map.Store of a
// string key measured 2-7% slower when find or hash was a call of its
// own between the caller and the probe.
func (t *Table[K, V]) find(slots []slot, k K) (*slot, uint64, uint64) {
	s, tag, w, _ := t.findHashed(slots, k, 0)
	return s, tag, w
}

// hash is the hash of k that find probes by.
func (t *Table[K, V]) hash(k K) uint64 {
	switch {
	case hashOverride != nil:
		return hashOverride(k)
	case t.strKeys:
		return keyhash.String(*(*string)(unsafe.Pointer(&k)))
	case t.intKeys != 0:
		return keyhash.Uint64(keyhash.IntBits(t.intKeys, unsafe.Pointer(&k)))
	default:
		return keyhash.Comparable(k)
	}
}

// findHashed is find for a key whose hash is h, or 0 for find to
// compute it (a hash that is 0 is computed again), and returns the hash
// too.
func (t *Table[K, V]) findHashed(slots []slot, k K, h uint64) (*slot, uint64, uint64, uint64) {
	if h == 0 {
		if t.strKeys && hashOverride == nil {
			h = keyhash.String(*(*string)(unsafe.Pointer(&k))) // without a call to hash: see find
		} else {
			h = t.hash(k)
		}
	}
	n := t.keyLen(k)
	// The tag is the hash's low bits: the slot's index comes from the
	// high ones.
	tag := h<<tagShift | n<<lenShift
	i, _ := bits.Mul64(h, uint64(len(slots)))
	for ; ; i++ {
		if i == uint64(len(slots)) {
			i = 0
		}
		s := &slots[i]
		w := s.word.Load()
		if w == 0 {
			return s, tag, 0, h
		}
		if w&identMask != tag {
			continue
		}
		if n == boxedLen {
			if *(*K)(s.kp) == k {
				return s, tag, w, h
			}
		} else if unsafe.String((*byte)(s.kp), int(n)) == *(*string)(unsafe.Pointer(&k)) {
			return s, tag, w, h
		}
	}
}

// hashOverride, when not nil, replaces the seeded hash of keys: tests
// force collisions with it. It must be set only while no table is in use.
var hashOverride func(any) uint64

// metaAt returns the meta of version v, or nil if the writer has since
// cut the link to it (after a growth, or a second change of length): the
// caller should read the version again.
func (t *Table[K, V]) metaAt(v uint64) *meta {
	m := t.meta.Load()
	for m != nil && m.born > v {
		m = m.prev.Load()
	}
	return m
}

// Load returns the value of k in the current version. It never waits. A
// Store into the next version is not seen before it is published, so a
// Snapshot taken after a Load sees what the Load saw.
func (t *Table[K, V]) Load(k K) (V, bool) {
	for {
		trims := t.held.trims.Load()
		v := t.state.Load() >> statusShift
		m := t.metaAt(v)
		if m == nil {
			if t.meta.Load() == nil {
				var zero V // not set up yet: t's fields are not either
				return zero, false
			}
			continue
		}
		s, _, w := t.find(m.arr.slots, k)
		if r, ok := t.current(s, w, v); ok {
			return t.fromRaw(r), true
		}
		r, ok, old, ver := t.at(m.arr, s, w, v)
		// An older value read from a list is good unless the writer
		// trimmed meanwhile, or its keep block is gone: no snapshot of
		// the Load's own holds v.
		if !old || ver != lostVer && t.held.trims.Load() == trims {
			return t.fromRaw(r), ok
		}
	}
}

// Store sets k to val, keeping the stamp. Writer only.
func (t *Table[K, V]) Store(k K, val V) { t.StoreStamped(k, val, t.writerStamp()) }

// StoreStamped sets k to val, and the stamp of the version it writes to
// stamp. Writer only.
func (t *Table[K, V]) StoreStamped(k K, val V, stamp uint64) {
	t.ready()
	m := t.meta.Load()
	s, tag, w := t.find(m.arr.slots, k)
	t.set(k, m, s, tag, w, t.toRaw(val), false, stamp)
}

// Delete removes k, keeping the stamp, and reports whether it was there.
// Writer only.
func (t *Table[K, V]) Delete(k K) bool { return t.DeleteStamped(k, t.writerStamp()) }

// DeleteStamped removes k, and reports whether it was there; if it was,
// the stamp of the version it writes becomes stamp. Writer only.
func (t *Table[K, V]) DeleteStamped(k K, stamp uint64) bool {
	var r Ref[K, V]
	t.Find(k, &r)
	return r.Delete(stamp)
}

// Find looks for k, and sets r to what it found: k's newest value, and
// the means to change it without looking again. Writer only: the Ref is
// good until the writer's next change.
//
// It fills the caller's Ref rather than returning one: a Ref is seven
// words, more than the compiler keeps in registers, so a returned Ref was
// stored word by word and then copied sixteen bytes at a time into the
// caller's variable, and each such load, straddling two of the stores just
// made, waits for them to reach the cache (a failed store forward), on
// every Store and every Store of a Batch (docs/design.md, *A Ref filled
// in place*). Its fields are set one by one for the same reason.
func (t *Table[K, V]) Find(k K, r *Ref[K, V]) {
	t.ready()
	m := t.meta.Load()
	s, tag, w, h := t.findHashed(m.arr.slots, k, 0)
	r.t, r.k, r.m, r.s, r.tag, r.w, r.h = t, k, m, s, tag, w, h
}

// Prefetch starts bringing the first slot that Find would probe for k
// into the processor's cache, without waiting for it, and returns the
// hash to give FindHashed. A writer that knows the keys it will look up
// next prefetches them first, so that their cache misses overlap rather
// than follow one another. Writer only.
func (t *Table[K, V]) Prefetch(k K) uint64 {
	t.ready()
	h := t.hash(k)
	slots := t.meta.Load().arr.slots
	i, _ := bits.Mul64(h, uint64(len(slots)))
	prefetch(unsafe.Pointer(&slots[i]))
	return h
}

// Slots is the number of slots of the table's array, 0 before the first
// write: what its size costs in memory, whatever its length. Writer only.
func (t *Table[K, V]) Slots() int {
	if m := t.meta.Load(); m != nil {
		return len(m.arr.slots)
	}
	return 0
}

// Large reports whether the table's slots are many enough that a
// writer's probes miss the processor's caches: then Prefetch pays for
// itself. Writer only.
func (t *Table[K, V]) Large() bool { return t.Slots() >= largeSlots }

// largeSlots is the number of slots from which a table is Large: 1.5 MB
// of slots, more than the L2 cache of most server cores.
const largeSlots = 1 << 16

// FindHashed is Find for a key whose hash Prefetch returned, or 0 for
// Find's own. The table may have grown meanwhile: the prefetch then did
// not help, but the result is right.
func (t *Table[K, V]) FindHashed(k K, h uint64, r *Ref[K, V]) {
	m := t.meta.Load()
	s, tag, w, h := t.findHashed(m.arr.slots, k, h)
	r.t, r.k, r.m, r.s, r.tag, r.w, r.h = t, k, m, s, tag, w, h
}

// Ref is a key as Find found it.
type Ref[K comparable, V any] struct {
	t         *Table[K, V]
	k         K
	m         *meta
	s         *slot
	tag, w, h uint64
}

// Key is the key looked for.
func (r *Ref[K, V]) Key() K { return r.k }

// Hash is the hash the table found the key by: keyhash.Of's (unless a
// test replaced it), which the writer's other indexes of keys use too.
func (r *Ref[K, V]) Hash() uint64 { return r.h }

// Value is the key's newest value, as the writer sees it (inside a
// Batch, with the batch's changes), and whether it is there.
func (r *Ref[K, V]) Value() (V, bool) {
	if r.w == 0 || r.w&deleted != 0 {
		return r.t.fromRaw(raw{}), false
	}
	return r.t.fromRaw(loadRaw(&r.s.v, r.t.ptr)), true
}

// Set sets the key to val, and the stamp of the version it writes to
// stamp (inside a Batch, the batch's Stamp does).
func (r *Ref[K, V]) Set(val V, stamp uint64) {
	r.t.set(r.k, r.m, r.s, r.tag, r.w, r.t.toRaw(val), false, stamp)
}

// Delete removes the key, and reports whether it was there; if it was,
// the stamp of the version it writes becomes stamp.
func (r *Ref[K, V]) Delete(stamp uint64) bool {
	if r.w == 0 || r.w&deleted != 0 {
		return false
	}
	r.t.set(r.k, r.m, r.s, r.tag, r.w, raw{}, true, stamp)
	return true
}

// Restamp gives the current contents a new stamp, as a version of their
// own: in place while no snapshot holds the current version, otherwise
// as the next version, unchanged but for its stamp. Inside a Batch it is
// the batch's Stamp. Writer only.
func (t *Table[K, V]) Restamp(stamp uint64) {
	t.ready()
	if t.batch != 0 {
		t.stamp = stamp
		return
	}
	st := t.state.Load()
	if st&statusMask == statusOpen && t.state.CompareAndSwap(st, st|statusChanging) {
		t.stamps[st>>statusShift&1].Store(stamp)
		if !t.state.CompareAndSwap(st|statusChanging, st) {
			t.state.Store(st | statusFrozen) // a snapshot waits for it
		}
		return
	}
	v := nextVersion(st >> statusShift)
	t.settle()
	t.stamps[v&1].Store(stamp)
	t.state.Store(v << statusShift)
	t.last.Store(nil)
}

// Range calls yield with each key and its newest value, as the writer
// sees them (inside a Batch, with the batch's changes), until yield
// returns false. Writer only, and yield must not change the table; Range
// freezes nothing, as a Snapshot would.
func (t *Table[K, V]) Range(yield func(K, V) bool) {
	m := t.meta.Load()
	if m == nil {
		return
	}
	for i := range m.arr.slots {
		s := &m.arr.slots[i]
		w := s.word.Load()
		if w == 0 || w&deleted != 0 {
			continue
		}
		if !yield(key[K](s, w), t.fromRaw(loadRaw(&s.v, t.ptr))) {
			return
		}
	}
}

// Stamp is the stamp of the current version: a number the writer gives
// each version it writes, with StoreStamped, DeleteStamped or
// Batch.Stamp, which a Snapshot of the version reports. Where the writer
// gives none, a version keeps the stamp of the one before; the first
// version's is 0. watchable's Map keeps its revision there. It never
// waits.
func (t *Table[K, V]) Stamp() uint64 {
	for {
		v := t.state.Load() >> statusShift
		s := t.stamps[v&1].Load()
		if t.state.Load()>>statusShift == v {
			return s
		}
	}
}

// writerStamp is the stamp the writer's next change keeps. Writer only.
func (t *Table[K, V]) writerStamp() uint64 {
	if t.batch != 0 {
		return t.stamp
	}
	return t.stamps[t.state.Load()>>statusShift&1].Load()
}

// set stores the value r keeps at k, or deletes k, and stamps the version
// it writes (not a Batch's, which the batch stamps when it publishes). m
// is the current meta and s k's slot in it, or the empty slot where k
// would go, with tag and w as find gave them. Writer only.
func (t *Table[K, V]) set(k K, m *meta, s *slot, tag, w uint64, r raw, del bool, stamp uint64) {
	if w == 0 && t.used+1 > len(m.arr.slots)*maxLoad/8 {
		m = t.grow()
		s, tag, w = t.find(m.arr.slots, k)
	}
	delta := 0
	switch {
	case del:
		delta = -1
	case w == 0 || w&deleted != 0:
		delta = 1
	}
	if t.batch == 0 && t.log.asked.Load() {
		t.answer() // start or stop logging for Diff, before the change
	}
	logging := t.log.readers.Load() > 0
	if logging {
		t.log.reserve(t.n)
	}
	st := t.state.Load()
	ver := st >> statusShift
	if t.batch != 0 {
		t.batchSet(k, m, s, tag, w, r, del, delta, logging)
		return
	}
	// What a change in place needs is allocated before it begins, for
	// a snapshot may wait for the change: a new meta if the length
	// changes in a version that did not make m, a record if the slot
	// was written in an older version, and room for it in the history,
	// and a boxed key for a new slot (the caller boxed the value).
	var next *meta
	if delta != 0 && m.born != ver {
		next = new(meta)
	}
	var kept *record
	var page *pageCopy
	var pageBlock *keepBlock // page's values, in a table of pointers
	paged, bare := false, false
	idx := s.index(m.arr.slots)
	var thawed []*record
	if w != 0 && w&verMask < ver {
		frozen := m.arr.frozen.Load() != nil
		if frozen {
			var buf [4]*record
			thawed = t.thaw(m.arr, w, buf[:0])
		}
		switch open := st&statusMask == statusOpen; {
		case open && !frozen && t.bareAt(ver):
			// In place, with no older snapshot held: nothing to keep.
			bare = true
		case open && m.arr.copying(idx, ver):
			// In place, to a page that kept records for several
			// Stores in this version: what the slot held is kept by
			// a copy of its page, made once in the version.
			paged = true
			page, pageBlock = m.arr.copyPage(idx, ver, t.ptr)
		default:
			kept = t.record()
			m.arr.room()
		}
	}
	var kp unsafe.Pointer
	if w == 0 {
		kp = t.keyPtr(k)
	}
	inPlace := false
	switch {
	case w&deleted != 0 && w&verMask == ver:
		// k was deleted in place in this version. Stored in place
		// again, its slot would get back the very word a reader may
		// have read before the delete, and a reader that read the
		// delete's zero value after it would take that for k's value.
		// The next version gives the slot a word of its own.
		ver = nextVersion(ver)
		t.settle()
	case st&statusMask == statusOpen && t.state.CompareAndSwap(st, st|statusChanging):
		inPlace = true
	default:
		ver = nextVersion(ver) // the version is frozen: write into the next one, which nobody sees before it is published
		t.settle()
	}
	if !inPlace {
		page, paged, bare = nil, false, false // a snapshot froze the version meanwhile: keep a record
	}
	if w == 0 {
		s.kp = kp // nobody reads it before the slot's word is set
		t.used++
	}
	if delta != 0 {
		t.n += delta
		if m.born == ver {
			m.size.Store(int64(t.n))
		} else {
			if next == nil { // not in place: no snapshot waits
				next = new(meta)
			}
			t.newMeta(next, m.arr, ver)
		}
	}
	for i := len(thawed) - 1; i >= 0; i-- {
		// What a frozen batch's log holds of the slot, oldest first,
		// before the value the batch wrote is replaced (see thaw).
		m.arr.keep(idx, thawed[i])
		t.keep(ver)
	}
	if page != nil {
		// Linked before the slot changes, as a record is.
		m.arr.linkPage(idx, page)
		if pageBlock != nil {
			t.blocks.adopt(pageBlock, page.pointers().block)
		}
		t.keep(ver)
	}
	t.write(m.arr, s, tag, w, ver, r, del, kept, paged || bare)
	if logging {
		t.log.append(Entry[K]{ver, k}) // before a snapshot of ver can be taken
	}
	if t.stamps[ver&1].Load() != stamp {
		t.stamps[ver&1].Store(stamp) // a locked instruction: spared when the stamp stays
	}
	switch {
	case inPlace:
		if inChange != nil {
			inChange()
		}
		if !t.state.CompareAndSwap(st|statusChanging, st) {
			t.state.Store(st | statusFrozen) // a snapshot waits for it
		}
	default:
		if beforePublish != nil {
			beforePublish()
		}
		t.state.Store(ver << statusShift)
		t.last.Store(nil) // a snapshot of an older version: nobody takes it again
	}
	if len(thawed) > 0 {
		t.settleFrozen(m.arr)
	}
	t.stores++
	if t.trimDue() {
		t.trim(t.kept <= t.trimAt)
	}
	t.blocks.settle()
}

// batchSet is set inside a Batch. The first write to a slot in the batch
// notes in the undo log what the slot held, and gives the slot the
// version of its entry there, base+index, which no reader of the
// published version reads: such a reader finds the slot's older value in
// the entry (see at). A later write in the batch keeps that version. The
// log of changes gets the first write alone, so that its entries stay in
// the order of their versions. Nothing is kept in the slots' lists of
// older values while the batch is under way. Writer only.
func (t *Table[K, V]) batchSet(k K, m *meta, s *slot, tag, w uint64, r raw, del bool, delta int, logging bool) {
	ver := w & verMask
	first := w == 0 || ver < t.batch
	if first {
		if t.batch+t.undo.n+2 > verMask {
			// The slot's version and the batch's (see published).
			panic("mvcc: the table has used up its 2^50 versions")
		}
		ver = t.batch + t.undo.add(m.arr, s, w, loadRaw(&s.v, t.ptr), t.ptr)
	}
	if w == 0 {
		s.kp = t.keyPtr(k) // nobody reads it before the slot's word is set
		t.used++
	}
	if delta != 0 {
		t.n += delta
		if m.born == t.batch {
			m.size.Store(int64(t.n))
		} else {
			t.newMeta(new(meta), m.arr, t.batch)
		}
	}
	nw := tag | ver
	if del {
		nw |= deleted
	}
	t.storeSlot(s, w, nw, r) // nothing to keep: readers of the batch's slots read the undo log
	if logging && first {
		t.log.append(Entry[K]{ver, k})
	}
	t.stores++
}

// trimDue reports whether the writer should trim: when it has kept as
// many older values as the last trim left (or a quarter of the keys), or,
// so that a writer that stopped keeping them still lets go of those kept
// and of a large history table, when a pass over the keys has been made
// since the last trim and some are kept, or the table is large.
func (t *Table[K, V]) trimDue() bool {
	if t.kept > t.trimAt {
		return true
	}
	if t.stores <= max(4096, t.n) {
		return false
	}
	a := t.meta.Load().arr
	h := a.older.Load()
	return h.used > 0 || len(h.e) > 64 || a.pages.Load() != nil || a.frozen.Load() != nil
}

// Batch calls fn, and makes the Stores and Deletes it makes through b
// visible at once: they all write versions after the current one, and
// the version after them is published when fn returns. If fn panics,
// Batch puts back what it changed, and nobody ever sees any of it.
// Writer only; b must not be used after fn returns, and fn must not call
// Batch.
//
// Each slot the batch writes gets a version of its own, in the order the
// batch first writes them, and its older value an entry at that index in
// the undo log, which readers of the published version read while the
// batch is under way. When the batch ends, what its entries hold is kept
// only if a snapshot may still read it (see keepReplaced): in a frozen
// copy of the log, read the same way, or in the slots' lists. A batch that
// nobody holds a snapshot across keeps nothing but its entries, which the
// next batch reuses.
func (t *Table[K, V]) Batch(fn func(b Batch[K, V])) {
	if t.batch != 0 {
		panic("mvcc: a Batch inside a Batch")
	}
	t.ready()
	if t.log.asked.Load() {
		t.answer() // not inside: its first changes would go unlogged
	}
	var cur uint64
	for {
		// Freeze the current version, as a snapshot would, so that
		// nothing is written in place.
		st := t.state.Load()
		if st&statusMask == statusFrozen || t.state.CompareAndSwap(st, st&^statusMask|statusFrozen) {
			cur = st >> statusShift
			t.batch = nextVersion(cur)
			t.settle()
			t.stamp = t.stamps[cur&1].Load()
			break
		}
	}
	before := t.meta.Load()
	t.undo.begin(t.batch, before.arr)
	n, used := t.n, t.used
	done := false
	defer func() {
		v := t.published(cur)
		if !done {
			t.abort(before, n, used, cur, v)
			return
		}
		t.batch = 0
		t.stamps[v&1].Store(t.stamp)
		if beforePublish != nil {
			beforePublish()
		}
		t.state.Store(v << statusShift)
		if m := t.meta.Load(); m.prev.Load() != nil && m.prev.Load().arr != m.arr {
			// The batch grew the table: once it is published, let go
			// of the old array as growth does (a Load reads again).
			m.prev.Store(nil)
		}
		t.last.Store(nil)
		t.endBatch(before.arr)
		t.blocks.settle()
	}()
	fn(Batch[K, V]{t})
	done = true
}

// published is the version a Batch that began at version cur publishes:
// the first after the versions its slots took, with the parity of cur's
// next, for the stamp of each version is kept by its parity and cur's
// must stay until it is published.
func (t *Table[K, V]) published(cur uint64) uint64 {
	v := t.batch + t.undo.n
	if (v-cur)&1 == 0 {
		v++
	}
	if v > verMask {
		panic("mvcc: the table has used up its 2^50 versions")
	}
	return v
}

// endBatch ends a Batch's undo log once its version is published. It
// first keeps each value the batch replaced in arr, the array of the
// version it began at, that a snapshot may still read: one written at or
// before the newest version held (an array the batch grew into is read by
// no older version; see keepReplaced). It keeps nothing else, and a Load
// that read an entry reads again, for the trims counter moves on. Writer
// only.
func (t *Table[K, V]) endBatch(arr *array) {
	h := &t.held
	h.trims.Add(1) // before it reads the marks, as trim does: see Snapshot
	h.mu.Lock()
	h.count()
	var newest uint64 // the newest version held: the one the batch began at, or older
	for _, m := range h.marks {
		newest = max(newest, m.ver)
	}
	h.mu.Unlock()
	if newest > 0 {
		// The snapshot of newest, and any older, may read what the
		// batch replaced.
		if n := t.keepReplaced(arr, newest); n > 0 {
			t.kept += n - 1
			t.keep(newest + 1)
		}
	}
	t.undo.end(t.n, t.ptr)
	if t.trimDue() {
		t.trim(t.kept <= t.trimAt)
	}
}

// abort puts back what the Batch under way changed, as it was when the
// Batch began at version cur with the meta before and the counts n and
// used, and publishes version v with the contents and the stamp of cur.
// A slot keeps the word the batch gave it, a version no reader of cur
// reads the slot at (they read the undo log), and gets back its old value
// or its absence. A slot the batch gave a new key keeps it, deleted. An
// array the batch grew into is dropped whole. No reader saw any of the
// batch: v is published only once it is put back. Writer only.
func (t *Table[K, V]) abort(before *meta, n, used int, cur, v uint64) {
	t.undo.each(func(u *undo, i int, began bool) {
		if !began {
			return
		}
		sl := &before.arr.slots[i]
		w := sl.word.Load() | deleted
		old := u.w.Load()
		if old == 0 {
			used++ // taken by a deleted key
		} else if old&deleted == 0 {
			w &^= deleted
		}
		storeRaw(&sl.v, u.value(t.ptr), t.ptr)
		if inAbort != nil {
			inAbort()
		}
		sl.word.Store(w)
	})
	t.meta.Store(before)
	t.n, t.used = n, used
	t.batch = 0
	t.stamps[v&1].Store(t.stamps[cur&1].Load())
	t.state.Store(v << statusShift)
	t.last.Store(nil)
	t.endBatch(before.arr)
	t.blocks.settle()
}

// Batch is a batch of Stores and Deletes under way (Table.Batch).
type Batch[K comparable, V any] struct{ t *Table[K, V] }

// Store sets k to val in the batch.
func (b Batch[K, V]) Store(k K, val V) { b.t.StoreStamped(k, val, 0) }

// Stamp sets the stamp the batch's version is published with; without
// it, the version keeps the stamp of the one before.
func (b Batch[K, V]) Stamp(stamp uint64) { b.t.stamp = stamp }

// Delete removes k in the batch, and reports whether it was there.
func (b Batch[K, V]) Delete(k K) bool { return b.t.Delete(k) }

// newMeta publishes the meta of slots from version ver on, with the
// writer's count of keys. The one before it stays its prev, for a reader
// that read an older version, unless slots is a new array: a table that
// grows lets go of the old one at once, unless snapshots hold it. Either
// way it cuts the one before that: a reader that finds no meta old enough
// reads the version again.
func (t *Table[K, V]) newMeta(m *meta, arr *array, ver uint64) *meta {
	m.born, m.arr = ver, arr
	m.size.Store(int64(t.n))
	old := t.meta.Load()
	if old.born == ver && old.prev.Load() != nil {
		old = old.prev.Load() // old was made in the same version (a batch's, unpublished, or a growth's): m replaces it
	}
	if old.arr == arr || ver > t.state.Load()>>statusShift {
		// Readers of the published version need old while ver is
		// unpublished.
		m.prev.Store(old)
	}
	old.prev.Store(nil)
	t.meta.Store(m)
	return m
}

// grow moves the newest value of every key into an array twice the size
// the keys need, and publishes it as the current version's. The new array
// holds no older values: a snapshot older than the current version reads
// the old array, which nobody writes again. Writer only.
func (t *Table[K, V]) grow() *meta {
	old := t.meta.Load().arr.slots
	arr := newArray(slotsFor(2*t.n+1), t.ptr)
	slots := arr.slots
	for i := range old {
		o := &old[i]
		w := o.word.Load()
		if w == 0 || w&deleted != 0 {
			continue
		}
		s, _, _ := t.find(slots, key[K](o, w))
		s.kp = o.kp
		storeRaw(&s.v, loadRaw(&o.v, t.ptr), t.ptr)
		s.word.Store(w)
	}
	t.used = t.n
	t.kept, t.left, t.keptAt = 0, 0, t.keptAt[:0]
	born := t.state.Load() >> statusShift
	if t.batch != 0 {
		born = t.batch // the array holds the batch's Stores so far
	}
	return t.newMeta(new(meta), arr, born)
}

// write stores val into slot s, whose word was w, as version ver, or
// deletes its key, in an order that lets a reader tell a slot it read
// while this was under way:
//   - a key new to the slot, or one deleted before: the value, then the
//     word, which makes it visible;
//   - a key being deleted: the word, then the zero value;
//   - otherwise, the word, then the value, so that a reader that read the
//     word before sees it changed if it read the new value.
//
// The old value is kept first, in r if it is not nil, when s was written
// in an older version, which a snapshot may hold, unless skip says that a
// copy of its page keeps it or that no snapshot can read it (bareAt).
func (t *Table[K, V]) write(a *array, s *slot, tag, w, ver uint64, val raw, del bool, r *record, skip bool) {
	nw := tag | ver
	if del {
		nw |= deleted
	}
	if w != 0 && w&verMask < ver && t.batch == 0 && !skip {
		if r == nil {
			r = t.record()
		}
		r.ver = w & verMask
		t.keepValue(r, loadRaw(&s.v, t.ptr))
		if w&deleted != 0 {
			r.ver |= gone
		}
		a.keep(s.index(a.slots), r)
		t.keep(ver)
	}
	t.storeSlot(s, w, nw, val)
}

// storeSlot stores word nw and value val in slot s, whose word was w: the
// value first where the slot was empty or its key deleted, the word first
// where it held a value, the order readers rely on (see current and at).
// In a table of words both are release stores (storeSlotRelease). Writer
// only.
func (t *Table[K, V]) storeSlot(s *slot, w, nw uint64, val raw) {
	if !t.ptr {
		storeSlotRelease(s, w, nw, val.n)
		return
	}
	if w == 0 || w&deleted != 0 {
		storeRaw(&s.v, val, t.ptr)
		s.word.Store(nw)
		return
	}
	s.word.Store(nw)
	storeRaw(&s.v, val, t.ptr)
}

// record returns a new record, from a block of 64 records allocated
// together: the first write to each key after a snapshot keeps one (the
// collector frees a block once none of its records is reachable; trims
// zero the values of those they unlink).
func (t *Table[K, V]) record() *record {
	if len(t.slab) == 0 {
		t.slab = newListRecords(64, t.ptr)
	}
	r := &t.slab[0]
	t.slab = t.slab[1:]
	return r
}

// lostVer is the version at gives for a value that is gone.
const lostVer = ^uint64(0)

// heldAt is at for a reader that holds a snapshot of version at, which
// keeps every value it reads: one that is gone is a bug of the table.
func (t *Table[K, V]) heldAt(a *array, sl *slot, w, at uint64) (val raw, ok, older bool, ver uint64) {
	val, ok, older, ver = t.at(a, sl, w, at)
	if ver == lostVer {
		panic("mvcc: an older value a held snapshot reads is gone")
	}
	return val, ok, older, ver
}

// current is at's common case, small enough to inline into readers: the
// key's live value if the slot's word w is not newer than version at and
// the writer did not move the slot on while it was read. ok false says
// nothing: ask at.
func (t *Table[K, V]) current(sl *slot, w, at uint64) (val raw, ok bool) {
	if w == 0 || w&(deleted|verMask) > at || inRead != nil {
		return val, false
	}
	val = loadRaw(&sl.v, t.ptr)
	return val, sl.word.Load() == w
}

// at returns the value at version at of the key in sl, whose word find saw
// as w; whether it came from the older values (the Batch's undo log, a
// frozen batch's, the slot's records, its page's copies); and the version
// that wrote it, or deleted the key (0 if the key came later). The version
// is lostVer if the value is a record's whose keep block is gone: no
// snapshot held reads version at, and the caller, a Load, reads again.
func (t *Table[K, V]) at(a *array, sl *slot, w, at uint64) (val raw, ok, older bool, ver uint64) {
	for w != 0 {
		ver := w & verMask
		if ver > at {
			if inRead != nil {
				inRead(2)
			}
			uw, uv, ok := t.undo.find(ver, t.ptr)
			lost := false // the frozen value's keep block is gone
			if !ok {
				uw, uv, ok, lost = a.frozenAt(ver, t.ptr)
			}
			if ok {
				// Written by the Batch under way, or one frozen: its
				// undo log has what the slot held before, written
				// before the slot. Read that as the slot.
				if uw == 0 || uw&verMask > at {
					if w = uw; w == 0 {
						return val, false, true, 0 // the key came later
					}
					continue // older still: the slot's list has it
				}
				if uw&deleted != 0 {
					return val, false, true, uw & verMask
				}
				if lost {
					return val, false, true, lostVer
				}
				return uv, true, true, uw & verMask
			}
			// Newer than version at; the older values were kept
			// before the version was set, in the slot's records or
			// its page's copies: the one written last at or before
			// version at is its value there.
			i := sl.index(a.slots)
			c, pw := a.pageCopyAt(i, at)
			pver := pw & verMask
			for r := a.list(i); r != nil; r = r.older.Load() {
				if rv := r.ver & verMask; rv <= at {
					if c != nil && pver > rv {
						break // the page's copy is newer
					}
					if r.ver&gone != 0 {
						return val, false, true, rv
					}
					v, ok := t.keptValue(r)
					if !ok {
						return val, false, true, lostVer
					}
					return v, true, true, rv
				}
			}
			switch {
			case c == nil || pw == 0:
				return val, false, true, 0 // the key came later
			case pw&deleted != 0:
				return val, false, true, pver
			}
			if inRead != nil {
				inRead(4)
			}
			v, ok := c.value(i, t.ptr)
			if !ok {
				return val, false, true, lostVer
			}
			return v, true, true, pver
		}
		if w&deleted != 0 {
			return val, false, false, ver
		}
		if inRead != nil {
			inRead(0)
		}
		v := loadRaw(&sl.v, t.ptr)
		if inRead != nil {
			inRead(1)
		}
		w2 := sl.word.Load()
		if w2 == w {
			return v, true, false, ver
		}
		// The writer moved the slot on meanwhile: read it again.
		w = w2
	}
	return val, false, false, 0
}

// History is the number of older values kept for snapshots, counting a
// copy of a page as one. Writer only; O(N).
func (t *Table[K, V]) History() int {
	t.ready()
	a := t.meta.Load().arr
	return a.count() + a.copies() + a.frozenCount()
}

// heldSnapshots is what the table knows of the snapshots still held: a
// mark for each version a snapshot was made of, which the collector sets
// once the snapshot is unreachable.
type heldSnapshots struct {
	mu    sync.Mutex
	marks []*mark
	live  int // marks not gone at the last count
	// trims counts the writer's trims, which begin by adding one: a
	// reader that read an older value at a version no mark of its own
	// holds, and sees trims change, reads again.
	trims atomic.Uint64
	// dropped counts the marks that went, for the writer to tell that a
	// snapshot it saw held may be gone (see bareAt).
	dropped atomic.Uint64
}

type mark struct {
	ver     uint64
	gone    atomic.Bool
	dropped *atomic.Uint64 // the table's count of marks gone
}

// newMark returns a mark of version v for snapshot s, which the collector
// drops once s is unreachable. It is not in the list yet: see add.
func newMark[K comparable, V any](h *heldSnapshots, s *snapshot[K, V], v uint64) *mark {
	mk := &mark{ver: v, dropped: &h.dropped}
	runtime.AddCleanup(s, (*mark).drop, mk)
	return mk
}

// drop marks the snapshot gone.
func (m *mark) drop() {
	m.gone.Store(true)
	m.dropped.Add(1)
}

// add marks version v as held by a snapshot, and drops the marks of
// snapshots gone when the list has doubled since it was last counted.
func (h *heldSnapshots) add(mk *mark) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.marks) >= 2*h.live+64 {
		h.count()
	}
	h.marks = append(h.marks, mk)
}

// count drops the marks of snapshots gone. h.mu is held.
func (h *heldSnapshots) count() {
	live := h.marks[:0]
	for _, m := range h.marks {
		if !m.gone.Load() {
			live = append(live, m)
		}
	}
	clear(h.marks[len(live):])
	h.marks = live
	h.live = len(live)
}

// Trim drops the older values that no snapshot still held can read. The
// table trims by itself as it keeps them; Trim is for tests and for a
// caller that has just let go of many snapshots. Writer only; inside a
// Batch it does nothing, for the published version still reads the
// values the batch replaced.
func (t *Table[K, V]) Trim() {
	t.ready()
	t.trim(false)
	if t.batch == 0 {
		t.blocks.release(true) // what it let go of goes now, whatever the collector does
	}
}

// trim finds the versions that snapshots still hold, and unlinks from
// each list of older values every value that none of them reads.
// Writer only; O(slots with older values + held snapshots).
//
// A periodic trim, made because a pass over the keys went by rather than
// because many older values were kept, walks the lists only if a version
// held at the last trim is no longer held, or none is held and the table
// of older values is not empty and small: otherwise it could cut nothing
// that the next trim would not.
func (t *Table[K, V]) trim(periodic bool) {
	if t.batch != 0 {
		return // the published version reads the batch's older values
	}
	t.stores = 0
	h := &t.held
	h.trims.Add(1)                       // before it reads the marks: see Snapshot
	cur := t.state.Load() >> statusShift // any snapshot taken from now on is of cur or later
	h.mu.Lock()
	h.count()
	vers := make([]uint64, 0, len(h.marks)+1)
	for _, m := range h.marks {
		vers = append(vers, m.ver)
	}
	h.mu.Unlock()
	slices.Sort(vers)
	vers = slices.Compact(vers)
	if periodic && holdsAll(vers, t.lastHeld) {
		// No version held at the last trim has gone since: a value
		// that trim left is read as it was, and those kept since wait
		// for the trim that their number sets off. A reader that takes
		// a new snapshot now and then, and drops the last, adds a held
		// version at each; walking every list each time would cost
		// the writer the whole history once a pass over the keys.
		a := t.meta.Load().arr
		if hist := a.older.Load(); len(vers) > 0 || hist.used == 0 && len(hist.e) <= 64 && a.pages.Load() == nil && a.frozen.Load() == nil {
			return
		}
	}
	if len(vers) > 0 && holdsAll(vers, t.lastHeld) && t.keptRead(vers) {
		// Every older value is read by a held version: those the
		// last look at the lists left by a version still held, those
		// kept since by the snapshot of the version before the one
		// their Store wrote. A reader that waits on a held snapshot
		// (a lazy subscriber), or takes a new one now and then before
		// the collector ends the last, makes the writer keep a value
		// for each key it writes: walking the lists each time a
		// quarter of the keys went by would cut nothing.
		t.lastHeld = append(t.lastHeld[:0], vers...)
		t.left += t.kept
		t.kept, t.keptAt, t.trimAt = 0, t.keptAt[:0], max(1024, t.n/4, t.left)
		t.blocks.release(false) // and forget the blocks the last trim left empty
		return
	}
	t.lastHeld = append(t.lastHeld[:0], vers...)
	t.keptAt = t.keptAt[:0]
	vers = append(vers, cur)
	vers = slices.Compact(vers)
	if s := t.last.Load(); s != nil && s.ver < cur {
		t.last.CompareAndSwap(s, nil) // nobody takes it again: let the collector end it
	}
	a := t.meta.Load().arr
	if len(vers) == 1 {
		// No snapshot is held: the current version reads no older
		// value, and a Load of an older one reads again (trims). Drop
		// them all at once, keeping the table's room for the next.
		if h := a.older.Load(); len(h.e) > 64 && h.used*8 < len(h.e) {
			a.older.Store(newHistory(16)) // far larger than what it held: let it go
		} else {
			h.clear()
		}
		a.pages.Store(nil)
		a.frozen.Store(nil)
		// The block the next records come from holds some of those
		// dropped, with their values: let go of it too, and of the
		// keep blocks.
		t.slab = nil
		t.blocks.forget()
		t.kept, t.left, t.trimAt = 0, 0, max(1024, t.n/4)
		return
	}

	// readBy reports whether a held version lies in [from, to).
	readBy := func(from, to uint64) bool {
		i, _ := slices.BinarySearch(vers, from)
		return i < len(vers) && vers[i] < to
	}
	hist := a.older.Load()
	left := 0
	for j := range hist.e {
		e := &hist.e[j]
		if e.head.Load() == nil {
			continue
		}
		newer := a.slots[e.slot.Load()-1].word.Load() & verMask
		link := &e.head
		dead := t.unlinked[:0]
		for r := link.Load(); r != nil; r = r.older.Load() {
			rv := r.ver & verMask
			if readBy(rv, newer) {
				for _, d := range dead {
					d.older.Store(r)
				}
				dead = dead[:0]
				link, newer = &r.older, rv
				left++
				continue
			}
			// Unlink r. A reader on r goes on through r.older; no
			// held version reads r, and the value before it is
			// read by the versions it was read by.
			link.Store(r.older.Load())
			t.dropValue(r) // its block of records may outlive it
			dead = append(dead, r)
		}
		// The records just unlinked lead to the next one kept, or to
		// nothing, as the list now does: a reader on one of them goes
		// on to what a held version reads. Left leading to the next
		// one unlinked, each would keep that one's block of records
		// alive as long as its own block lives, and that block the
		// next one's, back to the table's first: the blocks share
		// records of every key, and one record still listed keeps its
		// whole block.
		for _, d := range dead {
			d.older.Store(nil)
		}
		clear(dead)
		t.unlinked = dead[:0]
	}
	var k *keepBlocks
	if t.ptr {
		k = &t.blocks
	}
	left += a.trimPages(readBy, k)
	left += a.trimFrozen(readBy, k)
	t.blocks.release(false)
	// The next trim comes after as many new older values as this one
	// left, or a quarter of the keys, so that each value kept is walked
	// over by a few trims at most, however long snapshots are held.
	t.kept, t.left, t.trimAt = 0, left, max(1024, t.n/4, left)
}

// keep counts an older value kept by a Store writing version c. Writer
// only.
func (t *Table[K, V]) keep(c uint64) {
	t.kept++
	if n := len(t.keptAt); n == 0 || t.keptAt[n-1] != c {
		t.keptAt = append(t.keptAt, c)
	}
}

// keptRead reports whether the older values kept since the last look at
// the lists are all read by the held versions vers: for each version c
// whose Stores kept some, c-1 is held. Each was written at c-1 or
// before, and replaced at c.
func (t *Table[K, V]) keptRead(vers []uint64) bool {
	for _, c := range t.keptAt {
		if _, ok := slices.BinarySearch(vers, c-1); !ok {
			return false
		}
	}
	return true
}

// holdsAll reports whether the sorted versions vers include every one of
// the sorted versions of.
func holdsAll(vers, of []uint64) bool {
	for _, v := range of {
		i, ok := slices.BinarySearch(vers, v)
		if !ok {
			return false
		}
		vers = vers[i+1:]
	}
	return true
}

// Snapshot freezes the current version and returns it, in O(1): its Get
// never sees a later Store. It waits for a Store changing the version in
// place, if one is under way. The older values it reads are kept until it
// is unreachable.
func (t *Table[K, V]) Snapshot() Snapshot[K, V] {
	for {
		trims := t.held.trims.Load()
		st := t.state.Load()
		switch st & statusMask {
		case statusOpen:
			if !t.state.CompareAndSwap(st, st|statusFrozen) {
				continue
			}
		case statusFrozen:
		case statusSealed:
			// Freeze it for good: Unseal no longer takes it back.
			if !t.state.CompareAndSwap(st, st&^statusMask|statusFrozen) {
				continue
			}
		case statusChanging:
			t.state.CompareAndSwap(st, st&^statusMask|statusWanted)
			continue
		case statusWanted:
			runtime.Gosched() // the writer freezes the version when done
			continue
		}
		v := st >> statusShift
		if s := t.last.Load(); s != nil && s.ver == v {
			return Snapshot[K, V]{s}
		}
		m := t.metaAt(v)
		if m == nil {
			if t.meta.Load() != nil {
				continue
			}
			m = &meta{arr: emptyArray} // not set up yet
		}
		if afterFreeze != nil {
			afterFreeze()
		}
		stamp := t.stamps[v&1].Load()
		// The anchor moves on only once a change is done: while v is
		// still current after this load, it is v's or an older one.
		keep := t.blocks.anchor.Load()
		if t.state.Load()>>statusShift != v {
			continue // the stamp, or the anchor, may be a later version's
		}
		s := &snapshot[K, V]{t: t, ver: v, stamp: stamp, arr: m.arr, size: int(m.size.Load()), keep: keep}
		mk := newMark(&t.held, s, v)
		t.held.add(mk)
		if t.held.trims.Load() != trims {
			// The writer began a trim after v was frozen, or found
			// no older snapshot held (bareAt), and may not have seen
			// the mark: it may have dropped, or not kept, what v
			// reads.
			mk.drop()
			continue
		}
		t.last.Store(s)
		return Snapshot[K, V]{s}
	}
}

// Seal is Snapshot for the writer, who may take it back with Unseal: a
// subscription's snapshot that waits in a channel, and that the writer
// takes back unread before its next Store. While the version is held by
// sealed snapshots alone, and each is taken back, the version opens again
// and Stores change it in place, as if it had never been frozen. Sealing
// the same version again gives the same snapshot. Writer only; it never
// waits.
//
// A sealed snapshot costs no mark until the writer moves on to the next
// version with it still out (then it is held as any other snapshot is).
func (t *Table[K, V]) Seal() Snapshot[K, V] {
	t.ready()
	st := t.state.Load()
	switch st & statusMask {
	case statusSealed:
		t.seals++
		return Snapshot[K, V]{t.sealed}
	case statusOpen:
	default:
		return t.Snapshot() // held by others: a snapshot like theirs
	}
	v := st >> statusShift
	m := t.metaAt(v) // the writer's own: never cut
	s := t.spare
	if s == nil {
		s = new(snapshot[K, V])
	}
	t.spare = nil
	*s = snapshot[K, V]{t: t, ver: v, stamp: t.stamps[v&1].Load(), arr: m.arr, size: int(m.size.Load()), keep: t.blocks.cur}
	if !t.state.CompareAndSwap(st, st|statusSealed) {
		// A reader froze it meanwhile: hold s as a reader would.
		t.spare = s
		return t.Snapshot()
	}
	t.sealed, t.seals = s, 1
	return Snapshot[K, V]{s}
}

// Unseal takes back a snapshot that Seal gave, which nobody read, and
// reports whether the version is open again: it is when s is the current
// version's sealed snapshot, every other time Seal gave it was taken back
// too, and no reader took a Snapshot of the version meanwhile. Once
// Unseal reports true, s must not be used again; if it reports false, s
// is held as any snapshot is. Writer only.
func (t *Table[K, V]) Unseal(s Snapshot[K, V]) bool {
	if s.snapshot == nil || s.snapshot != t.sealed {
		return false
	}
	if t.seals--; t.seals > 0 {
		return false
	}
	st := t.state.Load()
	if st&statusMask != statusSealed || !t.state.CompareAndSwap(st, st&^statusMask) {
		return false // a reader froze the version: settle marks s held
	}
	s.keep = nil // a spare holds no older values
	t.sealed, t.spare = nil, s.snapshot
	return true
}

// settle makes the sealed snapshot of the version the writer is leaving
// held as any other: Unseal can no longer take it back, and whoever has
// it may keep it. Writer only, before it writes the next version.
func (t *Table[K, V]) settle() {
	s := t.sealed
	if s == nil {
		return
	}
	t.sealed, t.seals = nil, 0
	t.held.add(newMark(&t.held, s, s.ver)) // no trim runs meanwhile: the writer is the one that trims
}

// Snapshot is a table at one version.
type Snapshot[K comparable, V any] struct{ *snapshot[K, V] }

type snapshot[K comparable, V any] struct {
	t     *Table[K, V]
	ver   uint64
	stamp uint64
	arr   *array
	size  int
	// keep is the keep block of the table's anchor when the version
	// was current, from which the snapshot reaches the older values it
	// reads (keepblock.go).
	keep *keepBlock
}

// Version is the snapshot's version.
func (s Snapshot[K, V]) Version() uint64 { return s.ver }

// Stamp is the stamp of the snapshot's version (see Table.Stamp).
func (s Snapshot[K, V]) Stamp() uint64 { return s.stamp }

// Len is the number of keys at the snapshot's version.
func (s Snapshot[K, V]) Len() int { return s.size }

// Get returns k's value at the snapshot's version. It never waits.
func (s Snapshot[K, V]) Get(k K) (V, bool) {
	r, ok, _ := s.lookup(k)
	if !ok {
		var zero V
		return zero, false
	}
	return s.t.fromRaw(r), true
}

// lookup returns the word of k's value at the snapshot's version, and the
// version that wrote it or deleted k (0 if k is not in the snapshot's
// array, or came later).
func (s Snapshot[K, V]) lookup(k K) (raw, bool, uint64) {
	if s.arr == emptyArray {
		return raw{}, false, 0 // the table was not set up: nor were its fields
	}
	sl, _, w := s.t.find(s.arr.slots, k)
	if r, ok := s.t.current(sl, w, s.ver); ok {
		runtime.KeepAlive(s.snapshot)
		return r, true, w & verMask
	}
	r, ok, _, ver := s.t.heldAt(s.arr, sl, w, s.ver)
	runtime.KeepAlive(s.snapshot)
	return r, ok, ver
}

// All calls yield with each key and value at the snapshot's version, in
// the order of the slots, until yield returns false.
func (s Snapshot[K, V]) All(yield func(K, V) bool) {
	for i := range s.arr.slots {
		sl := &s.arr.slots[i]
		w := sl.word.Load()
		if w == 0 {
			continue
		}
		r, ok := s.t.current(sl, w, s.ver)
		if !ok {
			r, ok, _, _ = s.t.heldAt(s.arr, sl, w, s.ver)
		}
		if ok && !yield(key[K](sl, w), s.t.fromRaw(r)) {
			break
		}
	}
	runtime.KeepAlive(s.snapshot)
}
