package watchable

import (
	"maps"
	"reflect"
	"unsafe"
)

// flatMapOps returns, for a map type t whose keys and elements are strings,
// integers, booleans, floats or empty structs, functions that clone and
// compare maps of type t given as pointers to the runtime's map (the word a
// map variable holds). Copying entry by entry through reflection costs
// several times more than the runtime's own clone; these cover the common
// map[string]string of labels and the like.
//
// A map of a named type (or with named keys or elements) is handled as the
// predeclared map type of the same kinds: the runtime lays out, hashes and
// compares keys and elements by kind and size alone, so the two are the
// same in memory. Both return nil for other maps.
func flatMapOps(t reflect.Type) (clone func(m unsafe.Pointer) unsafe.Pointer, equal func(a, b unsafe.Pointer) bool) {
	switch t.Key().Kind() {
	case reflect.String:
		return flatMapOpsK[string](t)
	case reflect.Int:
		return flatMapOpsK[int](t)
	case reflect.Int32:
		return flatMapOpsK[int32](t)
	case reflect.Int64:
		return flatMapOpsK[int64](t)
	case reflect.Uint:
		return flatMapOpsK[uint](t)
	case reflect.Uint32:
		return flatMapOpsK[uint32](t)
	case reflect.Uint64:
		return flatMapOpsK[uint64](t)
	}
	return nil, nil
}

func flatMapOpsK[K comparable](t reflect.Type) (func(unsafe.Pointer) unsafe.Pointer, func(a, b unsafe.Pointer) bool) {
	e := t.Elem()
	switch e.Kind() {
	case reflect.String:
		return mapOps[K, string](t)
	case reflect.Bool:
		return mapOps[K, bool](t)
	case reflect.Int:
		return mapOps[K, int](t)
	case reflect.Int32:
		return mapOps[K, int32](t)
	case reflect.Int64:
		return mapOps[K, int64](t)
	case reflect.Uint32:
		return mapOps[K, uint32](t)
	case reflect.Uint64:
		return mapOps[K, uint64](t)
	case reflect.Float64:
		return mapOps[K, float64](t)
	case reflect.Struct:
		if e.NumField() == 0 {
			return mapOps[K, struct{}](t)
		}
	}
	return nil, nil
}

func mapOps[K, V comparable](t reflect.Type) (func(unsafe.Pointer) unsafe.Pointer, func(a, b unsafe.Pointer) bool) {
	same := reflect.TypeFor[map[K]V]()
	if t.Key().Size() != same.Key().Size() || t.Key().Align() != same.Key().Align() ||
		t.Elem().Size() != same.Elem().Size() || t.Elem().Align() != same.Elem().Align() {
		return nil, nil // cannot happen for types of the same kinds; never guess
	}
	clone := func(m unsafe.Pointer) unsafe.Pointer {
		c := maps.Clone(*(*map[K]V)(unsafe.Pointer(&m)))
		return *(*unsafe.Pointer)(unsafe.Pointer(&c))
	}
	equal := func(a, b unsafe.Pointer) bool {
		if a == nil || b == nil {
			return a == b // a nil map is not an empty one
		}
		return a == b || maps.Equal(*(*map[K]V)(unsafe.Pointer(&a)), *(*map[K]V)(unsafe.Pointer(&b)))
	}
	return clone, equal
}
