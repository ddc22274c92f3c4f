package hamt

import (
	"reflect"
	"sync/atomic"
	"unsafe"
)

// Two kinds of word in a node may be replaced in place by a Live map's
// writer while readers read them (see live.go): the pointer to a child, and
// the value of an entry when it fits in one machine word. Every access to
// them that can race with such a store goes through the functions below,
// which are plain moves on the usual platforms but tell the compiler and the
// race detector what is going on. (One exception: the many stores of a
// batch of word overwrites are made in assembly on amd64; see storeWords.)

// shape says whether values of a type can be replaced with a single atomic
// store.
type shape uint8

const (
	shapeOther   shape = iota // needs a copy of the node holding it
	shapePointer              // one pointer word: atomic.StorePointer
	shapeWord                 // one 64-bit word without pointers: atomic.StoreUint64
)

// shapeOf returns the shape of V. It costs a couple of nanoseconds (the
// type is in the instantiation's dictionary), so it is not cached.
func shapeOf[V any]() shape {
	t := reflect.TypeFor[V]()
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return shapePointer
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr, reflect.Float64, reflect.Complex64:
		// The word must be aligned to 8 for the atomic 64-bit load and
		// store: complex64 is aligned to 4 only (as are 64-bit integers on
		// 32-bit platforms), and an entry may put it at 4 mod 8.
		if t.Size() == 8 && t.Align() == 8 {
			return shapeWord
		}
	}
	return shapeOther
}

// loadVal reads a value that a writer may be replacing in place.
func loadVal[V any](p *V) V {
	return loadValAs(p, shapeOf[V]())
}

// loadValAs is loadVal for a caller that knows V's shape already: a loop
// over many values asks shapeOf once, and this stays cheap enough to inline.
func loadValAs[V any](p *V, sh shape) V {
	switch sh {
	case shapePointer:
		x := atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(p)))
		return *(*V)(unsafe.Pointer(&x))
	case shapeWord:
		x := atomic.LoadUint64((*uint64)(unsafe.Pointer(p)))
		return *(*V)(unsafe.Pointer(&x))
	}
	return *p
}

// loadEntry reads an entry whose value a writer may be replacing in place.
func loadEntry[K comparable, V any](e *entry[K, V]) entry[K, V] {
	return entry[K, V]{key: e.key, val: loadVal(&e.val)}
}

// loadChild reads a child pointer that a writer may be replacing in place.
func loadChild[K comparable, V any](p **node[K, V]) *node[K, V] {
	return (*node[K, V])(atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(p))))
}

// copyChildren appends src's child pointers to dst, with one move of the
// whole array; under the race detector, reading each pointer with
// sync/atomic, which the detector understands.
//
// One move reads what reading each word atomically would. A node is
// copied by its map's writer, under the map's lock, or by a goroutine that
// has the map to itself (an Owner's holder, or a reader of a frozen
// version, whose nodes never change again). The only stores into the
// node that another goroutine can be making then are a Freeze's repeats of
// the writer's last change (version.freeze), and those store values the
// words already hold: the writer made the change itself before going on,
// and so did a Freeze before handing out the version. A move (memmove)
// copies every pointer-sized word whole. Reading a word at a time, with
// an append each, cost a path copy at 10,000 and 100,000 entries a tenth
// to a sixth of its time (BenchmarkLiveSetFrozen).
func copyChildren[K comparable, V any](dst, src []*node[K, V]) []*node[K, V] {
	if !raceEnabled {
		return append(dst, src...)
	}
	for i := range src {
		dst = append(dst, loadChild(&src[i]))
	}
	return dst
}

// copyEntries appends src's entries to dst, with one move of the whole
// array as copyChildren does; under the race detector, reading each value
// that a writer may replace in place with sync/atomic.
func copyEntries[K comparable, V any](dst, src []entry[K, V]) []entry[K, V] {
	if !raceEnabled {
		return append(dst, src...)
	}
	sh := shapeOf[V]() // once: asking reflect per entry cost a tenth of a Batch
	if sh == shapeOther {
		return append(dst, src...)
	}
	for i := range src {
		dst = append(dst, entry[K, V]{key: src[i].key, val: loadValAs(&src[i].val, sh)})
	}
	return dst
}
