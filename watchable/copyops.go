package watchable

import (
	"fmt"
	"reflect"
	"unsafe"
)

// buildCopy works out how p copies values of its type.
func (b *builder) buildCopy(p *plan) {
	t := p.typ
	switch {
	case p.refused != nil:
		p.rootCopy = rootRefused
		return
	case p.shallow:
		p.rootCopy = rootShallow
		return
	}
	way, m := copyWayOf(t)
	switch way {
	case byStd:
		s := stdTypeOf(t)
		if s.clone != nil {
			p.clone, p.rootCopy = s.clone, rootPointer
			p.fix = referenceFix(s.clone)
		} else {
			p.fix, p.rootCopy = s.fix, rootInPlace
		}
	case byMethod:
		p.rootCopy = rootMethod
		if t.Kind() == reflect.Pointer {
			p.clone = methodClone(t, m)
			p.fix = referenceFix(p.clone)
		} else {
			p.fix = methodFix(t, m)
		}
	case byPointerMethod:
		p.rootCopy = rootPointerMethod
		p.fix = pointerMethodFix(t, m)
	case byProto:
		p.rootCopy = rootPointer
		p.clone = protoClone(t)
		p.fix = referenceFix(p.clone)
	default:
		p.rootCopy = rootInPlace
		switch t.Kind() {
		case reflect.Pointer:
			p.clone, p.rootCopy = b.pointerClone(t), rootPointer
			p.fix = referenceFix(p.clone)
		case reflect.Map:
			p.fix, p.clone = b.mapCopy(t)
			p.rootCopy = rootPointer
		case reflect.Slice:
			p.fix = b.sliceFix(t)
		case reflect.Array:
			p.fix = b.arrayFix(t)
		case reflect.Struct:
			p.fix = b.structFix(t)
		case reflect.Interface:
			p.fix, p.rootCopy = interfaceFix(t), rootInterface
		}
	}
}

// referenceFix fixes a pointer or map in place with clone.
func referenceFix(clone cloneFunc) fixFunc {
	return func(p unsafe.Pointer, tr trail) *refusal {
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			return nil
		}
		n, r := clone(q, tr)
		if r != nil {
			return r
		}
		*(*unsafe.Pointer)(p) = n
		return nil
	}
}

// pointerClone copies what a pointer of type t points to: a new value,
// assigned from the old one and then fixed.
func (b *builder) pointerClone(t reflect.Type) cloneFunc {
	e := t.Elem()
	ep := b.plan(e)
	return func(q unsafe.Pointer, tr trail) (unsafe.Pointer, *refusal) {
		n := reflect.New(e)
		n.Elem().Set(reflect.NewAt(e, q).Elem())
		np := n.UnsafePointer()
		if fix := ep.fix; fix != nil {
			tr, ok := tr.enter(q, t)
			if !ok {
				return nil, cycle()
			}
			if r := fix(np, tr); r != nil {
				return nil, r
			}
			tr.leave(q, t)
		}
		return np, nil
	}
}

// zeroArray is where copies of empty, non-nil slices point: they must not
// point into the original's array, whose capacity they would share.
var zeroArray [0]uint64

func (b *builder) sliceFix(t reflect.Type) fixFunc {
	e := t.Elem()
	ep := b.plan(e)
	size := e.Size()
	return func(p unsafe.Pointer, tr trail) *refusal {
		h := (*sliceHeader)(p)
		if h.data == nil {
			return nil
		}
		n := h.len
		if n == 0 {
			*h = sliceHeader{data: unsafe.Pointer(&zeroArray)}
			return nil
		}
		// The copy's capacity is its length: appending to it must not
		// write where the original's spare capacity is.
		ns := reflect.MakeSlice(t, n, n)
		reflect.Copy(ns, reflect.NewAt(t, p).Elem())
		d := ns.UnsafePointer()
		if fix := ep.fix; fix != nil {
			tr, ok := tr.enter(h.data, t)
			if !ok {
				return cycle()
			}
			for i := range n {
				if r := fix(unsafe.Add(d, uintptr(i)*size), tr); r != nil {
					return r.in(fmt.Sprintf("[%d]", i))
				}
			}
			tr.leave(h.data, t)
		}
		*h = sliceHeader{data: d, len: n, cap: n}
		return nil
	}
}

func (b *builder) arrayFix(t reflect.Type) fixFunc {
	ep := b.plan(t.Elem())
	n, size := t.Len(), t.Elem().Size()
	return func(p unsafe.Pointer, tr trail) *refusal {
		for i := range n {
			if r := ep.fix(unsafe.Add(p, uintptr(i)*size), tr); r != nil {
				return r.in(fmt.Sprintf("[%d]", i))
			}
		}
		return nil
	}
}

// A fieldFix is one field of a struct that needs fixing, at an offset that
// may be inside a nested struct: nested structs copied field by field are
// flattened into the outer one, so a struct costs one loop.
type fieldFix struct {
	off  uintptr
	step string // the path to the field, as ".Spec.Ports"
	p    *plan
}

func (b *builder) structFix(t reflect.Type) fixFunc {
	fields := b.fieldFixes(t, 0, "", nil)
	if len(fields) == 1 {
		f := fields[0]
		return func(p unsafe.Pointer, tr trail) *refusal {
			if r := f.p.fix(unsafe.Add(p, f.off), tr); r != nil {
				return r.in(f.step)
			}
			return nil
		}
	}
	return func(p unsafe.Pointer, tr trail) *refusal {
		for i := range fields {
			f := &fields[i]
			if r := f.p.fix(unsafe.Add(p, f.off), tr); r != nil {
				return r.in(f.step)
			}
		}
		return nil
	}
}

func (b *builder) fieldFixes(t reflect.Type, base uintptr, prefix string, out []fieldFix) []fieldFix {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "_" || !needsCopy(f.Type) {
			continue
		}
		step := prefix + "." + f.Name
		if f.Type.Kind() == reflect.Struct {
			if way, _ := copyWayOf(f.Type); way == byKind {
				out = b.fieldFixes(f.Type, base+f.Offset, step, out)
				continue
			}
		}
		out = append(out, fieldFix{off: base + f.Offset, step: step, p: b.plan(f.Type)})
	}
	return out
}

// mapCopy returns how to fix a map of type t in place and how to clone one.
// Maps of numbers and strings are cloned by the runtime, as maps.Clone
// does; others entry by entry through reflection.
func (b *builder) mapCopy(t reflect.Type) (fixFunc, cloneFunc) {
	k, e := t.Key(), t.Elem()
	if !needsCopy(k) && !needsCopy(e) {
		if clone, _ := flatMapOps(t); clone != nil {
			c := func(m unsafe.Pointer, _ trail) (unsafe.Pointer, *refusal) { return clone(m), nil }
			return referenceFix(c), c
		}
	}
	ep := b.plan(e)
	dynamicKeys := needsCopy(k) // refuse would have refused such keys unless they are interfaces
	fix := func(p unsafe.Pointer, tr trail) *refusal {
		m := *(*unsafe.Pointer)(p)
		if m == nil {
			return nil
		}
		// Only values that need fixing can lead back to this map.
		tracked := ep.fix != nil || dynamicKeys
		if tracked {
			var ok bool
			if tr, ok = tr.enter(m, t); !ok {
				return cycle()
			}
		}
		src := reflect.NewAt(t, p).Elem()
		dst := reflect.MakeMapWithSize(t, src.Len())
		key, val := reflect.New(k).Elem(), reflect.New(e)
		for it := src.MapRange(); it.Next(); {
			key.SetIterKey(it)
			if dynamicKeys {
				if x := key.Interface(); x != nil && !planFor(reflect.TypeOf(x)).shallow {
					return &refusal{reason: fmt.Sprintf("has a key holding a %v, which a copy would change", reflect.TypeOf(x))}
				}
			}
			val.Elem().SetIterValue(it)
			if fix := ep.fix; fix != nil {
				if r := fix(val.UnsafePointer(), tr); r != nil {
					return r.in(keyStep(key))
				}
			}
			dst.SetMapIndex(key, val.Elem())
		}
		if tracked {
			tr.leave(m, t)
		}
		*(*unsafe.Pointer)(p) = dst.UnsafePointer()
		return nil
	}
	clone := func(m unsafe.Pointer, tr trail) (unsafe.Pointer, *refusal) {
		slot := m
		if r := fix(unsafe.Pointer(&slot), tr); r != nil {
			return nil, r
		}
		return slot, nil
	}
	return fix, clone
}

// keyStep names a map entry in a refusal's path.
func keyStep(key reflect.Value) string {
	if key.Kind() == reflect.String {
		return fmt.Sprintf("[%q]", key.String())
	}
	return fmt.Sprintf("[%v]", key.Interface())
}

// interfaceFix copies the dynamic value of an interface of type t, with
// the plan for its dynamic type.
func interfaceFix(t reflect.Type) fixFunc {
	if t.NumMethod() == 0 {
		return func(p unsafe.Pointer, tr trail) *refusal {
			x := *(*any)(p)
			if x == nil {
				return nil
			}
			dp := dynPlanFor(t, reflect.TypeOf(x))
			if dp.copy == nil {
				return dp.refusal()
			}
			y, r := dp.copy(x, tr)
			if r != nil {
				return r
			}
			*(*any)(p) = y
			return nil
		}
	}
	return func(p unsafe.Pointer, tr trail) *refusal {
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return nil
		}
		x := v.Interface()
		dp := dynPlanFor(t, reflect.TypeOf(x))
		if dp.copy == nil {
			return dp.refusal()
		}
		y, r := dp.copy(x, tr)
		if r != nil {
			return r
		}
		v.Set(reflect.ValueOf(y))
		return nil
	}
}

// methodFix copies with t's DeepCopy() t method, t not a pointer.
func methodFix(t reflect.Type, m reflect.Method) fixFunc {
	return func(p unsafe.Pointer, _ trail) *refusal {
		v := reflect.NewAt(t, p).Elem()
		v.Set(m.Func.Call([]reflect.Value{v})[0])
		return nil
	}
}

// methodClone copies with the DeepCopy() t method of the pointer type t.
func methodClone(t reflect.Type, m reflect.Method) cloneFunc {
	return func(q unsafe.Pointer, _ trail) (unsafe.Pointer, *refusal) {
		out := m.Func.Call([]reflect.Value{reflect.NewAt(t.Elem(), q)})[0]
		if out.IsNil() {
			return nil, &refusal{reason: "has a DeepCopy method that returned nil"}
		}
		return out.UnsafePointer(), nil
	}
}

// pointerMethodFix copies a t with the DeepCopy() *t method of *t, as
// deepcopy-gen writes them.
func pointerMethodFix(t reflect.Type, m reflect.Method) fixFunc {
	return func(p unsafe.Pointer, _ trail) *refusal {
		out := m.Func.Call([]reflect.Value{reflect.NewAt(t, p)})[0]
		if out.IsNil() {
			return &refusal{reason: "has a DeepCopy method that returned nil"}
		}
		reflect.NewAt(t, p).Elem().Set(out.Elem())
		return nil
	}
}

// protoClone copies a message of the pointer type t: by its protoMsg if it
// has one, otherwise with proto.Clone.
func protoClone(t reflect.Type) cloneFunc {
	if pm := protoMsgFor(t); pm != nil {
		return func(q unsafe.Pointer, _ trail) (unsafe.Pointer, *refusal) {
			return pm.clone(q), nil
		}
	}
	return func(q unsafe.Pointer, _ trail) (unsafe.Pointer, *refusal) {
		return cloneByProto(t, q), nil
	}
}
