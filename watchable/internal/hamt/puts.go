package hamt

import (
	"sync/atomic"
	"unsafe"
)

// Put is the replacement of one value in place: a single store into a
// pointer or a word of a Live map's current version. Cursor.Put makes one,
// and Live.Put makes many of them as one change, which is how a batch of
// overwrites avoids copying the nodes it changes.
type Put struct {
	slot *unsafe.Pointer // the pointer to replace, or nil
	ptr  unsafe.Pointer
	word *uint64 // or the word to replace, or neither
	val  uint64
}

// apply makes the store.
func (p *Put) apply() {
	switch {
	case p.slot != nil:
		atomic.StorePointer(p.slot, p.ptr)
	case p.word != nil:
		atomic.StoreUint64(p.word, p.val)
	}
}

// PutKey returns the key whose value p replaces, a Put that Cursor.Put or
// Spot.Put made for a map of K to V. Writer only, before Live.Put.
func PutKey[K comparable, V any](p *Put) K {
	var e entry[K, V]
	at := unsafe.Pointer(p.slot)
	if at == nil {
		at = unsafe.Pointer(p.word)
	}
	return (*entry[K, V])(unsafe.Add(at, -int(unsafe.Offsetof(e.val)))).key
}

// PutValue returns the value p stores, a Put made for values of type V.
func PutValue[V any](p *Put) V {
	var v V
	switch {
	case p.slot != nil:
		*(*unsafe.Pointer)(unsafe.Pointer(&v)) = p.ptr
	case p.word != nil:
		*(*uint64)(unsafe.Pointer(&v)) = p.val
	}
	return v
}

// Addr returns the address of the word p replaces: two Puts with the same
// address replace the same value.
func (p *Put) Addr() uintptr {
	if p.slot != nil {
		return uintptr(unsafe.Pointer(p.slot))
	}
	return uintptr(unsafe.Pointer(p.word))
}

// CanPut reports whether values of type V can be replaced in place by a
// Put: whether they fit in one word.
func CanPut[V any]() bool { return shapeOf[V]() != shapeOther }

// InPlace reports whether the current version may be changed in place now:
// no snapshot of it is held. Writer only.
func (l *Live[K, V]) InPlace() bool {
	v := l.cur.Load()
	return v != nil && l.seals == 0 && v.state.Load()&statusMask == statusOpen
}

// Spot is a key's place in a Live map's current version, as far as reading
// the value there and replacing it in place go: a Cursor without the path
// down to it, which only changes that add or remove entries need.
// FindGroup finds many at once, and Cursor.Spot makes one. Writer only; a
// Spot is valid until the next change to the map.
type Spot[K comparable, V any] struct {
	l     *Live[K, V]
	v     *version[K, V] // nil when the map has never had a version
	n     *node[K, V]    // the node that holds the key, when found
	key   K
	hash  uint64
	pos   int // the key's index in n's entries, when found
	found bool
}

// Spot returns the cursor's spot.
func (c *Cursor[K, V]) Spot() Spot[K, V] {
	s := Spot[K, V]{l: c.l, v: c.v, key: c.key, hash: c.hash, pos: c.pos, found: c.found}
	if c.found {
		s.n = c.nodes[c.depth]
	}
	return s
}

// Key returns the key the spot was found for.
func (s *Spot[K, V]) Key() K { return s.key }

// Hash returns the hash of the spot's key.
func (s *Spot[K, V]) Hash() uint64 { return s.hash }

// Value returns the value at the spot, and whether there is one.
func (s *Spot[K, V]) Value() (V, bool) {
	if !s.found {
		var zero V
		return zero, false
	}
	return loadValAs(&entryAt(s.n.ents, s.pos).val, s.v.shape), true
}

// Put returns the replacement in place of the value at the cursor by val,
// and true; or false when it cannot be made in place: see Spot.Put.
func (c *Cursor[K, V]) Put(val V) (Put, bool) {
	s := c.Spot()
	return s.Put(val)
}

// Put returns the replacement in place of the value at the spot by val,
// and true; or false when it cannot be made in place: the key is absent,
// its node belongs to a snapshot too, values of V take more than a word
// (see CanPut), or the version may not be changed in place now. Nothing
// changes until Live.Put makes it.
func (s *Spot[K, V]) Put(val V) (Put, bool) {
	if !s.found || s.v.shape == shapeOther || !s.l.InPlace() || s.l.cur.Load() != s.v {
		return Put{}, false
	}
	if !s.n.editsEntries(s.v.epoch) {
		return Put{}, false
	}
	p := unsafe.Pointer(&entryAt(s.n.ents, s.pos).val)
	if s.v.shape == shapePointer {
		return Put{slot: (*unsafe.Pointer)(p), ptr: *(*unsafe.Pointer)(unsafe.Pointer(&val))}, true
	}
	return Put{word: (*uint64)(p), val: *(*uint64)(unsafe.Pointer(&val))}, true
}

// Put makes puts, which Cursor.Put returned for the current version since
// its last change and which replace distinct words, as one change in place
// with the given stamp: a reader sees all of them or none. (A Get that
// finds such a change under way makes the stores itself, freezing the
// version as Freeze does, and never waits.) It reports whether the change
// was made; if not, because a Freeze came first, nothing changed. When
// reuse is true the caller may use puts' array again; otherwise a reader
// may still be reading it. Writer only.
func (l *Live[K, V]) Put(puts []Put, stamp uint64) (made, reuse bool) {
	v := l.cur.Load()
	if v == nil || l.seals != 0 || puts == nil {
		return false, false
	}
	if !v.beginMany(intent{size: v.size.Load(), stamp: stamp}, &puts) {
		return false, false
	}
	reuse = v.finish()
	if reuse {
		v.many = nil // keep no value alive; no reader looks at it now
	}
	return true, reuse
}
