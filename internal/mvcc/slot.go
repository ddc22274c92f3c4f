package mvcc

import (
	"reflect"
	"sync/atomic"
	"unsafe"
)

// A slot is three words, whatever the types of the keys and values:
//
//   - word: the key's tag (5 bits of its hash) | the key's length (8 bits)
//     | deleted | the version that wrote the value (50 bits); 0 while the
//     slot is empty. The tag and the length spare most probes a
//     comparison of keys. 2^50 versions last 35 years at a million a
//     second: snapshots, or slots written by batches (a Batch takes a
//     version for each slot it writes); the table panics rather than
//     wrap around.
//   - kp: where the key is, written before word first becomes non-zero
//     and never again. A string key shorter than 255 bytes is its bytes,
//     with the length in word (the slot keeps no string header); any
//     other key is a K of its own, with the length 255 ("boxed").
//   - v: the value's word, read and written atomically. A value of one
//     64-bit word without pointers (an int, a float) is kept in it; a
//     value of one pointer (a pointer, map, channel or function) is that
//     pointer; any other value is a pointer to a V of its own, allocated
//     by the Store that writes it.
//
// The collector must see v as a pointer when it holds one, and not
// otherwise: an array of slots whose values are pointers is allocated as
// pointerSlots, which has the same layout with v typed a pointer, and
// read through slot, whose v is typed a word, with loadRaw and storeRaw.
type slot struct {
	word atomic.Uint64
	kp   unsafe.Pointer
	v    uint64
}

// pointerSlot is slot with v typed as the pointer it holds; see slot.
type pointerSlot struct {
	word atomic.Uint64
	kp   unsafe.Pointer
	v    unsafe.Pointer
}

// newSlots allocates n empty slots; ptr says whether their values are
// pointers.
func newSlots(n int, ptr bool) []slot {
	if !ptr {
		return make([]slot, n)
	}
	s := make([]pointerSlot, n)
	return unsafe.Slice((*slot)(unsafe.Pointer(unsafe.SliceData(s))), n)
}

// raw is a value's word as a slot or a record keeps it: p when values
// are pointers, n otherwise. It keeps the pointer typed as one, so that a
// value the table has let go of stays alive while a reader holds it.
type raw struct {
	p unsafe.Pointer
	n uint64
}

// loadRaw reads the value word at v, which the writer may be replacing.
func loadRaw(v *uint64, ptr bool) raw {
	if ptr {
		return raw{p: atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(v)))}
	}
	return raw{n: atomic.LoadUint64(v)}
}

// storeRaw writes the value word at v, which readers may be reading.
func storeRaw(v *uint64, r raw, ptr bool) {
	if ptr {
		atomic.StorePointer((*unsafe.Pointer)(unsafe.Pointer(v)), r.p)
		return
	}
	atomic.StoreUint64(v, r.n)
}

// valueMode says how a table keeps its values in the slots' v.
type valueMode uint8

const (
	valueWord    valueMode = iota // a 64-bit word without pointers
	valuePointer                  // one pointer
	valueBoxed                    // a pointer to a V of its own
)

// modeOf returns how values of type V are kept.
func modeOf[V any]() valueMode {
	t := reflect.TypeFor[V]()
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return valuePointer
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr, reflect.Float64:
		// An atomic 64-bit access needs the word aligned to 8, which a
		// 32-bit platform does not give these types.
		if t.Size() == 8 && t.Align() == 8 {
			return valueWord
		}
	}
	return valueBoxed
}

// toRaw is the word that keeps v. A boxed value gets a V of its own.
func (t *Table[K, V]) toRaw(v V) raw {
	switch t.vals {
	case valueWord:
		return raw{n: *(*uint64)(unsafe.Pointer(&v))}
	case valuePointer:
		return raw{p: *(*unsafe.Pointer)(unsafe.Pointer(&v))}
	}
	p := new(V)
	*p = v
	return raw{p: unsafe.Pointer(p)}
}

// fromRaw is the value r keeps.
func (t *Table[K, V]) fromRaw(r raw) V {
	switch t.vals {
	case valueWord:
		return *(*V)(unsafe.Pointer(&r.n))
	case valuePointer:
		return *(*V)(unsafe.Pointer(&r.p))
	}
	if r.p == nil {
		var zero V
		return zero
	}
	return *(*V)(r.p)
}

const (
	verBits   = 50
	verMask   = 1<<verBits - 1
	deleted   = 1 << verBits // in a slot's word: the key is gone at that version
	lenShift  = verBits + 1
	maxKeyLen = 1<<8 - 1
	boxedLen  = maxKeyLen // the length of a key kept as a K of its own
	tagShift  = lenShift + 8
	identMask = 1<<64 - 1<<lenShift // the tag and the length
	gone      = 1 << 63             // in a record's ver: the key was absent
)

// keyLen is the length find and a new slot's word give k: a string key's
// length, or boxedLen for a key kept boxed.
func (t *Table[K, V]) keyLen(k K) uint64 {
	if t.strKeys {
		if n := len(*(*string)(unsafe.Pointer(&k))); n < boxedLen {
			return uint64(n)
		}
	}
	return boxedLen
}

// keyPtr is what a new slot for k keeps as its kp.
func (t *Table[K, V]) keyPtr(k K) unsafe.Pointer {
	if t.keyLen(k) != boxedLen {
		return unsafe.Pointer(unsafe.StringData(*(*string)(unsafe.Pointer(&k))))
	}
	p := new(K)
	*p = k
	return unsafe.Pointer(p)
}

// key is the key of slot s, whose word is w, not 0.
func key[K comparable](s *slot, w uint64) K {
	n := w >> lenShift & maxKeyLen
	if n == boxedLen {
		return *(*K)(s.kp)
	}
	str := unsafe.String((*byte)(s.kp), int(n))
	return *(*K)(unsafe.Pointer(&str))
}

// index is s's place in slots.
func (s *slot) index(slots []slot) int {
	return int((uintptr(unsafe.Pointer(s)) - uintptr(unsafe.Pointer(&slots[0]))) / unsafe.Sizeof(*s))
}
