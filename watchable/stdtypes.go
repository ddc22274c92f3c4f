package watchable

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// A stdType is what DeepCopy and DeepEqual know about a type of the standard
// library whose fields are unexported, so that its plan cannot be worked out
// from its fields: copying another package's private memory could break its
// invariants (a unique.Handle's identity, say), and sharing it would break
// isolation unless the type is immutable.
type stdType struct {
	// fix makes a shallow copy deep, in place; clone copies what a pointer
	// points to. Both nil: the type is immutable, and assignment is a deep
	// copy (the value, or what the pointer points to, is shared).
	fix   fixFunc
	clone cloneFunc
	// eq compares two values in place; eqPtr compares two pointers' targets.
	eq    eqFunc
	eqPtr ptrEqFunc
	// exact reports that equal values cannot be told apart.
	exact bool
}

// stdTypes holds the types below by reflect.Type. It is written once, at
// package initialization, and only read afterwards.
var stdTypes = map[reflect.Type]*stdType{
	reflect.TypeFor[time.Time](): {
		// Equal compares instants: the same time in another location, or
		// with or without a monotonic reading, is not a change.
		eq: func(a, b unsafe.Pointer, _ eqTrail) bool { return (*time.Time)(a).Equal(*(*time.Time)(b)) },
	},
	reflect.TypeFor[time.Location](): {
		eq: func(a, b unsafe.Pointer, _ eqTrail) bool {
			return (*time.Location)(a).String() == (*time.Location)(b).String()
		},
	},
	reflect.TypeFor[*time.Location](): {
		// Locations loaded twice are different pointers to equal data; nil
		// means UTC, and String says so.
		eqPtr: func(a, b unsafe.Pointer, _ eqTrail) bool {
			return a == b || (*time.Location)(a).String() == (*time.Location)(b).String()
		},
	},
	reflect.TypeFor[netip.Addr](): {
		eq:    func(a, b unsafe.Pointer, _ eqTrail) bool { return *(*netip.Addr)(a) == *(*netip.Addr)(b) },
		exact: true,
	},
	reflect.TypeFor[netip.Prefix](): {
		eq:    func(a, b unsafe.Pointer, _ eqTrail) bool { return *(*netip.Prefix)(a) == *(*netip.Prefix)(b) },
		exact: true,
	},
	reflect.TypeFor[netip.AddrPort](): {
		eq:    func(a, b unsafe.Pointer, _ eqTrail) bool { return *(*netip.AddrPort)(a) == *(*netip.AddrPort)(b) },
		exact: true,
	},
	reflect.TypeFor[reflect.Type](): {
		eq: func(a, b unsafe.Pointer, _ eqTrail) bool {
			return *(*reflect.Type)(a) == *(*reflect.Type)(b)
		},
		exact: true,
	},
	reflect.TypeFor[error](): {
		// Errors are immutable by convention and compared by identity
		// (errors.Is against a sentinel), so they are shared: a copy of
		// io.EOF must still be io.EOF. Two errors are equal when they say
		// the same thing: a failure reported again is not a change.
		eq: func(a, b unsafe.Pointer, _ eqTrail) bool {
			x, y := *(*error)(a), *(*error)(b)
			if x == nil || y == nil {
				return x == nil && y == nil
			}
			return reflect.TypeOf(x) == reflect.TypeOf(y) && x.Error() == y.Error()
		},
	},
}

// stdTypeOf returns what is known about t, or nil.
func stdTypeOf(t reflect.Type) *stdType {
	if s, ok := stdTypes[t]; ok {
		return s
	}
	switch {
	case isUniqueHandle(t):
		// A Handle is a pointer whose identity is its meaning: copying what
		// it points to would make an unequal Handle.
		return &stdType{
			eq:    func(a, b unsafe.Pointer, _ eqTrail) bool { return *(*unsafe.Pointer)(a) == *(*unsafe.Pointer)(b) },
			exact: true,
		}
	case t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "regexp" && t.Elem().Name() == "Regexp":
		// A compiled Regexp is safe for concurrent use and never changes,
		// except through Longest, which must be called before storing.
		return &stdType{eqPtr: func(a, b unsafe.Pointer, _ eqTrail) bool {
			if a == nil || b == nil {
				return a == b
			}
			return a == b || regexpString(t, a) == regexpString(t, b)
		}}
	}
	return bigType(t)
}

// isUniqueHandle reports whether t is a unique.Handle[T], laid out as the
// single pointer it is today; should that change, the Handle is refused
// (its field is unexported) rather than misread.
func isUniqueHandle(t reflect.Type) bool {
	return t.PkgPath() == "unique" && strings.HasPrefix(t.Name(), "Handle[") &&
		t.Kind() == reflect.Struct && t.NumField() == 1 && t.Field(0).Type.Kind() == reflect.Pointer
}

func regexpString(t reflect.Type, p unsafe.Pointer) string {
	return reflect.NewAt(t.Elem(), p).Interface().(fmt.Stringer).String()
}

// bigType returns how to copy and compare math/big's Int, Rat and Float
// (values and pointers), or nil. They hold slices, so they are copied: with
// Set (Copy for a Float, which keeps its precision and rounding mode). They
// are compared with Cmp. math/big is reached through reflection so that
// programs that do not use it do not link it.
func bigType(t reflect.Type) *stdType {
	pointer := t.Kind() == reflect.Pointer
	v := t
	if pointer {
		v = t.Elem()
	}
	if v.PkgPath() != "math/big" {
		return nil
	}
	set := "Set"
	switch v.Name() {
	case "Int", "Rat":
	case "Float":
		set = "Copy"
	default:
		return nil
	}
	pv := reflect.PointerTo(v)
	setM, ok1 := pv.MethodByName(set)
	cmpM, ok2 := pv.MethodByName("Cmp")
	if !ok1 || !ok2 {
		return nil
	}
	clone := func(q unsafe.Pointer, _ trail) (unsafe.Pointer, *refusal) {
		n := reflect.New(v)
		setM.Func.Call([]reflect.Value{n, reflect.NewAt(v, q)})
		return n.UnsafePointer(), nil
	}
	cmp := func(a, b unsafe.Pointer, _ eqTrail) bool {
		return cmpM.Func.Call([]reflect.Value{reflect.NewAt(v, a), reflect.NewAt(v, b)})[0].Int() == 0
	}
	// An Int has one form per value; Rats and Floats of equal value may
	// differ in form or precision.
	exact := v.Name() == "Int"
	if pointer {
		return &stdType{
			clone: clone,
			eqPtr: func(a, b unsafe.Pointer, tr eqTrail) bool {
				if a == nil || b == nil {
					return a == b
				}
				return cmp(a, b, tr)
			},
			exact: exact,
		}
	}
	return &stdType{
		fix: func(p unsafe.Pointer, tr trail) *refusal {
			n, _ := clone(p, tr)
			reflect.NewAt(v, p).Elem().Set(reflect.NewAt(v, n).Elem())
			return nil
		},
		eq:    cmp,
		exact: exact,
	}
}
