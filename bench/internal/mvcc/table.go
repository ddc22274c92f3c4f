// Package mvcc is a model, not a library: a multi-version hash table, kept
// to measure one alternative to watchable's persistent trie for issue 14's
// targets 3, 4, 7 and 8 (docs/design.md, "A multi-version table,
// modelled"), and to be the first stage of the core that would replace the
// trie. Nothing outside the benchmarks uses it.
//
// It is a whole map: string keys, values of one machine word (pointers,
// or 64-bit integers), Store and Delete by one writer at a time, Load and
// snapshots from any goroutine, growth, and iteration and the length of a
// snapshot. It learns by itself which snapshots are still held, and at
// its next trim (at least once a pass over the keys while it stores)
// drops the older values that only snapshots let go of could read. A
// subscriber's cursor gives it the net change of each key between two of
// its snapshots (log.go). A Batch is seen whole. What a library on it
// would still need is listed in docs/design.md, the key and partition
// indexes first.
//
// Each slot is three words: where its key's bytes are, the newest value,
// and a word with the version that wrote it (or deleted the key), the
// key's length and some bits of its hash. Older values that snapshots may
// still read are kept beside the slots, in lists by slot (history.go). A
// Store overwrites the slot in place while no snapshot holds the current
// version, as watchable's Live map changes nodes in place, and otherwise
// writes into the next version; either way, when the slot was written in
// an older version, it first keeps the old value in a record of its own
// (one small allocation; a Batch's come from blocks). Keys
// are at most 65,535 bytes long. A snapshot is a version number and the slot array of that
// version, taken in O(1); Get at a version reads the slot, and the list
// when the slot is newer. A table that grows makes a new array of the
// newest values; snapshots taken before keep reading the old one, which
// nobody writes again. While a Cursor is open, each Store and Delete also
// appends its key to a change log (log.go), from which a subscriber learns
// which keys changed up to its snapshot; one that lags too far is given
// the changes by comparing its snapshots slot by slot instead.
//
// One thing differs from watchable's protocol, and a library would have to
// settle it: a Snapshot taken while a Store changes the current version in
// place waits until that Store is done (a few stores, for what the change
// needs is allocated before it begins, unless the writer is descheduled). watchable's Freeze makes the change itself
// instead and never waits; that is safe there because the writer never
// writes a frozen version's nodes again, but here the next Store writes the
// same slot, and a late repeat of the earlier change would undo it. Load
// and Get never wait.
package mvcc

import (
	"hash/maphash"
	"math/bits"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Table is a map from string keys to word-sized values. Store and Delete
// must not be called concurrently with themselves or each other; Load,
// Snapshot and a Snapshot's methods may be called from any goroutine at
// any time.
type Table[V any] struct {
	// state is the current version << 2 | its status.
	state atomic.Uint64
	// meta is the slot array and length of the current version, and
	// through prev of the version before the last change of either.
	meta atomic.Pointer[meta[V]]
	ptr  bool // V is a pointer (else a 64-bit word)

	// The writer's own.
	n, used int // live keys; slots taken, by keys or the deleted
	kept    int // older values kept since the last trim
	stores  int // Stores since the last trim
	// lastHeld is the versions held at the last trim.
	lastHeld []uint64
	trimAt   int         // kept at which the writer trims
	slab     []record[V] // a Batch's records, allocated together
	batch    uint64      // the version a Batch writes, not yet published; 0 outside one

	held heldSnapshots
	// last is the newest snapshot made, which Snapshot gives again
	// while its version is current rather than make another.
	last atomic.Pointer[snapshot[V]]
	log  changeLog
}

const (
	statusOpen     = 0 // no snapshot holds the version: Stores change it in place
	statusChanging = 1 // a Store is changing the version in place
	statusWanted   = 2 // ... and a snapshot waits for it to end
	statusFrozen   = 3 // a snapshot holds the version: Stores make the next one
	statusMask     = 3
)

// meta is a slot array and the number of live keys in it, from version
// born on. Its size changes only while born is the current version and
// that version is open, or born is a Batch's unpublished version; a
// change to either in any other version makes a new meta.
type meta[V any] struct {
	born uint64
	arr  *array[V]
	size atomic.Int64
	prev atomic.Pointer[meta[V]] // cut when the next meta is made
}

type slot[V any] struct {
	// word is the key's tag | its length | deleted | the version that
	// wrote val; 0 while the slot is empty. The tag (hash bits) and the
	// length spare most probes a comparison of keys, whose bytes lie
	// elsewhere.
	word atomic.Uint64
	// kp is the key's bytes, written before word first becomes
	// non-zero, never again; its length is in word. A slot keeps no
	// string header of 16 bytes.
	kp  unsafe.Pointer
	val V // one word, read and written atomically (see load, store)
}

const (
	verBits   = 40
	verMask   = 1<<verBits - 1
	deleted   = 1 << verBits // in a slot's word: the key is gone at that version
	lenShift  = verBits + 1
	maxKeyLen = 1<<16 - 1
	tagShift  = lenShift + 16
	identMask = 1<<64 - 1<<lenShift // the tag and the length
	gone      = 1 << 63             // in a record's ver: the key was absent
)

// key is the slot's key; w is its word, not 0.
func (s *slot[V]) key(w uint64) string {
	return unsafe.String((*byte)(s.kp), int(w>>lenShift&maxKeyLen))
}

var seed = maphash.MakeSeed()

// beforePublish, when not nil, is called by a Store into the next version
// after its writes and before it publishes the version, and inChange by a
// Store changing the current version in place, before it ends the change:
// tests look at the table there, as a reader could.
var beforePublish, inChange func()

// New returns an empty table with room for about capacity keys before it
// grows. V must be a pointer, or an integer or float of 8 bytes aligned to
// 8 (which a 32-bit platform does not give).
func New[V any](capacity int) *Table[V] {
	t := reflect.TypeFor[V]()
	ptr := t.Kind() == reflect.Pointer
	word := t.Size() == 8 && t.Align() == 8 && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64)
	if !ptr && !word {
		panic("mvcc: V must be a pointer, or an 8-byte integer or float aligned to 8, not " + t.String())
	}
	tb := &Table[V]{ptr: ptr, trimAt: 1024}
	tb.state.Store(1 << 2) // version 1, open; versions must stay below 1<<verBits
	tb.meta.Store(&meta[V]{born: 1, arr: newArray[V](slotsFor(capacity))})
	tb.log.head = new(chunk)
	tb.log.tail.Store(tb.log.head)
	tb.log.blocks, tb.log.limit = 1, 4
	return tb
}

// maxLoad is the share of slots, in eighths, that keys and deleted keys
// may take before the table grows.
const maxLoad = 7

// slotsFor is the number of slots for n keys: twice as many as the load
// factor needs, so that a table grown for n keys takes as many again
// before it grows once more.
func slotsFor(n int) int { return max(16, n*8/maxLoad+1) }

// Version is the current version. It freezes nothing.
func (t *Table[V]) Version() uint64 { return t.state.Load() >> 2 }

// Len is the number of keys. Writer only.
func (t *Table[V]) Len() int { return t.n }

// find returns the slot of k in slots, or the empty slot where k would go;
// k's tag, shifted into place; and the slot's word as find saw it, 0 if it
// was empty. A slot find saw empty may hold another key by the time the
// caller looks again; one that held k holds it for good.
func find[V any](slots []slot[V], k string) (*slot[V], uint64, uint64) {
	if len(k) > maxKeyLen {
		panic("mvcc: a key longer than 65,535 bytes") // a library would keep such keys boxed
	}
	h := maphash.String(seed, k)
	// The tag is the hash's low bits: the slot's index comes from the
	// high ones.
	tag := h<<tagShift | uint64(len(k))<<lenShift
	i, _ := bits.Mul64(h, uint64(len(slots)))
	for ; ; i++ {
		if i == uint64(len(slots)) {
			i = 0
		}
		s := &slots[i]
		w := s.word.Load()
		if w == 0 || w&identMask == tag && unsafe.String((*byte)(s.kp), len(k)) == k {
			return s, tag, w
		}
	}
}

// metaAt returns the meta of version v, or nil if the writer has since
// cut the link to it (after a growth, or a second change of length): the
// caller should read the version again.
func (t *Table[V]) metaAt(v uint64) *meta[V] {
	m := t.meta.Load()
	for m != nil && m.born > v {
		m = m.prev.Load()
	}
	return m
}

// Load returns the value of k in the current version. It never waits. A
// Store into the next version is not seen before it is published, so a
// Snapshot taken after a Load sees what the Load saw.
func (t *Table[V]) Load(k string) (V, bool) {
	for {
		trims := t.held.trims.Load()
		v := t.state.Load() >> 2
		m := t.metaAt(v)
		if m == nil {
			continue
		}
		s, _, w := find(m.arr.slots, k)
		val, ok, old, _ := t.at(m.arr, s, w, v)
		// An older value read from a list is good unless the writer
		// trimmed meanwhile: no snapshot of the Load's own holds v.
		if !old || t.held.trims.Load() == trims {
			return val, ok
		}
	}
}

// Store sets k to val. Writer only.
func (t *Table[V]) Store(k string, val V) { t.set(k, val, false) }

// Delete removes k, and reports whether it was there. Writer only.
func (t *Table[V]) Delete(k string) bool {
	_, _, w := find(t.meta.Load().arr.slots, k)
	if w == 0 || w&deleted != 0 {
		return false
	}
	var zero V
	t.set(k, zero, true)
	return true
}

// set stores val at k, or deletes k. Writer only.
func (t *Table[V]) set(k string, val V, del bool) {
	m := t.meta.Load()
	s, tag, w := find(m.arr.slots, k)
	if w == 0 && t.used+1 > len(m.arr.slots)*maxLoad/8 {
		m = t.grow()
		s, tag, w = find(m.arr.slots, k)
	}
	delta := 0
	switch {
	case del:
		delta = -1
	case w == 0 || w&deleted != 0:
		delta = 1
	}
	logging := t.log.readers.Load() > 0
	if logging {
		t.log.reserve(t.n)
	}
	st := t.state.Load()
	ver := st >> 2
	// What a change in place needs is allocated before it begins, for
	// a snapshot may wait for the change: a new meta if the length
	// changes in a version that did not make m, a record if the slot
	// was written in an older version, and room for it in the history.
	var next *meta[V]
	if delta != 0 && m.born != ver {
		next = new(meta[V])
	}
	var kept *record[V]
	if w != 0 && w&verMask < ver && t.batch == 0 {
		kept = new(record[V])
		m.arr.room()
	}
	inPlace := false
	switch {
	case t.batch != 0:
		ver = t.batch // unpublished until the batch ends
	case st&statusMask == statusOpen && t.state.CompareAndSwap(st, st|statusChanging):
		inPlace = true
	default:
		ver++ // the version is frozen: write into the next one, which nobody sees before it is published
	}
	if w == 0 {
		s.kp = unsafe.Pointer(unsafe.StringData(k)) // nobody reads it before the slot's word is set
		t.used++
	}
	if delta != 0 {
		t.n += delta
		if m.born == ver {
			m.size.Store(int64(t.n))
		} else {
			if next == nil { // not in place: no snapshot waits
				next = new(meta[V])
			}
			t.newMeta(next, m.arr, ver)
		}
	}
	t.write(m.arr, s, tag, w, ver, val, del, kept)
	if logging {
		t.log.append(Entry{ver, k}) // before a snapshot of ver can be taken
	}
	switch {
	case t.batch != 0:
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
		t.state.Store(ver << 2)
		t.last.Store(nil) // a snapshot of an older version: nobody takes it again
	}
	t.stores++
	if t.batch == 0 && t.trimDue() {
		t.trim(t.kept <= t.trimAt)
	}
}

// trimDue reports whether the writer should trim: when it has kept as
// many older values as the last trim left (or a quarter of the keys), or,
// so that a writer that stopped keeping them still lets go of those kept
// and of a large history table, when a pass over the keys has been made
// since the last trim and some are kept, or the table is large.
func (t *Table[V]) trimDue() bool {
	if t.kept > t.trimAt {
		return true
	}
	if t.stores <= max(4096, t.n) {
		return false
	}
	h := t.meta.Load().arr.older.Load()
	return h.used > 0 || len(h.e) > 64
}

// Batch calls fn, and makes the Stores and Deletes it makes through b
// visible at once: they all write the next version, which is published
// when fn returns (or panics: a model's batch is not undone). Writer only;
// b must not be used after fn returns, and fn must not call Batch.
func (t *Table[V]) Batch(fn func(b Batch[V])) {
	if t.batch != 0 {
		panic("mvcc: a Batch inside a Batch")
	}
	for {
		// Freeze the current version, as a snapshot would, so that
		// nothing is written in place.
		st := t.state.Load()
		if st&statusMask == statusFrozen || t.state.CompareAndSwap(st, st|statusFrozen) {
			t.batch = st>>2 + 1
			break
		}
	}
	defer func() {
		v := t.batch
		t.batch, t.slab = 0, nil // a block kept would keep its values
		if beforePublish != nil {
			beforePublish()
		}
		t.state.Store(v << 2)
		if m := t.meta.Load(); m.prev.Load() != nil && m.prev.Load().arr != m.arr {
			// The batch grew the table: once it is published, let go
			// of the old array as growth does (a Load reads again).
			m.prev.Store(nil)
		}
		t.last.Store(nil)
		if t.trimDue() {
			t.trim(t.kept <= t.trimAt)
		}
	}()
	fn(Batch[V]{t})
}

// Batch is a batch of Stores and Deletes under way (Table.Batch).
type Batch[V any] struct{ t *Table[V] }

// Store sets k to val in the batch.
func (b Batch[V]) Store(k string, val V) { b.t.set(k, val, false) }

// Delete removes k in the batch, and reports whether it was there.
func (b Batch[V]) Delete(k string) bool { return b.t.Delete(k) }

// newMeta publishes the meta of slots from version ver on, with the
// writer's count of keys. The one before it stays its prev, for a reader
// that read an older version, unless slots is a new array: a table that
// grows lets go of the old one at once, unless snapshots hold it. Either
// way it cuts the one before that: a reader that finds no meta old enough
// reads the version again.
func (t *Table[V]) newMeta(m *meta[V], arr *array[V], ver uint64) *meta[V] {
	m.born, m.arr = ver, arr
	m.size.Store(int64(t.n))
	old := t.meta.Load()
	if old.born == ver && old.prev.Load() != nil {
		old = old.prev.Load() // old was made in the same version (a batch's, unpublished, or a growth's): m replaces it
	}
	if old.arr == arr || ver > t.state.Load()>>2 {
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
func (t *Table[V]) grow() *meta[V] {
	old := t.meta.Load().arr.slots
	arr := newArray[V](slotsFor(2*t.n + 1))
	slots := arr.slots
	for i := range old {
		o := &old[i]
		w := o.word.Load()
		if w == 0 || w&deleted != 0 {
			continue
		}
		s, _, _ := find(slots, o.key(w))
		s.kp = o.kp
		s.val = t.load(&o.val)
		s.word.Store(w)
	}
	t.used = t.n
	t.kept = 0
	born := t.state.Load() >> 2
	if t.batch != 0 {
		born = t.batch // the array holds the batch's Stores so far
	}
	return t.newMeta(new(meta[V]), arr, born)
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
// in an older version, which a snapshot may hold.
func (t *Table[V]) write(a *array[V], s *slot[V], tag, w, ver uint64, val V, del bool, r *record[V]) {
	nw := tag | ver
	if del {
		nw |= deleted
	}
	if w == 0 {
		t.store(&s.val, val)
		s.word.Store(nw)
		return
	}
	if w&verMask < ver {
		if r == nil {
			r = t.record()
		}
		r.ver, r.val = w&verMask, t.load(&s.val)
		if w&deleted != 0 {
			r.ver |= gone
		}
		a.keep(s.index(a.slots), r)
		t.kept++
	}
	if w&deleted != 0 {
		t.store(&s.val, val)
		s.word.Store(nw)
		return
	}
	s.word.Store(nw)
	t.store(&s.val, val)
}

// record returns a new record: in a Batch, from a block of records
// allocated together, dropped when the batch ends (the collector frees a
// block once none of its records is reachable); otherwise alone.
func (t *Table[V]) record() *record[V] {
	if t.batch == 0 {
		return new(record[V])
	}
	if len(t.slab) == 0 {
		t.slab = make([]record[V], 256)
	}
	r := &t.slab[0]
	t.slab = t.slab[1:]
	return r
}

// index is s's place in slots.
func (s *slot[V]) index(slots []slot[V]) int {
	return int((uintptr(unsafe.Pointer(s)) - uintptr(unsafe.Pointer(&slots[0]))) / unsafe.Sizeof(*s))
}

// at returns the value at version at of the key in sl, whose word find saw
// as w; whether it came from the list of older values; and the version
// that wrote it, or deleted the key (0 if the key came later).
func (t *Table[V]) at(a *array[V], sl *slot[V], w, at uint64) (val V, ok, older bool, ver uint64) {
	for w != 0 {
		ver := w & verMask
		if ver > at {
			// Newer than version at; the older values were kept
			// before the version was set.
			for r := a.list(sl.index(a.slots)); r != nil; r = r.older.Load() {
				if rv := r.ver & verMask; rv <= at {
					if r.ver&gone != 0 {
						return val, false, true, rv
					}
					return t.load(&r.val), true, true, rv
				}
			}
			return val, false, true, 0 // the key came later
		}
		if w&deleted != 0 {
			return val, false, false, ver
		}
		v := t.load(&sl.val)
		w2 := sl.word.Load()
		if w2 == w {
			return v, true, false, ver
		}
		// The writer moved the slot on meanwhile: read it again.
		w = w2
	}
	return val, false, false, 0
}

func (t *Table[V]) load(p *V) V {
	if t.ptr {
		x := atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(p)))
		return *(*V)(unsafe.Pointer(&x))
	}
	x := atomic.LoadUint64((*uint64)(unsafe.Pointer(p)))
	return *(*V)(unsafe.Pointer(&x))
}

func (t *Table[V]) store(p *V, v V) {
	if t.ptr {
		atomic.StorePointer((*unsafe.Pointer)(unsafe.Pointer(p)), *(*unsafe.Pointer)(unsafe.Pointer(&v)))
		return
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(p)), *(*uint64)(unsafe.Pointer(&v)))
}

// History is the number of older values kept for snapshots. Writer only;
// O(N).
func (t *Table[V]) History() int { return t.meta.Load().arr.count() }

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
}

type mark struct {
	ver  uint64
	gone atomic.Bool
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
func (t *Table[V]) Trim() { t.trim(false) }

// trim finds the versions that snapshots still hold, and unlinks from
// each list of older values every value that none of them reads.
// Writer only; O(slots with older values + held snapshots).
//
// A periodic trim, made because a pass over the keys went by rather than
// because many older values were kept, walks the lists only if the held
// versions changed since the last trim, or none is held and the table of
// older values is not empty and small: otherwise it could cut nothing
// that the next trim would not.
func (t *Table[V]) trim(periodic bool) {
	if t.batch != 0 {
		return // the published version reads the batch's older values
	}
	t.stores = 0
	h := &t.held
	h.trims.Add(1)             // before it reads the marks: see Snapshot
	cur := t.state.Load() >> 2 // any snapshot taken from now on is of cur or later
	h.mu.Lock()
	h.count()
	vers := make([]uint64, 0, len(h.marks)+1)
	for _, m := range h.marks {
		vers = append(vers, m.ver)
	}
	h.mu.Unlock()
	slices.Sort(vers)
	vers = slices.Compact(vers)
	if periodic && slices.Equal(vers, t.lastHeld) {
		if hist := t.meta.Load().arr.older.Load(); len(vers) > 0 || hist.used == 0 && len(hist.e) <= 64 {
			return
		}
	}
	t.lastHeld = append(t.lastHeld[:0], vers...)
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
			a.older.Store(newHistory[V](16)) // far larger than what it held: let it go
		} else {
			h.clear()
		}
		t.kept, t.trimAt = 0, max(1024, t.n/4)
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
		for r := link.Load(); r != nil; r = r.older.Load() {
			rv := r.ver & verMask
			if readBy(rv, newer) {
				link, newer = &r.older, rv
				left++
				continue
			}
			// Unlink r. A reader on r goes on through r.older; no
			// held version reads r, and the value before it is
			// read by the versions it was read by.
			link.Store(r.older.Load())
			var zero V
			t.store(&r.val, zero) // its block of records may outlive it
		}
	}
	// The next trim comes after as many new older values as this one
	// left, or a quarter of the keys, so that each value kept is walked
	// over by a few trims at most, however long snapshots are held.
	t.kept, t.trimAt = 0, max(1024, t.n/4, left)
}

// Snapshot freezes the current version and returns it, in O(1): its Get
// never sees a later Store. It waits for a Store changing the version in
// place, if one is under way. The older values it reads are kept until it
// is unreachable.
func (t *Table[V]) Snapshot() Snapshot[V] {
	for {
		trims := t.held.trims.Load()
		st := t.state.Load()
		switch st & statusMask {
		case statusOpen:
			if !t.state.CompareAndSwap(st, st|statusFrozen) {
				continue
			}
		case statusFrozen:
		case statusChanging:
			t.state.CompareAndSwap(st, st&^statusMask|statusWanted)
			continue
		case statusWanted:
			runtime.Gosched() // the writer freezes the version when done
			continue
		}
		v := st >> 2
		if s := t.last.Load(); s != nil && s.ver == v {
			return Snapshot[V]{s}
		}
		m := t.metaAt(v)
		if m == nil {
			continue
		}
		s := &snapshot[V]{t: t, ver: v, arr: m.arr, size: int(m.size.Load())}
		mk := &mark{ver: v}
		runtime.AddCleanup(s, func(mk *mark) { mk.gone.Store(true) }, mk)
		t.held.add(mk)
		if t.held.trims.Load() != trims {
			// The writer began a trim after v was frozen, and may
			// not have seen the mark: it may have dropped what v
			// reads.
			mk.gone.Store(true)
			continue
		}
		t.last.Store(s)
		return Snapshot[V]{s}
	}
}

// Snapshot is a table at one version.
type Snapshot[V any] struct{ *snapshot[V] }

type snapshot[V any] struct {
	t    *Table[V]
	ver  uint64
	arr  *array[V]
	size int
}

// Version is the snapshot's version.
func (s Snapshot[V]) Version() uint64 { return s.ver }

// Len is the number of keys at the snapshot's version.
func (s Snapshot[V]) Len() int { return s.size }

// Get returns k's value at the snapshot's version. It never waits.
func (s Snapshot[V]) Get(k string) (V, bool) {
	sl, _, w := find(s.arr.slots, k)
	v, ok, _, _ := s.t.at(s.arr, sl, w, s.ver)
	runtime.KeepAlive(s.snapshot)
	return v, ok
}

// lookup returns k's value at the snapshot's version, and the version that
// wrote it or deleted k (0 if k is not in the snapshot's array, or came
// later).
func (s Snapshot[V]) lookup(k string) (V, bool, uint64) {
	sl, _, w := find(s.arr.slots, k)
	v, ok, _, ver := s.t.at(s.arr, sl, w, s.ver)
	runtime.KeepAlive(s.snapshot)
	return v, ok, ver
}

// All calls yield with each key and value at the snapshot's version, in
// the order of the slots, until yield returns false.
func (s Snapshot[V]) All(yield func(string, V) bool) {
	for i := range s.arr.slots {
		sl := &s.arr.slots[i]
		w := sl.word.Load()
		if w == 0 {
			continue
		}
		if v, ok, _, _ := s.t.at(s.arr, sl, w, s.ver); ok && !yield(sl.key(w), v) {
			break
		}
	}
	runtime.KeepAlive(s.snapshot)
}
