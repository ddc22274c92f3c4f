package watchable

import (
	"reflect"
	"unsafe"
)

// Values of plain types — integers and strings without DeepCopy or Equal
// methods, on the type or on its pointer — are copied by assignment and
// compared with ==, whatever DeepCopy and DeepEqual decide for other types.
// A Map works that out once and remembers it (plain), rather than asking
// DeepCopy's per-type cache on every Store and Load: for an int map, that
// lookup was most of what a Store cost besides the trie.

const (
	plainUnknown uint32 = iota // not worked out yet
	plainNone                  // use DeepCopy and DeepEqual
	plainWord                  // an 8-byte integer: compare the words
	plainHalf                  // a 4-byte integer
	plainString
)

// plain returns how values of type V may be copied and compared. Any
// goroutine.
func (m *Map[K, V]) plain() uint32 {
	p := m.plainKind.Load()
	if p == plainUnknown {
		p = plainKindOf[V]()
		m.plainKind.Store(p)
	}
	return p
}

func plainKindOf[V any]() uint32 {
	t := reflect.TypeFor[V]()
	if t.Implements(reflect.TypeFor[DeepCopier[V]]()) || t.Implements(reflect.TypeFor[Equaler[V]]()) ||
		// DeepEqual honours Equal(*V) bool on *V as well (see equalMethod).
		reflect.TypeFor[*V]().Implements(reflect.TypeFor[Equaler[*V]]()) {
		return plainNone
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if t.Size() == 8 {
			return plainWord
		}
		return plainHalf
	case reflect.Int32, reflect.Uint32:
		return plainHalf
	case reflect.String:
		return plainString
	}
	return plainNone
}

// copyValue is DeepCopy(v). Its first test, small enough to inline into
// Load, lets a plain value through once plain has been asked.
func (m *Map[K, V]) copyValue(v V) V {
	if m.plainKind.Load() > plainNone {
		return v
	}
	return m.deepCopy(v)
}

// deepCopy is copyValue past its first test.
func (m *Map[K, V]) deepCopy(v V) V {
	return copyAs(m.plain(), v)
}

// copyAs is DeepCopy(v) for values whose plain kind is p.
func copyAs[V any](p uint32, v V) V {
	if p != plainNone {
		return v
	}
	return DeepCopy(v)
}

// equal is DeepEqual(a, b).
func (m *Map[K, V]) equal(a, b V) bool {
	return equalAs(m.plain(), a, b)
}

// equalAs is DeepEqual(a, b) for values whose plain kind is p.
func equalAs[V any](p uint32, a, b V) bool {
	switch p {
	case plainWord:
		return *(*uint64)(unsafe.Pointer(&a)) == *(*uint64)(unsafe.Pointer(&b))
	case plainHalf:
		return *(*uint32)(unsafe.Pointer(&a)) == *(*uint32)(unsafe.Pointer(&b))
	case plainString:
		return *(*string)(unsafe.Pointer(&a)) == *(*string)(unsafe.Pointer(&b))
	}
	return DeepEqual(a, b)
}

// exact is exactEqual[V]().
func (m *Map[K, V]) exact() bool {
	return exactAs[V](m.plain())
}

// exactAs is exactEqual[V]() for values whose plain kind is p.
func exactAs[V any](p uint32) bool {
	return p != plainNone || exactEqual[V]()
}
