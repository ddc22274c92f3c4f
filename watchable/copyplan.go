package watchable

import (
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/proto"
)

// A plan is what DeepCopy and DeepEqual worked out about one type: whether
// and how its values are copied, and how they are compared. Working it out
// takes reflection; running it mostly does not, as it is a tree of
// functions over memory built once per type. A plan never changes once it
// is in the cache, so any goroutine may run it.
type plan struct {
	typ reflect.Type

	// Copying.
	refused  *refusal  // why values of typ cannot be copied; nil if they can
	shallow  bool      // assignment is a deep copy: nothing mutable is reachable
	rootCopy rootCopy  // how DeepCopy[typ] copies
	fix      fixFunc   // makes a shallow copy deep, in place; nil if shallow or refused
	clone    cloneFunc // pointers and maps: copies what a non-nil one refers to

	// Comparing.
	rootEq    rootEq
	eq        eqFunc    // compares the values at a and b; never nil
	eqPtr     ptrEqFunc // pointers: compares what a and b point to, nil allowed
	eqSlice   func(a, b sliceHeader, tr eqTrail) bool
	eqMap     func(a, b unsafe.Pointer) bool // flat maps: compares two maps, nil allowed
	exact     bool                           // equal values cannot be told apart
	operator  bool                           // == decides, and values are comparable
	recursive bool                           // a value may lead back into itself: see eqTrail
}

// fixFunc turns the shallow copy at p (an assignment of the original) into
// a deep copy, replacing every reference in it with a reference to a copy.
type fixFunc func(p unsafe.Pointer, tr trail) *refusal

// cloneFunc returns a pointer to a deep copy of what the non-nil q points to.
type cloneFunc func(q unsafe.Pointer, tr trail) (unsafe.Pointer, *refusal)

// eqFunc compares the values stored at a and b.
type eqFunc func(a, b unsafe.Pointer, tr eqTrail) bool

// ptrEqFunc compares the pointers a and b, either of which may be nil.
type ptrEqFunc func(a, b unsafe.Pointer, tr eqTrail) bool

// sliceHeader is the memory layout of a slice.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// How DeepCopy copies a value it is given directly. Methods are called
// without reflection there, as the static type is known.
type rootCopy uint8

const (
	rootShallow       rootCopy = iota // return the value
	rootRefused                       // panic with the refusal
	rootMethod                        // DeepCopier[T]
	rootPointerMethod                 // DeepCopier[*T]
	rootInterface                     // by dynamic type
	rootPointer                       // clone what the pointer points to
	rootInPlace                       // fix a copy in place
)

// How DeepEqual compares values it is given directly.
type rootEq uint8

const (
	rootOperator        rootEq = iota // ==
	rootEqProto                       // proto.Equal
	rootEqMethod                      // Equaler[T]
	rootEqPointerMethod               // Equaler[*T]
	rootEqIface                       // by dynamic type
	rootEqPointer                     // eqPtr
	rootEqSlice                       // eqSlice
	rootEqMap                         // eqMap
	rootEqInPlace                     // eq on the values' addresses
)

// plans caches a *plan per reflect.Type.
var plans sync.Map

// planOf returns the plan for T, building it on first use.
func planOf[T any]() *plan {
	return planFor(reflect.TypeFor[T]())
}

func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	b := builder{pending: map[reflect.Type]*plan{}}
	b.plan(t)
	// Plans refer to each other, and those of recursive types to plans
	// still being built, so none is published before all are complete.
	// Goroutines racing to build the same plans each build a complete set;
	// whichever is stored first is used by everyone afterwards.
	for _, q := range b.built {
		plans.LoadOrStore(q.typ, q)
	}
	actual, _ := plans.Load(t)
	return actual.(*plan)
}

// A builder builds the plans for one type and for the types it contains.
type builder struct {
	pending map[reflect.Type]*plan // built in this session, possibly incomplete
	built   []*plan
}

func (b *builder) plan(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := b.pending[t]; ok {
		return p
	}
	p := &plan{typ: t}
	b.pending[t] = p
	b.built = append(b.built, p)
	p.refused = refusalOf(t)
	p.shallow = !needsCopy(t)
	p.exact = inexactPart(t, map[reflect.Type]bool{}) == nil
	p.operator = flat(t) && t.Comparable() && !hasEqualMethods(t)
	p.recursive = mayRecur(t, map[reflect.Type]bool{})
	b.buildCopy(p)
	b.buildEqual(p)
	return p
}

var (
	protoMessage = reflect.TypeFor[proto.Message]()
	boolType     = reflect.TypeFor[bool]()
	locker       = reflect.TypeFor[sync.Locker]()
)

// isLock reports whether t is a lock, as go vet's copylocks check has it: a
// struct whose pointer has Lock and Unlock methods, such as sync.Mutex, or
// the noCopy markers of sync.WaitGroup and sync.Cond.
func isLock(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(locker)
}

// mayRecur reports whether a value of t can lead back into itself: whether
// t can reach a type that contains itself, through references, or an
// interface, which may hold anything. A proto message is compared by
// proto's rule, which needs no trail, so the search does not go into it.
// seen maps the types the search is inside of to true, and those it has
// found cannot recur to false; the search ends at the first recurring type
// it finds.
func mayRecur(t reflect.Type, seen map[reflect.Type]bool) bool {
	if inside, ok := seen[t]; ok {
		return inside
	}
	if t.Kind() == reflect.Pointer && isProtoMessage(t) {
		return false
	}
	seen[t] = true
	recurs := false
	switch t.Kind() {
	case reflect.Interface:
		recurs = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		recurs = mayRecur(t.Elem(), seen)
	case reflect.Map:
		recurs = mayRecur(t.Key(), seen) || mayRecur(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField() && !recurs; i++ {
			recurs = mayRecur(t.Field(i).Type, seen)
		}
	}
	if !recurs {
		seen[t] = false
	}
	return recurs
}

// flat reports whether values of t hold only numbers, booleans and strings
// (directly, or in arrays and structs). Strings are immutable, so an
// assignment copies such a value completely.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return t.Len() == 0 || flat(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !flat(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// needsCopy reports whether an assignment of a value of t may not be a
// deep copy: t holds a pointer, slice, map, interface (other than the
// immutable ones: error and reflect.Type), func, channel or unsafe.Pointer,
// outside of the standard types known to be immutable; or a lock, which an
// assignment would copy in whatever state it is. Blank fields cannot be
// reached, so they do not count. Recursion ends because a type can contain
// itself only through a reference.
func needsCopy(t reflect.Type) bool {
	if s := stdTypeOf(t); s != nil {
		return s.fix != nil || s.clone != nil
	}
	if isLock(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && needsCopy(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Name != "_" && needsCopy(f.Type) {
				return true
			}
		}
		return false
	case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Map,
		reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	return false
}

// How a value that needs copying is copied, apart from its kind.
type copyWay uint8

const (
	byKind          copyWay = iota
	byStd                   // stdType
	byMethod                // t has DeepCopy() t
	byPointerMethod         // *t has DeepCopy() *t
	byProto                 // t is a pointer implementing proto.Message
)

// copyWayOf returns how values of t, which need copying, are copied.
func copyWayOf(t reflect.Type) (copyWay, reflect.Method) {
	if stdTypeOf(t) != nil {
		return byStd, reflect.Method{}
	}
	if t.Kind() == reflect.Interface {
		return byKind, reflect.Method{}
	}
	if m, ok := t.MethodByName("DeepCopy"); ok && returnsOwnType(m.Type, t) {
		return byMethod, m
	}
	if t.Kind() != reflect.Pointer {
		pt := reflect.PointerTo(t)
		if m, ok := pt.MethodByName("DeepCopy"); ok && returnsOwnType(m.Type, pt) {
			return byPointerMethod, m
		}
	}
	if t.Kind() == reflect.Pointer && isProtoMessage(t) {
		return byProto, reflect.Method{}
	}
	return byKind, reflect.Method{}
}

// returnsOwnType reports whether ft, the type of a method expression on t,
// is func(t) t.
func returnsOwnType(ft, t reflect.Type) bool {
	return ft.NumIn() == 1 && ft.NumOut() == 1 && ft.Out(0) == t && !ft.IsVariadic()
}

// equalMethod returns the Equal method that decides equality for t, and
// whether it is one of *t: Equal(t) bool on t, or Equal(*t) bool on *t.
func equalMethod(t reflect.Type) (m reflect.Method, onPointer, ok bool) {
	if t.Kind() == reflect.Interface {
		return m, false, false
	}
	if m, ok := t.MethodByName("Equal"); ok && isEqualFunc(m.Type, t) {
		return m, false, true
	}
	if t.Kind() != reflect.Pointer {
		pt := reflect.PointerTo(t)
		if m, ok := pt.MethodByName("Equal"); ok && isEqualFunc(m.Type, pt) {
			return m, true, true
		}
	}
	return m, false, false
}

// isEqualFunc reports whether ft, the type of a method expression on t, is
// func(t, t) bool.
func isEqualFunc(ft, t reflect.Type) bool {
	return ft.NumIn() == 2 && ft.In(1) == t && ft.NumOut() == 1 && ft.Out(0) == boolType && !ft.IsVariadic()
}

// hasEqualMethods reports whether the flat type t or a part of it has an
// Equal method, so that == does not decide.
func hasEqualMethods(t reflect.Type) bool {
	if _, _, ok := equalMethod(t); ok {
		return true
	}
	switch t.Kind() {
	case reflect.Array:
		return hasEqualMethods(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Name != "_" && hasEqualMethods(f.Type) {
				return true
			}
		}
	}
	return false
}

// inexactPart returns a type within t (t itself, possibly) whose equal values
// may still be told apart: one compared by an Equal method, which may ignore
// some fields, by a standard type's notion of equality (time.Time.Equal
// ignores the location), or an interface, which may hold either. It returns
// nil when DeepEqual compares every part of t with == or proto.Equal.
func inexactPart(t reflect.Type, seen map[reflect.Type]bool) reflect.Type {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if s := stdTypeOf(t); s != nil {
		if s.exact {
			return nil
		}
		return t
	}
	if t.Kind() == reflect.Interface {
		return t
	}
	if isProtoMessage(t) {
		return nil
	}
	if _, _, ok := equalMethod(t); ok {
		return t
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return inexactPart(t.Elem(), seen)
	case reflect.Map:
		if p := inexactPart(t.Key(), seen); p != nil {
			return p
		}
		return inexactPart(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Name != "_" {
				if p := inexactPart(f.Type, seen); p != nil {
					return p
				}
			}
		}
	}
	return nil
}

// refusalOf returns why values of t cannot be deep-copied, or nil if they
// can. Values held in interfaces are checked when they are copied.
func refusalOf(t reflect.Type) *refusal {
	return refuse(t, map[reflect.Type]bool{})
}

// refuse looks for a part of t that cannot be copied, depth first. A type
// met again is either being looked at further up (a recursive type; its
// other parts decide) or was found copyable.
func refuse(t reflect.Type, seen map[reflect.Type]bool) *refusal {
	if !needsCopy(t) || seen[t] {
		return nil
	}
	seen[t] = true
	if way, _ := copyWayOf(t); way != byKind {
		return nil
	}
	if isLock(t) {
		return &refusal{reason: "is a " + t.String() + ", which must not be copied"}
	}
	switch t.Kind() {
	case reflect.Func:
		return &refusal{reason: "is a func"}
	case reflect.Chan:
		return &refusal{reason: "is a chan"}
	case reflect.UnsafePointer:
		return &refusal{reason: "is an unsafe.Pointer"}
	case reflect.Pointer:
		return refuse(t.Elem(), seen)
	case reflect.Slice, reflect.Array:
		if r := refuse(t.Elem(), seen); r != nil {
			return r.in("[]")
		}
	case reflect.Map:
		if k := t.Key(); k.Kind() != reflect.Interface && needsCopy(k) {
			return &refusal{reason: "has keys of type " + k.String() + ", which a copy would change"}
		}
		if r := refuse(t.Elem(), seen); r != nil {
			return r.in("[]")
		}
	case reflect.Struct:
		if isProtoMessage(reflect.PointerTo(t)) {
			return &refusal{reason: "is a proto message held by value: hold it by pointer, as *" + t.String()}
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" {
				continue
			}
			if r := refuse(f.Type, seen); r != nil {
				return r.in("." + f.Name)
			}
			if private(t, f) && needsCopy(f.Type) {
				if way, _ := copyWayOf(f.Type); way == byKind {
					return &refusal{
						steps:  []string{"." + f.Name},
						reason: "is unexported and holds " + holds(f.Type) + ", which only " + t.String() + "'s own code knows how to copy: give it a DeepCopy method",
					}
				}
			}
		}
	}
	return nil
}

// private reports whether f, a field of the struct type t, is an unexported
// field whose contents DeepCopy must leave to its type's own code: a field
// of a standard library type, whose private memory may be an identity (a
// file, a handle, a cache) rather than data. The program's own types, and
// those of its other dependencies, hold data in unexported fields as often
// as in exported ones, and are copied field by field like any other (a lock
// among them is still refused). An embedded struct is part of the surface
// of the struct embedding it: its fields are promoted, and each is judged
// by itself.
func private(t reflect.Type, f reflect.StructField) bool {
	return !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) && standard(t.PkgPath())
}

// standard reports whether pkgPath names a package of the standard
// library: its first element has no dot, as module paths do, and it is not
// the main package or in the main module (whose path may lack a dot).
func standard(pkgPath string) bool {
	if pkgPath == "" || pkgPath == "main" {
		return false
	}
	first, _, _ := strings.Cut(pkgPath, "/")
	if strings.Contains(first, ".") {
		return false
	}
	if m := mainModule(); m != "" && (pkgPath == m || strings.HasPrefix(pkgPath, m+"/")) {
		return false
	}
	return true
}

// mainModule is the path of the main module, when the binary records it.
var mainModule = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Path
	}
	return ""
})

// holds describes what a value of t holds, for messages.
func holds(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "a pointer"
	case reflect.Slice:
		return "a slice"
	case reflect.Map:
		return "a map"
	case reflect.Interface:
		return "an interface"
	}
	return "references"
}
