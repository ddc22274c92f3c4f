package watchable

import (
	"cmp"
	"reflect"
	"slices"
	"unsafe"

	"google.golang.org/protobuf/proto"
)

// buildEqual works out how p compares values of its type.
func (b *builder) buildEqual(p *plan) {
	t := p.typ
	if p.operator {
		p.rootEq = rootOperator
		p.eq = b.fieldsEq(t)
		return
	}
	if s := stdTypeOf(t); s != nil {
		if s.eqPtr != nil {
			p.eqPtr, p.rootEq = s.eqPtr, rootEqPointer
			p.eq = pointerSlotEq(s.eqPtr)
		} else {
			p.eq, p.rootEq = s.eq, rootEqInPlace
		}
		return
	}
	if t.Kind() == reflect.Interface {
		p.eq, p.rootEq = interfaceEq(t), rootEqIface
		return
	}
	if isProtoMessage(t) {
		p.rootEq = rootEqProto
		if t.Kind() == reflect.Pointer {
			p.eqPtr, p.rootEq = protoEq(t), rootEqPointer
			p.eq = pointerSlotEq(p.eqPtr)
		} else {
			p.eq = func(x, y unsafe.Pointer, _ eqTrail) bool {
				return proto.Equal(reflect.NewAt(t, x).Elem().Interface().(proto.Message), reflect.NewAt(t, y).Elem().Interface().(proto.Message))
			}
		}
		return
	}
	if m, onPointer, ok := equalMethod(t); ok {
		switch {
		case onPointer:
			p.eq, p.rootEq = pointerMethodEq(t, m), rootEqPointerMethod
		case t.Kind() == reflect.Pointer:
			p.eqPtr, p.rootEq = methodPtrEq(t, m), rootEqMethod
			p.eq = pointerSlotEq(p.eqPtr)
		default:
			p.eq, p.rootEq = methodEq(t, m), rootEqMethod
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		p.eqPtr, p.rootEq = b.pointerEq(t), rootEqPointer
		p.eq = pointerSlotEq(p.eqPtr)
	case reflect.Slice:
		p.eqSlice, p.rootEq = b.sliceEq(t), rootEqSlice
		p.eq = func(x, y unsafe.Pointer, tr eqTrail) bool {
			return p.eqSlice(*(*sliceHeader)(x), *(*sliceHeader)(y), tr)
		}
	case reflect.Map:
		p.eq, p.eqMap = b.mapEq(t)
		p.rootEq = rootEqInPlace
		if p.eqMap != nil {
			p.rootEq = rootEqMap
		}
	case reflect.Array:
		p.rootEq = rootEqInPlace
		if memComparable(t) {
			p.eq = b.fieldsEq(t)
		} else {
			p.eq = b.arrayEq(t)
		}
	default: // structs, and the kinds DeepCopy refuses
		p.eq, p.rootEq = b.fieldsEq(t), rootEqInPlace
	}
}

// structuralEq reports whether values of t are compared part by part, as
// opposed to by an Equal method, proto.Equal or a standard type's rule.
func structuralEq(t reflect.Type) bool {
	if stdTypeOf(t) != nil || isProtoMessage(t) {
		return false
	}
	_, _, ok := equalMethod(t)
	return !ok
}

// memComparable reports whether two values of t are equal exactly when
// their bytes are: integers, booleans, channels and unsafe.Pointers, and
// arrays and structs of them without padding or blank fields, none with an
// Equal method. (Floats are not: 0 == -0, and NaN != NaN.)
func memComparable(t reflect.Type) bool {
	if !structuralEq(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return memComparable(t.Elem())
	case reflect.Struct:
		var size uintptr
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" || !memComparable(f.Type) {
				return false
			}
			size += f.Type.Size()
		}
		return size == t.Size()
	}
	return false
}

// How one part of a struct (or array) is compared.
type partKind uint8

const (
	partBytes   partKind = iota // memory equal
	partWord                    // an aligned 8-byte word
	partString                  // ==
	partFloat32                 // ==
	partFloat64                 // ==
	partFunc                    // both nil
	partPlan                    // the part's own plan
)

// A part is a run of memory compared one way, at an offset of the value.
type part struct {
	kind partKind
	off  uintptr
	size uintptr
	p    *plan // partPlan
}

// reach ranks how far comparing a part may read outside the value: 0 for
// none, 1 for a string's bytes, 2 for memory a plan of its own follows.
func (f part) reach() int {
	switch f.kind {
	case partString:
		return 1
	case partPlan:
		return 2
	}
	return 0
}

// fieldsEq compares values of t part by part: numbers, strings and the
// like directly, from one flat list of parts that runs through nested
// structs and merges adjacent integers into runs of bytes, and the rest
// with their own plans.
func (b *builder) fieldsEq(t reflect.Type) eqFunc {
	parts := mergeParts(b.parts(t, 0, nil, true), t.Align())
	// Parts held in the value itself first, then strings, whose bytes may
	// lie elsewhere, then the parts with plans of their own, which follow
	// pointers: a difference found sooner costs fewer cache misses, and
	// the order changes nothing else (comparing has no side effects).
	slices.SortStableFunc(parts, func(a, b part) int { return cmp.Compare(a.reach(), b.reach()) })
	return func(x, y unsafe.Pointer, tr eqTrail) bool {
		return equalParts(parts, x, y, tr)
	}
}

func equalParts(parts []part, a, b unsafe.Pointer, tr eqTrail) bool {
	for i := range parts {
		f := &parts[i]
		x, y := unsafe.Add(a, f.off), unsafe.Add(b, f.off)
		switch f.kind {
		case partWord:
			if *(*uint64)(x) != *(*uint64)(y) {
				return false
			}
		case partBytes:
			if unsafe.String((*byte)(x), f.size) != unsafe.String((*byte)(y), f.size) {
				return false
			}
		case partString:
			if *(*string)(x) != *(*string)(y) {
				return false
			}
		case partFloat64:
			if *(*float64)(x) != *(*float64)(y) {
				return false
			}
		case partFloat32:
			if *(*float32)(x) != *(*float32)(y) {
				return false
			}
		case partFunc:
			if *(*unsafe.Pointer)(x) != nil || *(*unsafe.Pointer)(y) != nil {
				return false // funcs are equal only when both are nil
			}
		case partPlan:
			if !f.p.eq(x, y, tr) {
				return false
			}
		}
	}
	return true
}

// parts appends the parts of a value of t at offset base. top is set for
// the type whose plan is being built, which is never compared with its own
// plan.
func (b *builder) parts(t reflect.Type, base uintptr, out []part, top bool) []part {
	if !top && !structuralEq(t) {
		return append(out, part{kind: partPlan, off: base, p: b.plan(t)})
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Chan, reflect.UnsafePointer:
		return append(out, part{kind: partBytes, off: base, size: t.Size()})
	case reflect.Float32:
		return append(out, part{kind: partFloat32, off: base})
	case reflect.Float64:
		return append(out, part{kind: partFloat64, off: base})
	case reflect.Complex64:
		return append(out, part{kind: partFloat32, off: base}, part{kind: partFloat32, off: base + 4})
	case reflect.Complex128:
		return append(out, part{kind: partFloat64, off: base}, part{kind: partFloat64, off: base + 8})
	case reflect.String:
		return append(out, part{kind: partString, off: base})
	case reflect.Func:
		return append(out, part{kind: partFunc, off: base})
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Name != "_" {
				out = b.parts(f.Type, base+f.Offset, out, false)
			}
		}
		return out
	case reflect.Array:
		if memComparable(t) {
			return append(out, part{kind: partBytes, off: base, size: t.Size()})
		}
		if t.Len() == 0 {
			return out
		}
	}
	// Pointers, slices, maps, interfaces and arrays of them.
	return append(out, part{kind: partPlan, off: base, p: b.plan(t)})
}

// mergeParts merges adjacent runs of bytes, and marks the runs that are one
// aligned word in a value aligned to align.
func mergeParts(parts []part, align int) []part {
	var out []part
	for _, f := range parts {
		if n := len(out); n > 0 && f.kind == partBytes && out[n-1].kind == partBytes && out[n-1].off+out[n-1].size == f.off {
			out[n-1].size += f.size
			continue
		}
		out = append(out, f)
	}
	for i := range out {
		// A run at a multiple of 8 bytes into a value aligned to 8 can be
		// loaded as one word.
		if f := &out[i]; f.kind == partBytes && f.size == 8 && f.off%8 == 0 && align >= 8 {
			f.kind = partWord
		}
	}
	return out
}

// arrayEq compares arrays element by element.
func (b *builder) arrayEq(t reflect.Type) eqFunc {
	ep := b.plan(t.Elem())
	n, size := t.Len(), t.Elem().Size()
	return func(x, y unsafe.Pointer, tr eqTrail) bool {
		for i := range n {
			if !ep.eq(unsafe.Add(x, uintptr(i)*size), unsafe.Add(y, uintptr(i)*size), tr) {
				return false
			}
		}
		return true
	}
}

func pointerSlotEq(eqPtr ptrEqFunc) eqFunc {
	return func(a, b unsafe.Pointer, tr eqTrail) bool {
		return eqPtr(*(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b), tr)
	}
}

func (b *builder) pointerEq(t reflect.Type) ptrEqFunc {
	ep := b.plan(t.Elem())
	tracked := !flat(t.Elem()) // a flat value cannot lead back
	return func(x, y unsafe.Pointer, tr eqTrail) bool {
		if x == y {
			return true
		}
		if x == nil || y == nil {
			return false
		}
		if tracked {
			var first bool
			if tr, first = tr.enter(x, y, t); !first {
				return true
			}
		}
		return ep.eq(x, y, tr)
	}
}

func (b *builder) sliceEq(t reflect.Type) func(x, y sliceHeader, tr eqTrail) bool {
	e := t.Elem()
	ep := b.plan(e)
	size := e.Size()
	mem := memComparable(e)
	strs := e.Kind() == reflect.String && structuralEq(e)
	tracked := !flat(e)
	return func(x, y sliceHeader, tr eqTrail) bool {
		if (x.data == nil) != (y.data == nil) || x.len != y.len {
			return false // a nil slice is not an empty one
		}
		if x.data == y.data || x.len == 0 {
			return true
		}
		switch {
		case mem:
			n := x.len * int(size)
			return unsafe.String((*byte)(x.data), n) == unsafe.String((*byte)(y.data), n)
		case strs:
			xs, ys := unsafe.Slice((*string)(x.data), x.len), unsafe.Slice((*string)(y.data), y.len)
			for i := range xs {
				if xs[i] != ys[i] {
					return false
				}
			}
			return true
		}
		if tracked {
			var first bool
			if tr, first = tr.enter(x.data, y.data, t); !first {
				return true
			}
		}
		for i := range x.len {
			if !ep.eq(unsafe.Add(x.data, uintptr(i)*size), unsafe.Add(y.data, uintptr(i)*size), tr) {
				return false
			}
		}
		return true
	}
}

// mapEq returns how to compare maps of type t in place and, for maps of
// numbers and strings, given as the runtime's map pointers.
func (b *builder) mapEq(t reflect.Type) (eqFunc, func(x, y unsafe.Pointer) bool) {
	k, e := t.Key(), t.Elem()
	ep := b.plan(e)
	if ep.operator {
		if _, equal := flatMapOps(t); equal != nil {
			return func(x, y unsafe.Pointer, _ eqTrail) bool {
				return equal(*(*unsafe.Pointer)(x), *(*unsafe.Pointer)(y))
			}, equal
		}
	}
	return func(x, y unsafe.Pointer, tr eqTrail) bool {
		mx, my := *(*unsafe.Pointer)(x), *(*unsafe.Pointer)(y)
		if mx == nil || my == nil {
			return mx == my // a nil map is not an empty one
		}
		if mx == my {
			return true
		}
		vx, vy := reflect.NewAt(t, x).Elem(), reflect.NewAt(t, y).Elem()
		if vx.Len() != vy.Len() {
			return false
		}
		var first bool
		if tr, first = tr.enter(mx, my, t); !first {
			return true
		}
		key, xv, yv := reflect.New(k).Elem(), reflect.New(e), reflect.New(e)
		for it := vx.MapRange(); it.Next(); {
			key.SetIterKey(it)
			w := vy.MapIndex(key)
			if !w.IsValid() {
				return false
			}
			xv.Elem().SetIterValue(it)
			yv.Elem().Set(w)
			if !ep.eq(xv.UnsafePointer(), yv.UnsafePointer(), tr) {
				return false
			}
		}
		return true
	}, nil
}

// interfaceEq compares interfaces of type t by their dynamic values.
func interfaceEq(t reflect.Type) eqFunc {
	if t.NumMethod() == 0 {
		return func(a, b unsafe.Pointer, tr eqTrail) bool {
			return equalDynamic(t, *(*any)(a), *(*any)(b), tr)
		}
	}
	return func(a, b unsafe.Pointer, tr eqTrail) bool {
		return equalDynamic(t, reflect.NewAt(t, a).Elem().Interface(), reflect.NewAt(t, b).Elem().Interface(), tr)
	}
}

// equalDynamic compares x and y, held in interfaces of type t.
func equalDynamic(t reflect.Type, x, y any, tr eqTrail) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	d := reflect.TypeOf(x)
	if d != reflect.TypeOf(y) {
		return false
	}
	return dynPlanFor(t, d).equal(x, y, tr)
}

// protoEq compares messages of the pointer type t as proto.Equal does: by
// their protoMsg if they have one.
func protoEq(t reflect.Type) ptrEqFunc {
	if pm := protoMsgFor(t); pm != nil {
		return func(x, y unsafe.Pointer, _ eqTrail) bool {
			if x == nil || y == nil {
				return x == y
			}
			return pm.equal(t, x, y)
		}
	}
	return func(x, y unsafe.Pointer, _ eqTrail) bool {
		return equalByProto(t, x, y)
	}
}

// methodEq compares with t's Equal(t) bool method, t not a pointer.
func methodEq(t reflect.Type, m reflect.Method) eqFunc {
	return func(a, b unsafe.Pointer, _ eqTrail) bool {
		return m.Func.Call([]reflect.Value{reflect.NewAt(t, a).Elem(), reflect.NewAt(t, b).Elem()})[0].Bool()
	}
}

// methodPtrEq compares with the Equal(t) bool method of the pointer type t.
// Nil pointers are equal only to each other; the method is not called.
func methodPtrEq(t reflect.Type, m reflect.Method) ptrEqFunc {
	return func(x, y unsafe.Pointer, _ eqTrail) bool {
		if x == nil || y == nil {
			return x == y
		}
		return m.Func.Call([]reflect.Value{reflect.NewAt(t.Elem(), x), reflect.NewAt(t.Elem(), y)})[0].Bool()
	}
}

// pointerMethodEq compares values of t with the Equal(*t) bool method of *t.
func pointerMethodEq(t reflect.Type, m reflect.Method) eqFunc {
	return func(a, b unsafe.Pointer, _ eqTrail) bool {
		return m.Func.Call([]reflect.Value{reflect.NewAt(t, a), reflect.NewAt(t, b)})[0].Bool()
	}
}
