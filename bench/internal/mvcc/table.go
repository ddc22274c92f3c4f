// Package mvcc is a model, not a library: a multi-version hash table, kept
// to measure one alternative to watchable's persistent trie for the
// decision that issue 14's targets 3, 4 and 7a wait on (docs/design.md, "A
// multi-version table, modelled"). Nothing outside the benchmarks uses it.
//
// It has what those targets measure and little else: string keys, values
// of one machine word (pointers, or 64-bit integers), a capacity fixed when
// it is made, no deletes, one writer at a time, and snapshots whose end the
// caller announces (Forget). A library built this way would also need
// growth, deletes, the changes between any two snapshots, iteration,
// batches, and to learn by itself which snapshots are still held; the
// model says what its reads, writes and updates would cost.
//
// Each slot holds its key, the newest value and the version that wrote it,
// and a list of older values that snapshots may still read. A Store
// overwrites the slot in place while no snapshot can read the value there,
// as watchable's Live map changes nodes in place, and otherwise keeps the
// old value in a record of its own (one small allocation). A snapshot is a
// version number, taken in O(1); Get at a version reads the slot, and the
// list when the slot is newer. While a Cursor is open, each Store also
// appends to a change log (log.go), from which a subscriber reads the
// updates up to its snapshot.
//
// One thing differs from watchable's protocol, and a library would have to
// settle it: a Snapshot taken while a Store changes the current version in
// place waits until that Store is done (a few atomic stores, unless the
// writer is descheduled). watchable's Freeze makes the change itself
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
	"sync/atomic"
	"unsafe"
)

// Table is the model: a map from string keys to word-sized values. Store
// and Forget must not be called concurrently with themselves or each
// other; Load, Snapshot and a Snapshot's Get may be called from any
// goroutine at any time.
type Table[V any] struct {
	slots []slot[V]
	// state is the current version << 2 | its status.
	state atomic.Uint64
	ptr   bool // V is a pointer (else a 64-bit word)
	n     int  // keys
	limit int  // the capacity New was given
	log   changeLog[V]
}

const (
	statusOpen     = 0 // no snapshot holds the version: Stores change it in place
	statusChanging = 1 // a Store is changing the version in place
	statusWanted   = 2 // ... and a snapshot waits for it to end
	statusFrozen   = 3 // a snapshot holds the version: Stores make the next one
	statusMask     = 3
)

type slot[V any] struct {
	// word is the key's tag << verBits | the version val was written
	// at; 0 while the slot is empty. The tag (hash bits) spares most
	// probes a comparison of keys, whose bytes lie elsewhere.
	word  atomic.Uint64
	key   string // written before word first becomes non-zero, never again
	val   V      // one word, read and written atomically (see load, store)
	older atomic.Pointer[record[V]]
}

const (
	verBits = 40
	verMask = 1<<verBits - 1
)

// record is a value a slot held before, for the snapshots older than the
// slot's version.
type record[V any] struct {
	ver   uint64
	val   V
	older atomic.Pointer[record[V]] // cut by Forget while readers walk it
}

var seed = maphash.MakeSeed()

// beforePublish, when not nil, is called by a Store into the next version
// after its writes and before it publishes the version, and inChange by a
// Store changing the current version in place, before it ends the change:
// tests look at the table there, as a reader could.
var beforePublish, inChange func()

// New returns an empty table for up to capacity keys, with a load factor of
// at most 0.7. V must be a pointer, or an integer or float of 8 bytes
// aligned to 8 (which a 32-bit platform does not give).
func New[V any](capacity int) *Table[V] {
	t := reflect.TypeFor[V]()
	ptr := t.Kind() == reflect.Pointer
	word := t.Size() == 8 && t.Align() == 8 && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64)
	if !ptr && !word {
		panic("mvcc: V must be a pointer, or an 8-byte integer or float aligned to 8, not " + t.String())
	}
	tb := &Table[V]{slots: make([]slot[V], max((capacity*10+6)/7, 8)), ptr: ptr, limit: capacity}
	tb.state.Store(1 << 2) // version 1, open; versions must stay below 1<<verBits
	tb.log.tail.Store(new(chunk[V]))
	return tb
}

// Version is the current version. It freezes nothing.
func (t *Table[V]) Version() uint64 { return t.state.Load() >> 2 }

// Len is the number of keys. Writer only.
func (t *Table[V]) Len() int { return t.n }

// find returns the slot of k, or the empty slot where k would go; k's
// tag, shifted into place; and the slot's word as find saw it, 0 if it was
// empty. A slot find saw empty may hold another key by the time the
// caller looks again; one that held k holds it for good.
func (t *Table[V]) find(k string) (*slot[V], uint64, uint64) {
	h := maphash.String(seed, k)
	tag := h << verBits // the low bits: the slot's index comes from the high ones
	i, _ := bits.Mul64(h, uint64(len(t.slots)))
	for ; ; i++ {
		if i == uint64(len(t.slots)) {
			i = 0
		}
		s := &t.slots[i]
		w := s.word.Load()
		if w == 0 || w&^verMask == tag && s.key == k {
			return s, tag, w
		}
	}
}

// Load returns the value of k in the current version. It never waits. A
// Store into the next version is not seen before it is published, so a
// Snapshot taken after a Load sees what the Load saw.
func (t *Table[V]) Load(k string) (V, bool) {
	s, _, w := t.find(k)
	return t.at(s, w, t.state.Load()>>2)
}

// Snapshot freezes the current version and returns it, in O(1): Get at it
// never sees a later Store. It waits for a Store changing the version in
// place, if one is under way.
func (t *Table[V]) Snapshot() Snapshot[V] {
	for {
		st := t.state.Load()
		switch st & statusMask {
		case statusFrozen:
			return Snapshot[V]{t, st >> 2}
		case statusOpen:
			if t.state.CompareAndSwap(st, st|statusFrozen) {
				return Snapshot[V]{t, st >> 2}
			}
		case statusChanging:
			t.state.CompareAndSwap(st, st&^statusMask|statusWanted)
		case statusWanted:
			runtime.Gosched() // the writer freezes the version when done
		}
	}
}

// Store sets k to val. Writer only.
func (t *Table[V]) Store(k string, val V) {
	s, tag, w := t.find(k)
	old := w & verMask
	if old == 0 {
		if t.n == t.limit {
			panic("mvcc: the table is full: a model's capacity is fixed")
		}
		s.key = k // nobody reads it before the slot's word is set
		t.n++
	}
	logging := t.log.readers.Load() > 0
	if logging {
		t.log.reserve()
	}
	st := t.state.Load()
	ver := st >> 2
	if st&statusMask == statusOpen && t.state.CompareAndSwap(st, st|statusChanging) {
		t.write(s, tag, old, ver, val)
		if logging {
			t.log.append(Entry[V]{ver, k, val}) // before a snapshot of ver can be taken
		}
		if inChange != nil {
			inChange()
		}
		if !t.state.CompareAndSwap(st|statusChanging, st) {
			t.state.Store(st | statusFrozen) // a snapshot waits for it
		}
		return
	}
	// The version is frozen: write into the next one, which nobody sees
	// before it is published.
	t.write(s, tag, old, ver+1, val)
	if logging {
		t.log.append(Entry[V]{ver + 1, k, val})
	}
	if beforePublish != nil {
		beforePublish()
	}
	t.state.Store((ver + 1) << 2)
}

// write stores val into slot s, written at version old (0: empty), as
// version ver, in the order that lets Get tell a slot it read while this
// was under way: a new key's value before its version, which makes the
// slot visible; for an old key, the kept value, then the version, then
// the value, so that a Get that read the version before sees it changed if
// it read the new value. The old value is kept when s was written in an
// older version, which a snapshot may hold.
func (t *Table[V]) write(s *slot[V], tag, old, ver uint64, val V) {
	if old == 0 {
		t.store(&s.val, val)
		s.word.Store(tag | ver)
		return
	}
	if old < ver {
		r := &record[V]{ver: old, val: t.load(&s.val)}
		r.older.Store(s.older.Load())
		s.older.Store(r)
		s.word.Store(tag | ver)
	}
	t.store(&s.val, val)
}

// Forget drops the values that only snapshots older than ver could read:
// the caller promises to hold none. A library would learn it from the
// snapshots' lifetimes; the model is told. Writer only; O(N).
func (t *Table[V]) Forget(ver uint64) {
	for i := range t.slots {
		s := &t.slots[i]
		if s.word.Load()&verMask <= ver {
			s.older.Store(nil)
			continue
		}
		for r := s.older.Load(); r != nil; r = r.older.Load() {
			if r.ver <= ver {
				r.older.Store(nil)
				break
			}
		}
	}
}

// History is the number of older values kept for snapshots, which Forget
// bounds. Writer only; O(N).
func (t *Table[V]) History() int {
	n := 0
	for i := range t.slots {
		for r := t.slots[i].older.Load(); r != nil; r = r.older.Load() {
			n++
		}
	}
	return n
}

// Snapshot is a table at one version.
type Snapshot[V any] struct {
	t   *Table[V]
	ver uint64
}

// Version is the snapshot's version.
func (s Snapshot[V]) Version() uint64 { return s.ver }

// Get returns k's value at the snapshot's version. It never waits.
func (s Snapshot[V]) Get(k string) (V, bool) {
	sl, _, w := s.t.find(k)
	return s.t.at(sl, w, s.ver)
}

// at returns the value at version at of the key in slot sl, whose word
// find saw as w.
func (t *Table[V]) at(sl *slot[V], w, at uint64) (V, bool) {
	for w != 0 {
		ver := w & verMask
		if ver > at {
			// Newer than version at; the older values were kept
			// before the version was set.
			for r := sl.older.Load(); r != nil; r = r.older.Load() {
				if r.ver <= at {
					return r.val, true
				}
			}
			break // the key came later
		}
		v := t.load(&sl.val)
		if w = sl.word.Load(); w&verMask == ver {
			return v, true
		}
		// The writer moved the slot on meanwhile: read it again.
	}
	var zero V
	return zero, false
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
